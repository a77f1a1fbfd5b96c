"""The shared layout: login, navigation, and the two widths we support."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_anonymous_is_sent_to_login_and_can_log_in(anon_page, live_server, viewer, shot):
    page = anon_page
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
    page.fill("#id_username", "vera")
    page.fill("#id_password", "pw-vera-123")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator(".username").inner_text() == "vera"
    shot(page, "layout-home")


@pytest.mark.parametrize("width", [1280, 390])
def test_navigation_fits_and_every_entry_opens(login_page, live_server, viewer, shot, width):
    page = login_page(viewer, width=width)
    page.goto(f"{live_server.url}/")
    links = page.locator("nav.mainnav a")
    names = links.all_inner_texts()
    for wanted in ("Attacks", "Conversations", "Seeds", "Dashboards", "Admin", "API docs"):
        assert wanted in names
    # Nothing overflows the viewport horizontally.
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    shot(page, f"layout-home-{width}")
