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


def test_the_skip_link_is_the_first_tab_stop_and_jumps_to_the_content(
    login_page, live_server, viewer
):
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.className")
    assert focused == "skip-link"
    box = page.locator(".skip-link").bounding_box()
    assert box is not None and box["x"] >= 0 and box["y"] >= 0  # on screen once focused
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_keyboard_focus_is_visible(login_page, live_server, viewer):
    page = login_page(viewer)
    page.goto(f"{live_server.url}/")
    page.keyboard.press("Tab")  # skip link
    page.keyboard.press("Tab")  # brand
    page.keyboard.press("Tab")  # first navigation entry
    outline = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement);"
        " return [document.activeElement.textContent.trim(), s.outlineStyle, s.outlineWidth]; })()"
    )
    assert outline[0] == "Attacks"
    assert outline[1] != "none" and outline[2] != "0px"


@pytest.mark.parametrize("width", [1280, 390])
def test_login_page_fits(anon_page, live_server, shot, width):
    page = anon_page
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{live_server.url}/login/")
    assert page.evaluate("document.activeElement.id") == "id_username"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    shot(page, f"layout-login-{width}")
    page.fill("#id_username", "nobody")
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    assert "didn't match" in page.get_by_role("alert").inner_text()


def test_error_pages_are_pages_of_the_app(login_page, live_server, viewer, member, shot):
    """403 says why and links what the user may open; 404 offers search; both in the layout."""
    page = login_page(viewer)
    response = page.goto(f"{live_server.url}/imports/")
    assert response.status == 403
    assert page.locator("nav.mainnav").is_visible()
    assert "Imports" not in page.locator("nav.mainnav").inner_text()
    card = page.locator(".error-card")
    assert "Importing needs the permission to add import jobs (ingest group)." in card.inner_text()
    card.locator("a", has_text="Attacks").click()
    page.wait_for_url(f"{live_server.url}/attacks/")
    page.goto(f"{live_server.url}/imports/")
    shot(page, "layout-403")
    response = page.goto(f"{live_server.url}/attacks/00000000-0000-0000-0000-000000000000/")
    assert response.status == 404
    assert "There is nothing at this address" in page.locator("h1").inner_text()
    shot(page, "layout-404")

    nobody = login_page(member(username="newcomer"))
    nobody.goto(f"{live_server.url}/")
    assert nobody.locator("nav.mainnav a").all_inner_texts() == ["API docs"]
    assert nobody.locator("#no-access").is_visible()
    shot(nobody, "layout-home-no-group")
