"""The page-wide view switch: every piece converted, original or both at once."""

from __future__ import annotations

import pytest

from tests.review.test_detail import build_attack

pytestmark = pytest.mark.django_db(transaction=True)

VISIBLE = "els => els.filter(e => e.offsetParent !== null).length"


def test_the_switch_shows_every_piece_as_asked(login_page, live_server, viewer, shot):
    attack, _ = build_attack()
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")
    main = page.locator(".thread-col").first
    converted, original = main.locator(".vs-panel-c"), main.locator(".vs-panel-o")
    total = converted.count()
    assert total >= 1

    # Per piece (the default): each piece shows what was sent.
    assert converted.evaluate_all(VISIBLE) == total
    assert original.evaluate_all(VISIBLE) == 0

    main.locator("label[for=tv-original-main]").click()
    assert converted.evaluate_all(VISIBLE) == 0
    assert original.evaluate_all(VISIBLE) == total

    main.locator("label[for=tv-both-main]").click()
    assert converted.evaluate_all(VISIBLE) == total
    assert original.evaluate_all(VISIBLE) == total
    shot(page, "review-view-both")

    main.locator("label[for=tv-piece-main]").click()
    assert original.evaluate_all(VISIBLE) == 0
