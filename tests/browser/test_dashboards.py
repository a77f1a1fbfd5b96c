"""The dashboard in a real browser, on the demo memory: charts drawn, late parts loaded,
a drill-down followed, the print layout."""

from __future__ import annotations

import re

import pytest

from memory.demo import demo_load

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(db):
    return demo_load()


def _open(page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    # The late parts (volume, converters, frameworks, scorers) arrive after the page.
    expect(page.locator(".late-part")).to_have_count(0)


def test_dashboard_draws_its_charts_and_drills_down(login_page, live_server, viewer, demo, shot):
    page = login_page(viewer, width=1400, height=1000)
    _open(page, f"{live_server.url}/dashboards/")
    charts = page.locator("svg.chart")
    # Outcome strip, seven breakdowns, heat map, trend, one histogram (the demo memory has no
    # eval hashes: its attacks carry no atomic-attack identifier).
    assert charts.count() >= 11
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 50 and box["height"] > 10, i
    # Bars with data: every breakdown has at least one, and the headline strip is split.
    for section in (
        "asr_by_attack_class",
        "asr_by_target_model",
        "asr_by_converter",
        "asr_by_label",
    ):
        bars = page.locator(f"#{section} svg rect.bar")
        assert bars.count() >= 1, section
        assert any(bars.nth(i).bounding_box()["width"] > 1 for i in range(bars.count())), section
    assert page.locator("#heatmap svg .heat-cell rect").count() >= 4
    assert page.locator("#trend svg rect.volume").count() >= 5
    assert page.locator("#scorers svg rect.hist-bar").count() == 10
    assert page.locator("#volume [data-stat=pieces] .stat-value").inner_text() != "0"
    shot(page, "dashboards-overview")

    # Follow the attack-class bar of PromptSendingAttack: its decided attacks.
    row = page.locator("#asr_by_attack_class svg g.bar-row", has_text="PromptSendingAttack")
    value = row.locator("text.bar-value").text_content()
    n = int(re.search(r"n (\d+)", value).group(1))
    row.locator("a").click()
    page.wait_for_url(re.compile(r"/attacks/\?.*attack_class=PromptSendingAttack"))
    assert "outcome=success" in page.url and "outcome=failure" in page.url
    count = page.locator(".result-count strong").first.inner_text()
    assert int(count) == n
    shot(page, "dashboards-drilldown")


def test_dashboard_filters_narrow_and_phone_width(login_page, live_server, viewer, demo, shot):
    page = login_page(viewer, width=390, height=844)
    _open(
        page,
        f"{live_server.url}/dashboards/?labels=operator:alice&source=human&trend_by=target_model",
    )
    assert page.locator(".active-filters .chip").count() == 1
    assert page.locator("#h-trend").inner_text().startswith("Trend per")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    shot(page, "dashboards-phone")


def test_dashboard_prints_cleanly(login_page, live_server, viewer, demo, shot):
    page = login_page(viewer, width=1400, height=1000)
    _open(page, f"{live_server.url}/dashboards/")
    page.emulate_media(media="print")
    assert not page.locator("aside.sidebar").is_visible()
    assert not page.locator(".topbar").is_visible()
    assert page.locator("svg.chart").first.is_visible()
    shot(page, "dashboards-print")
    from tests.browser.conftest import ARTIFACTS

    pdf = ARTIFACTS / "dashboards.pdf"
    page.pdf(path=str(pdf), format="A4", landscape=True, print_background=True)
    assert pdf.stat().st_size > 20_000
