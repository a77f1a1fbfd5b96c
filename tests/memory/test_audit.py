"""Deleting or changing memory is recorded: who, when, why; evidence of human verdicts is only
deleted when that is confirmed."""

from __future__ import annotations

import logging

import pytest

from memory.models import AttackResult, HumanVerdict, MessagePiece
from memory.storage.services import human_verdict_record
from memory.transfer.ingest.service import ingest
from tests.ingest.conftest import EXPORT_110, load

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory():
    report = ingest(payload=load(EXPORT_110))
    assert report.ok
    return report


def _reviewed_attack(superuser) -> AttackResult:
    attack = AttackResult.objects.order_by("timestamp").first()
    human_verdict_record(
        attack_result=attack, outcome="success", reason="real steps", reviewer=superuser
    )
    return attack


def _piece_of(attack: AttackResult) -> MessagePiece:
    return MessagePiece.objects.filter(message__conversation=attack.conversation).first()


def test_deleting_a_piece_in_the_admin_needs_a_reason_and_records_it(
    memory, superuser, admin_client, caplog
):
    caplog.set_level(logging.INFO, logger="redline.security")
    piece = MessagePiece.objects.exclude(
        message__conversation__attack_results__human_verdicts__isnull=False
    ).first()
    url = f"/admin/memory/messagepiece/{piece.pk}/delete/"
    page = admin_client.get(url)
    assert b'name="reason"' in page.content

    refused = admin_client.post(url, {"post": "yes", "reason": "  "}, follow=True)
    assert "say why" in refused.content.decode()
    assert MessagePiece.objects.filter(pk=piece.pk).exists()

    done = admin_client.post(url, {"post": "yes", "reason": "pushed by mistake"})
    assert done.status_code == 302
    assert not MessagePiece.objects.filter(pk=piece.pk).exists()
    record = MessagePiece.history.get(id=piece.pk, history_type="-")
    assert record.history_user == superuser
    assert record.history_change_reason == "pushed by mistake"
    assert record.original_value == piece.original_value
    event = next(r.security for r in caplog.records if r.security["event"] == "memory_deleted")
    assert event["reason"] == "pushed by mistake" and event["user"] == superuser.username


def test_evidence_of_a_verdict_is_only_deleted_when_confirmed(memory, superuser, admin_client):
    attack = _reviewed_attack(superuser)
    piece = _piece_of(attack)
    for model, pk in (("attackresult", attack.pk), ("messagepiece", piece.pk)):
        url = f"/admin/memory/{model}/{pk}/delete/"
        refused = admin_client.post(url, {"post": "yes", "reason": "cleanup"}, follow=True)
        assert "a human verdict refers to" in refused.content.decode()
    assert AttackResult.objects.filter(pk=attack.pk).exists()
    assert MessagePiece.objects.filter(pk=piece.pk).exists()

    url = f"/admin/memory/attackresult/{attack.pk}/delete/"
    done = admin_client.post(url, {"post": "yes", "reason": "duplicate run", "force": "1"})
    assert done.status_code == 302
    assert not AttackResult.objects.filter(pk=attack.pk).exists()
    assert not HumanVerdict.objects.filter(attack_result_id=attack.pk).exists()
    verdict_record = HumanVerdict.history.get(attack_result_id=attack.pk, history_type="-")
    assert verdict_record.history_change_reason == "duplicate run"
    assert verdict_record.reason == "real steps"


def test_bulk_delete_from_the_list_asks_the_same(memory, superuser, admin_client):
    attack = _reviewed_attack(superuser)
    pieces = list(
        MessagePiece.objects.filter(message__conversation=attack.conversation).values_list(
            "pk", flat=True
        )
    )
    data = {"action": "delete_selected", "_selected_action": [str(pk) for pk in pieces]}
    confirm = admin_client.post("/admin/memory/messagepiece/", data)
    assert b'name="reason"' in confirm.content and b'name="force"' in confirm.content
    refused = admin_client.post(
        "/admin/memory/messagepiece/", {**data, "post": "yes", "reason": "x"}, follow=True
    )
    assert "Nothing was deleted" in refused.content.decode()
    assert MessagePiece.objects.filter(pk__in=pieces).count() == len(pieces)
    admin_client.post(
        "/admin/memory/messagepiece/", {**data, "post": "yes", "reason": "x", "force": "1"}
    )
    assert not MessagePiece.objects.filter(pk__in=pieces).exists()
    assert MessagePiece.history.filter(history_type="-", history_change_reason="x").count() == len(
        pieces
    )


def test_a_re_sent_attack_result_that_changes_is_recorded_with_its_sender(memory, bot):
    data = load(EXPORT_110)
    changed = data["attack_results"][0]
    before = changed["outcome"]
    changed["outcome"] = "success" if before != "success" else "failure"
    payload = {"pyrit_version": data["pyrit_version"], "attack_results": [changed]}
    report = ingest(payload=payload, actor=bot)
    assert report.counts["attack_results"]["updated"] == 1
    history = AttackResult.history.filter(id=changed["attack_result_id"]).order_by("history_date")
    assert [h.outcome for h in history] == [before, changed["outcome"]]
    latest = history.last()
    assert latest.history_type == "~" and latest.history_user == bot
    delta = latest.diff_against(latest.prev_record)
    assert [c.field for c in delta.changes] == ["outcome"]
