"""Browser tests: Debian's Chromium, driven by Playwright, against pytest-django's live server.

Fixtures:
- ``browser``: one headless Chromium for the session.
- ``login_page(user)``: a fresh page whose browser context is logged in as ``user`` (width,
  height and the device's colour scheme can be set).
- ``shot(page, name)``: saves a full-page screenshot under ``var/test-artifacts/``.
- ``viewer``, ``reviewer``, ``curator``, ``ingester`` (``tests/conftest.py``): users in the
  shipped groups, who log in as ``vera``, ``rita``, ``cora``, ``ingrid`` (password
  ``pw-<name>-123``).

The tests fail (not skip) when Chromium is missing: ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.test import Client

# Playwright's sync API runs an event loop in the test thread; the ORM calls made by the test
# itself (fixtures, assertions) are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("REDLINE_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "test-artifacts"


@pytest.fixture(scope="session", autouse=True)
def _plain_http_live_server() -> None:
    """The live server speaks plain HTTP and has no static manifest.

    Set before ``live_server`` (session-scoped) builds its handler: ``SecurityMiddleware``
    reads ``SECURE_SSL_REDIRECT`` once, when it is created.
    """
    from django.conf import settings

    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """A headless Debian Chromium for the whole session."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: install Debian's chromium and chromium-driver "
            "(.ci/run does) or set REDLINE_CHROMIUM"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        yield browser
        browser.close()


def _session_cookie(live_server, user) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    from django.conf import settings

    return {
        "name": settings.SESSION_COOKIE_NAME,
        "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "url": live_server.url,
    }


@pytest.fixture
def login_page(browser, live_server) -> Iterator[Callable[..., object]]:
    """Factory: ``login_page(user, width=1280, height=900, color_scheme="light")`` -> a
    logged-in Playwright page; ``color_scheme`` is the device's (``prefers-color-scheme``)."""
    contexts = []

    def make(user, *, width: int = 1280, height: int = 900, color_scheme: str = "light"):
        context = browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=color_scheme
        )
        context.add_cookies([_session_cookie(live_server, user)])
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def anon_page(browser, live_server) -> Iterator[object]:
    """A page with no session."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def shot() -> Callable[[object, str], Path]:
    """``shot(page, "name")`` saves a full-page PNG under var/test-artifacts/; returns the path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
