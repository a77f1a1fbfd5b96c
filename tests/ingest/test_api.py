"""POST /api/v1/ingest/: shapes, atomicity, partial writes, conflicts, limits and auth."""

import copy
import json
import uuid

import pytest
from django.test import Client

from memory.models import AttackResult, MessagePiece, Score
from seeds.models import Seed, SeedDataset
from tests.ingest.conftest import EXPORT_012, EXPORT_110, load, post_json

pytestmark = pytest.mark.django_db


def _piece(**fields):
    piece = {
        "id": str(uuid.uuid4()),
        "conversation_id": "conv-api",
        "sequence": 0,
        "role": "user",
        "original_value": "hello",
    }
    piece.update(fields)
    return piece


@pytest.mark.parametrize("path", [EXPORT_110, EXPORT_012], ids=["1.1.0", "0.12.1"])
def test_fixture_exports_ingest_and_reingest_unchanged(ingest_client, path):
    data = load(path)
    first = post_json(ingest_client, data)
    assert first.status_code == 200, first.content
    body = first.json()
    assert body["written"] is True
    assert body["errors"] == []
    assert body["counts"]["message_pieces"]["created"] == MessagePiece.objects.count() > 0
    assert body["counts"]["attack_results"]["created"] == len(data["attack_results"])
    assert "seconds" in body

    again = post_json(ingest_client, data).json()
    assert all(c["created"] == 0 and c["updated"] == 0 for c in again["counts"].values())
    assert again["counts"]["message_pieces"]["unchanged"] == MessagePiece.objects.count()


def test_bare_array_of_pieces(ingest_client):
    pieces = [_piece(), _piece(sequence=1, role="assistant", original_value="hi")]
    response = post_json(ingest_client, pieces)
    assert response.status_code == 200
    assert MessagePiece.objects.count() == 2


def test_one_bad_item_writes_nothing_and_lists_every_error(ingest_client):
    good = _piece()
    bad_role = _piece(sequence=1, role="wizard")
    bad_score = {
        "id": str(uuid.uuid4()),
        "score_type": "float_scale",
        "score_value": "1.5",
        "scorer_class_identifier": {"class_name": "S", "class_module": "m"},
        "message_piece_id": good["id"],
    }
    response = post_json(ingest_client, {"message_pieces": [good, bad_role], "scores": [bad_score]})
    assert response.status_code == 400
    errors = response.json()["errors"]
    paths = {e["path"] for e in errors}
    assert "message_pieces[1].role" in paths
    assert "scores[0].score_value" in paths
    by_path = {e["path"]: e for e in errors}
    assert by_path["message_pieces[1].role"]["id"] == bad_role["id"]
    assert by_path["scores[0].score_value"]["id"] == bad_score["id"]
    assert MessagePiece.objects.count() == 0
    assert Score.objects.count() == 0


def test_partial_writes_the_good_items(ingest_client):
    good = _piece()
    bad = _piece(sequence=1, role="wizard")
    response = post_json(ingest_client, {"message_pieces": [good, bad]}, query="?partial=true")
    assert response.status_code == 207
    body = response.json()
    statuses = {item["id"]: item["status"] for item in body["items"]}
    assert statuses == {good["id"]: "created", bad["id"]: "error"}
    assert list(MessagePiece.objects.values_list("id", flat=True)) == [uuid.UUID(good["id"])]


def test_partial_drops_items_depending_on_a_bad_one(ingest_client):
    bad = _piece(role="wizard")
    attack = {
        "conversation_id": "conv-api",
        "objective": "o",
        "attack_result_id": str(uuid.uuid4()),
        "last_response": bad["id"],
    }
    body = post_json(
        ingest_client, {"message_pieces": [bad], "attack_results": [attack]}, query="?partial=1"
    ).json()
    statuses = {item["type"]: item["status"] for item in body["items"]}
    assert statuses == {"message_pieces": "error", "attack_results": "error"}
    assert AttackResult.objects.count() == 0


def test_changed_piece_is_a_conflict(ingest_client):
    piece = _piece()
    post_json(ingest_client, [piece])
    changed = {**piece, "original_value": "something else"}
    response = post_json(ingest_client, [changed])
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["id"] == piece["id"]
    assert "conflict" in error["message"] and "original_value" in error["message"]
    assert MessagePiece.objects.get().original_value == "hello"


def test_changed_score_is_a_conflict(ingest_client):
    piece = _piece()
    score = {
        "id": str(uuid.uuid4()),
        "score_type": "true_false",
        "score_value": "true",
        "scorer_class_identifier": {"class_name": "S", "class_module": "m"},
        "message_piece_id": piece["id"],
    }
    assert (
        post_json(ingest_client, {"message_pieces": [piece], "scores": [score]}).status_code == 200
    )
    response = post_json(ingest_client, {"scores": [{**score, "score_value": "false"}]})
    assert response.status_code == 400
    assert "score_value" in response.json()["errors"][0]["message"]


def test_attack_result_is_upserted_with_a_later_outcome(ingest_client):
    data = load(EXPORT_110)
    post_json(ingest_client, data)
    attack = copy.deepcopy(data["attack_results"][0])
    attack["outcome"] = "failure" if attack["outcome"] != "failure" else "success"
    body = post_json(ingest_client, {"attack_results": [attack]}).json()
    assert body["counts"]["attack_results"]["updated"] == 1
    stored = AttackResult.objects.get(id=attack["attack_result_id"])
    assert stored.outcome == attack["outcome"]
    assert stored.updated_at > stored.created_at


def test_unresolved_reference_is_an_error(ingest_client):
    attack = {
        "conversation_id": "c",
        "objective": "o",
        "attack_result_id": str(uuid.uuid4()),
        "last_score": str(uuid.uuid4()),
    }
    response = post_json(ingest_client, {"attack_results": [attack]})
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "attack_results[0].last_score"


def test_message_role_must_match_the_stored_message(ingest_client):
    post_json(ingest_client, [_piece()])
    response = post_json(ingest_client, [_piece(role="assistant")])
    assert response.status_code == 400
    assert "role" in response.json()["errors"][0]["message"]


def test_new_piece_joins_a_stored_message_after_its_pieces(ingest_client):
    first = _piece()
    post_json(ingest_client, [first])
    second = _piece(original_value="second part")
    assert post_json(ingest_client, [second]).status_code == 200
    positions = dict(MessagePiece.objects.values_list("id", "position"))
    assert positions == {uuid.UUID(first["id"]): 0, uuid.UUID(second["id"]): 1}


def test_oversize_body_is_a_json_413(ingest_client, settings):
    settings.REDLINE_INGEST_MAX_BODY_BYTES = 1000
    response = post_json(ingest_client, [_piece(original_value="x" * 2000)])
    assert response.status_code == 413
    assert response.json()["limit_bytes"] == 1000
    assert "1000 bytes" in response.json()["detail"]


def test_text_and_depth_caps(ingest_client, settings):
    settings.REDLINE_INGEST_MAX_TEXT_CHARS = 10
    settings.REDLINE_INGEST_MAX_DEPTH = 5
    deep = {"a": {"b": {"c": {"d": {"e": {}}}}}}
    response = post_json(ingest_client, [_piece(original_value="x" * 11, prompt_metadata=deep)])
    assert response.status_code == 400
    messages = {e["path"]: e["message"] for e in response.json()["errors"]}
    assert "limit of 10" in messages["[0].original_value"]
    assert any("nested deeper" in m for m in messages.values())


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b"[" * 100_000])
def test_malformed_json_is_a_400(ingest_client, body):
    response = ingest_client.post("/api/v1/ingest/", data=body, content_type="application/json")
    assert response.status_code == 400
    assert "detail" in response.json()


def test_anonymous_gets_401():
    response = post_json(Client(), [_piece()])
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_read_token_cannot_ingest(read_client):
    response = post_json(read_client, [_piece()])
    assert response.status_code == 403
    assert MessagePiece.objects.count() == 0


def test_user_without_ingest_permissions_is_refused(reader):
    client = Client()
    client.force_login(reader)
    response = post_json(client, [_piece()])
    assert response.status_code == 403


def test_unknown_keys_are_kept(ingest_client):
    piece = _piece(custom_field={"x": 1})
    post_json(ingest_client, [piece])
    assert MessagePiece.objects.get().extra == {"custom_field": {"x": 1}}


def test_payload_meta_is_not_an_error(ingest_client):
    response = post_json(ingest_client, {"note": "hi", "message_pieces": [_piece()]})
    assert response.status_code == 200
    assert json.loads(response.content)["counts"]["message_pieces"]["created"] == 1


def test_seeds_pushed_with_a_token_name_its_user_in_their_history(ingest_client, bot):
    payload = load(EXPORT_110)
    response = post_json(ingest_client, {"seeds": payload["seeds"]})
    assert response.status_code == 200, response.json()
    for model in (Seed, SeedDataset):
        assert model.history.exists()
        assert set(model.history.values_list("history_user", flat=True)) == {bot.pk}
