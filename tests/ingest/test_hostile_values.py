"""Values that used to be 500s are clear errors of their item, the same on both databases:
huge integers, lone surrogates, text longer than its column, nested labels, a misspelt list,
long keys and too many items."""

from __future__ import annotations

import json
import uuid

import pytest

from memory.models import AttackResult, Conversation, MessagePiece
from tests.ingest.conftest import post_json

pytestmark = pytest.mark.django_db


def _piece(conversation: str = "conv-h", **fields) -> dict:
    return {
        "id": str(uuid.uuid4()),
        "conversation_id": conversation,
        "sequence": 0,
        "role": "user",
        "original_value": "hello",
        **fields,
    }


def _errors(response) -> dict[str, str]:
    return {e["path"]: e["message"] for e in response.json()["errors"]}


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"sequence": 10**30}, "message_pieces[1].sequence", "must be <="),
        ({"sequence": 2**31}, "message_pieces[1].sequence", "must be <="),
        ({"original_value": "bad \ud800 text"}, "message_pieces[1].original_value", "surrogate"),
        ({"labels": {"op": {"nested": 1}}}, "message_pieces[1].labels", "must be text"),
        # a label's value may be any length (PyRIT writes 4,004 characters); its name may not
        (
            {"labels": {"k" * 256: "x" * 4_004}},
            "message_pieces[1].labels." + "k" * 256,
            "at most 255",
        ),
        ({"conversation_id": "c" * 256}, "message_pieces[1].conversation_id", "at most 255"),
        ({"pyrit_version": "1" * 33}, "message_pieces[1].pyrit_version", "at most 32"),
        (
            {"original_value_sha256": "f" * 65},
            "message_pieces[1].original_value_sha256",
            "at most 64",
        ),
        (
            {"targeted_harm_categories": ["h" * 300]},
            "message_pieces[1].targeted_harm_categories[0]",
            "at most 255",
        ),
    ],
)
def test_a_hostile_value_is_an_error_of_its_item(ingest_client, fields, path, words):
    good = _piece("conv-good")
    bad = _piece(**fields)
    atomic = post_json(ingest_client, {"message_pieces": [good, bad]})
    assert atomic.status_code == 400, atomic.content
    assert words in _errors(atomic)[path]
    assert MessagePiece.objects.count() == 0

    partial = post_json(ingest_client, {"message_pieces": [good, bad]}, query="?partial=true")
    assert partial.status_code == 207, partial.content
    assert words in _errors(partial)[path]
    assert list(MessagePiece.objects.values_list("id", flat=True)) == [uuid.UUID(good["id"])]


def test_an_attack_result_with_a_too_long_conversation_id_is_its_own_error(ingest_client):
    attack = {"conversation_id": "c" * 5000, "objective": "o", "outcome": "success"}
    response = post_json(ingest_client, {"attack_results": [attack]})
    assert response.status_code == 400
    assert "at most 255" in _errors(response)["attack_results[0].conversation_id"]
    assert not AttackResult.objects.exists() and not Conversation.objects.exists()


def test_an_unknown_top_level_key_is_named(ingest_client):
    response = post_json(ingest_client, {"message_piecez": [_piece()]})
    assert response.status_code == 400
    message = _errors(response)["message_piecez"]
    assert message.startswith("unknown key") and "message_pieces" in message
    # the keys PyRIT's and Redline's exports carry at the top level are fine
    fine = post_json(ingest_client, {"export_format": "x", "note": "n", "message_pieces": []})
    assert fine.status_code == 200


def test_a_key_longer_than_the_limit_refuses_the_request(ingest_client, settings):
    settings.REDLINE_INGEST_MAX_KEY_CHARS = 100
    response = post_json(ingest_client, {"message_pieces": [_piece(labels={"k" * 101: "v"})]})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert "key of 101 characters exceeds the limit of 100" in error["message"]


def test_too_many_items_is_a_413_naming_the_limit(ingest_client, settings):
    settings.REDLINE_INGEST_MAX_ITEMS = 3
    pieces = [_piece(sequence=i) for i in range(4)]
    response = ingest_client.post(
        "/api/v1/ingest/", data=json.dumps(pieces), content_type="application/json"
    )
    assert response.status_code == 413
    body = response.json()
    assert body["limit_items"] == 3 and "4 items" in body["detail"]
    assert "INGEST_MAX_ITEMS" in body["detail"]
    assert not MessagePiece.objects.exists()


def test_a_surrogate_in_an_id_or_key_is_reported_not_a_500(ingest_client):
    bad = _piece(conversation="c\udfff", labels={"k\ud800": "v"})
    response = post_json(ingest_client, {"message_pieces": [bad]})
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any("surrogate" in e["message"] for e in errors)
    assert any("\\udfff" in (e["id"] or "") or "\\ud800" in e["path"] for e in errors)


def test_a_label_value_of_any_length_is_stored_and_found(ingest_client):
    """PyRIT writes labels of 4,004 characters: a piece and an attack result carrying one
    are stored whole, and the label filter finds the attack (issue 34)."""
    long = "é" * 4_004
    piece = _piece("conv-long", labels={"note": long})
    attack = {
        "conversation_id": "conv-long",
        "objective": "o",
        "outcome": "success",
        "labels": {"note": long},
    }
    response = post_json(ingest_client, {"message_pieces": [piece], "attack_results": [attack]})
    assert response.status_code == 200, response.content
    assert MessagePiece.objects.get().labels == {"note": long}
    assert AttackResult.objects.get().labels == {"note": long}
    found = ingest_client.get("/api/v1/attack-results/", {"labels": f"note:{long}"})
    assert found.status_code == 200, found.content
    assert [a["conversation_id"] for a in found.json()["results"]] == ["conv-long"]
