"""Hostile requests to the JSON API answer in JSON with a 4xx: a body nested deeper than
Python's decoder goes (400), a body over Django's size limit (413), and a client address that
keeps sending wrong tokens (429 after API_AUTH_FAILURE_RATE) (docs/api.md)."""

from __future__ import annotations

import pytest
from django.test import Client

from redteam.tokens import api_token_create

pytestmark = pytest.mark.django_db

DEEP = "[" * 5000 + "]" * 5000
JSON_ENDPOINTS = ["/api/v1/findings/", "/api/v1/operations/", "/api/v1/reports/"]


@pytest.fixture
def api(django_user_model):
    user = django_user_model.objects.create_superuser("bot", password="pw-bot-123")
    _, raw = api_token_create(user=user, scope="ingest")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}", raise_request_exception=False)


@pytest.mark.parametrize("url", JSON_ENDPOINTS)
def test_json_nested_too_deep_is_a_json_400(api, url):
    response = api.post(url, DEEP, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "nested too deep" in response.json()["detail"]


def test_a_body_over_the_size_limit_is_a_json_413(api, settings):
    body = '{"title": "' + "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1) + '"}'
    response = api.post("/api/v1/findings/", body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "larger than this endpoint accepts" in response.json()["detail"]


def test_wrong_tokens_from_one_address_are_throttled(api, settings):
    settings.REDLINE_API_AUTH_FAILURE_RATE = "3/minute"
    guesser = Client(HTTP_AUTHORIZATION="Bearer rl_wrong-guess", REMOTE_ADDR="198.51.100.7")
    statuses = [guesser.get("/api/v1/conversations/").status_code for _ in range(5)]
    assert statuses == [401, 401, 401, 429, 429]
    refused = guesser.get("/api/v1/conversations/")
    assert int(refused["Retry-After"]) > 0
    assert refused.json()["detail"].startswith("Too many failed authentications from this address.")
    # While throttled, even a right token from that address is not checked.
    token = api.defaults["HTTP_AUTHORIZATION"]
    assert (
        Client(HTTP_AUTHORIZATION=token, REMOTE_ADDR="198.51.100.7")
        .get("/api/v1/conversations/")
        .status_code
        == 429
    )
    # Another address, and requests without a token, are not affected.
    assert api.get("/api/v1/conversations/").status_code == 200
    assert Client(REMOTE_ADDR="198.51.100.7").get("/api/v1/conversations/").status_code == 401


def test_a_forged_forwarded_header_does_not_spread_the_failures(settings):
    settings.REDLINE_API_AUTH_FAILURE_RATE = "2/minute"
    settings.REDLINE_TRUSTED_PROXIES = ["10.0.0.1"]
    guesser = Client(HTTP_AUTHORIZATION="Bearer rl_wrong-guess", REMOTE_ADDR="198.51.100.7")
    statuses = [
        guesser.get("/api/v1/conversations/", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}").status_code
        for n in range(3)
    ]
    assert statuses == [401, 401, 429]
