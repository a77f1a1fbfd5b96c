"""The webhook admin: endpoints with a write-only secret shown once, the read-only delivery
log (pinned query counts, filters), "Send a test event" and "Retry now", and only leads and
superusers inside (the URL walk as every group: tests/redteam/test_url_permissions.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client

from memory.models import DeliveryState, WebhookDelivery, WebhookEndpoint, WebhookEvent
from tests.findings.test_webhooks import SECRET, endpoint
from tests.queries import count_queries

pytestmark = pytest.mark.django_db

ENDPOINTS = "/admin/memory/webhookendpoint/"
DELIVERIES = "/admin/memory/webhookdelivery/"


@pytest.fixture
def lead_client(lead):
    client = Client()
    client.force_login(lead)
    return client


def _deliveries(hook, count, state=DeliveryState.PENDING):
    now = datetime.now(UTC)
    WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            endpoint=hook,
            event=WebhookEvent.FINDING_CREATED,
            payload={"event": "finding.created", "data": {"n": n}},
            state=state,
            attempts=6 if state == DeliveryState.FAILED else 0,
            error="HTTP 503" if state == DeliveryState.FAILED else "",
            next_attempt_at=now if state == DeliveryState.PENDING else None,
        )
        for n in range(count)
    )


# The delivery log costs the same queries whatever the number of rows: session, user, the
# lead's user and group permissions (two), the endpoint filter's choices, the bounded count
# (no full COUNT(*)), the page's rows joined to their endpoint.
LOG_QUERIES = 7


def test_the_delivery_log_renders_with_a_pinned_query_count(lead_client):
    hook = endpoint()
    _deliveries(hook, 2)
    small, response = count_queries(lead_client.get, DELIVERIES)
    assert response.status_code == 200
    _deliveries(hook, 30, DeliveryState.FAILED)
    large, response = count_queries(lead_client.get, DELIVERIES)
    assert response.status_code == 200
    assert small == large == LOG_QUERIES
    assert len(response.context["cl"].result_list) == 32
    page = response.content.decode()
    assert "Retry now" in page
    assert SECRET not in page


def test_the_delivery_log_filters_by_state_event_and_endpoint(lead_client):
    hook, other = endpoint(), endpoint("other")
    _deliveries(hook, 3, DeliveryState.FAILED)
    _deliveries(hook, 2)
    _deliveries(other, 4, DeliveryState.FAILED)
    response = lead_client.get(
        DELIVERIES,
        {
            "state__exact": "failed",
            "event__exact": "finding.created",
            "endpoint__id__exact": hook.pk,
        },
    )
    assert response.status_code == 200
    rows = response.context["cl"].result_list
    assert len(rows) == 3 and {(d.endpoint_id, d.state) for d in rows} == {(hook.pk, "failed")}


def test_a_delivery_page_is_read_only_and_shows_the_payload_not_the_secret(lead_client):
    hook = endpoint()
    _deliveries(hook, 1, DeliveryState.FAILED)
    delivery = WebhookDelivery.objects.get()
    response = lead_client.get(f"{DELIVERIES}{delivery.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "finding.created" in page and "HTTP 503" in page
    assert "&quot;n&quot;: 0" in page  # the payload, pretty-printed and escaped
    assert SECRET not in page
    assert 'name="_save"' not in page
    assert lead_client.post(f"{DELIVERIES}{delivery.pk}/change/", {}).status_code == 403
    assert lead_client.get(f"{DELIVERIES}add/").status_code == 403


def test_adding_an_endpoint_shows_its_generated_secret_once(lead_client, lead):
    response = lead_client.post(
        f"{ENDPOINTS}add/",
        {
            "name": "team slack",
            "url": "https://hooks.example.org/services/T0/B0/x",
            "events": ["finding.created", "attack.succeeded"],
            "format": "slack",
            "active": "on",
        },
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    hook = WebhookEndpoint.objects.get()
    assert hook.secret.startswith("whsec_")
    assert hook.secret in response.content.decode()
    assert (hook.events, hook.format, hook.created_by) == (
        ["finding.created", "attack.succeeded"],
        "slack",
        lead,
    )
    change = lead_client.get(f"{ENDPOINTS}{hook.pk}/change/")
    assert change.status_code == 200
    assert hook.secret not in change.content.decode()
    assert hook.secret not in lead_client.get(ENDPOINTS).content.decode()

    # saving without a new secret keeps it, and redirects as usual
    kept = hook.secret
    response = lead_client.post(
        f"{ENDPOINTS}{hook.pk}/change/",
        {"name": "team slack", "url": hook.url, "events": ["finding.created"], "format": "slack"},
    )
    assert response.status_code == 302
    hook.refresh_from_db()
    assert (hook.secret, hook.events, hook.active) == (kept, ["finding.created"], False)


def test_the_endpoint_form_refuses_private_addresses_and_other_schemes(lead_client):
    for url in ("http://127.0.0.1:8000/hook", "http://169.254.169.254/", "ftp://example.org/"):
        response = lead_client.post(
            f"{ENDPOINTS}add/", {"name": "x", "url": url, "events": [], "format": "json"}
        )
        assert response.status_code == 200
        assert response.context["adminform"].form.errors["url"], url
    assert WebhookEndpoint.objects.count() == 0


def test_send_a_test_event_and_retry_now(lead_client, webhook_receiver):
    hook = endpoint(url=webhook_receiver.url)
    response = lead_client.post(
        ENDPOINTS, {"action": "send_test_event", "_selected_action": [hook.pk]}, follow=True
    )
    assert response.status_code == 200
    # (the admin capitalises messages)
    assert "Hook: test event delivered (HTTP 200)" in response.content.decode()
    [ping] = webhook_receiver.requests
    assert ping["headers"]["X-Redline-Event"] == "ping"

    _deliveries(hook, 2, DeliveryState.FAILED)
    failed = list(WebhookDelivery.objects.filter(state="failed").values_list("pk", flat=True))
    response = lead_client.post(
        DELIVERIES, {"action": "retry_now", "_selected_action": failed}, follow=True
    )
    assert "2 queued again; 2 tried now, 2 delivered." in response.content.decode()
    assert len(webhook_receiver.requests) == 3
    retried = WebhookDelivery.objects.filter(pk__in=failed)
    assert {(d.state, d.attempts) for d in retried} == {("delivered", 7)}
