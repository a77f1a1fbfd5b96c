"""The app's own assets: an icon at /favicon.ico and in every page's head, the API docs page
leading back to the app, and no emoji that renders as an empty box without an emoji font."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.conftest import logged_in

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_favicon_is_served_to_anyone():
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert "max-age=86400" in response["Cache-Control"]


@pytest.mark.django_db
def test_pages_and_the_admin_name_the_shipped_icon(viewer, admin_user):
    for client, url in ((Client(), "/login/"), (logged_in(viewer), "/attacks/")):
        html = client.get(url).content.decode()
        assert re.search(r'<link rel="icon" href="/static/redteam/favicon\.svg"', html), url
    admin = Client()
    admin.force_login(admin_user)
    assert 'href="/static/redteam/favicon.svg"' in admin.get("/admin/").content.decode()


@pytest.mark.django_db
def test_api_docs_lead_back_to_the_app(viewer):
    html = logged_in(viewer).get("/api/docs/").content.decode()
    bar = html[html.index('<header class="docs-bar">') :][:600]
    assert 'href="/">← Back to the app</a>' in bar
    assert 'id="swagger-ui"' in html  # drf-spectacular's page is still all there
    assert 'href="/favicon.ico"' in html


#: Emoji and pictographs: without an emoji font (a server, a locked-down desktop) they draw
#: as empty boxes. Symbols DejaVu Sans and the usual system fonts carry are allowed.
PICTOGRAPHS = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF]")
ALLOWED = {"⚠", "✕"}


def test_no_emoji_in_templates_styles_or_scripts():
    files = [
        *(ROOT / "templates").rglob("*.htm*"),
        *(ROOT / "templates").rglob("*.jinja"),
        *(ROOT / "redteam" / "static" / "redteam" / "css").glob("*.css"),
        *(ROOT / "redteam" / "static" / "redteam" / "js").glob("*.js"),
    ]
    assert len(files) > 40
    found = {
        f"{path.relative_to(ROOT)}: {char}"
        for path in files
        for char in PICTOGRAPHS.findall(path.read_text(encoding="utf-8"))
        if char not in ALLOWED
    }
    assert found == set()
