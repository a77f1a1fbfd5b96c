"""The findings API: permissions, creation with sealed evidence, status, retests, reports."""

from __future__ import annotations

import pytest

from memory.models import Finding
from redteam.core.choices import AttackOutcome
from tests.conftest import logged_in
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


def _create(client, built, **extra):
    return client.post(
        "/api/v1/findings/",
        {
            "title": "Badge reader bypass",
            "severity": "high",
            "harm_categories": ["violence"],
            "evidence": [{"kind": "attack", "ref": str(built.attack.pk)}],
            **extra,
        },
        content_type="application/json",
    )


def test_reviewers_create_findings_viewers_read_them(build, reviewer, viewer):
    built = build()
    assert _create(logged_in(viewer), built).status_code == 403
    response = _create(logged_in(reviewer), built)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "new" and body["evidence"][0]["seal_state"] == "intact"
    listed = logged_in(viewer).get("/api/v1/findings/", {"severity": "high"}).json()
    assert [f["id"] for f in listed["results"]] == [body["id"]]
    assert logged_in(viewer).get("/api/v1/findings/", {"status": "closed"}).status_code == 400


def test_problems_name_their_path(build, reviewer):
    built = build()
    response = _create(
        logged_in(reviewer), built, evidence=[{"kind": "piece", "ref": str(built.attack.pk)}]
    )
    assert response.status_code == 400
    assert response.json()["problems"][0]["path"] == "evidence[0].ref"


def test_status_comments_evidence_and_retests(build, reviewer):
    built = build()
    client = logged_in(reviewer)
    finding = _create(client, built).json()
    base = f"/api/v1/findings/{finding['id']}/"
    wrong = client.post(base + "status/", {"status": "mitigated"}, content_type="application/json")
    assert wrong.status_code == 400
    for status in ("confirmed", "mitigated"):
        response = client.post(
            base + "status/", {"status": status, "note": "ok"}, content_type="application/json"
        )
        assert response.status_code == 200 and response.json()["status"] == status
    other = build()
    attached = client.post(
        base + "evidence/",
        [{"kind": "piece", "ref": str(other.response.pk), "note": "the answer"}],
        content_type="application/json",
    )
    assert attached.status_code == 201 and len(attached.json()["evidence"]) == 2
    assert client.post(base + "comments/", {"body": "hi"}).status_code == 201
    later = build(outcome=AttackOutcome.SUCCESS, minutes=10)
    retest = client.post(
        base + "retests/",
        {"attack_result_id": str(later.attack.pk)},
        content_type="application/json",
    )
    assert retest.status_code == 201 and retest.json()["status"] == "retest_failed"
    patched = client.patch(base, {"severity": "critical"}, content_type="application/json")
    assert patched.status_code == 200 and patched.json()["severity"] == "critical"
    assert Finding.objects.get().history.count() >= 5


def test_list_query_count_is_fixed(build, reviewer):
    client = logged_in(reviewer)

    def queries() -> int:
        count, response = count_queries(client.get, "/api/v1/findings/")
        assert response.status_code == 200
        return count

    _create(client, build())
    first = queries()
    _create(client, build(), title="second")
    _create(client, build(), title="third")
    assert queries() == first


def test_operations_and_reports_over_the_api(build, reviewer, viewer):
    build()
    client = logged_in(reviewer)
    op = client.post(
        "/api/v1/operations/",
        {"name": "Blue Heron", "pyrit_operation": "Op Blue Heron"},
        content_type="application/json",
    )
    assert op.status_code == 201, op.json()
    assert op.json()["attack_query"] == "labels=operation%3AOp+Blue+Heron"
    bad = client.post(
        "/api/v1/operations/",
        {"name": "Bad", "attack_filter": "timestamp_after=never"},
        content_type="application/json",
    )
    assert bad.status_code == 400
    report = client.post(
        "/api/v1/reports/", {"operation": op.json()["id"]}, content_type="application/json"
    )
    assert report.status_code == 201
    assert report.json()["snapshot"]["executive"]["total"]["attacks"] == 1
    assert logged_in(viewer).post("/api/v1/reports/", {}).status_code == 403
    assert logged_in(viewer).get("/api/v1/reports/").status_code == 200


@pytest.mark.parametrize("target_systems", [True, "one string", 42])
def test_target_systems_that_are_not_a_list_are_a_400_not_a_500(reviewer, target_systems):
    """Found by the API fuzzing: a boolean here was a TypeError deep in the service."""
    from memory.findings.services import operation_save
    from redteam.core.errors import InvalidMemory

    client = logged_in(reviewer)
    response = client.post(
        "/api/v1/operations/",
        {"name": "op", "target_systems": target_systems},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "target_systems" in response.content.decode()
    with pytest.raises(InvalidMemory, match="target_systems: must be a list of strings"):
        operation_save(operation=None, actor=reviewer, name="op", target_systems=target_systems)


def test_a_member_name_with_a_nul_is_a_400_on_every_database(reviewer):
    """Found by the API fuzzing on PostgreSQL, which refuses NUL even in a look-up."""
    response = logged_in(reviewer).post(
        "/api/v1/operations/",
        {"name": "op", "members": ["ri\x00ta"]},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "members" in response.json()
