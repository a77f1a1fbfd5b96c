"""Reports: figures equal to /api/v1/stats/, snapshots that regenerate identically, formats."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from memory.findings.reports import build_document, content_hash, render_markdown
from memory.findings.selectors import operation_params
from memory.findings.services import EvidenceSpec, finding_create, operation_save, report_create
from redteam.core.choices import AttackOutcome
from tests.conftest import logged_in

pytestmark = pytest.mark.django_db

RATE_KEYS = (
    "successes",
    "failures",
    "undetermined",
    "errors",
    "attacks",
    "n",
    "asr",
    "ci_low",
    "ci_high",
)


@pytest.fixture
def scene(build, reviewer):
    attacks = [
        build(),
        build(harm="cybercrime"),
        build(outcome=AttackOutcome.FAILURE),
        build(outcome=AttackOutcome.FAILURE, harm="cybercrime"),
        build(outcome=AttackOutcome.UNDETERMINED),
        build(operation="Other", harm="cybercrime"),
    ]
    operation = operation_save(actor=reviewer, name="Blue Heron", pyrit_operation="Op Blue Heron")
    finding_create(
        actor=reviewer,
        title="Badge reader bypass",
        severity="high",
        operation=operation,
        evidence=[EvidenceSpec("attack", str(attacks[0].attack.pk))],
    )
    return operation, attacks


def _rates(row):
    return {key: row[key] for key in RATE_KEYS}


def test_report_figures_equal_the_stats_api(scene, reviewer, viewer):
    operation, _ = scene
    report = report_create(actor=reviewer, operation=operation)
    doc = report.snapshot
    query = dict(operation_params(operation))
    api = logged_in(viewer)
    summary = api.get("/api/v1/stats/summary", query).json()
    assert _rates(doc["executive"]["total"]) == _rates(summary["total"])
    assert doc["snapshot"]["counts"]["conversations"] == summary["conversations"]
    assert doc["snapshot"]["counts"]["pieces"] == summary["pieces"]
    for key, group_by in (("by_risk_category", "harm_category"), ("by_technique", "attack_class")):
        groups = api.get("/api/v1/stats/asr", {**query, "group_by": group_by}).json()["groups"]
        assert [(_rates(r), r["key"]) for r in doc["executive"][key]] == [
            (_rates(g), g["key"]) for g in groups
        ]
    assert doc["executive"]["total"]["attacks"] == 5
    assert doc["executive"]["findings_by_severity"][1] == {
        "key": "high",
        "label": "High",
        "count": 1,
    }


def test_a_saved_filter_report_equals_the_stats_api(scene, reviewer, viewer):
    report = report_create(actor=reviewer, scope_query="harm_category=cybercrime")
    summary = logged_in(viewer).get("/api/v1/stats/summary", {"harm_category": "cybercrime"})
    assert _rates(report.snapshot["executive"]["total"]) == _rates(summary.json()["total"])
    assert report.attack_count == 3


def test_the_snapshot_hash_is_stable_and_notices_changes(scene, reviewer, superuser):
    operation, attacks = scene
    first = report_create(actor=reviewer, operation=operation)
    again = report_create(actor=reviewer, operation=operation)
    assert first.snapshot_sha256 == again.snapshot_sha256
    assert content_hash(first.snapshot) == first.snapshot_sha256
    from memory.storage.services import piece_correct

    piece_correct(piece=attacks[0].response, actor=superuser, reason="t", converted_value="x")
    changed = report_create(actor=reviewer, operation=operation)
    assert changed.snapshot_sha256 != first.snapshot_sha256
    [finding] = changed.snapshot["findings"]
    assert finding["evidence"][0]["seal_state"] == "broken"


def test_downloads_are_rendered_from_the_stored_snapshot(scene, reviewer, viewer, build):
    operation, _ = scene
    report = report_create(actor=reviewer, operation=operation)
    client = logged_in(viewer)
    first = {
        fmt: client.get(reverse("report-download", args=[report.pk, fmt]))
        for fmt in ("md", "json", "html")
    }
    build()  # memory changes after the report was made
    for fmt, response in first.items():
        assert response.status_code == 200
        assert "attachment" in response["Content-Disposition"]
        again = client.get(reverse("report-download", args=[report.pk, fmt]))
        assert again.content == response.content, fmt
    assert json.loads(first["json"].content)["snapshot"]["sha256"] == report.snapshot_sha256
    html = first["html"].content.decode()
    assert "<link" not in html and 'src="/' not in html and 'href="/' not in html
    assert report.snapshot_sha256 in html and "Badge reader bypass" in html
    md = first["md"].content.decode()
    assert md.startswith("# Operation Blue Heron") and "| violence |" in md


def test_report_pages_and_tiers(scene, reviewer, viewer):
    operation, _ = scene
    response = logged_in(reviewer).post(reverse("report-create"), {"operation": operation.pk})
    assert response.status_code == 302
    page = logged_in(viewer).get(response["Location"]).content.decode()
    for part in (
        "Executive summary",
        "Findings in detail",
        "Appendix: method",
        "PromptSendingAttack",
    ):
        assert part in page
    assert logged_in(viewer).post(reverse("report-create"), {}).status_code == 403


def test_media_is_redacted_on_request(build, reviewer):
    from memory.models import MessagePiece

    built = build()
    MessagePiece.objects.filter(pk=built.response.pk).update(
        converted_value="/tmp/x.png", converted_value_data_type="image_path"
    )
    finding_create(
        actor=reviewer, title="Image", evidence=[EvidenceSpec("attack", str(built.attack.pk))]
    )
    doc = build_document(params=(("harm_category", "violence"),), title="t", redact_media=True)
    excerpt = doc["findings"][0]["evidence"][0]["excerpt"]
    assert excerpt[1]["media"] == {"redacted": True}
    assert "[image_path redacted]" in render_markdown(doc)
