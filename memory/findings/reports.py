"""Reports: a snapshot document of an operation or a saved filter, and its formats.

:func:`build_document` reads memory once and returns a plain JSON document in three tiers —
``executive`` (success rates by risk category, technique and complexity with 95 % Wilson
intervals, findings by severity and status), ``findings`` (each finding with evidence
excerpts) and ``appendix`` (method: targets, attacks, converters, scorers with identifiers and
eval hashes, seed datasets, volumes, time range). The figures are the dashboards' own
(``memory.storage.aggregates`` over the same ``AttackResultFilter`` scope), so they equal
``/api/v1/stats/`` for the same parameters.

``snapshot.sha256`` hashes the document without its time of making: a report made again from
unchanged memory has the same hash. Every format (:func:`render_markdown`, HTML through the
templates, JSON) is rendered from the stored document, never from live memory, so a stored
report downloads identically forever.
"""

from __future__ import annotations

import base64
import copy
from collections import Counter
from typing import Any

from django.db.models import Max, Min, Q, QuerySet
from django.template.loader import render_to_string
from django.utils import timezone

from memory.findings import lifecycle
from memory.findings.pdf_fetcher import report_url_fetcher
from memory.findings.seal import canonical, seal_of
from memory.findings.selectors import (
    Params,
    attacks_for,
    params_query,
    seal_checks,
)
from memory.models import (
    ComponentIdentifier,
    Conversation,
    Evidence,
    EvidenceKind,
    Finding,
    FindingStatus,
    MessagePiece,
    Operation,
    PieceConverter,
    Severity,
)
from memory.storage import aggregates as ag
from memory.storage.crosswalk import crosswalk_current
from redteam.core.choices import is_media_value
from redteam.core.markdown_safe import md_code, md_fence, md_inline
from redteam.core.static_csp import with_inline_csp
from redteam.core.stats import OutcomeCounts, percent_text

REPORT_FORMAT = "redline-report"
REPORT_VERSION = 1
#: Characters of a piece's value an evidence excerpt shows.
EXCERPT_CHARS = 600
#: Media larger than this is not embedded in a report (a placeholder says so).
EMBED_MEDIA_MAX = 2 * 1024 * 1024

#: Attack complexity by PyRIT attack class, as Azure's red-teaming scorecard groups strategies:
#: one prompt (easy), a crafted or converted prompt (moderate), an adaptive multi-turn
#: conversation with an adversarial model (difficult).
COMPLEXITY = {
    "PromptSendingAttack": "easy",
    "PromptSendingOrchestrator": "easy",
    "FlipAttack": "easy",
    "SkeletonKeyAttack": "moderate",
    "ManyShotJailbreakAttack": "moderate",
    "RolePlayAttack": "moderate",
    "ContextComplianceAttack": "moderate",
    "ManyShotJailbreakOrchestrator": "moderate",
    "MultiPromptSendingAttack": "moderate",
    "RedTeamingAttack": "difficult",
    "RedTeamingOrchestrator": "difficult",
    "CrescendoAttack": "difficult",
    "CrescendoOrchestrator": "difficult",
    "TreeOfAttacksWithPruningAttack": "difficult",
    "TAPAttack": "difficult",
    "PAIRAttack": "difficult",
    "PAIROrchestrator": "difficult",
}
COMPLEXITY_ORDER = ("easy", "moderate", "difficult", "unclassified")


def _counts(counts: OutcomeCounts) -> dict[str, Any]:
    """The stats API's figures, and the rate and interval as the dashboards print them."""
    return {
        **counts.as_dict(),
        "asr_text": percent_text(counts.asr),
        "ci_text": f"{percent_text(counts.ci_low)} – {percent_text(counts.ci_high)}"
        if counts.n
        else "–",
    }


def _groups(breakdown: ag.Breakdown) -> list[dict[str, Any]]:
    return [
        {
            "key": group.key if group.key is None or isinstance(group.key, str) else str(group.key),
            "label": group.label,
            "query": params_query(group.params) if group.params is not None else None,
            **_counts(group.counts),
        }
        for group in breakdown.groups
    ]


def _complexity(technique: ag.Breakdown) -> list[dict[str, Any]]:
    totals: dict[str, OutcomeCounts] = {}
    classes: dict[str, list[str]] = {}
    for group in technique.groups:
        level = COMPLEXITY.get(group.key or "", "unclassified")
        totals[level] = totals.get(level, OutcomeCounts()) + group.counts
        classes.setdefault(level, []).append(group.key or "(no attack identifier)")
    return [
        {"key": level, "label": level, "attack_classes": sorted(classes[level]), **_counts(c)}
        for level in COMPLEXITY_ORDER
        if (c := totals.get(level)) is not None
    ]


def _identifier(row: ComponentIdentifier) -> dict[str, Any]:
    model = row.params.get("model_name") if isinstance(row.params, dict) else None
    return {
        "class_name": row.class_name,
        "module": row.class_module,
        "model_name": model if isinstance(model, str) else None,
        "hash": row.hash,
        "eval_hash": row.eval_hash,
    }


def _identifiers(ids: QuerySet) -> list[dict[str, Any]]:
    rows = ComponentIdentifier.objects.filter(pk__in=ids).order_by("class_name", "hash")
    return [_identifier(row) for row in rows]


def _appendix(scope: ag.Scope, attacks: QuerySet) -> dict[str, Any]:
    volume = ag.volume(scope)
    span = attacks.aggregate(first=Min("timestamp"), last=Max("timestamp"))
    conversations = Conversation.objects.filter(pk__in=attacks.values("conversation_id"))
    datasets = ag.breakdown(scope, "dataset")
    return {
        "targets": _identifiers(conversations.values("target_identifier_id")),
        "attacks": _identifiers(attacks.values("attack_identifier_id")),
        "atomic_attacks": _identifiers(attacks.values("atomic_attack_identifier_id")),
        "converters": _identifiers(conversations.values("converter_index")),
        "scorers": _identifiers(attacks.values("last_score__scorer_class_identifier_id")),
        "seed_datasets": [
            {"name": g.key, "attacks": g.counts.attacks} for g in datasets.groups if g.key
        ],
        "volumes": {
            "attacks": attacks.count(),
            "conversations": volume.conversations,
            "pieces": volume.pieces,
            "scores": volume.scores,
        },
        "time_range": {
            "first": span["first"].isoformat() if span["first"] else None,
            "last": span["last"].isoformat() if span["last"] else None,
        },
    }


def _media(piece_id: str, field: str, redact: bool, media: dict[str, Any]) -> dict[str, Any]:
    blob = media.get((piece_id, field))
    if redact:
        return {"redacted": True}
    if blob is None:
        return {"missing": True}
    if blob.size > EMBED_MEDIA_MAX or not blob.content_type.startswith("image/"):
        return {"content_type": blob.content_type, "sha256": blob.sha256, "embedded": False}
    with blob.file.open("rb") as handle:
        data = base64.b64encode(handle.read()).decode("ascii")
    return {
        "content_type": blob.content_type,
        "sha256": blob.sha256,
        "embedded": True,
        # Blurred wherever it is shown (reviewer safety): the reader opens it on purpose.
        "data_uri": f"data:{blob.content_type};base64,{data}",
    }


def _excerpt_pieces(sealed: dict[str, Any]) -> list[dict[str, Any]]:
    if "pieces" in sealed:
        return sealed["pieces"]
    if sealed.get("conversation"):
        return sealed["conversation"].get("pieces", [])
    if "original_value" in sealed:
        return [sealed]
    return []


def _converter_chains(piece_ids: set[str]) -> dict[str, list[str]]:
    """Per piece id, the class names of its converters in the order PyRIT applied them (one
    query)."""
    chains: dict[str, list[str]] = {}
    links = (
        PieceConverter.objects.filter(piece_id__in=piece_ids)
        .order_by("piece_id", "position")
        .values_list("piece_id", "identifier__class_name")
    )
    for piece_id, class_name in links:
        chains.setdefault(str(piece_id), []).append(class_name)
    return chains


def _converted(piece: dict[str, Any]) -> bool:
    """Whether a sealed piece's converted value differs from what was asked."""
    return (piece.get("original_value"), piece.get("original_value_data_type")) != (
        piece.get("converted_value"),
        piece.get("converted_value_data_type"),
    )


def _original(piece: dict[str, Any]) -> dict[str, Any]:
    """What was asked before any converter ran: text (cut like the converted value), or the
    data type alone for media (reports embed only the converted media, blurred)."""
    data_type = piece.get("original_value_data_type") or "text"
    value = piece.get("original_value") or ""
    if is_media_value(data_type, value):
        return {"data_type": data_type, "media": True}
    return {
        "data_type": data_type,
        "text": value[:EXCERPT_CHARS],
        "truncated": len(value) > EXCERPT_CHARS,
    }


def _findings(findings: QuerySet, *, redact_media: bool) -> list[dict[str, Any]]:
    findings = list(findings.select_related("owner", "operation").order_by("created_at", "id"))
    evidence = list(
        Evidence.objects.filter(finding__in=[f.pk for f in findings]).order_by(
            "finding_id", "attached_at", "id"
        )
    )
    checks = {check.evidence.pk: check for check in seal_checks(evidence)}
    piece_ids = {
        piece["id"]
        for item in evidence
        for piece in _excerpt_pieces(item.sealed)
        if is_media_value(piece["converted_value_data_type"], piece["converted_value"])
    }
    media = {}
    if piece_ids and not redact_media:
        for piece in MessagePiece.objects.filter(pk__in=piece_ids).select_related(
            "converted_media"
        ):
            media[(str(piece.pk), "converted")] = piece.converted_media
    chains = _converter_chains(
        {piece["id"] for item in evidence for piece in _excerpt_pieces(item.sealed)[:20]}
    )
    by_finding: dict[Any, list[dict[str, Any]]] = {}
    for item in evidence:
        check = checks[item.pk]
        excerpt = []
        for piece in _excerpt_pieces(item.sealed)[:20]:
            data_type = piece["converted_value_data_type"]
            entry: dict[str, Any] = {"role": piece["role"], "data_type": data_type}
            if is_media_value(data_type, piece["converted_value"]):
                entry["media"] = _media(piece["id"], "converted", redact_media, media)
            else:
                text = piece["converted_value"] or ""
                entry["text"] = text[:EXCERPT_CHARS]
                entry["truncated"] = len(text) > EXCERPT_CHARS
            entry["converters"] = chains.get(piece["id"], [])
            if _converted(piece):
                entry["original"] = _original(piece)
            entry["scores"] = [
                f"{s['score_type']}={s['score_value']}" for s in piece.get("scores", [])
            ]
            excerpt.append(entry)
        by_finding.setdefault(item.finding_id, []).append(
            {
                "kind": item.kind,
                "ref": item.ref,
                "note": item.note,
                "seal": item.seal,
                "seal_state": check.state,
                "attached_at": item.attached_at.isoformat(),
                "outcome": item.sealed.get("outcome"),
                "objective": item.sealed.get("objective"),
                "excerpt": excerpt,
            }
        )
    return [
        {
            "id": str(f.pk),
            "title": f.title,
            "severity": f.severity,
            "severity_label": f.get_severity_display(),
            "status": f.status,
            "status_label": f.get_status_display(),
            "owner": f.owner.get_username() if f.owner else None,
            "operation": f.operation.name if f.operation else None,
            "description": f.description,
            "harm_categories": f.harm_categories,
            "framework_tags": f.framework_tags,
            "reproduction_steps": f.reproduction_steps,
            "remediation": f.remediation,
            "found_eval_hash": f.found_eval_hash,
            "found_target_hash": f.found_target_hash,
            "created_at": f.created_at.isoformat(),
            "evidence": by_finding.get(f.pk, []),
        }
        for f in sorted(findings, key=lambda f: (Finding.SEVERITY_ORDER[f.severity], f.created_at))
    ]


def _by_framework_tag(finding_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings per framework tag, crosswalk entries first in framework order (with their
    titles), then free tags by name. One query (the crosswalk)."""
    entries = crosswalk_current().entries
    order = {tag: index for index, tag in enumerate(entries)}
    counts = Counter(tag for f in finding_rows for tag in f["framework_tags"])
    return [
        {
            "tag": tag,
            "title": entries[tag].title if tag in entries else "",
            "framework": entries[tag].framework_name if tag in entries else "",
            "count": count,
        }
        for tag, count in sorted(
            counts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])
        )
    ]


def scope_findings(attacks: QuerySet, operation: Operation | None) -> QuerySet:
    """The findings a report covers: the operation's, and any with evidence in scope."""
    held = Q(evidence__attack_result__in=attacks.values("pk")) | Q(
        evidence__conversation__in=attacks.values("conversation_id")
    )
    if operation is not None:
        held |= Q(operation=operation)
    ids = Finding.objects.filter(held).values("pk")
    return Finding.objects.filter(pk__in=ids)


def build_document(
    *,
    params: Params,
    title: str,
    operation: Operation | None = None,
    redact_media: bool = False,
    source: ag.Source = ag.Source.AUTOMATED,
    hidden: QuerySet | None = None,
) -> dict[str, Any]:
    """The report document of the attacks ``params`` select (see the module docstring).

    ``source`` is whose outcome the figures count, as on the dashboards: PyRIT's
    (``automated``) or the reviewers' verdict where there is one (``human``). ``hidden``:
    the attacks whose verdicts blind review hides from the report's author
    (``memory.storage.queues.blind_hidden_attacks``), counted as not reviewed.
    """
    attacks = attacks_for(params, hidden=hidden)
    scope = ag.Scope(attacks, source, params, hidden=hidden)
    technique = ag.breakdown(scope, "attack_class")
    findings = scope_findings(attacks, operation)
    finding_rows = _findings(findings, redact_media=redact_media)
    severity = Counter(f["severity"] for f in finding_rows)
    status = Counter(f["status"] for f in finding_rows)
    appendix = _appendix(scope, attacks)
    document: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "title": title,
        "scope": {
            "operation": (
                {
                    "id": str(operation.pk),
                    "name": operation.name,
                    "description": operation.description,
                    "scope": operation.scope,
                    "target_systems": operation.target_systems,
                    "starts_on": operation.starts_on.isoformat() if operation.starts_on else None,
                    "ends_on": operation.ends_on.isoformat() if operation.ends_on else None,
                }
                if operation
                else None
            ),
            "params": [list(pair) for pair in params],
            "query": params_query(params),
            "display": " & ".join(f"{key}={value}" for key, value in params) or "all memory",
            "source": scope.source.value,
            "source_label": ag.SOURCE_LABELS[scope.source],
            "attacks_with_verdict": attacks.alias(_human=ag.human_expression(hidden))
            .filter(_human__isnull=False)
            .count(),
            "redact_media": redact_media,
        },
        "executive": {
            "total": _counts(ag.outcome_totals(scope)),
            "by_risk_category": _groups(ag.breakdown(scope, "harm_category")),
            "by_technique": _groups(technique),
            "by_complexity": _complexity(technique),
            "findings_by_severity": [
                {"key": value, "label": label, "count": severity.get(value, 0)}
                for value, label in Severity.choices
            ],
            "findings_by_status": [
                {"key": value, "label": label, "count": status.get(value, 0)}
                for value, label in FindingStatus.choices
            ],
            "findings_by_framework_tag": _by_framework_tag(finding_rows),
        },
        "findings": finding_rows,
        "appendix": appendix,
    }
    counts = {
        **appendix["volumes"],
        "findings": len(finding_rows),
        "evidence": sum(len(f["evidence"]) for f in finding_rows),
    }
    document["snapshot"] = {
        "made_at": timezone.now().isoformat(),
        "counts": counts,
        "sha256": content_hash(document),
    }
    return document


def content_hash(document: dict[str, Any]) -> str:
    """SHA-256 of the document without its snapshot (so without its time of making)."""
    return seal_of({key: value for key, value in document.items() if key != "snapshot"})


def for_people(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every label a person reads filled in, for the page, HTML, PDF and
    Markdown (reports made before the labels were stored get them from their values)."""
    doc = copy.deepcopy(document)
    scope = doc.setdefault("scope", {})
    source = ag.Source(scope.get("source") or ag.Source.AUTOMATED)
    scope["source"] = source.value
    scope.setdefault("source_label", ag.SOURCE_LABELS[source])
    kinds = {value: str(label) for value, label in EvidenceKind.choices}
    for finding in doc.get("findings", []):
        finding.setdefault("status_label", lifecycle.label(finding["status"]))
        finding.setdefault(
            "severity_label", str(dict(Severity.choices).get(finding["severity"], ""))
        )
        finding["framework_tags_text"] = ", ".join(finding.get("framework_tags") or [])
        for evidence in finding.get("evidence", []):
            evidence["kind_label"] = kinds.get(evidence["kind"], evidence["kind"])
        finding["harm_categories_text"] = ", ".join(finding.get("harm_categories") or [])
    return doc


def basis_text(document: dict[str, Any]) -> str:
    """What the figures count, in a sentence ("Outcome source: …; 5 of 21 attacks …")."""
    scope = document["scope"]
    text = f"Outcome source: {scope['source_label']}"
    verdicts = scope.get("attacks_with_verdict")
    if verdicts is not None:
        attacks = document["appendix"]["volumes"]["attacks"]
        text += f"; {verdicts} of {attacks} attacks carry a reviewer verdict"
        if scope["source"] == ag.Source.AUTOMATED and verdicts:
            text += " (not counted: the figures are PyRIT's automated outcome)"
        elif scope["source"] == ag.Source.HUMAN:
            text += " (each verdict counts in place of PyRIT's outcome)"
    return text + "."


def render_json(document: dict[str, Any]) -> str:
    return canonical(document) + "\n"


def _rate(row: dict[str, Any]) -> str:
    if row["asr"] is None:
        return "– (n = 0)"
    return f"{row['asr_text']} [{row['ci_text']}], n = {row['n']}"


def _markdown_conversion(piece: dict[str, Any]) -> list[str]:
    """The original value and the converter chain under a converted excerpt line."""
    lines = []
    original = piece.get("original")
    if original is not None:
        if original.get("media"):
            value = f"[{original['data_type']} not shown]"
        else:
            value = md_inline(original["text"]) + ("…" if original["truncated"] else "")
        lines.append(f"    - original: {value}")
    if piece.get("converters"):
        lines.append(f"    - converters: {md_inline(' → '.join(piece['converters']))}")
    return lines


def render_markdown(document: dict[str, Any]) -> str:
    """The report as Markdown (GitHub-flavoured tables).

    Every value from memory, a finding or an operation is fenced or escaped
    (:mod:`redteam.core.markdown_safe`): pasted anywhere, it renders as text, never as HTML, a
    link or an image."""
    document = for_people(document)
    ex, ap, snap = document["executive"], document["appendix"], document["snapshot"]
    lines = [f"# {md_inline(document['title'])}", ""]
    operation = document["scope"]["operation"]
    if operation:
        lines += [f"Operation **{md_inline(operation['name'])}**.", ""]
        if operation["description"]:
            lines += [md_fence(operation["description"]), ""]
    lines += [
        f"Scope: {md_code(document['scope']['display'])} · made {snap['made_at']} · "
        f"snapshot `{snap['sha256']}`",
        "",
        basis_text(document),
        "",
        "## Executive summary",
        "",
        f"Attack success rate: **{_rate(ex['total'])}** over {ex['total']['attacks']} attacks "
        "(95 % Wilson interval).",
        "",
    ]
    for title, key in (
        ("By risk category", "by_risk_category"),
        ("By attack technique", "by_technique"),
        ("By attack complexity", "by_complexity"),
    ):
        lines += [
            f"### {title}",
            "",
            "| group | success rate [95 % CI] | attacks |",
            "|---|---|---|",
        ]
        lines += [f"| {md_inline(r['label'])} | {_rate(r)} | {r['attacks']} |" for r in ex[key]]
        lines.append("")
    lines += ["### Findings", "", "| severity | count |", "|---|---|"]
    lines += [f"| {r['label']} | {r['count']} |" for r in ex["findings_by_severity"]]
    lines += ["", "| status | count |", "|---|---|"]
    lines += [f"| {r['label']} | {r['count']} |" for r in ex["findings_by_status"] if r["count"]]
    # Reports made before framework tags were summarised have no such list.
    if ex.get("findings_by_framework_tag"):
        lines += ["", "| framework tag | entry | findings |", "|---|---|---|"]
        lines += [
            f"| {md_inline(r['tag'])} | {md_inline(r['title']) or '—'} | {r['count']} |"
            for r in ex["findings_by_framework_tag"]
        ]
    lines += ["", "## Findings", ""]
    for finding in document["findings"]:
        lines += [
            f"### [{finding['severity_label']}] {md_inline(finding['title'])}",
            "",
            f"Status: {finding['status_label']} · owner: {md_inline(finding['owner']) or '—'} · "
            f"harm: {md_inline(finding['harm_categories_text']) or '—'} · tags: "
            f"{md_inline(finding['framework_tags_text']) or '—'}",
            "",
        ]
        for heading, key in (
            ("Description", "description"),
            ("Reproduction steps", "reproduction_steps"),
            ("Remediation", "remediation"),
        ):
            if finding[key]:
                lines += [f"**{heading}.**", "", md_fence(finding[key]), ""]
        for evidence in finding["evidence"]:
            lines.append(
                f"- Evidence: {evidence['kind_label']} {md_code(evidence['ref'])} — seal "
                f"{evidence['seal_state']} (`{evidence['seal'][:16]}…`)"
            )
            for piece in evidence["excerpt"]:
                if "text" in piece:
                    quoted = md_inline(piece["text"])
                    more = "…" if piece["truncated"] else ""
                    lines.append(f"  - **{piece['role']}**: {quoted}{more}")
                else:
                    state = "redacted" if piece["media"].get("redacted") else "not shown"
                    lines.append(f"  - **{piece['role']}**: [{piece['data_type']} {state}]")
                lines += _markdown_conversion(piece)
        lines.append("")
    lines += ["## Appendix: method", ""]
    for title, key in (
        ("Targets", "targets"),
        ("Attacks", "attacks"),
        ("Atomic attacks", "atomic_attacks"),
        ("Converters", "converters"),
        ("Scorers", "scorers"),
    ):
        lines += [f"### {title}", "", "| class | model | hash | eval hash |", "|---|---|---|---|"]
        lines += [
            # md_inline, not a code span: a "|" inside a code span still splits a GFM cell.
            f"| {md_inline(i['class_name'])} | {md_inline(i['model_name'] or '')} | "
            f"{md_inline(i['hash'])} | {md_inline(i['eval_hash'] or '')} |"
            for i in ap[key]
        ]
        lines.append("")
    datasets = ", ".join(f"{md_inline(d['name'])} ({d['attacks']})" for d in ap["seed_datasets"])
    datasets = datasets or "—"
    volumes = ap["volumes"]
    lines += [
        f"Seed datasets: {datasets}",
        "",
        f"Volumes: {volumes['attacks']} attacks, {volumes['conversations']} conversations, "
        f"{volumes['pieces']} pieces, {volumes['scores']} scores.",
        "",
        f"Time range: {ap['time_range']['first'] or '—'} to {ap['time_range']['last'] or '—'}.",
        "",
    ]
    return "\n".join(lines)


def render_html(document: dict[str, Any], *, pdf: bool = False) -> str:
    """The report as one HTML file: inline styles, embedded media, no script, no server.

    Opened from disk it is the static bundle: the snapshot rides along as JSON. ``pdf``
    leaves media out (a PDF cannot blur it, and reviewer safety says never show it plainly).
    """
    readable = for_people(document)
    html = render_to_string(
        "findings/report_standalone.html",
        # The snapshot rides along through json_script, which escapes <, > and & so no text
        # inside it (a title with "</script>") can end the island.
        {"doc": readable, "basis": basis_text(readable), "pdf": pdf, "snapshot": document},
    )
    # Opened from disk no server sends a CSP: the file carries its own, which lets nothing
    # load or run but its inline styles and data: images (WeasyPrint ignores it).
    return html if pdf else with_inline_csp(html)


def render_pdf(document: dict[str, Any]) -> bytes:
    """The report as PDF: the standalone HTML laid out by WeasyPrint (A4, page numbers)."""
    from weasyprint import HTML  # imported here: it loads Pango, which only PDFs need

    # Only data: URLs and Redline's static files: nothing a response could smuggle in (an
    # http:// image, a file:// path) is fetched while the PDF is laid out.
    return HTML(
        string=render_html(document, pdf=True), url_fetcher=report_url_fetcher()
    ).write_pdf()
