"""The push guide as a page of the app, linked from the home page for those who may push."""

from __future__ import annotations

import pytest

from tests.conftest import logged_in

pytestmark = pytest.mark.django_db


def test_ingesters_read_the_guide_linked_from_home(ingester):
    client = logged_in(ingester)

    home = client.get("/").content.decode()
    assert 'href="/push/"' in home
    page = client.get("/push/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<h1>Push from PyRIT</h1>" in html
    assert "create_api_token" in html
    assert "<script" not in html.split("<body", 1)[1].split("</footer>")[0]


def test_others_neither_see_the_link_nor_open_the_guide(viewer_client):
    assert 'href="/push/"' not in viewer_client.get("/").content.decode()
    assert viewer_client.get("/push/").status_code == 403
