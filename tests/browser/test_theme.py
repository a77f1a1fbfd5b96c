"""Dark mode in a real browser: the device's prefers-color-scheme by default, the stored
preference over it, the same choice in the admin; screenshots of both modes."""

from __future__ import annotations

import re

import pytest

from memory.demo import demo_load
from memory.models import AttackResult
from redteam.models import Theme, UserPreference

pytestmark = pytest.mark.django_db(transaction=True)

BACKGROUND = "getComputedStyle(document.body).backgroundColor"


def _is_dark(page) -> bool:
    """The page's background is dark (its RGB average below the middle)."""
    rgb = [int(n) for n in re.findall(r"\d+", page.evaluate(BACKGROUND))[:3]]
    return sum(rgb) / 3 < 128


@pytest.fixture
def attack():
    demo_load()
    return AttackResult.objects.filter(outcome="success").order_by("timestamp").last()


@pytest.mark.parametrize("device", ["light", "dark"])
def test_system_theme_follows_the_device(login_page, live_server, viewer, attack, shot, device):
    page = login_page(viewer, color_scheme=device)
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")
    assert page.evaluate("document.documentElement.dataset.theme") == "system"
    assert _is_dark(page) is (device == "dark")
    # Text stays readable: light text on the dark page, dark text on the light one.
    text = [
        int(n)
        for n in re.findall(r"\d+", page.evaluate("getComputedStyle(document.body).color"))[:3]
    ]
    assert (sum(text) / 3 > 128) is (device == "dark")
    shot(page, f"theme-attack-{device}")
    page.goto(f"{live_server.url}/dashboards/")
    assert _is_dark(page) is (device == "dark")
    shot(page, f"theme-dashboards-{device}")


def test_the_stored_preference_wins_over_the_device(login_page, live_server, viewer, attack):
    UserPreference.objects.create(user=viewer, theme=Theme.LIGHT)
    page = login_page(viewer, color_scheme="dark")
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert not _is_dark(page)
    # Chosen in Preferences, applied on the next page.
    page.goto(f"{live_server.url}/preferences/")
    page.locator("input[name=theme][value=dark]").check()
    page.locator("main button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/preferences/$"))
    assert UserPreference.objects.get(user=viewer).theme == Theme.DARK
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert _is_dark(page)


def test_the_admin_takes_the_apps_theme(login_page, live_server, admin_user, shot):
    UserPreference.objects.create(user=admin_user, theme=Theme.DARK)
    page = login_page(admin_user, color_scheme="light")
    page.goto(f"{live_server.url}/admin/")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert _is_dark(page)
    assert page.locator("a.theme-preference").text_content() == "Theme: dark"
    shot(page, "theme-admin-dark")
    UserPreference.objects.filter(user=admin_user).update(theme=Theme.SYSTEM)
    page.goto(f"{live_server.url}/admin/")
    assert page.evaluate("document.documentElement.dataset.theme") == "auto"
    assert not _is_dark(page)  # the device is light
    shot(page, "theme-admin-system-light")
