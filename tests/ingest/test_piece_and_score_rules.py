"""The piece and score readers: a well-formed item reads clean, and every unusual value is
reported at its own path (never accepted silently, never dropped)."""

from __future__ import annotations

import uuid

import pytest

from memory.transfer.ingest import normalize
from tests.ingest.conftest import EXPORT_012, EXPORT_110, load


def _pieces(data):
    if "message_pieces" in data:
        return data["message_pieces"]
    return [p for c in data["conversations"] for m in c["messages"] for p in m["message_pieces"]]


def _scores(data):
    found = list(data.get("scores", []))
    found += [s for p in _pieces(data) for s in p.get("scores") or []]
    return found


EXPORTS = {"1.1.0": EXPORT_110, "0.12.1": EXPORT_012}


@pytest.mark.parametrize("version", list(EXPORTS))
def test_every_piece_and_score_pyrit_wrote_reads_clean(version):
    data = load(EXPORTS[version])
    for index, raw in enumerate(_pieces(data)):
        piece, problems = normalize.normalize_piece(raw, f"p[{index}]")
        assert problems == [] and piece is not None
        assert piece.spec.original_value == raw["original_value"]
    for raw in _scores(data):
        score, problems = normalize.normalize_score(raw, "s")
        assert problems == [] and score is not None


PIECE = {
    "id": str(uuid.uuid4()),
    "role": "user",
    "conversation_id": "c-1",
    "sequence": 0,
    "original_value": "hello",
    "timestamp": "2026-11-21T12:00:00",
    "labels": {"op": "x"},
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"role": "robot"}, "role"),
        ({"role": None}, "role"),
        ({"sequence": -1}, "sequence"),
        ({"sequence": True}, "sequence"),
        ({"sequence": "3"}, "sequence"),
        ({"conversation_id": "  "}, "conversation_id"),
        ({"original_value": 5}, "original_value"),
        ({"original_value_data_type": ""}, "original_value_data_type"),
        ({"response_error": "oops"}, "response_error"),
        ({"id": "not-a-uuid"}, "id"),
        ({"timestamp": "yesterday"}, "timestamp"),
        ({"labels": ["a"]}, "labels"),
        ({"targeted_harm_categories": "violence"}, "targeted_harm_categories"),
        ({"converter_identifiers": ["Base64Converter"]}, "converter_identifiers[0]"),
        ({"prompt_target_identifier": "OpenAI"}, "prompt_target_identifier"),
        ({"converted_value": 5}, "converted_value"),
    ],
)
def test_an_unusual_piece_value_is_a_problem_at_its_path(change, field):
    _, problems = normalize.normalize_piece({**PIECE, **change}, "p")
    assert f"p.{field}" in [p.path for p in problems]


def test_a_piece_reads_aliases_a_naive_timestamp_as_utc_and_keeps_unknown_keys():
    attack = {"class_name": "RedTeamingAttack", "class_module": "pyrit.executor"}
    piece, problems = normalize.normalize_piece(
        {**PIECE, "team": "red", "orchestrator_identifier": attack, "originator": "orchestrator"},
        "p",
    )
    assert problems == []
    assert piece.spec.timestamp.tzinfo is not None
    assert piece.spec.extra == {"team": "red"}
    assert piece.spec.id == uuid.UUID(PIECE["id"])
    assert piece.spec.attack_identifier.class_name == "RedTeamingAttack"
    assert piece.spec.originator == "attack"


SCORE = {
    "id": str(uuid.uuid4()),
    "score_type": "true_false",
    "score_value": "True",
    "scorer_class_identifier": {"class_name": "S", "class_module": "m"},
    "message_piece_id": str(uuid.uuid4()),
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"score_type": "maybe"}, "score_type"),
        ({"score_value": "perhaps"}, "score_value"),
        ({"score_value": 1}, "score_value"),
        ({"status": "undetermined"}, "score_value"),
        ({"status": ""}, "status"),
        ({"scorer_class_identifier": None}, "scorer_class_identifier"),
        ({"message_piece_id": "x"}, "message_piece_id"),
        ({"score_category": [1]}, "score_category"),
        ({"scorable": {"scorable_type": "nope"}}, "scorable.scorable_type"),
        ({"objective": 3}, "objective"),
    ],
)
def test_an_unusual_score_value_is_a_problem_at_its_path(change, field):
    _, problems = normalize.normalize_score({**SCORE, **change}, "s")
    assert f"s.{field}" in [p.path for p in problems]


def test_a_score_keeps_a_differing_legacy_value_in_extra():
    score, problems = normalize.normalize_score({**SCORE, "objective": "a", "task": "b"}, "s")
    assert problems == []
    assert score.objective == "a"
    assert score.extra == {"task": "b"}


def test_a_score_reads_the_legacy_names_when_the_current_ones_are_missing():
    piece_id = SCORE["message_piece_id"]
    legacy = {k: v for k, v in SCORE.items() if k != "message_piece_id"}
    score, problems = normalize.normalize_score(
        {**legacy, "prompt_request_response_id": piece_id, "task": "t"}, "s"
    )
    assert problems == []
    assert (score.message_piece_id, score.objective, score.extra) == (uuid.UUID(piece_id), "t", {})
