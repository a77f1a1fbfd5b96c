"""The normaliser's fast paths build exactly what the general path builds, or step aside."""

from __future__ import annotations

import copy
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
def test_fast_piece_equals_the_general_path(version):
    pieces = _pieces(load(EXPORTS[version]))
    fast_count = 0
    for index, raw in enumerate(pieces):
        raw = {k: v for k, v in raw.items() if k != "scores"}
        fast = normalize._fast_piece(copy.deepcopy(raw), f"p[{index}]", None)
        slow, problems = normalize._normalize_piece(copy.deepcopy(raw), f"p[{index}]")
        assert problems == []
        if fast is not None:
            fast_count += 1
            assert fast == slow
    assert fast_count == len(pieces)


@pytest.mark.parametrize("version", list(EXPORTS))
def test_fast_score_equals_the_general_path(version):
    scores = _scores(load(EXPORTS[version]))
    assert scores
    fast_count = 0
    for raw in scores:
        fast = normalize._fast_score(copy.deepcopy(raw))
        slow, problems = normalize._normalize_score(copy.deepcopy(raw), "s")
        if fast is not None:
            fast_count += 1
            assert problems == []
            assert fast == slow
    assert fast_count == len(scores)


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
    "change",
    [
        {"role": "robot"},
        {"role": None},
        {"sequence": -1},
        {"sequence": True},
        {"sequence": "3"},
        {"conversation_id": "  "},
        {"original_value": 5},
        {"original_value_data_type": ""},
        {"response_error": "oops"},
        {"id": "not-a-uuid"},
        {"timestamp": "yesterday"},
        {"labels": ["a"]},
        {"targeted_harm_categories": "violence"},
        {"converter_identifiers": [{}]},
        {"prompt_target_identifier": "OpenAI"},
        {"orchestrator_identifier": {"__type__": "X", "__module__": "m"}},
    ],
)
def test_fast_piece_steps_aside_for_anything_unusual(change):
    raw = {**PIECE, **change}
    assert normalize._fast_piece(raw, "p", None) is None
    # and the general path decides, as it always did
    normalize._normalize_piece(raw, "p")


def test_fast_piece_naive_timestamp_is_utc_and_unknown_keys_are_extra():
    piece = normalize._fast_piece({**PIECE, "team": "red"}, "p", None)
    assert piece is not None
    assert piece.spec.timestamp.tzinfo is not None
    assert piece.spec.extra == {"team": "red"}
    assert piece.spec.id == uuid.UUID(PIECE["id"])


SCORE = {
    "id": str(uuid.uuid4()),
    "score_type": "true_false",
    "score_value": "True",
    "scorer_class_identifier": {"class_name": "S", "class_module": "m"},
    "message_piece_id": str(uuid.uuid4()),
}


@pytest.mark.parametrize(
    "change",
    [
        {"score_type": "maybe"},
        {"score_value": "perhaps"},
        {"score_value": 1},
        {"status": "undetermined"},
        {"status": ""},
        {"scorer_class_identifier": None},
        {"message_piece_id": "x"},
        {"score_category": [1]},
        {"scorable": {"scorable_type": "nope"}},
        {"objective": 3},
    ],
)
def test_fast_score_steps_aside_for_anything_unusual(change):
    assert normalize._fast_score({**SCORE, **change}) is None


def test_fast_score_keeps_a_differing_legacy_value_in_extra():
    score = normalize._fast_score({**SCORE, "objective": "a", "task": "b"})
    slow, problems = normalize._normalize_score({**SCORE, "objective": "a", "task": "b"}, "s")
    assert problems == []
    assert score == slow
    assert score.extra == {"task": "b"}
