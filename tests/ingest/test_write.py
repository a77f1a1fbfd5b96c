"""The batch writer: fixture exports ingest completely, re-ingest is a no-op."""

import json

import pytest

from memory.models import AttackResult, Conversation, MessagePiece, ScenarioResult, Score
from memory.transfer.ingest.service import ingest
from seeds.models import Seed, SeedGroup
from tests.conftest import FIXTURES_DIR

pytestmark = pytest.mark.django_db

EXPORTS = {
    "1.1.0": FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json",
    "0.12.1": FIXTURES_DIR / "pyrit-0.12.1-legacy" / "export.json",
}


def _load(version):
    return json.loads(EXPORTS[version].read_text())


@pytest.mark.parametrize("version", list(EXPORTS))
def test_fixture_export_ingests_completely(version):
    data = _load(version)
    report = ingest(payload=data)
    assert report.errors == []
    assert report.written
    pieces = data.get("message_pieces") or [
        p for c in data["conversations"] for m in c["messages"] for p in m["message_pieces"]
    ]
    assert MessagePiece.objects.count() == len(pieces)
    assert report.counts["message_pieces"]["created"] == len(pieces)
    assert set(MessagePiece.objects.values_list("id", flat=True)) == {
        __import__("uuid").UUID(p["id"]) for p in pieces
    }
    assert AttackResult.objects.count() == len(data["attack_results"])
    assert Seed.objects.count() == len({s["id"] for s in data["seeds"]})
    score_ids = {s["id"] for s in data["scores"]}
    assert Score.objects.count() >= len(score_ids)
    assert ScenarioResult.objects.count() == len(data.get("scenario_results", []))


@pytest.mark.parametrize("version", list(EXPORTS))
def test_reingest_is_a_noop(version, django_assert_max_num_queries):
    data = _load(version)
    ingest(payload=data)
    before = {
        model: list(model.objects.order_by("pk").values())
        for model in (Conversation, MessagePiece, Score, AttackResult, Seed, SeedGroup)
    }
    report = ingest(payload=data)
    assert report.errors == []
    for kind, counts in report.counts.items():
        assert counts["created"] == 0, kind
        assert counts["updated"] == 0, kind
    after = {
        model: list(model.objects.order_by("pk").values())
        for model in (Conversation, MessagePiece, Score, AttackResult, Seed, SeedGroup)
    }
    assert after == before
