"""An attack's standalone HTML file, opened from disk in Chromium with no server behind it."""

from __future__ import annotations

import re

import pytest

from tests.conftest import logged_in
from tests.review.test_attack_export import _attack_with_media_and_hostile_text

pytestmark = pytest.mark.django_db


def test_the_html_file_opened_from_disk_shows_the_thread_and_its_image(
    viewer, browser, tmp_path, shot
):
    attack, _, _ = _attack_with_media_and_hostile_text()
    path = tmp_path / "attack.html"
    path.write_bytes(logged_in(viewer).get(f"/attacks/{attack.pk}/export.html").content)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda r: problems.append(r.url))
    page.goto(path.as_uri())

    assert page.locator("h1.objective").inner_text() == "Learn the secret"
    image = page.locator("img[src^='data:image/png']")
    assert image.count() == 1
    assert image.evaluate("img => img.complete && img.naturalWidth > 0")
    assert page.locator(".thread .msg").count() >= 4
    # The page's stylesheet applied: a thread is not a bulleted list.
    assert page.locator(".thread").evaluate("el => getComputedStyle(el).listStyleType") == "none"
    assert not [p for p in problems if not re.search(r"favicon", p)]
    shot(page, "attack-standalone-file")
    context.close()
