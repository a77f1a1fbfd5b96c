"""The project boots: settings, URLs and the health check."""

import pytest
from django.test import Client


@pytest.mark.django_db
def test_healthz_answers_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_home_requires_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


@pytest.mark.django_db
def test_api_docs_need_login_and_use_no_cdn(admin_client):
    anonymous = Client()
    assert anonymous.get("/api/docs/").status_code == 302
    assert anonymous.get("/api/schema/").status_code in (401, 403)
    page = admin_client.get("/api/docs/").content.decode()
    assert "cdn" not in page.lower()
    assert "/static/drf_spectacular_sidecar/" in page
    schema = admin_client.get("/api/schema/")
    assert schema.status_code == 200


@pytest.mark.django_db
def test_home_page_shows_counts_for_a_logged_in_user(admin_client):
    response = admin_client.get("/")
    assert response.status_code == 200
    assert b"Attack results" in response.content
