"""The attack list, conversation list and search in a real browser: filters with htmx (and
without JavaScript), shareable URLs, sorting from the keyboard, both supported widths."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from memory.demo import demo_load
from memory.models import AttackResult, Conversation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo():
    """The demo memory: 28 attacks of every outcome, labelled by operator and operation."""
    demo_load()


def _outcomes(page) -> list[str]:
    """The outcome badge text of every row shown (the effective outcome: human wins)."""
    return [
        text.split()[0].lower()
        for text in page.locator("#results tbody td.col-outcome").all_inner_texts()
    ]


def _objectives(page) -> list[str]:
    return page.locator("#results a.objective-link").all_inner_texts()


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def _top(page):
    """Scroll to the top, so full-page screenshots show the sticky top bar in place."""
    page.evaluate("window.scrollTo(0, 0)")
    return page


def _no_overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_filter_by_outcome_then_by_label_without_reloading(
    login_page, live_server, viewer, demo, shot
):
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/")
    total = AttackResult.objects.count()
    assert page.locator("#results tbody tr").count() == total
    page.evaluate("window.__noReload = 'still-here'")
    shot(_top(page), "lists-attacks-1280")

    # Outcome: ticking a box swaps only the results and pushes the URL.
    page.check("input[name=effective_outcome][value=success]")
    page.wait_for_url(re.compile(r".*effective_outcome=success"))
    page.wait_for_function("!document.querySelector('#results.htmx-request')")
    successes = AttackResult.objects.filter(human_outcome__isnull=True, outcome="success").count()
    successes += AttackResult.objects.filter(human_outcome="success").count()
    assert 0 < successes < total
    assert page.locator("#results tbody tr").count() == successes
    assert set(_outcomes(page)) == {"success"}
    assert page.evaluate("window.__noReload") == "still-here"

    # Label: typed into the panel, applied with Enter, ANDed with the outcome.
    page.fill("#f-label", "operator:alice")
    page.press("#f-label", "Enter")
    page.wait_for_url(re.compile(r".*labels=operator%3Aalice"))
    page.wait_for_function("!document.querySelector('#results.htmx-request')")
    expected = AttackResult.objects.filter(
        label_index__key="operator", label_index__value="alice"
    ).filter(outcome="success", human_outcome__isnull=True) | AttackResult.objects.filter(
        label_index__key="operator", label_index__value="alice", human_outcome="success"
    )
    assert page.locator("#results tbody tr").count() == expected.distinct().count()
    assert set(_outcomes(page)) == {"success"}
    for labels in page.locator("#results td.col-objective .row-tags").all_inner_texts():
        assert "operator: alice" in labels
    assert _query(page) == {"effective_outcome": ["success"], "labels": ["operator:alice"]}
    assert page.evaluate("window.__noReload") == "still-here"
    # The active filters show as chips above the table.
    chips = page.locator(".active-filters .chip-filter").all_inner_texts()
    assert any("Outcome: success" in chip for chip in chips)
    assert any("Label: operator:alice" in chip for chip in chips)
    shot(_top(page), "lists-attacks-filtered-1280")


def test_a_filtered_sorted_url_is_shareable(login_page, live_server, viewer, demo, shot):
    url = f"{live_server.url}/attacks/?effective_outcome=failure&labels=operator:bob&sort=-turns"
    first = login_page(viewer)
    first.goto(url)
    rows = _objectives(first)
    assert rows
    # Someone else opens the same link: same rows, same order, same panel state.
    other = login_page(viewer)
    other.goto(url)
    assert _objectives(other) == rows
    assert other.locator("input[name=effective_outcome][value=failure]").is_checked()
    assert other.locator("input[name=labels][value='operator:bob']").is_checked()
    assert other.locator("th.col-turns").get_attribute("aria-sort") == "descending"
    shot(_top(other), "lists-attacks-shared-url")


def test_sorting_from_the_keyboard_keeps_the_filters(login_page, live_server, viewer, demo):
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/?effective_outcome=failure")
    # Tab reaches the sort links; Enter sorts (with htmx) and keeps the filter.
    page.focus("#sort-objective")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*sort=objective"))
    page.wait_for_function("!document.querySelector('#results.htmx-request')")
    objectives = _objectives(page)
    assert objectives == sorted(objectives)
    assert set(_outcomes(page)) == {"failure"}
    assert _query(page) == {"effective_outcome": ["failure"], "sort": ["objective"]}
    # Changing a filter now keeps the sort (it travels with the form).
    page.check("input[name=effective_outcome][value=error]")
    page.wait_for_url(re.compile(r".*effective_outcome=error"))
    page.wait_for_function("!document.querySelector('#results.htmx-request')")
    assert _query(page)["sort"] == ["objective"]
    assert set(_outcomes(page)) == {"failure", "error"}


def test_without_javascript_the_form_and_links_still_work(browser, live_server, viewer, demo):
    from tests.browser.conftest import _session_cookie

    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    context.add_cookies([_session_cookie(live_server, viewer)])
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/attacks/")
        page.check("input[name=effective_outcome][value=error]")
        page.click("button:has-text('Apply filters')")
        # The GET form's empty fields are dropped by a redirect to the short URL.
        page.wait_for_url(f"{live_server.url}/attacks/?effective_outcome=error")
        assert set(_outcomes(page)) == {"error"}
        page.click("#sort-time")
        page.wait_for_url(re.compile(r".*sort=time"))
        assert _query(page) == {"effective_outcome": ["error"], "sort": ["time"]}
    finally:
        context.close()


def test_a_bad_filter_value_is_explained(login_page, live_server, viewer, demo, shot):
    page = login_page(viewer)
    response = page.goto(f"{live_server.url}/attacks/?labels=operator&timestamp_after=soon")
    assert response.status == 400
    alert = page.get_by_role("alert")
    assert "Some filters could not be applied" in alert.inner_text()
    assert "operator" in alert.inner_text() and "timestamp_after" in alert.inner_text()
    shot(_top(page), "lists-attacks-bad-filter")


def test_phone_width_folds_the_filters_and_fits(login_page, live_server, viewer, demo, shot):
    page = login_page(viewer, width=390, height=844)
    page.goto(f"{live_server.url}/attacks/")
    assert _no_overflow(page) <= 0
    panel = page.locator("details.filter-panel")
    assert panel.get_attribute("open") is None  # folded: the results come first
    assert page.locator("#results tbody tr").first.is_visible()
    shot(_top(page), "lists-attacks-390")
    page.click("details.filter-panel > summary")
    page.check("input[name=effective_outcome][value=undetermined]")
    page.wait_for_url(re.compile(r".*effective_outcome=undetermined"))
    page.wait_for_function("!document.querySelector('#results.htmx-request')")
    assert set(_outcomes(page)) == {"undetermined"}
    assert _no_overflow(page) <= 0
    shot(_top(page), "lists-attacks-390-filters-open")


@pytest.mark.parametrize("width", [1280, 390])
def test_conversation_list_and_search_fit(login_page, live_server, viewer, demo, shot, width):
    page = login_page(viewer, width=width)
    page.goto(f"{live_server.url}/conversations/")
    standalone = Conversation.objects.filter(attack_results__isnull=True).count()
    assert page.locator("#results tbody tr").count() == min(standalone, 50)
    assert _no_overflow(page) <= 0
    shot(_top(page), f"lists-conversations-{width}")

    attack = AttackResult.objects.order_by("timestamp").first()
    page.goto(f"{live_server.url}/search/?q={attack.pk.hex.upper()}")
    exact = page.locator("section.exact")
    assert f"/attacks/{attack.pk}/" in exact.locator("a").first.get_attribute("href")
    page.goto(f"{live_server.url}/search/?q=phishing")
    assert page.locator("#g-objectives ~ ul .hit, section:has(#g-objectives) .hit").count() > 0
    assert _no_overflow(page) <= 0
    shot(_top(page), f"lists-search-{width}")


def test_global_search_box_from_any_page(login_page, live_server, viewer, demo):
    page = login_page(viewer)
    page.goto(f"{live_server.url}/conversations/")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "global-q"
    page.keyboard.type("ransomware")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/search/\?q=ransomware"))
    assert page.locator("section:has(#g-objectives) .hit").count() > 0
