"""``redline-push`` announces each successful attack once (docs/webhooks.md): the pushed
batches go through the ingestion endpoint, and a push that sends everything again (a fresh
state file) stores nothing new and queues no second ``attack.succeeded``."""

from __future__ import annotations

import re

import pytest

from memory.models import AttackResult, WebhookDelivery, WebhookEndpoint, WebhookEvent
from tests.push.conftest import copy_database, count

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_push_announces_each_success_once_and_a_full_re_push_nothing(push, tmp_path):
    WebhookEndpoint.objects.create(
        name="push",
        url="https://hooks.example.org/redline",
        secret="whsec_push-test-0123456789",
        events=[WebhookEvent.ATTACK_SUCCEEDED],
    )
    db = copy_database("1.1.0", tmp_path)
    successes = count(db, "SELECT count(*) FROM AttackResultEntries WHERE outcome = 'success'")
    status, out, err = push(db, "--batch-rows", "50")
    assert status == 0, out + err
    sent = {d.payload["data"]["attack"]["id"] for d in WebhookDelivery.objects.all()}
    stored = AttackResult.objects.filter(outcome="success").values_list("pk", flat=True)
    assert WebhookDelivery.objects.count() == successes > 0
    assert sent == {str(pk) for pk in stored}
    assert set(WebhookDelivery.objects.values_list("state", "attempts")) == {("pending", 0)}

    status, out, err = push(db, "--batch-rows", "50", state=tmp_path / "fresh-state.sqlite3")
    assert status == 0, out + err
    assert re.search(r"\b[1-9]\d* batches", out), out  # everything went again
    assert WebhookDelivery.objects.count() == successes
