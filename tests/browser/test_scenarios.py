"""The scenario pages in a real browser: PyRIT's own scenario run, read at two widths."""

from __future__ import annotations

import pytest

from memory.models import ScenarioResult
from tests.exporters.conftest import ingest_ok
from tests.ingest.conftest import EXPORT_110, load

pytestmark = pytest.mark.django_db(transaction=True)

NO_OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


@pytest.mark.parametrize("width", [1000, 1400])
def test_a_run_reads_from_the_list_to_its_attacks(login_page, live_server, viewer, shot, width):
    ingest_ok(load(EXPORT_110))
    run = ScenarioResult.objects.get()
    page = login_page(viewer, width=width)

    page.goto(f"{live_server.url}/scenarios/")
    assert page.evaluate(NO_OVERFLOW) <= 0
    shot(page, f"scenarios-list-{width}")
    page.get_by_role("link", name=run.scenario_name).click()
    page.wait_for_url(f"**/scenarios/{run.pk}/")
    assert page.evaluate(NO_OVERFLOW) <= 0
    assert page.locator(".atomic-table tbody tr").count() >= 1
    shot(page, f"scenarios-run-{width}")

    page.locator(".atomic-table tbody tr a").first.click()
    page.wait_for_url("**/attacks/?scenario=*")
    rows = page.locator(".attack-table tbody tr").count()
    assert rows == run.attack_results.count()


def test_the_run_table_fits_at_1000_px(login_page, live_server, viewer):
    ingest_ok(load(EXPORT_110))
    page = login_page(viewer, width=1000)

    page.goto(f"{live_server.url}/scenarios/")

    wrap = page.locator(".table-wrap")
    assert wrap.evaluate("el => el.scrollWidth - el.clientWidth") <= 0
