"""Navigation shows exactly the pages a user may open; errors are pages in the app's layout."""

from __future__ import annotations

import re
import uuid

import pytest
from django.test import RequestFactory

from redteam.context import NAVIGATION
from redteam.groups import SHIPPED_GROUPS
from redteam.views import server_error
from tests.conftest import logged_in

pytestmark = pytest.mark.django_db

#: Every shipped group alone, no group at all.
ROLES = [(group,) for group in SHIPPED_GROUPS] + [()]


def _nav_links(html: str) -> set[str]:
    nav = re.search(r'<nav class="mainnav"[^>]*>(.*?)</nav>', html, re.S)
    assert nav is not None, "the layout has no main navigation"
    return set(re.findall(r'href="([^"]+)"', nav.group(1)))


@pytest.mark.parametrize("groups", ROLES, ids=lambda g: "+".join(g) or "no-group")
def test_the_navigation_links_exactly_the_pages_that_open(member, groups):
    user = member(*groups)
    client = logged_in(user)
    home = client.get("/")
    assert home.status_code == 200
    links = _nav_links(home.content.decode())
    from django.urls import reverse

    for destination in NAVIGATION:
        url = reverse(destination.url_name)
        response = client.get(url)
        status = response.status_code
        # The admin sends users who are not staff to its own login page.
        assert status in (200, 403) or "/admin/login/" in response.get("Location", ""), url
        assert (url in links) == (status == 200), (destination.key, status, sorted(links))


def test_a_user_with_no_group_sees_why_and_no_memory(member):
    user = member()
    client = logged_in(user)
    html = client.get("/").content.decode()
    assert "You have no access to memory yet" in html
    assert "Attack results" not in html and 'role="search"' not in html
    for url in ("/attacks/", "/conversations/", "/search/?q=x", "/dashboards/"):
        assert client.get(url).status_code == 403, url


def test_403_is_a_page_that_says_why_and_where_to_go(member):
    client = logged_in(member("viewer"))
    response = client.get("/imports/")
    assert response.status_code == 403
    html = response.content.decode()
    assert 'class="mainnav"' in html and "error-card" in html
    assert "Importing needs the permission to add import jobs (ingest group)." in html
    assert 'href="/attacks/"' in html and 'href="/imports/"' not in html


def test_403_without_a_message_names_the_missing_permission_plainly(member):
    response = logged_in(member()).get("/attacks/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "Your account lacks the permission this page needs." in html
    assert "Permissions come from the groups an administrator puts you in" in html


def test_404_is_a_page_with_search_and_the_lists(member):
    client = logged_in(member("viewer"))
    missing = f"/attacks/{uuid.uuid4()}/"
    response = client.get(missing)
    assert response.status_code == 404
    html = response.content.decode()
    assert "error-card" in html and f"<code>{missing}</code>" in html
    assert 'href="/search/"' in html and 'href="/attacks/"' in html


def test_404_escapes_the_path(member):
    response = logged_in(member("viewer")).get("/<script>alert(1)</script>/")
    assert response.status_code == 404
    assert b"<script>alert(1)</script>" not in response.content
    assert b"&lt;script&gt;" in response.content


def test_the_api_answers_errors_as_json(member):
    client = logged_in(member())
    missing = client.get("/api/v1/no-such-endpoint/")
    assert missing.status_code == 404 and missing.json() == {"detail": "Not found."}


def test_500_is_a_page_in_the_layout_without_any_request_context():
    response = server_error(RequestFactory().get("/attacks/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html and "error-card" in html
    api = server_error(RequestFactory().get("/api/v1/attack-results/"))
    assert api.status_code == 500 and b'"detail"' in api.content
