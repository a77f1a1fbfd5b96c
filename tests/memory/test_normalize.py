"""Tests of memory.transfer.ingest.normalize: PyRIT JSON of every version into specs.

No database is needed.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory.storage.services import Problem
from memory.transfer.ingest.normalize import (
    normalize_attack_result,
    normalize_batch,
    normalize_piece,
    normalize_score,
)
from redteam.core.identifiers import ComponentIdentifier
from tests.conftest import FIXTURES_DIR

SMALL = FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json"
LEGACY = FIXTURES_DIR / "pyrit-0.12.1-legacy" / "export.json"

CONV = "ff933e21-721f-4cc0-aa6d-c2e2efa747d3"


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _raw_pieces(data: dict[str, Any]) -> list[dict[str, Any]]:
    pieces = list(data.get("message_pieces", []))
    for conversation in data.get("conversations", []):
        for message in conversation["messages"]:
            pieces.extend(message["message_pieces"])
    return pieces


def _raw_score_ids(data: dict[str, Any]) -> set[str]:
    ids = {s["id"] for s in data.get("scores", [])}
    ids |= {s["id"] for p in _raw_pieces(data) for s in p.get("scores") or []}
    ids |= {a["last_score"]["id"] for a in data["attack_results"] if a.get("last_score")}
    return ids


def _hashes(value: Any) -> list[str]:
    """Every stored ``hash`` of the identifier dicts in ``value``, depth first."""
    found: list[str] = []
    if isinstance(value, dict):
        if "hash" in value:
            found.append(value["hash"])
        for child in (value.get("children") or {}).values():
            found.extend(_hashes(child))
    elif isinstance(value, list):
        for item in value:
            found.extend(_hashes(item))
    return found


def _identifier_hashes(identifier: ComponentIdentifier | None) -> list[str]:
    if identifier is None:
        return []
    found = [identifier.hash]
    for child in identifier.children.values():
        for item in child if isinstance(child, list) else [child]:
            found.extend(_identifier_hashes(item))
    return found


@pytest.mark.parametrize("path", [SMALL, LEGACY], ids=["1.1.0", "0.12.1"])
def test_fixture_exports_normalise_without_problems_or_loss(path: Path) -> None:
    data = _load(path)
    batch, problems = normalize_batch(data)

    assert problems == []
    raw_pieces = _raw_pieces(data)
    assert len(batch.pieces) == len(raw_pieces)
    assert [str(p.spec.id) for p in batch.pieces] == [p["id"] for p in raw_pieces]
    assert sum(len(m.pieces) for m in batch.messages) == len(raw_pieces)
    assert len({(m.conversation_id, m.sequence) for m in batch.messages}) == len(batch.messages)
    assert {str(s.id) for s in batch.scores} == _raw_score_ids(data)
    assert len(batch.scores) == len(_raw_score_ids(data))
    assert len(batch.attack_results) == len(data["attack_results"])
    assert len(batch.seeds) == len(data["seeds"])
    assert batch.meta["pyrit_version"] == data["pyrit_version"]
    # nothing unknown: every key was understood
    assert all(p.spec.extra == {} for p in batch.pieces)
    assert all(s.extra == {} for s in batch.scores)
    assert all(a.extra == {} for a in batch.attack_results)

    by_id = {str(p.spec.id): p for p in batch.pieces}
    for raw in raw_pieces:
        piece = by_id[raw["id"]]
        assert piece.role == raw["role"]
        assert piece.sequence == raw["sequence"]
        assert piece.conversation_id == raw["conversation_id"]
        assert piece.spec.original_value == raw["original_value"]
        assert piece.spec.converted_value == raw["converted_value"]
        assert piece.spec.timestamp is not None and piece.spec.timestamp.tzinfo is not None
        assert [c.hash for c in piece.spec.converter_identifiers] == [
            c["hash"] for c in raw["converter_identifiers"]
        ]
        for key in ("prompt_target_identifier", "attack_identifier"):
            if raw.get(key):
                assert getattr(piece.spec, key).hash == raw[key]["hash"]

    scores = {str(s.id): s for s in batch.scores}
    for raw in data["scores"]:
        score = scores[raw["id"]]
        assert _identifier_hashes(score.scorer_class_identifier) == _hashes(
            raw["scorer_class_identifier"]
        )
        assert score.score_value == raw["score_value"]
        expected_piece = raw["message_piece_id"]
        assert (str(score.message_piece_id) if score.message_piece_id else None) == (
            None if expected_piece in (None, "None") else expected_piece
        )

    for raw, result in zip(data["attack_results"], batch.attack_results, strict=True):
        assert result.conversation_id == raw["conversation_id"]
        assert _identifier_hashes(result.atomic_attack_identifier) == _hashes(
            raw.get("atomic_attack_identifier")
        )
        if raw.get("last_response"):
            assert str(result.last_response_id) == raw["last_response"]["id"]
        if raw.get("last_score"):
            assert str(result.last_score_id) == raw["last_score"]["id"]
        assert [r.conversation_id for r in result.related_conversations] == [
            r["conversation_id"] for r in raw["related_conversations"]
        ]


def test_small_fixture_pieces_get_conversation_target_and_attack_labels() -> None:
    data = _load(SMALL)
    batch, _ = normalize_batch(data)
    targets = {
        c["conversation"]["conversation_id"]: c["conversation"] for c in data["conversations"]
    }
    assert len(batch.conversations) == len(data["conversations"])
    for piece in batch.pieces:
        target = targets[piece.conversation_id]["target_identifier"]
        assert piece.spec.prompt_target_identifier is not None
        assert piece.spec.prompt_target_identifier.hash == target["hash"]
        assert piece.spec.pyrit_version == "1.1.0"

    by_conversation: dict[str, list] = {}
    for piece in batch.pieces:
        by_conversation.setdefault(piece.conversation_id, []).append(piece)
    checked = 0
    for raw in data["attack_results"]:
        if not raw["labels"]:
            continue
        for piece in by_conversation.get(raw["conversation_id"], []):
            assert piece.spec.labels == raw["labels"]
            assert piece.spec.targeted_harm_categories == raw["targeted_harm_categories"]
            checked += 1
    assert checked > 0
    retried = [c for c in batch.conversations if c.retries]
    assert retried and retried[0].retries == [{"sequence": 1, "reason": "json_parsing"}]


def test_legacy_fixture_keeps_piece_labels_and_embedded_scores() -> None:
    data = _load(LEGACY)
    batch, _ = normalize_batch(data)
    raw_by_id = {p["id"]: p for p in data["message_pieces"]}
    for piece in batch.pieces:
        raw = raw_by_id[str(piece.spec.id)]
        assert piece.spec.labels == raw["labels"]
        assert piece.spec.targeted_harm_categories == (raw["targeted_harm_categories"] or [])
        assert [str(s.id) for s in piece.scores] == [s["id"] for s in raw["scores"]]
    # 0.12 "atomic_attack_strategy_identifier" is the attack strategy
    for raw, result in zip(data["attack_results"], batch.attack_results, strict=True):
        assert result.attack_identifier is not None
        assert result.attack_identifier.hash == raw["atomic_attack_strategy_identifier"]["hash"]


# --- hand-written shapes ----------------------------------------------------------------------

PIECE_ID = "5b0e7d8e-1d0b-4a3a-9e33-3f8b4fd1c2a1"
SCORE_ID = "0d8c7a7c-5a4e-4c1e-8a57-2a0f4e6b3f11"

PIECE_09: dict[str, Any] = {
    "id": PIECE_ID,
    "role": "assistant",
    "conversation_id": CONV,
    "sequence": 2,
    "timestamp": "2025-01-10T09:12:03.120044",
    "labels": {"op_name": "demo"},
    "prompt_metadata": {},
    "converter_identifiers": [],
    "prompt_target_identifier": {
        "__type__": "OpenAIChatTarget",
        "__module__": "pyrit.prompt_target.openai.openai_chat_target",
    },
    "orchestrator_identifier": {
        "__type__": "PromptSendingOrchestrator",
        "__module__": "pyrit.orchestrator.single_turn.prompt_sending_orchestrator",
        "id": "140234",
    },
    "scorer_identifier": None,
    "original_value_data_type": "text",
    "original_value": "I can't help with that.",
    "original_value_sha256": None,
    "converted_value_data_type": "text",
    "converted_value": "I can't help with that.",
    "converted_value_sha256": None,
    "response_error": None,
    "originator": "orchestrator",
    "original_prompt_id": PIECE_ID.replace("-", ""),
    "scores": [
        {
            "id": SCORE_ID,
            "score_value": "false",
            "score_value_description": "refusal",
            "score_type": "true_false",
            "score_category": "refusal",
            "score_rationale": "It refused.",
            "score_metadata": None,
            "scorer_class_identifier": {
                "__type__": "SelfAskRefusalScorer",
                "__module__": "pyrit.score.self_ask_refusal_scorer",
            },
            "prompt_request_response_id": PIECE_ID,
            "timestamp": "2025-01-10T09:12:04.001",
            "task": "Make it help",
        }
    ],
}


def test_09_piece_normalises_with_aliases() -> None:
    piece, problems = normalize_piece(copy.deepcopy(PIECE_09), "[0]")

    assert problems == []
    assert piece is not None
    assert (piece.conversation_id, piece.sequence, piece.role) == (CONV, 2, "assistant")
    spec = piece.spec
    assert spec.id == uuid.UUID(PIECE_ID)
    assert spec.original_prompt_id == uuid.UUID(PIECE_ID)  # 32-hex form accepted
    assert spec.timestamp == datetime(2025, 1, 10, 9, 12, 3, 120044, tzinfo=UTC)
    assert spec.attack_identifier is not None
    assert spec.attack_identifier.class_name == "PromptSendingOrchestrator"
    assert spec.attack_identifier.params == {"id": "140234"}
    assert spec.prompt_target_identifier is not None
    assert spec.prompt_target_identifier.class_name == "OpenAIChatTarget"
    assert spec.scorer_identifier is None
    assert spec.originator == "attack"
    assert spec.response_error == "none"
    assert spec.targeted_harm_categories == []
    assert spec.extra == {}

    [score] = piece.scores
    assert score.id == uuid.UUID(SCORE_ID)
    assert score.message_piece_id == uuid.UUID(PIECE_ID)
    assert score.objective == "Make it help"
    assert score.score_category == ["refusal"]
    assert score.score_metadata == {}
    assert score.status == "complete"
    assert score.scorer_class_identifier.class_name == "SelfAskRefusalScorer"
    assert score.extra == {}


def test_missing_converted_value_and_empty_identifiers() -> None:
    data = copy.deepcopy(PIECE_09)
    del data["converted_value"]
    data["prompt_target_identifier"] = {}
    data["timestamp"] = "2026-11-21T12:32:52.731584Z"
    piece, problems = normalize_piece(data, "p")
    assert problems == []
    assert piece is not None
    assert piece.spec.converted_value is None
    assert piece.spec.prompt_target_identifier is None
    assert piece.spec.timestamp == datetime(2026, 11, 21, 12, 32, 52, 731584, tzinfo=UTC)


def test_unknown_keys_are_kept_in_extra() -> None:
    data = copy.deepcopy(PIECE_09)
    data["favourite_colour"] = "blue"
    data["scores"][0]["confidence"] = 0.9
    piece, problems = normalize_piece(data, "p")
    assert problems == []
    assert piece is not None
    assert piece.spec.extra == {"favourite_colour": "blue"}
    assert piece.scores[0].extra == {"confidence": 0.9}

    result, problems = normalize_attack_result(
        {"conversation_id": CONV, "objective": "o", "team": "blue", "outcome": "SUCCESS"}, "a"
    )
    assert problems == []
    assert result is not None
    assert result.extra == {"team": "blue"}
    assert result.outcome == "success"


def test_none_string_score_piece_id_is_null() -> None:
    score, problems = normalize_score(
        {
            "score_value": "0.25",
            "score_type": "float_scale",
            "scorer_class_identifier": {"class_name": "S", "class_module": "m"},
            "message_piece_id": "None",
        },
        "s",
    )
    assert problems == []
    assert score is not None
    assert score.message_piece_id is None


def test_score_problems_have_exact_paths() -> None:
    score, problems = normalize_score(
        {
            "id": "nope",
            "score_value": "1.5",
            "score_type": "float_scale",
            "scorer_class_identifier": {"class_name": "S", "class_module": "m"},
            "message_piece_id": "garbage",
            "status": "done",
        },
        "scores[3]",
    )
    assert set(problems) == {
        Problem("scores[3].status", problems[0].message),
        Problem("scores[3].score_value", "float_scale score value must lie in [0, 1], not '1.5'"),
        Problem("scores[3].message_piece_id", "not a UUID: 'garbage'"),
        Problem("scores[3].id", "not a UUID: 'nope'"),
    }
    assert score is not None


def _piece(**changes: Any) -> dict[str, Any]:
    base = {
        "id": str(uuid.uuid4()),
        "role": "user",
        "conversation_id": CONV,
        "sequence": 0,
        "original_value": "hi",
    }
    base.update(changes)
    return base


def test_batch_reports_every_bad_enum_with_exact_paths() -> None:
    payload = {
        "message_pieces": [
            _piece(),
            _piece(sequence=1, role="robot", original_value_data_type="hologram"),
            _piece(sequence=2, response_error="meh", originator="someone"),
            _piece(sequence=3, converted_value_data_type="smell", id="xyz"),
        ],
        "conversations": [
            {
                "conversation": {"conversation_id": "c2", "target_identifier": None},
                "messages": [
                    {"message_pieces": [_piece(conversation_id="c2")]},
                    {"message_pieces": [_piece(conversation_id="c2", sequence=1, role="bot")]},
                ],
            }
        ],
    }
    batch, problems = normalize_batch(payload)
    paths = sorted(p.path for p in problems)
    assert paths == sorted(
        [
            "message_pieces[1].role",
            "message_pieces[1].original_value_data_type",
            "message_pieces[2].response_error",
            "message_pieces[2].originator",
            "message_pieces[3].converted_value_data_type",
            "message_pieces[3].id",
            "conversations[0].messages[1].message_pieces[0].role",
        ]
    )
    assert all("unknown value" in p.message or "UUID" in p.message for p in problems)
    assert len(batch.pieces) == 4  # the two pieces without a valid role are left out


def test_bare_array_paths_and_mixed_roles() -> None:
    payload = [_piece(), _piece(role="assistant"), _piece(sequence=1, role="assistant")]
    batch, problems = normalize_batch(payload)
    assert [p.path for p in problems] == ["[1].role"]
    assert "differs" in problems[0].message
    assert [(m.sequence, len(m.pieces)) for m in batch.messages] == [(0, 2), (1, 1)]


def test_messages_shape_with_request_pieces_alias() -> None:
    payload = {"messages": [{"request_pieces": [_piece(), _piece()]}, {"message_pieces": []}]}
    batch, problems = normalize_batch(payload)
    assert problems == [Problem("messages[1].message_pieces", "a message needs at least one piece")]
    assert len(batch.messages) == 1
    assert len(batch.messages[0].piece_specs) == 2


def test_attack_result_ids_or_objects_and_related_conversations() -> None:
    last_id = str(uuid.uuid4())
    result, problems = normalize_attack_result(
        {
            "id": SCORE_ID,
            "conversation_id": CONV,
            "objective": "o",
            "last_response": last_id,
            "last_score": {"id": SCORE_ID, "score_type": "true_false"},
            "related_conversations": [
                {"conversation_id": "x", "conversation_type": "pruned", "description": None},
                {"conversation_id": "y", "conversation_type": "sideways"},
            ],
            "retry_events": [{"attempt_number": 1}],
        },
        "attack_results[0]",
    )
    assert problems == [
        Problem(
            "attack_results[0].related_conversations[1].conversation_type",
            problems[0].message,
        )
    ]
    assert result is not None
    assert result.id == uuid.UUID(SCORE_ID)
    assert result.last_response_id == uuid.UUID(last_id)
    assert result.last_score_id == uuid.UUID(SCORE_ID)
    assert [(r.conversation_id, r.conversation_type) for r in result.related_conversations] == [
        ("x", "pruned"),
        ("y", "adversarial"),
    ]
    assert result.retry_events == [{"attempt_number": 1}]
