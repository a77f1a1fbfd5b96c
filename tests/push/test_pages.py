"""Where pushed memory came from, on the pages; the home page's push instructions."""

from __future__ import annotations

import pytest

from memory.models import AttackResult, PushSource
from memory.transfer.ingest.service import ingest
from tests.conftest import FIXTURES_DIR, logged_in

pytestmark = pytest.mark.django_db


def _push(source: dict | None) -> None:
    import json

    payload = json.loads((FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json").read_text())
    if source:
        payload["push_source"] = source
    assert ingest(payload=payload).ok


def test_a_push_source_is_recorded_once_and_shown_on_attack_and_conversation(viewer):
    _push({"host": "alice-laptop", "database": "/home/alice/dbdata/pyrit.db"})
    _push({"host": "alice-laptop", "database": "/home/alice/dbdata/pyrit.db"})
    source = PushSource.objects.get()
    attack = AttackResult.objects.select_related("conversation").first()
    assert attack.push_source == source and attack.conversation.push_source == source
    client = logged_in(viewer)
    for url in (f"/attacks/{attack.pk}/", f"/conversations/{attack.conversation.conversation_id}/"):
        page = client.get(url).content.decode()
        assert "Pushed from" in page and "alice-laptop:/home/alice/dbdata/pyrit.db" in page
    listed = client.get(f"/attacks/?push_source={source.pk}")
    assert listed.status_code == 200
    assert AttackResult.objects.filter(push_source=source).count() == 24


def test_memory_not_pushed_shows_no_source(viewer):
    _push(None)
    attack = AttackResult.objects.first()
    assert attack.push_source is None
    assert "Pushed from" not in logged_in(viewer).get(f"/attacks/{attack.pk}/").content.decode()


def test_a_bad_push_source_is_an_error_naming_it():
    from memory.transfer.ingest.normalize import normalize_batch

    _, problems = normalize_batch({"push_source": {"host": "", "database": "/x"}})
    assert [p.path for p in problems] == ["push_source.host"]


def test_home_tells_ingesters_how_to_push(ingester, viewer):
    page = logged_in(ingester).get("/").content.decode()
    assert "redline-push --url http://testserver --token $REDLINE_TOKEN --watch" in page
    assert "redline-push" not in logged_in(viewer).get("/").content.decode()


def test_limits_endpoint_tells_a_client_what_fits(ingester, viewer, settings):
    body = logged_in(ingester).get("/api/v1/ingest/limits/").json()
    assert body["max_body_bytes"] == settings.REDLINE_INGEST_MAX_BODY_BYTES
    assert body["max_items"] == settings.REDLINE_INGEST_MAX_ITEMS
    assert {"push_source", "media_link"} <= set(body["features"])
    assert logged_in(viewer).get("/api/v1/ingest/limits/").status_code == 403
