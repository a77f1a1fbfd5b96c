"""What a webhook says: Redline's JSON envelope for each event, and the Slack rendering of it.

The envelope is built once per event and stored on each delivery; the body an endpoint
receives is rendered from it at send time (``body``), so a retry sends the same bytes.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from django.conf import settings
from django.urls import reverse

from memory.findings import lifecycle
from memory.models import AttackResult, Finding, Severity, WebhookEvent, WebhookFormat

#: Long free text (objectives, reasons) is cut to this many characters in a payload.
TEXT_LIMIT = 1000
#: Slack refuses a section text longer than 3,000 characters.
SLACK_TEXT_LIMIT = 3000


def envelope(*, event: str, data: dict[str, Any], at: datetime) -> dict[str, Any]:
    """The JSON every endpoint of the ``json`` format receives: the event's id (the same for
    every endpoint it went to), its name, when it happened, and its data."""
    return {"id": str(uuid.uuid4()), "event": event, "created_at": at.isoformat(), "data": data}


def link(path: str) -> str:
    """``path`` on this Redline (``BASE_URL``); the bare path when no base URL is set."""
    base = settings.REDLINE_BASE_URL.rstrip("/")
    return f"{base}{path}" if base else path


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_LIMIT:
        return text
    return text[: TEXT_LIMIT - 1] + "…"


def finding_data(*, finding: Finding, previous_status: str | None = None) -> dict[str, Any]:
    """A finding as webhooks show it (``previous_status`` for ``finding.status_changed``)."""
    data: dict[str, Any] = {
        "finding": {
            "id": str(finding.pk),
            "title": finding.title,
            "severity": finding.severity,
            "status": finding.status,
            "operation": (
                {"id": str(finding.operation.pk), "name": finding.operation.name}
                if finding.operation
                else None
            ),
            "owner": finding.owner.get_username() if finding.owner else None,
            "harm_categories": finding.harm_categories,
            "framework_tags": finding.framework_tags,
            "created_at": finding.created_at.isoformat(),
            "url": link(finding.get_absolute_url()),
        }
    }
    if previous_status is not None:
        data["previous_status"] = previous_status
    return data


def attack_data(*, attack: AttackResult) -> dict[str, Any]:
    """An attack result as webhooks show it; needs the conversation's target and the attack
    identifier joined (``select_related``) to stay one query for many attacks."""
    target = attack.conversation.target_identifier
    return {
        "attack": {
            "id": str(attack.pk),
            "objective": _cut(attack.objective),
            "outcome": attack.outcome,
            "outcome_reason": _cut(attack.outcome_reason),
            "conversation_id": attack.conversation.conversation_id,
            "attack": attack.attack_identifier.class_name if attack.attack_identifier else None,
            "target": target.class_name if target else None,
            "labels": attack.labels,
            "operation": attack.operation,
            "timestamp": attack.timestamp.isoformat(),
            "url": link(reverse("attack-detail", args=[attack.pk])),
        }
    }


def ping_data() -> dict[str, Any]:
    """The admin's test event."""
    return {"message": "A test event from Redline: this endpoint is reachable and signed."}


def body(*, payload: dict[str, Any], fmt: str) -> bytes:
    """The bytes an endpoint receives: the envelope itself, or it as a Slack message."""
    document = slack_message(payload) if fmt == WebhookFormat.SLACK else payload
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _escape(text: str) -> str:
    """Slack's mrkdwn treats ``&``, ``<`` and ``>`` as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link(url: str, text: str) -> str:
    return f"<{url}|{_escape(text)}>" if url.startswith(("https://", "http://")) else _escape(text)


def _headline(payload: dict[str, Any]) -> tuple[str, list[str]]:
    """The message's one-line summary (plain text) and its detail lines (mrkdwn)."""
    event, data = payload["event"], payload["data"]
    if event in (WebhookEvent.FINDING_CREATED, WebhookEvent.FINDING_STATUS_CHANGED):
        finding = data["finding"]
        title = finding["title"]
        # People read the labels ("Retest passed"); the JSON payload keeps the values.
        severity = str(dict(Severity.choices).get(finding["severity"], finding["severity"]))
        facts = [f"Severity: {severity}", f"Status: {lifecycle.label(finding['status'])}"]
        if finding["operation"]:
            facts.append(f"Operation: {_escape(finding['operation']['name'])}")
        if event == WebhookEvent.FINDING_CREATED:
            summary = f"New finding [{severity}]: {title}"
            lead = f"*New finding* {_slack_link(finding['url'], title)}"
        else:
            moved = lifecycle.move_text(data["previous_status"], finding["status"])
            summary = f"Finding {moved}: {title}"
            lead = f"*Finding {_escape(moved)}* {_slack_link(finding['url'], title)}"
        return summary, [lead, " · ".join(facts)]
    if event == WebhookEvent.ATTACK_SUCCEEDED:
        attack = data["attack"]
        objective = attack["objective"] or ""
        summary = f"Attack succeeded: {objective[:150]}"
        facts = [f"Attack: {attack['attack'] or '—'}", f"Target: {attack['target'] or '—'}"]
        if attack["operation"]:
            facts.append(f"Operation: {attack['operation']}")
        lead = f"*Attack succeeded* {_slack_link(attack['url'], 'open in Redline')}"
        # every line of the objective inside the quote, not only the first
        quoted = "\n".join(f"> {line}" for line in _escape(objective).splitlines() or [""])
        return summary, [lead, quoted, _escape(" · ".join(facts))]
    return "Redline test event", [_escape(data.get("message", ""))]


def slack_message(payload: dict[str, Any]) -> dict[str, Any]:
    """The envelope as a Slack incoming-webhook message: ``text`` (notifications and clients
    without blocks) and ``blocks`` (a section and a context line naming the event)."""
    summary, lines = _headline(payload)
    section = "\n".join(lines)
    if len(section) > SLACK_TEXT_LIMIT:
        section = section[: SLACK_TEXT_LIMIT - 1] + "…"
    return {
        "text": _escape(summary)[:SLACK_TEXT_LIMIT],
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": section}},
            {
                "type": "context",
                "elements": [
                    {"type": "mrkdwn", "text": f"Redline · `{payload['event']}` · {payload['id']}"}
                ],
            },
        ],
    }
