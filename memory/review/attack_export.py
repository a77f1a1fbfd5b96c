"""One attack to take away: Markdown for an issue or a chat, a standalone HTML file.

Both are built from the attack page's own view objects (:class:`memory.review.thread.AttackPage`),
so they show what the page shows. The PyRIT-shaped JSON of an attack is the export API's
(``/api/v1/export/?conversation_id=…``), not made here.

The HTML file opens without a server: the page's stylesheets are inlined, media of the main
conversation is embedded as ``data:`` URIs (each file up to :data:`EMBED_LIMIT`, the whole
file up to :data:`EMBED_TOTAL`; larger media stays a link to Redline), and a
Content-Security-Policy forbids every script and every fetch but embedded media.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from datetime import UTC

from django.contrib.staticfiles import finders
from django.core.files.storage import default_storage
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from memory.models import HumanOutcome, MediaBlob
from memory.review.thread import (
    AttackPage,
    PieceView,
    ScoreView,
    ThreadView,
    ValueView,
    render_thread,
)
from redteam.core.choices import AttackOutcome, choice_label
from redteam.core.markdown_safe import md_code, md_fence, md_inline

__all__ = ["EMBED_LIMIT", "EMBED_TOTAL", "attack_html", "attack_markdown", "hide_human_scores"]

#: Largest media file embedded in the HTML file (bytes).
EMBED_LIMIT = 8 * 1024 * 1024
#: Most media embedded in one HTML file (bytes); later files stay links.
EMBED_TOTAL = 32 * 1024 * 1024
#: The stylesheets the attack page uses, inlined in that order.
STYLESHEETS = ("redteam/css/redline.css", "redteam/css/review.css")


# --- Markdown -----------------------------------------------------------------------------------


def _value_markdown(view: ValueView) -> str:
    if view.kind in ("text", "json", "error", "link"):
        return md_fence(view.value)
    line = f"*{md_inline(view.media_label)}:* {md_code(view.value)}"
    if view.kind == "missing" and view.differs:
        line += (
            " — media missing — the file was overwritten or differs "
            f"(expected sha256 {md_code(view.expected_sha256)})"
        )
    return line


def hide_human_scores(*, thread: ThreadView, reader_id: int | None) -> None:
    """Take other reviewers' human scores out of ``thread`` (blind review: the reader has
    not given their verdict yet); the reader's own stay."""
    for message in thread.messages:
        for piece in message.pieces:
            piece.scores = [s for s in piece.scores if not s.is_human or s.reviewer_id == reader_id]


def _score_text(score: ScoreView) -> str:
    """A score's value as the thread shows it: True / False, a float to two places."""
    if score.bool_value is not None:
        return "True" if score.bool_value else "False"
    if score.percent is not None and score.numeric_value is not None:
        return f"{score.numeric_value:.2f}"
    return score.score_value or "undetermined"


def _score_lines(piece: PieceView) -> list[str]:
    lines = []
    for score in piece.scores:
        value = _score_text(score)
        line = (
            f"- **{md_inline(value)}** ({score.type_label}) by {md_inline(score.scorer.class_name)}"
        )
        if score.is_human:
            line += f", human: {md_inline(score.reviewer_name)}"
        if score.is_last:
            line += " — decided the outcome"
        if score.rationale:
            line += f"\n  - Rationale: {md_inline(score.rationale)}"
        lines.append(line)
    return lines


def _thread_markdown(thread: ThreadView) -> list[str]:
    lines = [f"## Conversation {md_code(thread.conversation.conversation_id)}", ""]
    for message in thread.messages:
        lines += [f"### {message.sequence} · {md_inline(message.role_label)}", ""]
        for piece in message.pieces:
            if piece.error_text:
                lines += [f"> **{md_inline(piece.error_text)}**", ""]
            if piece.original is not None:
                lines += ["Original:", "", _value_markdown(piece.original), "", "Sent:", ""]
            lines += [_value_markdown(piece.converted), ""]
            scores = _score_lines(piece)
            if scores:
                lines += ["Scores:", "", *scores, ""]
    return lines


def attack_markdown(*, page: AttackPage, url: str, blind: bool = False) -> str:
    """The attack as Markdown: objective, outcome and facts, then the main conversation.

    Every value from PyRIT or a model is fenced or escaped, so the file renders as plain
    text wherever it is pasted. ``url`` is the attack page's absolute address. ``blind``:
    a blind queue hides other reviewers' verdicts from the reader: the human outcome is
    left out (and :func:`hide_human_scores` takes their human scores out of the thread).
    """
    attack = page.attack
    human = None if blind else attack.human_outcome
    facts = [
        ("Outcome", choice_label(AttackOutcome, human or attack.outcome)),
        ("Automated outcome", choice_label(AttackOutcome, attack.outcome)),
        (
            "Human verdict",
            "hidden until you give yours (blind queue)"
            if blind
            else choice_label(HumanOutcome, human) or "not reviewed",
        ),
        ("Outcome reason", attack.outcome_reason or "—"),
        ("Attack", attack.attack_identifier.class_name if attack.attack_identifier else "—"),
        ("Target", _target_text(page)),
        ("Executed turns", str(attack.executed_turns)),
        ("Execution time", page.execution_time),
        ("Time", attack.timestamp.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")),
    ]
    if attack.labels:
        facts.append(("Labels", ", ".join(f"{k}={v}" for k, v in attack.labels.items())))
    if attack.targeted_harm_categories:
        facts.append(("Harm categories", ", ".join(map(str, attack.targeted_harm_categories))))
    lines = ["# Attack result", "", "**Objective:**", "", md_fence(attack.objective), ""]
    lines += [f"- **{name}:** {md_inline(str(value))}" for name, value in facts]
    lines += [f"- **Attack result id:** `{attack.pk}`", f"- **In Redline:** <{url}>", ""]
    lines += _thread_markdown(page.thread)
    return "\n".join(lines).rstrip() + "\n"


def _target_text(page: AttackPage) -> str:
    if page.target is None:
        return "—"
    row = page.target.row
    model = (row.params or {}).get("model_name")
    return f"{row.class_name} · {model}" if model else row.class_name


# --- standalone HTML ----------------------------------------------------------------------------


def _views(thread: ThreadView) -> Iterable[tuple[ValueView, str | None]]:
    """Every media value of the thread with the SHA-256 of its stored bytes."""
    for message in thread.messages:
        for piece in message.pieces:
            yield piece.converted, piece.piece.converted_media_sha256
            if piece.original is not None:
                yield piece.original, piece.piece.original_media_sha256


def _embed_media(thread: ThreadView, *, absolute: Callable[[str], str]) -> None:
    """Point the thread's media at ``data:`` URIs (within the limits) or at Redline."""
    wanted = {
        sha: view
        for view, sha in _views(thread)
        if sha and view.kind in ("image", "audio", "video", "file")
    }
    blobs = MediaBlob.objects.in_bulk(list(wanted), field_name="sha256")
    budget = EMBED_TOTAL
    for view, sha in _views(thread):
        blob = blobs.get(sha or "")
        if blob is None or not view.url:
            continue
        if view.kind == "file" or blob.size > min(EMBED_LIMIT, budget):
            view.url = absolute(view.url)
            continue
        with default_storage.open(blob.file.name, "rb") as handle:
            data = base64.b64encode(handle.read()).decode("ascii")
        budget -= blob.size
        view.url = f"data:{blob.content_type};base64,{data}"


def _stylesheets() -> str:
    parts = []
    for name in STYLESHEETS:
        path = finders.find(name)
        if path:
            with open(path, encoding="utf-8") as handle:
                parts.append(handle.read())
    return "\n".join(parts)


def attack_html(
    *,
    page: AttackPage,
    url: str,
    attack_list_url: str,
    absolute: Callable[[str], str],
    blind: bool = False,
) -> str:
    """The attack as one HTML file that opens without a server (see the module docstring).

    ``url`` is the attack page's absolute address, ``attack_list_url`` the attack list's
    (the thread's filter links point there), ``absolute`` makes a path absolute, ``blind``
    as for :func:`attack_markdown`.
    """
    _embed_media(page.thread, absolute=absolute)
    page.thread.html = render_thread(page.thread, can_score=False, attack_list_url=attack_list_url)
    return render_to_string(
        "review/attack_standalone.html",
        {
            "page": page,
            "attack": page.attack,
            "blind_queue": blind,
            "url": url,
            "attack_list_url": attack_list_url,
            # Our own stylesheets, read from the static files: trusted, not client data.
            "css": mark_safe(_stylesheets()),
            "generated_at": timezone.now(),
        },
    )
