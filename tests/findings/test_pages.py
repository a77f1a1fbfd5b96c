"""The operation, finding and report pages; the attack page's and list's finding actions."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.findings.services import EvidenceSpec, finding_create, operation_save
from memory.models import Evidence, Finding, FindingStatus, Retest
from redteam.core.choices import AttackOutcome
from tests.conftest import logged_in
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


@pytest.fixture
def finding(build, reviewer):
    built = build()
    return finding_create(
        actor=reviewer,
        title="Badge reader bypass",
        severity="high",
        evidence=[EvidenceSpec("attack", str(built.attack.pk))],
    )


def test_attack_page_offers_new_finding_to_reviewers_only(build, reviewer, viewer):
    built = build()
    url = reverse("attack-detail", args=[built.attack.pk])
    page = logged_in(reviewer).get(url).content.decode()
    assert f"/findings/new/?evidence=attack:{built.attack.pk}" in page
    assert f"/findings/add/?evidence=attack:{built.attack.pk}" in page
    assert "New finding" not in logged_in(viewer).get(url).content.decode()


def test_new_finding_from_the_attack_page(build, reviewer):
    built = build()
    client = logged_in(reviewer)
    form = client.get(reverse("finding-create"), {"evidence": f"attack:{built.attack.pk}"})
    assert form.status_code == 200
    assert "violence" in form.content.decode()  # harm categories proposed from the attack
    response = client.post(
        reverse("finding-create"),
        {
            "evidence": f"attack:{built.attack.pk}",
            "title": "Badge reader bypass",
            "severity": "high",
            "harm_categories": "violence",
            "framework_tags": "owasp-llm:LLM01",
        },
    )
    finding = Finding.objects.get()
    assert response.status_code == 302 and response["Location"] == finding.get_absolute_url()
    assert finding.framework_tags == ["owasp-llm:LLM01"]
    assert Evidence.objects.get(finding=finding).attack_result == built.attack


def test_new_finding_from_a_selection_in_the_attack_list(build, reviewer):
    a, b = build(), build()
    client = logged_in(reviewer)
    listing = client.get(reverse("attack-list")).content.decode()
    assert 'form="finding-selection"' in listing and 'id="finding-selection"' in listing
    form = client.post(reverse("finding-create"), {"attack": [str(a.attack.pk), str(b.attack.pk)]})
    assert form.status_code == 200
    body = form.content.decode()
    assert f"attack:{a.attack.pk}" in body and f"attack:{b.attack.pk}" in body


def test_add_to_an_existing_finding(build, finding, reviewer):
    other = build()
    client = logged_in(reviewer)
    pick = client.get(reverse("finding-pick"), {"evidence": f"attack:{other.attack.pk}"})
    assert finding.title in pick.content.decode()
    client.post(
        reverse("finding-evidence", args=[finding.pk]), {"evidence": f"attack:{other.attack.pk}"}
    )
    assert finding.evidence.count() == 2


def test_viewers_read_findings_but_cannot_write(finding, viewer):
    client = logged_in(viewer)
    assert client.get(finding.get_absolute_url()).status_code == 200
    assert client.get(reverse("finding-list")).status_code == 200
    assert client.get(reverse("finding-create")).status_code == 403
    response = client.post(reverse("finding-status", args=[finding.pk]), {"status": "confirmed"})
    assert response.status_code == 403
    assert (
        client.post(reverse("finding-comment", args=[finding.pk]), {"body": "x"}).status_code == 403
    )


def test_finding_page_status_change_comment_and_history(finding, reviewer):
    client = logged_in(reviewer)
    client.post(
        reverse("finding-status", args=[finding.pk]), {"status": "confirmed", "note": "reproduced"}
    )
    client.post(reverse("finding-comment", args=[finding.pk]), {"body": "Vendor told."})
    page = client.get(finding.get_absolute_url()).content.decode()
    assert "Confirmed" in page and "reproduced" in page and "Vendor told." in page
    assert "Seal intact" in page


def test_finding_page_query_count_does_not_grow_with_evidence(build, reviewer):
    def page_queries(evidence_count: int) -> int:
        attacks = [build() for _ in range(evidence_count)]
        finding = finding_create(
            actor=reviewer,
            title=f"n={evidence_count}",
            evidence=[EvidenceSpec("attack", str(b.attack.pk)) for b in attacks],
        )
        client = logged_in(reviewer)
        client.get("/")  # session and permissions warmed like a real visit
        count, response = count_queries(client.get, finding.get_absolute_url())
        assert response.status_code == 200
        return count

    assert page_queries(1) == page_queries(4)


def test_the_admin_correcting_an_evidence_piece_breaks_the_seal(build, reviewer, admin_client):
    built = build()
    finding = finding_create(
        actor=reviewer, title="Sealed", evidence=[EvidenceSpec("piece", str(built.response.pk))]
    )
    url = reverse("admin:memory_messagepiece_change", args=[built.response.pk])
    form = admin_client.get(url)
    assert form.status_code == 200 and "correction_reason" in form.content.decode()
    response = admin_client.post(
        url,
        {
            "original_value": built.response.original_value,
            "converted_value": "Sure, here is something else entirely.",
            "correction_reason": "a tester's edit",
            "converters-TOTAL_FORMS": "0",
            "converters-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = logged_in(reviewer).get(finding.get_absolute_url()).content.decode()
    assert "Seal broken" in page and "converted_value" in page
    history = built.response.history.first()
    assert history.history_change_reason == "a tester's edit"


def test_non_superusers_cannot_correct_pieces(build, member):
    built = build()
    staff = member("curator", username="cora")
    url = reverse("admin:memory_messagepiece_change", args=[built.response.pk])
    response = logged_in(staff).post(url, {"converted_value": "x", "correction_reason": "y"})
    assert response.status_code == 403
    built.response.refresh_from_db()
    assert built.response.converted_value != "x"


def test_retest_suggested_and_recorded_on_the_page(build, finding, reviewer):
    later = build(outcome=AttackOutcome.FAILURE, minutes=30)
    client = logged_in(reviewer)
    for status in ("confirmed", "mitigated"):
        client.post(reverse("finding-status", args=[finding.pk]), {"status": status})
    page = client.get(finding.get_absolute_url()).content.decode()
    assert str(later.attack.pk) in page and "Record as retest" in page
    client.post(
        reverse("finding-retest", args=[finding.pk]), {"attack_result_id": str(later.attack.pk)}
    )
    finding.refresh_from_db()
    assert finding.status == FindingStatus.RETEST_PASSED
    assert Retest.objects.get().result == "passed"


def test_open_an_issue_markdown(finding, viewer):
    body = logged_in(viewer).get(reverse("finding-issue", args=[finding.pk])).content.decode()
    assert body.startswith("# [High] Badge reader bypass")
    assert "| Status | New |" in body and "intact" in body and "/attacks/" in body


def test_operation_pages(build, reviewer, viewer, finding):
    build()
    client = logged_in(reviewer)
    response = client.post(
        reverse("operation-create"),
        {"name": "Blue Heron", "pyrit_operation": "Op Blue Heron", "target_systems": "chat\nbot"},
    )
    assert response.status_code == 302
    operation = finding.__class__.operation.field.related_model.objects.get()
    assert operation.target_systems == ["chat", "bot"]
    Finding.objects.filter(pk=finding.pk).update(operation=operation)
    page = logged_in(viewer).get(operation.get_absolute_url()).content.decode()
    assert "labels=operation%3AOp+Blue+Heron" in page  # dashboards and attack list scoped to it
    assert "Badge reader bypass" in page and "violence" in page
    assert "Outcome source: Automated (PyRIT&#x27;s outcome)" in page  # what the rates count
    assert logged_in(viewer).get(reverse("operation-list")).status_code == 200
    assert logged_in(viewer).get(reverse("operation-create")).status_code == 403


def test_operation_form_shows_filter_errors(reviewer):
    response = logged_in(reviewer).post(
        reverse("operation-create"), {"name": "Bad", "attack_filter": "timestamp_after=never"}
    )
    assert response.status_code == 200 and "field-error" in response.content.decode()


def test_operation_page_query_count_is_fixed(build, reviewer):
    op = operation_save(actor=reviewer, name="Blue Heron", pyrit_operation="Op Blue Heron")
    client = logged_in(reviewer)
    client.get("/")

    def queries() -> int:
        count, response = count_queries(client.get, op.get_absolute_url())
        assert response.status_code == 200
        return count

    build()
    first = queries()
    build(harm="cybercrime")
    build(outcome=AttackOutcome.FAILURE)
    assert queries() == first
