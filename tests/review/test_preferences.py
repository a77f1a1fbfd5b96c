"""Preferences: the theme a user stores is the theme of every page (``<html data-theme>``),
read with the user in the same query; the form keeps what a post leaves out."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from redteam.models import Theme, UserPreference
from tests.conftest import logged_in
from tests.queries import get_counted

pytestmark = pytest.mark.django_db


def _html_theme(html: str) -> str:
    return re.search(r'<html lang="en" data-theme="(\w+)">', html).group(1)


def test_the_stored_theme_is_on_every_pages_html_element(viewer):
    client = logged_in(viewer)
    assert _html_theme(client.get("/").content.decode()) == "system"
    UserPreference.objects.create(user=viewer, theme=Theme.DARK)
    for url in ("/", "/attacks/", "/conversations/", "/dashboards/", "/preferences/"):
        html = client.get(url).content.decode()
        assert _html_theme(html) == "dark", url
        assert '<meta name="color-scheme" content="dark">' in html
    UserPreference.objects.filter(user=viewer).update(theme=Theme.LIGHT)
    assert _html_theme(client.get("/attacks/").content.decode()) == "light"
    # Signed out: the device decides.
    html = Client().get("/login/").content.decode()
    assert _html_theme(html) == "system"
    assert '<meta name="color-scheme" content="light dark">' in html


def test_the_theme_costs_no_query(viewer):
    client = logged_in(viewer)
    without, _ = get_counted(client, "/")
    UserPreference.objects.create(user=viewer, theme=Theme.DARK)
    with_preference, response = get_counted(client, "/")
    assert _html_theme(response.content.decode()) == "dark"
    # The preference row comes with the session's user (a LEFT JOIN), not a query of its own.
    assert with_preference == without


def test_the_admin_gets_the_same_theme(admin_user):
    client = Client()
    client.force_login(admin_user)
    UserPreference.objects.create(user=admin_user, theme=Theme.DARK)
    html = client.get("/admin/").content.decode()
    assert 'src="/static/redteam/js/admin-theme.js" data-theme="dark"' in html
    assert "admin/js/theme.js" not in html  # its localStorage switch would override the choice
    assert 'class="theme-preference" href="/preferences/"' in html
    UserPreference.objects.filter(user=admin_user).update(theme=Theme.SYSTEM)
    assert 'data-theme="auto"' in client.get("/admin/").content.decode()


def test_the_form_saves_the_theme_and_keeps_what_a_post_leaves_out(viewer):
    client = logged_in(viewer)
    page = client.get("/preferences/").content.decode()
    for value in ("system", "light", "dark"):
        assert f'name="theme" value="{value}"' in page
    response = client.post("/preferences/", {"blur_harmful_media": "on", "theme": "dark"})
    assert response.status_code == 302
    stored = UserPreference.objects.get(user=viewer)
    assert (stored.blur_harmful_media, stored.theme) == (True, "dark")
    # An empty post unticks the box (HTML sends nothing for it) and keeps the theme.
    client.post("/preferences/", {})
    stored.refresh_from_db()
    assert (stored.blur_harmful_media, stored.theme) == (False, "dark")
    response = client.post("/preferences/", {"theme": "sepia"})
    assert response.status_code == 200
    assert "not one of the available choices" in response.content.decode()
