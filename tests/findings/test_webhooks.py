"""Signed webhooks: signatures a real HTTP server receives, the retry schedule on an injected
clock, one delivery per event and subscribed endpoint from every door (findings, REST ingestion,
PyRIT import), no second announcement for re-sent data, the Slack shape, the address check, the
worker command and the admin (docs/webhooks.md)."""

from __future__ import annotations

import copy
import hashlib
import hmac
import itertools
import json
import random
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction

from memory.findings import services as finding_services
from memory.findings.webhooks import payloads, receivers, signing, transport
from memory.findings.webhooks.services import (
    FIRST_RETRY,
    MAX_ATTEMPTS,
    retry_delay,
    webhook_deliveries_queue,
    webhook_deliveries_send_due,
    webhook_endpoint_save,
    webhook_endpoints_ping,
)
from memory.models import (
    AttackResult,
    DeliveryState,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookFormat,
)
from memory.transfer.importers.service import import_pyrit_db
from redteam.core.choices import AttackOutcome
from redteam.tokens import api_token_create
from tests.conftest import WebhookReceiver
from tests.importers.conftest import DB_110, source_rows
from tests.ingest.conftest import EXPORT_110, load, post_json
from tests.queries import count_queries

pytestmark = pytest.mark.django_db

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
SECRET = "whsec_test-secret-0123456789abcdef"
T0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def endpoint(name="hook", url="https://hooks.example.org/redline", events=None, **fields):
    return WebhookEndpoint.objects.create(
        name=name,
        url=url,
        secret=SECRET,
        events=list(WebhookEvent.values[:3]) if events is None else events,
        **fields,
    )


def _doc_verify():
    """The verification snippet of docs/webhooks.md, run as it is written there."""
    code = re.search(r"```python\n(.*?)```", DOCS.read_text(), re.DOTALL).group(1)
    namespace: dict = {}
    exec(compile(code, str(DOCS), "exec"), namespace)
    return namespace["verify"]


# --- signing -----------------------------------------------------------------------------------


def test_a_real_server_receives_a_signed_request_the_documented_snippet_accepts(webhook_receiver):
    hook = endpoint(url=webhook_receiver.url)
    [delivery] = webhook_endpoints_ping(endpoints=[hook])
    assert delivery.state == DeliveryState.DELIVERED
    assert delivery.status_code == 200
    assert delivery.response_excerpt == "ok"
    [request] = webhook_receiver.requests
    headers, body = request["headers"], request["body"]
    assert request["path"] == "/hooks/redline?team=red"
    assert headers["X-Redline-Event"] == "ping"
    assert headers["X-Redline-Delivery"] == str(delivery.pk)
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == delivery.payload
    verify = _doc_verify()
    timestamp, signature = headers["X-Redline-Timestamp"], headers["X-Redline-Signature"]
    assert verify(SECRET, body, timestamp, signature)
    # independently of both implementations: HMAC-SHA256 over "<timestamp>.<body>"
    expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    assert signature == "sha256=" + expected.hexdigest()
    # a changed body, another secret, or another timestamp does not verify
    assert not verify(SECRET, body + b" ", timestamp, signature)
    assert not verify("whsec_another-secret-0123456789", body, timestamp, signature)
    assert not verify(SECRET, body, str(int(timestamp) + 1), signature)


def test_an_old_timestamp_is_refused_even_with_a_valid_signature():
    body = b'{"event":"ping"}'
    header = signing.signature(secret=SECRET, timestamp=1000, body=body)
    assert signing.verify(secret=SECRET, body=body, timestamp="1000", header=header, now=1200)
    assert not signing.verify(secret=SECRET, body=body, timestamp="1000", header=header, now=1301)
    assert not signing.verify(secret=SECRET, body=body, timestamp="x", header=header, now=1000)


# --- retries -----------------------------------------------------------------------------------


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def failing_sender(status=503):
    calls = []

    def send(url, *, body, headers, allow_private):
        calls.append(headers)
        return transport.Response(status=status, excerpt="busy")

    send.calls = calls
    return send


def test_failed_attempts_back_off_exponentially_with_jitter_then_fail():
    hook = endpoint()
    clock = Clock(T0)
    [delivery] = webhook_deliveries_queue(
        event=WebhookEvent.PING, endpoints=[hook], items=[{}], now=T0
    )
    sender, rng = failing_sender(), random.Random(7)
    attempts_at = []
    while True:
        due = WebhookDelivery.objects.get(pk=delivery.pk)
        if due.state != DeliveryState.PENDING:
            break
        # a moment before it is due, a pass sends nothing
        clock.now = due.next_attempt_at - timedelta(seconds=1)
        assert sum(webhook_deliveries_send_due(clock=clock, rng=rng, sender=sender).values()) == 0
        clock.now = due.next_attempt_at
        assert webhook_deliveries_send_due(clock=clock, rng=rng, sender=sender) == (
            {DeliveryState.FAILED: 1} if len(attempts_at) == MAX_ATTEMPTS - 1 else {"pending": 1}
        )
        attempts_at.append(clock.now)
    assert len(attempts_at) == len(sender.calls) == MAX_ATTEMPTS == 6
    gaps = [later - earlier for earlier, later in itertools.pairwise(attempts_at)]
    for number, gap in enumerate(gaps, start=1):
        nominal = FIRST_RETRY * 2 ** (number - 1)
        assert nominal * 0.8 <= gap <= nominal * 1.2, (number, gap)
    assert len({round(gap / (FIRST_RETRY * 2**n), 6) for n, gap in enumerate(gaps)}) > 1
    assert timedelta(minutes=49) <= attempts_at[-1] - attempts_at[0] <= timedelta(minutes=75)
    failed = WebhookDelivery.objects.get(pk=delivery.pk)
    assert (failed.state, failed.attempts, failed.next_attempt_at) == ("failed", 6, None)
    assert (failed.status_code, failed.error, failed.response_excerpt) == (503, "HTTP 503", "busy")
    # each attempt is signed afresh, with the same delivery id
    assert len({h["X-Redline-Delivery"] for h in sender.calls}) == 1


def test_the_delay_doubles_per_attempt_within_the_jitter():
    rng = random.Random(1)
    for attempt, minutes in enumerate((2, 4, 8, 16, 32), start=1):
        delay = retry_delay(attempt=attempt, rng=rng)
        assert timedelta(minutes=minutes * 0.8) <= delay <= timedelta(minutes=minutes * 1.2)


def test_a_delivery_that_fails_then_succeeds_is_delivered(webhook_receiver):
    webhook_receiver.answers = [(500, {}, b"oops"), (204, {}, b"")]
    hook = endpoint(url=webhook_receiver.url)
    webhook_deliveries_queue(event=WebhookEvent.PING, endpoints=[hook], items=[{}], now=T0)
    clock = Clock(T0)
    assert webhook_deliveries_send_due(clock=clock) == {"pending": 1}
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status_code, delivery.error, delivery.response_excerpt) == (
        500,
        "HTTP 500",
        "oops",
    )
    clock.now = delivery.next_attempt_at
    assert webhook_deliveries_send_due(clock=clock) == {"delivered": 1}
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.status_code, delivery.error) == (2, 204, "")
    assert delivery.delivered_at == clock.now and delivery.next_attempt_at is None
    sent = [r["headers"]["X-Redline-Delivery"] for r in webhook_receiver.requests]
    assert sent == [str(delivery.pk)] * 2


def test_redirects_are_not_followed_and_answers_are_cut(webhook_receiver):
    webhook_receiver.answers = [(302, {"Location": "http://169.254.169.254/latest/"}, b"")]
    hook = endpoint(url=webhook_receiver.url)
    [delivery] = webhook_endpoints_ping(endpoints=[hook])
    assert delivery.state == DeliveryState.PENDING
    assert delivery.error == "redirect to http://169.254.169.254/latest/ not followed"
    assert len(webhook_receiver.requests) == 1
    webhook_receiver.answers = [(200, {}, b"x" * 1_000_000)]
    [delivery] = webhook_endpoints_ping(endpoints=[hook])
    assert delivery.state == DeliveryState.DELIVERED
    assert delivery.response_excerpt == "x" * transport.EXCERPT_LIMIT


def test_a_receiver_that_does_not_answer_times_out(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        with pytest.raises(TimeoutError):
            transport.post(url, body=b"{}", headers={}, allow_private=True, read_timeout=0.2)
    finally:
        silent.close()


# --- where Redline posts to --------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
    ],
)
def test_non_public_addresses_are_refused(address):
    assert not transport.is_public(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_addresses_are_allowed(address):
    assert transport.is_public(address)


def test_a_loopback_endpoint_is_refused_at_send_time_and_not_retried():
    received = WebhookReceiver()
    try:
        hook = endpoint(url=received.url)
        [delivery] = webhook_endpoints_ping(endpoints=[hook])
        assert received.requests == []
    finally:
        received.close()
    assert delivery.state == DeliveryState.FAILED
    assert delivery.attempts == 1
    assert delivery.error == "refused: 127.0.0.1 resolves to a non-public address (127.0.0.1)"


def test_a_name_that_resolves_to_loopback_is_refused():
    target = transport.parse("http://localhost:9/")
    with pytest.raises(transport.Refused, match="non-public"):
        transport.resolve(target, allow_private=False)


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://example.org/x", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("https://user:pw@example.org/", "user name or password"),
        ("http://[::1]/", "not a public address"),
        ("http://169.254.169.254/latest/meta-data/", "not a public address"),
        ("http://localhost/", "not a public address"),
    ],
)
def test_the_admin_form_refuses_what_can_be_checked_without_resolving(url, message):
    with pytest.raises(transport.Refused, match=message):
        transport.check_literal(url, allow_private=False)


# --- one delivery per event and subscribed endpoint --------------------------------------------


@pytest.fixture
def subscribed(db):
    """Two endpoints that want everything, one that wants other events, one switched off."""
    return [
        endpoint("a"),
        endpoint("b", url="https://hooks.example.org/b", format=WebhookFormat.SLACK),
        endpoint("other", events=[WebhookEvent.ATTACK_SUCCEEDED]),
        endpoint("off", active=False),
    ]


def _deliveries(event):
    return list(WebhookDelivery.objects.filter(event=event).select_related("endpoint"))


def test_finding_created_and_status_changed_queue_one_delivery_per_subscribed_endpoint(
    subscribed, build, reviewer
):
    endpoint("finding-only", events=[WebhookEvent.FINDING_CREATED])
    built = build()
    finding = finding_services.finding_create(
        actor=reviewer, title="Badge bypass", severity="high", evidence=[]
    )
    created = _deliveries(WebhookEvent.FINDING_CREATED)
    assert sorted(d.endpoint.name for d in created) == ["a", "b", "finding-only"]
    assert {d.event_id for d in created} == {uuid.UUID(created[0].payload["id"])}
    data = created[0].payload["data"]["finding"]
    assert (data["id"], data["title"], data["severity"], data["status"]) == (
        str(finding.pk),
        "Badge bypass",
        "high",
        "new",
    )
    assert all(d.state == "pending" and d.attempts == 0 for d in created)

    finding_services.finding_status_set(finding=finding, status="confirmed", actor=reviewer)
    changed = _deliveries(WebhookEvent.FINDING_STATUS_CHANGED)
    assert sorted(d.endpoint.name for d in changed) == ["a", "b"]
    assert changed[0].payload["data"]["previous_status"] == "new"
    assert changed[0].payload["data"]["finding"]["status"] == "confirmed"
    assert built.attack.pk  # the attack is not evidence here: no attack event either
    assert _deliveries(WebhookEvent.ATTACK_SUCCEEDED) == []


def test_a_rolled_back_finding_announces_nothing(subscribed, reviewer):
    with pytest.raises(RuntimeError), transaction.atomic():
        finding_services.finding_create(actor=reviewer, title="Never", evidence=[])
        raise RuntimeError
    assert WebhookDelivery.objects.count() == 0


@pytest.fixture
def ingest_client(bot):
    """A client sending the bot's ingest-scope token (what ``redline-push`` sends too)."""
    from django.test import Client

    _, raw = api_token_create(user=bot, scope="ingest")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def _successes(data):
    return {a["attack_result_id"] for a in data["attack_results"] if a["outcome"] == "success"}


def test_rest_ingestion_announces_each_success_once_and_a_resend_nothing(subscribed, ingest_client):
    data = load(EXPORT_110)
    assert post_json(ingest_client, data).status_code == 200
    succeeded = _deliveries(WebhookEvent.ATTACK_SUCCEEDED)
    expected = _successes(data)
    assert len(expected) == 10
    assert sorted(d.endpoint.name for d in succeeded) == sorted(["a", "b", "other"] * 10)
    for name in ("a", "b", "other"):
        assert {
            d.payload["data"]["attack"]["id"] for d in succeeded if d.endpoint.name == name
        } == (expected)
    assert {d.payload["data"]["attack"]["outcome"] for d in succeeded} == {"success"}
    assert all(d.attempts == 0 and d.state == "pending" for d in succeeded)  # queued, not sent

    again = post_json(ingest_client, data).json()
    assert again["counts"]["attack_results"]["unchanged"] == 24
    assert len(_deliveries(WebhookEvent.ATTACK_SUCCEEDED)) == 30

    # a stored failure turned into a success announces it; a success that stays one does not
    failure = next(a for a in data["attack_results"] if a["outcome"] == "failure")
    success = next(a for a in data["attack_results"] if a["outcome"] == "success")
    turned = {**copy.deepcopy(failure), "outcome": "success"}
    still = {**copy.deepcopy(success), "outcome_reason": "re-scored, still a success"}
    body = post_json(ingest_client, {"attack_results": [turned, still]}).json()
    assert body["counts"]["attack_results"]["updated"] == 2
    after = _deliveries(WebhookEvent.ATTACK_SUCCEEDED)
    assert len(after) == 33
    new = {
        d.payload["data"]["attack"]["id"] for d in after if d.pk not in {s.pk for s in succeeded}
    }
    assert new == {failure["attack_result_id"]}


def test_a_refused_batch_announces_nothing(subscribed, ingest_client):
    data = load(EXPORT_110)
    attack = dict(data["attack_results"][3], last_score_id=str(uuid.uuid4()))
    assert attack["outcome"] == "success"
    assert post_json(ingest_client, {"attack_results": [attack]}).status_code == 400
    assert WebhookDelivery.objects.count() == 0


def test_a_pyrit_import_announces_each_success_once_and_a_reimport_nothing(subscribed):
    successes = source_rows(
        DB_110, "SELECT count(*) FROM AttackResultEntries WHERE outcome = 'success'"
    )[0][0]
    assert successes > 0
    assert import_pyrit_db(path=DB_110).ok
    per_endpoint = WebhookDelivery.objects.filter(
        event=WebhookEvent.ATTACK_SUCCEEDED, endpoint__name="a"
    )
    assert per_endpoint.count() == successes
    assert {d.payload["data"]["attack"]["id"] for d in per_endpoint} == {
        str(pk)
        for pk in AttackResult.objects.filter(outcome="success").values_list("pk", flat=True)
    }
    assert import_pyrit_db(path=DB_110).ok
    assert per_endpoint.count() == successes


def test_deliveries_are_written_in_the_change_s_transaction_and_roll_back_with_it(
    subscribed, ingest_client
):
    """No moment exists where the change is committed and its event not yet queued."""
    data = load(EXPORT_110)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert post_json(ingest_client, data).status_code == 200
        # still inside the request's enclosing transaction: the rows are already there
        assert len(_deliveries(WebhookEvent.ATTACK_SUCCEEDED)) == 3 * len(_successes(data))
        raise RuntimeError
    assert AttackResult.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0


def test_a_queuing_error_drops_the_event_but_keeps_the_change(
    subscribed, ingest_client, monkeypatch, caplog
):
    """A failing queue (a real database error, which aborts a PostgreSQL transaction unless
    its savepoint is rolled back) is logged; the ingestion still commits its rows."""
    from django.db import DatabaseError, connection

    def broken(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_webhook_table")

    monkeypatch.setattr(receivers, "webhook_deliveries_queue", broken)
    data = load(EXPORT_110)
    with caplog.at_level("ERROR", logger=receivers.__name__):
        response = post_json(ingest_client, data)
    assert response.status_code == 200, response.content
    assert AttackResult.objects.count() == len(data["attack_results"])
    assert WebhookDelivery.objects.count() == 0
    assert "could not queue attack.succeeded webhook deliveries" in caplog.text
    assert any(isinstance(r.exc_info[1], DatabaseError) for r in caplog.records if r.exc_info)


def test_queuing_many_successes_takes_the_same_queries_as_a_few(subscribed, build):
    """A large import's announcement is a few bulk statements, not one per attack."""
    few = [build(minutes=i).attack.pk for i in range(3)]
    many = [build(minutes=i).attack.pk for i in range(3, 33)]
    small, _ = count_queries(receivers.attacks_succeeded, None, attack_ids=few)
    large, _ = count_queries(receivers.attacks_succeeded, None, attack_ids=many)
    # endpoints; savepoint; the attacks with their joins; one INSERT (500 rows a batch); release
    assert small == large == 5
    assert WebhookDelivery.objects.count() == (3 + 30) * 3


def test_with_no_endpoint_subscribed_an_event_costs_one_query(build):
    endpoint("findings", events=[WebhookEvent.FINDING_CREATED])
    attack = build().attack
    queries, _ = count_queries(receivers.attacks_succeeded, None, attack_ids=[attack.pk])
    assert queries == 1
    assert WebhookDelivery.objects.count() == 0


# --- formats -----------------------------------------------------------------------------------


def test_slack_endpoints_receive_text_and_blocks_with_escaped_text(
    webhook_receiver, settings, build, reviewer
):
    settings.REDLINE_BASE_URL = "https://redline.example.org/"
    hook = endpoint(url=webhook_receiver.url, format=WebhookFormat.SLACK)
    finding = finding_services.finding_create(
        actor=reviewer, title="<!channel> & <https://evil.example|click>", severity="critical"
    )
    # creating it queued the delivery (in its transaction); the worker sends it
    assert [d.endpoint for d in _deliveries(WebhookEvent.FINDING_CREATED)] == [hook]
    now = datetime.now(UTC)  # the receiver checks the timestamp against its own clock
    assert webhook_deliveries_send_due(clock=Clock(now)) == {"delivered": 1}
    body = webhook_receiver.requests[0]["body"]
    message = json.loads(body)
    assert set(message) == {"text", "blocks"}
    assert message["text"] == (
        "New finding [Critical]: &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;"
    )
    section, context = message["blocks"]
    assert section["type"] == "section" and section["text"]["type"] == "mrkdwn"
    url = f"https://redline.example.org/findings/{finding.pk}/"
    assert section["text"]["text"] == (
        f"*New finding* <{url}|&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;>\n"
        "Severity: Critical · Status: New"
    )
    assert context["type"] == "context"
    assert "`finding.created`" in context["elements"][0]["text"]
    # signed like any other body
    headers = webhook_receiver.requests[0]["headers"]
    assert _doc_verify()(
        SECRET, body, headers["X-Redline-Timestamp"], headers["X-Redline-Signature"]
    )


def test_slack_message_of_an_attack(build):
    attack = AttackResult.objects.select_related(
        "conversation__target_identifier", "attack_identifier"
    ).get(pk=build(outcome=AttackOutcome.SUCCESS).attack.pk)
    payload = payloads.envelope(
        event=WebhookEvent.ATTACK_SUCCEEDED, data=payloads.attack_data(attack=attack), at=T0
    )
    message = payloads.slack_message(payload)
    assert message["text"].startswith("Attack succeeded: ")
    text = message["blocks"][0]["text"]["text"]
    assert text.splitlines()[0] == "*Attack succeeded* " + "open in Redline"  # no base URL: no link
    assert (
        "Attack: PromptSendingAttack · Target: OpenAIChatTarget · Operation: Op Blue Heron" in text
    )


def test_a_multi_line_objective_stays_inside_the_slack_quote():
    payload = {
        "id": "e",
        "event": WebhookEvent.ATTACK_SUCCEEDED,
        "data": {
            "attack": {
                "objective": "first line\n*not bold* <@U123>",
                "url": "/attacks/x/",
                "attack": None,
                "target": None,
                "operation": None,
            }
        },
    }
    text = payloads.slack_message(payload)["blocks"][0]["text"]["text"]
    assert text.splitlines()[1:3] == ["> first line", "> *not bold* &lt;@U123&gt;"]


def test_long_objectives_are_cut(build):
    attack = build().attack
    AttackResult.objects.filter(pk=attack.pk).update(objective="y" * 5000)
    attack = AttackResult.objects.select_related(
        "conversation__target_identifier", "attack_identifier"
    ).get(pk=attack.pk)
    objective = payloads.attack_data(attack=attack)["attack"]["objective"]
    assert len(objective) == payloads.TEXT_LIMIT and objective.endswith("…")


# --- the worker --------------------------------------------------------------------------------


def test_deliver_webhooks_sends_what_is_due_once(webhook_receiver, capsys):
    hook = endpoint(url=webhook_receiver.url)
    webhook_deliveries_queue(
        event=WebhookEvent.PING, endpoints=[hook], items=[{}, {}], now=datetime.now(UTC)
    )
    call_command("deliver_webhooks")
    assert "2 sent: 2 delivered" in capsys.readouterr().out
    call_command("deliver_webhooks")
    assert len(webhook_receiver.requests) == 2
    assert set(WebhookDelivery.objects.values_list("state", flat=True)) == {"delivered"}


def test_deliver_webhooks_loop_polls_after_a_pass_that_was_not_full(webhook_receiver, monkeypatch):
    from memory.management.commands import deliver_webhooks

    class Stop(Exception):
        pass

    naps = []

    def nap(seconds):
        naps.append(seconds)
        raise Stop

    monkeypatch.setattr(deliver_webhooks.time, "sleep", nap)
    hook = endpoint(url=webhook_receiver.url)
    webhook_deliveries_queue(
        event=WebhookEvent.PING, endpoints=[hook], items=[{}], now=datetime.now(UTC)
    )
    with pytest.raises(Stop):
        call_command("deliver_webhooks", "--loop", "--interval", "0.5")
    assert naps == [0.5]
    assert WebhookDelivery.objects.get().state == DeliveryState.DELIVERED


def test_an_inactive_endpoint_gets_nothing_queued_earlier_delivered():
    hook = endpoint()
    webhook_deliveries_queue(
        event=WebhookEvent.FINDING_CREATED, endpoints=[hook], items=[{}], now=T0
    )
    hook.active = False
    hook.save()
    sender = failing_sender()
    assert webhook_deliveries_send_due(clock=Clock(T0), sender=sender) == {"failed": 1}
    assert sender.calls == []
    assert WebhookDelivery.objects.get().error == "the endpoint is inactive"


def test_a_claimed_delivery_is_not_sent_by_a_second_pass():
    hook = endpoint()
    webhook_deliveries_queue(event=WebhookEvent.PING, endpoints=[hook], items=[{}], now=T0)
    from memory.findings.webhooks.services import LEASE, _claim

    [claimed] = _claim(WebhookDelivery.objects.all(), now=T0, limit=10)
    assert claimed.next_attempt_at == T0 + LEASE
    assert _claim(WebhookDelivery.objects.all(), now=T0 + LEASE / 2, limit=10) == []


# --- secrets -----------------------------------------------------------------------------------


def test_a_new_endpoint_gets_a_generated_secret_once(lead):
    hook = WebhookEndpoint(name="new", url="https://hooks.example.org/", events=[])
    shown = webhook_endpoint_save(endpoint=hook, actor=lead)
    assert shown and shown.startswith("whsec_") and len(shown) > 40
    assert WebhookEndpoint.objects.get().secret == shown
    assert hook.created_by == lead
    assert webhook_endpoint_save(endpoint=hook, actor=lead) is None  # kept
    assert (
        webhook_endpoint_save(endpoint=hook, actor=lead, new_secret="typed-secret-123456") is None
    )
    assert WebhookEndpoint.objects.get().secret == "typed-secret-123456"
    rotated = webhook_endpoint_save(endpoint=hook, actor=lead, generate_secret=True)
    assert rotated not in (None, shown)


def test_the_worker_log_never_holds_the_secret_or_the_url(webhook_receiver, caplog):
    hook = endpoint(url=webhook_receiver.url)
    with caplog.at_level("INFO", logger="memory.findings.webhooks.services"):
        webhook_endpoints_ping(endpoints=[hook])
    assert caplog.records
    assert SECRET not in caplog.text and webhook_receiver.url not in caplog.text
    assert "hook" in caplog.text
