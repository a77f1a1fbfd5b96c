""" "Open an issue": a finding as Markdown that GitHub and Jira (Markdown mode) both render."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.urls import reverse

from memory.findings.selectors import SealCheck
from memory.models import EvidenceKind, Finding
from redteam.core.markdown_safe import md_code, md_fence, md_inline


def _section(title: str, text: str) -> list[str]:
    # Finding text quotes model output: fenced, it pastes as the text it is, never as markup.
    return [f"## {title}", "", md_fence(text.strip()), ""] if text and text.strip() else []


def issue_markdown(
    *,
    finding: Finding,
    checks: Sequence[SealCheck],
    url: str,
    absolute: Callable[[str], str],
) -> str:
    """Title line, a facts table, description, reproduction, remediation and the evidence
    with links back to Redline and each seal's state.

    Every value a person or a model wrote is fenced or escaped (:mod:`redteam.core.markdown_safe`);
    the only links are Redline's own pages."""
    lines = [
        f"# [{finding.get_severity_display()}] {md_inline(finding.title)}",
        "",
        "| | |",
        "|---|---|",
        f"| Severity | {finding.get_severity_display()} |",
        f"| Status | {finding.get_status_display()} |",
        f"| Operation | {md_inline(finding.operation.name) if finding.operation else '—'} |",
        f"| Owner | {md_inline(finding.owner.get_username()) if finding.owner else '—'} |",
        f"| Harm categories | {md_inline(', '.join(finding.harm_categories)) or '—'} |",
        f"| Framework tags | {md_inline(', '.join(finding.framework_tags)) or '—'} |",
        f"| Redline | {url} |",
        "",
    ]
    lines += _section("Description", finding.description)
    lines += _section("Steps to reproduce", finding.reproduction_steps)
    lines += _section("Remediation", finding.remediation)
    if checks:
        lines += ["## Evidence", ""]
        for check in checks:
            evidence = check.evidence
            link = ""
            if evidence.kind == EvidenceKind.ATTACK and evidence.attack_result_id:
                link = absolute(reverse("attack-detail", args=[evidence.attack_result_id]))
            elif evidence.conversation_id and evidence.kind == EvidenceKind.CONVERSATION:
                link = absolute(reverse("conversation-detail", args=[evidence.ref]))
            target = f"[{md_inline(evidence.ref)}]({link})" if link else md_code(evidence.ref)
            lines.append(
                f"- {evidence.get_kind_display()} {target} — seal `{evidence.seal[:16]}…` "
                f"{check.state}"
            )
        lines.append("")
    lines.append("_Exported from Redline._")
    return "\n".join(lines) + "\n"
