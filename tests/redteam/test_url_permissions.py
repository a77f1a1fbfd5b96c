"""Every URL of the app, walked as every shipped group, as a signed-in user with no group and
as an anonymous client: each answers exactly as its permission says, and no one without the
view permission ever reads memory."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from redteam.groups import CURATOR, INGEST, LEAD, REVIEWER, VIEWER

pytestmark = pytest.mark.django_db

#: A value for every URL parameter name the app uses.
SAMPLES = {
    "job_id": uuid.UUID(int=1),
    "attack_result_id": uuid.UUID(int=2),
    "piece_id": uuid.UUID(int=3),
    "pk": str(uuid.UUID(int=4)),
    "conversation_id": "no-such-conversation",
    "sha256": "0" * 64,
    "hash": "0" * 64,
    "name": "no-such-dataset",
    "table": "by_attack",
    "part": "late",
    "fmt": "md",
    "scenario_id": uuid.UUID(int=5),
    "view_id": 1,
    "queue_id": 1,
    "operation_id": uuid.UUID(int=6),
    "finding_id": uuid.UUID(int=7),
    "report_id": uuid.UUID(int=8),
}

#: Pages anyone signed in may open: they show no memory.
OPEN_TO_EVERY_USER = {
    "home",
    "preferences",
    "api-docs",
    "api-schema",
    "logout",
    # The user's own list settings (POST only): no memory.
    "attack-columns",
    "saved-view-save",
    "saved-view-delete",
}
#: Public: the login page, the load balancer's health check and the browser's icon.
PUBLIC = {"login", "healthz", "favicon"}


def _urls() -> dict[str, str]:
    def walk(patterns, namespace=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace == "admin":
                    continue
                yield from walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield pattern

    urls = {}
    for pattern in walk(get_resolver().url_patterns):
        names = pattern.pattern.regex.groupindex
        urls[pattern.name] = reverse(pattern.name, kwargs={n: SAMPLES[n] for n in names})
    return urls


URLS = _urls()


def test_every_url_has_a_sample():
    assert len(URLS) > 40


def _statuses(client: Client) -> dict[str, int]:
    return {name: client.get(url).status_code for name, url in URLS.items()}


def test_anonymous_clients_are_sent_to_log_in_or_refused():
    for name, status in _statuses(Client()).items():
        if name in PUBLIC:
            continue
        url = URLS[name]
        expected = {401, 403} if url.startswith("/api/v1/") or name == "api-schema" else {302}
        if name == "logout":
            expected = {405}  # logging out is a POST
        assert status in expected, (name, status)


def test_a_user_with_no_group_reads_no_memory(member):
    client = Client()
    client.force_login(member())
    for name, status in _statuses(client).items():
        if name in PUBLIC | OPEN_TO_EVERY_USER:
            continue
        # 405: a write endpoint refuses the GET before anything is read.
        assert status in (403, 405), (name, URLS[name], status)


#: What each shipped group may not open, by URL name (every other URL answers 200, 404 for a
#: sample id that does not exist, or 405 for a write endpoint's GET). The ingestion and media
#: upload endpoints grant nothing to a GET, whoever asks: permissions are checked before the
#: method, so a GET is refused like any method they do not define.
WRITE_ONLY = {"api-ingest", "api-media"}
IMPORTS = {"import-list", "import-detail", "import-status", "push-guide"}
#: Creating and changing review queues is the leads' (``queue-resolve`` is a POST: 405).
QUEUE_WRITES = {"queue-create", "queue-edit"}
#: Pages that write findings and operations (reviewers, leads and the ingest group may).
FINDING_FORMS = {
    "finding-create",
    "finding-pick",
    "finding-edit",
    "operation-create",
    "operation-edit",
}
#: The ingestion limits a push client reads: for those who may ingest.
INGEST_ONLY = {"api-ingest-limits"}
FORBIDDEN = {
    VIEWER: IMPORTS
    | WRITE_ONLY
    | QUEUE_WRITES
    | FINDING_FORMS
    | INGEST_ONLY
    | {"piece-human-score"},
    REVIEWER: IMPORTS | WRITE_ONLY | QUEUE_WRITES | INGEST_ONLY,
    LEAD: IMPORTS | WRITE_ONLY | INGEST_ONLY,
    CURATOR: IMPORTS
    | WRITE_ONLY
    | QUEUE_WRITES
    | FINDING_FORMS
    | INGEST_ONLY
    | {"piece-human-score"},
    INGEST: WRITE_ONLY | QUEUE_WRITES,
}


@pytest.mark.parametrize("group", sorted(FORBIDDEN))
def test_each_shipped_group_opens_exactly_what_its_permissions_allow(member, group):
    client = Client()
    client.force_login(member(group))
    statuses = _statuses(client)
    forbidden = {name for name, status in statuses.items() if status == 403}
    assert forbidden == FORBIDDEN[group]
    # 400: a stats endpoint asked without its required parameters.
    unexpected = {n: s for n, s in statuses.items() if s not in (200, 400, 403, 404, 405)}
    assert unexpected == {}


#: The webhook admin (docs/webhooks.md): the leads' alone. The URL walk above skips the admin,
#: whose pages each model's permissions guard; these are the pages of the two webhook models.
WEBHOOK_ADMIN = (
    "admin:memory_webhookendpoint_changelist",
    "admin:memory_webhookendpoint_add",
    "admin:memory_webhookdelivery_changelist",
)


@pytest.mark.parametrize("group", sorted(FORBIDDEN))
def test_only_leads_open_the_webhook_admin(member, group):
    from memory.models import WebhookDelivery, WebhookEndpoint

    hook = WebhookEndpoint.objects.create(name="hook", url="https://hooks.example.org/", secret="s")
    delivery = WebhookDelivery.objects.create(
        endpoint=hook, event="ping", next_attempt_at=hook.created_at
    )
    urls = [reverse(name) for name in WEBHOOK_ADMIN] + [
        reverse("admin:memory_webhookendpoint_change", args=[hook.pk]),
        reverse("admin:memory_webhookdelivery_change", args=[delivery.pk]),
    ]
    client = Client()
    client.force_login(member(group))
    expected = 200 if group == LEAD else 403
    assert {url: client.get(url).status_code for url in urls} == dict.fromkeys(urls, expected)
    index = client.get(reverse("admin:index")).content.decode()
    assert ("webhook" in index.lower()) is (group == LEAD)
