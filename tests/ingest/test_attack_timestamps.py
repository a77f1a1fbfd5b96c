"""PyRIT 0.12 attack results carry no timestamp: Redline takes the last piece of the attack's
conversation, not the moment it received them, and marks the time as derived."""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import datetime

import pytest

from memory.models import AttackResult
from redteam.core.choices import TimestampSource
from tests.api.conftest import get_json
from tests.exporters.conftest import export_doc, ingest_ok
from tests.ingest.conftest import EXPORT_012, EXPORT_110, load

pytestmark = pytest.mark.django_db


def _last_piece_times(document: dict) -> dict[str, datetime]:
    times = defaultdict(list)
    for piece in document["message_pieces"]:
        times[piece["conversation_id"]].append(datetime.fromisoformat(piece["timestamp"]))
    return {cid: max(moments) for cid, moments in times.items()}


def test_a_012_attack_takes_its_conversations_last_piece_time():
    document = load(EXPORT_012)
    ingest_ok(document)

    expected = _last_piece_times(document)
    attacks = AttackResult.objects.select_related("conversation")
    assert attacks.count() == len(document["attack_results"])
    for attack in attacks:
        assert attack.timestamp_source == TimestampSource.LAST_PIECE
        assert attack.timestamp == expected[attack.conversation.conversation_id]


def test_pieces_stored_earlier_give_the_time_too():
    document = load(EXPORT_012)
    ingest_ok({"message_pieces": document["message_pieces"]})
    ingest_ok({"attack_results": document["attack_results"]})

    assert set(AttackResult.objects.values_list("timestamp_source", flat=True)) == {
        TimestampSource.LAST_PIECE
    }


def test_without_pieces_the_time_of_receipt_is_marked_as_such():
    conversation_id = str(uuid.uuid4())
    before = datetime.now().astimezone()
    ingest_ok(
        {
            "conversations": [{"conversation": {"conversation_id": conversation_id}}],
            "attack_results": [{"conversation_id": conversation_id, "objective": "o"}],
        }
    )
    attack = AttackResult.objects.get()
    assert attack.timestamp_source == TimestampSource.RECEIVED
    assert attack.timestamp >= before


def test_pyrits_own_time_is_kept_and_not_marked(viewer_client):
    document = load(EXPORT_110)
    ingest_ok(document)

    stored = {str(a.id): a for a in AttackResult.objects.all()}
    for sent in document["attack_results"]:
        attack = stored[sent["attack_result_id"]]
        assert attack.timestamp == datetime.fromisoformat(sent["timestamp"])
        assert attack.timestamp_source == TimestampSource.PYRIT
    status, page = get_json(viewer_client, "/api/v1/attack-results/")
    assert status == 200
    assert all("timestamp_source" not in item for item in page["results"])


def test_the_mark_is_read_exported_and_survives_a_resend(viewer_client):
    document = load(EXPORT_012)
    ingest_ok(document)
    attack = AttackResult.objects.order_by("id").first()

    status, item = get_json(viewer_client, f"/api/v1/attack-results/{attack.id}/")
    assert status == 200
    assert item["timestamp_source"] == "last_piece"

    # Re-sending the 0.12 results (no time) and the export (time + mark) changes nothing.
    resent = {
        "pyrit_version": document["pyrit_version"],
        "attack_results": document["attack_results"],
    }
    counts = ingest_ok(resent)
    assert counts["attack_results"]["unchanged"] == len(document["attack_results"])
    exported = export_doc()["attack_results"]
    assert {a["timestamp_source"] for a in exported} == {"last_piece"}
    counts = ingest_ok({"attack_results": exported})
    assert counts["attack_results"]["unchanged"] == len(exported)


def test_an_unknown_mark_is_refused_naming_it():
    from memory.transfer.ingest.service import ingest

    report = ingest(
        payload={
            "attack_results": [
                {
                    "conversation_id": "c",
                    "objective": "o",
                    "timestamp": "2026-01-01T00:00:00Z",
                    "timestamp_source": "guessed",
                }
            ]
        }
    )
    assert not report.ok
    assert any(e["path"].endswith("timestamp_source") for e in report.errors), report.errors


def test_the_attack_page_says_the_time_was_derived(viewer_client):
    ingest_ok(load(EXPORT_012))
    attack = AttackResult.objects.order_by("id").first()

    page = viewer_client.get(f"/attacks/{attack.id}/").content.decode()

    assert "(derived: the conversation&#x27;s last piece)" in page
