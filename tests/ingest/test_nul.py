"""NUL characters are stored and given back byte for byte, on SQLite and PostgreSQL alike.

PostgreSQL refuses NUL in ``text`` and ``jsonb``; one NUL used to be a 500 that lost the whole
batch. ``redteam.core.nul`` escapes it in every text and JSON column.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.models import AttackResult, Conversation, Label, MessagePiece, Score
from redteam.core.nul import ESCAPE, escape_json, escape_nul, unescape_nul
from tests.ingest.conftest import post_json

NUL = "\x00"


@given(st.text())
def test_the_escape_round_trips_any_text(text):
    escaped = escape_nul(text)
    assert NUL not in escaped
    assert unescape_nul(escaped) == text


def test_the_escape_keeps_ordinary_text_as_it_is():
    assert escape_nul("hello") == "hello"
    assert escape_nul(f"a{NUL}b{ESCAPE}c") == f"a{ESCAPE}0b{ESCAPE}{ESCAPE}c"
    assert escape_json({f"k{NUL}": [f"v{NUL}", 1, None]}) == {
        f"k{ESCAPE}0": [f"v{ESCAPE}0", 1, None]
    }


def _payload(tag: str) -> tuple[dict, dict[str, str]]:
    conversation = f"conv{NUL}{tag}"
    piece_id, score_id, attack_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    texts = {
        "value": f"model output with a NUL{NUL} and the escape char {ESCAPE} {tag}",
        "objective": f"objective{NUL}{tag}",
        "rationale": f"because{NUL}",
    }
    scorer = {"class_name": "SubStringScorer", "class_module": "pyrit.score", "sub": f"x{NUL}"}
    payload = {
        "message_pieces": [
            {
                "id": str(piece_id),
                "conversation_id": conversation,
                "sequence": 0,
                "role": "assistant",
                "original_value": texts["value"],
                "converted_value": texts["value"],
                "labels": {f"op{NUL}": f"red{NUL}team"},
                "prompt_metadata": {"note": f"meta{NUL}", f"key{NUL}": 1},
                "targeted_harm_categories": [f"harm{NUL}"],
            }
        ],
        "scores": [
            {
                "id": str(score_id),
                "score_type": "true_false",
                "score_value": "true",
                "score_rationale": texts["rationale"],
                "scorer_class_identifier": scorer,
                "message_piece_id": str(piece_id),
            }
        ],
        "attack_results": [
            {
                "attack_result_id": str(attack_id),
                "conversation_id": conversation,
                "objective": texts["objective"],
                "outcome": "success",
                "metadata": {"why": f"it{NUL}worked"},
            }
        ],
    }
    return payload, {"conversation": conversation, "piece": str(piece_id), **texts}


@pytest.mark.django_db
def test_nul_everywhere_is_stored_and_read_back_exactly(ingest_client, read_client):
    payload, expected = _payload("a")
    response = post_json(ingest_client, payload)
    assert response.status_code == 200, response.content

    piece = MessagePiece.objects.get(pk=expected["piece"])
    assert piece.original_value == expected["value"]
    assert piece.prompt_metadata == {"note": f"meta{NUL}", f"key{NUL}": 1}
    assert Conversation.objects.get(conversation_id=expected["conversation"])
    assert Label.objects.filter(key=f"op{NUL}", value=f"red{NUL}team").exists()
    assert Score.objects.get().score_rationale == expected["rationale"]
    attack = AttackResult.objects.get()
    assert attack.objective == expected["objective"]
    assert attack.metadata == {"why": f"it{NUL}worked"}

    # What the API gives back is what was sent, byte for byte.
    body = read_client.get(f"/api/v1/message-pieces/{expected['piece']}/").json()
    assert body["original_value"] == expected["value"]
    assert body["conversation_id"] == expected["conversation"]
    assert body["labels"] == {f"op{NUL}": f"red{NUL}team"}
    assert body["prompt_metadata"] == {"note": f"meta{NUL}", f"key{NUL}": 1}
    assert body["scores"][0]["score_rationale"] == expected["rationale"]

    # Sending the same data again changes nothing.
    again = post_json(ingest_client, payload)
    assert again.status_code == 200
    assert again.json()["counts"]["message_pieces"]["unchanged"] == 1


@pytest.mark.django_db
def test_a_partial_batch_with_nul_writes_every_item(ingest_client):
    payload, expected = _payload("b")
    plain, _ = _payload("c")
    for key in payload:
        payload[key] += [dict(item) for item in plain[key]]
    response = post_json(ingest_client, payload, query="?partial=true")
    assert response.status_code == 207, response.content
    assert response.json()["errors"] == []
    assert MessagePiece.objects.count() == 2
    assert AttackResult.objects.filter(objective=expected["objective"]).exists()
