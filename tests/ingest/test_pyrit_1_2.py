"""Ingesting PyRIT 1.2 ``model_dump`` shapes over the API: a score's ``scored_expectation``,
an attack result's ``automated_score`` / ``human_score`` / ``operator`` / ``operation``, and the
``pyrit_records`` section (verbatim rows), which the read API and the export give back."""

from __future__ import annotations

import copy
import json
import uuid

import pytest

from memory.models import AttackResult, PyritRecord, Score
from tests.ingest.conftest import EXPORT_110, load, post_json

pytestmark = pytest.mark.django_db

RECORDS = [
    {
        "table": "FindingEntries",
        "pk": "8a1d2c3b-4e5f-4a6b-9c7d-0e1f2a3b4c5d",
        "row": {
            "id": "8a1d2c3b-4e5f-4a6b-9c7d-0e1f2a3b4c5d",
            "operation_id": "5f0c3a52-8d7e-4b1a-9c64-2e8f1d7a3b90",
            "title": "Null byte\x00in the title",
            "severity": "important",
            "harm_type": None,
        },
        "pyrit_version": "",
        "alembic_revision": "c8d3e5f7a901",
    },
    {
        "table": "ObservationMessagePieceEntries",
        "pk": '["0b5e4d3c-2a19-4f08-8e7d-6c5b4a392817", 0]',
        "row": {"observation_id": "0b5e4d3c-2a19-4f08-8e7d-6c5b4a392817", "position": 0},
    },
]


def _scores_in(value):
    """Every score dict in a payload, wherever it is embedded."""
    if isinstance(value, dict):
        if "score_type" in value:
            yield value
        for item in value.values():
            yield from _scores_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scores_in(item)


def _as_1_2(export: dict) -> tuple[dict, dict]:
    """The 1.1.0 fixture export as PyRIT 1.2 dumps it: scores carry ``scored_expectation``
    (with ``objective`` as its read-only view), one attack result is split as 1.2 splits it."""
    payload = copy.deepcopy(export)
    for score in _scores_in(payload):
        if score.get("objective") is not None:
            score["scored_expectation"] = {
                "objective": score["objective"],
                "conditions": [],
                "extra": {},
            }
    attack = next(a for a in payload["attack_results"] if a.get("last_score"))
    attack["automated_score"] = attack.pop("last_score")
    attack["operator"] = attack["labels"].pop("operator")
    attack["operation"] = attack["labels"].pop("operation")
    human = next(s for s in payload["scores"] if s["id"] != attack["automated_score"]["id"])
    attack["human_score"] = human
    payload["pyrit_records"] = RECORDS
    return payload, attack


def test_pyrit_1_2_shapes_are_stored_in_their_fields(ingest_client):
    payload, attack = _as_1_2(load(EXPORT_110))

    response = post_json(ingest_client, payload)

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["counts"]["pyrit_records"]["created"] == 2
    stored = AttackResult.objects.get(pk=attack["attack_result_id"])
    assert stored.last_score_id == uuid.UUID(attack["automated_score"]["id"])
    assert stored.human_score_id == uuid.UUID(attack["human_score"]["id"])
    assert (stored.operator, stored.operation) == ("bob", "op_blue_heron")
    assert stored.labels == {}
    assert "automated_score" not in stored.extra and "human_score" not in stored.extra
    with_expectation = [s for s in payload["scores"] if "scored_expectation" in s]
    assert with_expectation
    for score in with_expectation:
        row = Score.objects.get(pk=score["id"])
        assert row.scored_expectation == score["scored_expectation"]
        assert row.objective == score["objective"]
    finding = PyritRecord.objects.get(table="FindingEntries")
    assert finding.row == RECORDS[0]["row"]
    assert finding.alembic_revision == "c8d3e5f7a901"

    again = post_json(ingest_client, payload)
    assert again.status_code == 200, again.json()
    counts = again.json()["counts"]
    assert counts["pyrit_records"] == {"created": 0, "updated": 0, "unchanged": 2, "error": 0}
    assert counts["scores"]["created"] == 0


def test_the_read_api_gives_the_new_fields_back(ingest_client, read_client):
    payload, attack = _as_1_2(load(EXPORT_110))
    assert post_json(ingest_client, payload).status_code == 200

    data = read_client.get(f"/api/v1/attack-results/{attack['attack_result_id']}/").json()

    assert data["human_score_id"] == attack["human_score"]["id"]
    assert data["last_score_id"] == attack["automated_score"]["id"]
    assert (data["operator"], data["operation"]) == ("bob", "op_blue_heron")
    score_id = next(s["id"] for s in payload["scores"] if "scored_expectation" in s)
    score = read_client.get(f"/api/v1/scores/{score_id}/").json()
    assert score["scored_expectation"]["conditions"] == []
    assert score["objective"] == score["scored_expectation"]["objective"]


def test_a_score_objective_disagreeing_with_its_expectation_keeps_the_given_objective(
    ingest_client,
):
    payload = load(EXPORT_110)
    score = next(s for s in payload["scores"] if s.get("objective"))
    score["scored_expectation"] = {"objective": "something else", "conditions": []}

    assert post_json(ingest_client, {"scores": [score]}).status_code == 200

    row = Score.objects.get(pk=score["id"])
    assert row.objective == score["objective"]
    assert row.scored_expectation["objective"] == "something else"


@pytest.mark.parametrize(
    ("record", "path"),
    [
        ({"pk": "1", "row": {}}, "pyrit_records[0].table"),
        ({"table": "T", "row": {}}, "pyrit_records[0].pk"),
        ({"table": "T", "pk": "1", "row": []}, "pyrit_records[0].row"),
        ({"table": "T", "pk": "1", "row": {}, "colour": "red"}, "pyrit_records[0].colour"),
        ({"table": "T" * 129, "pk": "1", "row": {}}, "pyrit_records[0].table"),
    ],
)
def test_a_bad_record_is_refused_with_its_path(ingest_client, record, path):
    response = post_json(ingest_client, {"pyrit_records": [record]})

    assert response.status_code == 400
    assert path in [e["path"] for e in response.json()["errors"]]
    assert not PyritRecord.objects.exists()


def test_the_same_row_twice_in_one_batch_is_a_problem(ingest_client):
    response = post_json(ingest_client, {"pyrit_records": [RECORDS[1], RECORDS[1]]})

    assert response.status_code == 400
    assert "appears twice" in json.dumps(response.json()["errors"])
