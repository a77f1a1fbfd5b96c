"""A lead sets up a webhook in the admin: the secret shown once, a test event to a real local
receiver, the delivery log and its filters. Screenshots go to var/test-artifacts/webhooks-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from memory.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db(transaction=True)


def test_lead_adds_an_endpoint_sends_a_test_event_and_reads_the_log(
    login_page, live_server, lead, webhook_receiver, shot
):
    page = login_page(lead)
    page.goto(f"{live_server.url}/admin/memory/webhookendpoint/add/")
    page.fill("#id_name", "Team channel")
    page.fill("#id_url", webhook_receiver.url)
    page.check("input[name=events][value='finding.created']")
    page.check("input[name=events][value='attack.succeeded']")
    page.select_option("#id_format", "slack")
    shot(page, "webhooks-1-add")
    page.click("input[name=_save]")

    # The secret, once.
    secret = page.inner_text("#webhook-secret")
    endpoint = WebhookEndpoint.objects.get()
    assert secret == endpoint.secret and secret.startswith("whsec_")
    shot(page, "webhooks-2-secret-once")
    page.click("text=Back to the endpoint")
    page.wait_for_url(f"**/webhookendpoint/{endpoint.pk}/change/")
    assert secret not in page.content()

    # A test event from the list's actions, signed and received.
    page.goto(f"{live_server.url}/admin/memory/webhookendpoint/")
    page.check(f"input[name=_selected_action][value='{endpoint.pk}']")
    page.select_option("select[name=action]", "send_test_event")
    page.click("button[name=index]")
    page.wait_for_selector("text=Team channel: test event delivered (HTTP 200)")
    [request] = webhook_receiver.requests
    assert request["headers"]["X-Redline-Signature"].startswith("sha256=")
    shot(page, "webhooks-3-test-event")

    # The delivery log, then one delivery.
    webhook_receiver.answers = [(500, {}, b"receiver down")]
    page.check(f"input[name=_selected_action][value='{endpoint.pk}']")
    page.select_option("select[name=action]", "send_test_event")
    page.click("button[name=index]")
    page.wait_for_selector("text=not delivered: HTTP 500")
    page.goto(f"{live_server.url}/admin/memory/webhookdelivery/")
    assert page.locator("#result_list tbody tr").count() == 2
    shot(page, "webhooks-4-log")
    page.click("#changelist-filter >> text=Pending")
    page.wait_for_url("**state__exact=pending**")
    page.wait_for_selector("#result_list")
    assert page.locator("#result_list tbody tr").count() == 1
    pending = WebhookDelivery.objects.get(state="pending")
    page.click(f"#result_list a[href*='{pending.pk}/change/']")
    # The click navigates: wait for the delivery's own page before reading it.
    expect(page.locator("#content")).to_contain_text("receiver down")
    shot(page, "webhooks-5-delivery")
