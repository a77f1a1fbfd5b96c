"""The project boots: settings, URLs and the health check."""

import pytest


@pytest.mark.django_db
def test_healthz_answers_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_home_requires_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
