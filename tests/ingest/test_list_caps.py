"""Harm category lists are capped (``HARM_CATEGORIES_MAX_ITEMS``): a longer one is a 400
naming the field, on ingestion: pieces, attack results, seeds (findings: their own tests)."""

from __future__ import annotations

import copy

import pytest

from memory.models import AttackResult, MessagePiece
from redteam.core.lengths import HARM_CATEGORIES_MAX_ITEMS
from seeds.models import Seed
from tests.ingest.conftest import EXPORT_110, load, post_json

pytestmark = pytest.mark.django_db

FLOOD = [f"harm-{n}" for n in range(100_000)]
MOST = [f"harm-{n}" for n in range(HARM_CATEGORIES_MAX_ITEMS)]
MESSAGE = f"has 100,000 items; at most {HARM_CATEGORIES_MAX_ITEMS:,} are accepted"


def _piece(**fields):
    return {
        "id": "6a1e2f1c-2f5d-4c59-9f55-3a4cf0a0c001",
        "conversation_id": "conv-caps",
        "sequence": 0,
        "role": "user",
        "original_value": "hello",
        **fields,
    }


def test_a_piece_with_100000_harm_categories_is_a_400_naming_the_field(ingest_client):
    piece = _piece(targeted_harm_categories=FLOOD)
    response = post_json(ingest_client, {"message_pieces": [piece]})

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "message_pieces[0].targeted_harm_categories"
    assert MESSAGE in error["message"]
    assert MessagePiece.objects.count() == 0


def test_a_piece_with_the_most_harm_categories_is_stored(ingest_client):
    response = post_json(ingest_client, {"message_pieces": [_piece(targeted_harm_categories=MOST)]})

    assert response.status_code == 200, response.json()
    assert MessagePiece.objects.get().targeted_harm_categories == MOST


def test_an_attack_result_with_100000_harm_categories_is_a_400(ingest_client):
    attack = copy.deepcopy(load(EXPORT_110)["attack_results"][0])
    attack["targeted_harm_categories"] = FLOOD

    response = post_json(ingest_client, {"attack_results": [attack]})

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "attack_results[0].targeted_harm_categories"
    assert MESSAGE in error["message"]
    assert AttackResult.objects.count() == 0


def test_a_seed_with_100000_harm_categories_is_a_400(ingest_client):
    seed = copy.deepcopy(load(EXPORT_110)["seeds"][0])
    seed["harm_categories"] = FLOOD

    response = post_json(ingest_client, {"seeds": [seed]})

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "seeds[0].harm_categories"
    assert MESSAGE in error["message"]
    assert Seed.objects.count() == 0
