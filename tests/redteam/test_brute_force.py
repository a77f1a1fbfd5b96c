"""Logins lock after repeated failures, the API is rate-limited per token, and both land in
the security log as JSON."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client

from redteam.tokens import api_token_create

pytestmark = pytest.mark.django_db


def _login(client: Client, password: str):
    return client.post("/login/", {"username": "vic", "password": password})


def test_forty_wrong_passwords_lock_the_account_for_that_address(django_user_model, settings):
    settings.AXES_FAILURE_LIMIT = 10
    django_user_model.objects.create_user("vic", password="right-password-1")
    client = Client()
    statuses = [_login(client, f"wrong-{i}").status_code for i in range(40)]
    # The login form answers the first failures, then the lockout page.
    assert statuses[:9] == [200] * 9
    assert set(statuses[10:]) == {429}
    locked = _login(client, "right-password-1")
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session

    # Another address is not locked out by this one.
    other = Client(REMOTE_ADDR="10.9.8.7")
    assert (
        other.post("/login/", {"username": "vic", "password": "right-password-1"}).status_code
        == 302
    )


def test_a_success_before_the_limit_resets_the_count(django_user_model, settings):
    settings.AXES_FAILURE_LIMIT = 3
    django_user_model.objects.create_user("vic", password="right-password-1")
    client = Client()
    for _ in range(2):
        _login(client, "wrong")
    assert _login(client, "right-password-1").status_code == 302
    client.logout()
    for _ in range(2):
        assert _login(client, "wrong").status_code == 200


def test_the_api_is_rate_limited_per_token(django_user_model, settings):
    settings.REDLINE_API_RATE = "3/minute"
    user = django_user_model.objects.create_superuser("bot", password="pw-bot-123")
    _, first = api_token_create(user=user, scope="read")
    _, second = api_token_create(user=user, scope="read")
    one = Client(HTTP_AUTHORIZATION=f"Bearer {first}")
    statuses = [one.get("/api/v1/conversations/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = one.get("/api/v1/conversations/")
    assert int(limited["Retry-After"]) > 0
    # The other token has its own count.
    two = Client(HTTP_AUTHORIZATION=f"Bearer {second}")
    assert two.get("/api/v1/conversations/").status_code == 200


def _security_lines(caplog) -> list[dict]:
    return [r.security for r in caplog.records if r.name == "redline.security"]


def test_security_events_are_logged(django_user_model, settings, caplog):
    settings.AXES_FAILURE_LIMIT = 2
    settings.REDLINE_API_RATE = "1/minute"
    caplog.set_level(logging.INFO, logger="redline.security")
    django_user_model.objects.create_user("vic", password="right-password-1")
    viewer = django_user_model.objects.create_user("nobody", password="pw-nobody-1")
    client = Client()
    for _ in range(3):
        _login(client, "wrong")
    token_user = django_user_model.objects.create_superuser("bot", password="pw-bot-123")
    _, raw = api_token_create(user=token_user, scope="read")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    api.get("/api/v1/conversations/")
    api.get("/api/v1/conversations/")
    Client(HTTP_AUTHORIZATION="Bearer nope").get("/api/v1/conversations/")
    browser = Client()
    browser.force_login(viewer)
    browser.get("/attacks/")

    events = _security_lines(caplog)
    names = [e["event"] for e in events]
    assert names.count("login_failed") >= 2
    assert "login_locked_out" in names
    used = next(e for e in events if e["event"] == "token_used")
    assert used["user"] == "bot" and used["token"] and raw not in json.dumps(used)
    assert "rate_limited" in names and "api_unauthenticated" in names
    denied = next(e for e in events if e["event"] == "permission_denied")
    assert denied["path"] == "/attacks/" and denied["user"] == "nobody"
    failed = next(e for e in events if e["event"] == "login_failed")
    assert failed["username"] == "vic" and failed["ip"] == "127.0.0.1"
