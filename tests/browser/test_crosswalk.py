"""The framework crosswalk in a real browser: the OWASP widget on the demo memory drills down
to exactly its attacks, and a finding's suggested tag is added with one click."""

from __future__ import annotations

import re

import pytest

from memory.demo import demo_load
from memory.findings.services import EvidenceSpec, finding_create
from memory.storage.crosswalk import crosswalk_load
from tests.browser.conftest import ARTIFACTS
from tests.factories import make_identifier
from tests.findings.conftest import build, strategy, target  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def crosswalk(db):
    # A transactional test before this one flushed the tables the migration filled.
    crosswalk_load()


def test_owasp_widget_drills_down_to_its_attacks(login_page, live_server, viewer, shot):
    from playwright.sync_api import expect

    demo_load()
    page = login_page(viewer, width=1400, height=1000)
    page.goto(f"{live_server.url}/dashboards/")
    # The three framework cards are one late part: they replace its placeholder.
    expect(page.locator(".late-part")).to_have_count(0)
    widget = page.locator("#asr_by_owasp")
    assert "OWASP Top 10 for LLM Applications 2025" in widget.locator("h3").inner_text()
    assert "do not add up to the total" in widget.inner_text()
    rows = widget.locator("svg g.bar-row")
    assert rows.count() >= 3
    assert page.locator("#asr_by_atlas svg g.bar-row").count() >= 3
    assert page.locator("#asr_by_nist svg g.bar-row").count() >= 3
    shot(page, "crosswalk-dashboard")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    widget.screenshot(path=str(ARTIFACTS / "dashboard-owasp.png"))

    row = widget.locator("svg g.bar-row", has_text="LLM02")
    n = int(re.search(r"n (\d+)", row.locator("text.bar-value").text_content()).group(1))
    assert n > 0
    row.locator("a").click()
    page.wait_for_url(re.compile(r"/attacks/\?.*framework=owasp-llm%3ALLM02"))
    assert int(page.locator(".result-count strong").first.inner_text()) == n
    assert "Framework" in page.locator(".chips, .active-filters, body").first.inner_text()
    shot(page, "crosswalk-drilldown")


def test_suggested_tag_added_with_one_click(
    login_page,
    live_server,
    reviewer,
    build,  # noqa: F811  (the fixture imported above)
    shot,
):
    crescendo = build(attack_identifier=make_identifier("CrescendoAttack"), harm="privacy")
    finding = finding_create(
        actor=reviewer,
        title="Crescendo walks the assistant into leaking a customer's address",
        severity="high",
        harm_categories=["privacy"],
        framework_tags=["owasp-llm:LLM01"],
        evidence=[EvidenceSpec("attack", str(crescendo.attack.pk))],
    )
    page = login_page(reviewer, width=1280)
    page.goto(f"{live_server.url}{finding.get_absolute_url()}")
    card = page.locator("#suggested-tags")
    assert "atlas:AML.T0054" in card.inner_text()
    assert "LLM Jailbreak" in card.inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # The sticky top bar would cover the card's top in an element shot.
    page.add_style_tag(content=".topbar { position: static !important; }")
    card.screenshot(path=str(ARTIFACTS / "finding-suggested-tags.png"))
    card.get_by_role("button", name="Add atlas:AML.T0054").click()
    page.wait_for_load_state()
    facts = page.locator(".fx-facts").inner_text()
    assert "atlas:AML.T0054" in facts and "LLM Jailbreak" in facts
    assert "atlas:AML.T0054" not in page.locator("#suggested-tags").inner_text()
    finding.refresh_from_db()
    assert finding.framework_tags == ["owasp-llm:LLM01", "atlas:AML.T0054"]

    # The edit form: "+ tag" appends to the field without saving; Save keeps it.
    page.goto(f"{live_server.url}/findings/{finding.pk}/edit/")
    page.fill("#id_title", "Crescendo leaks a customer's address")
    page.get_by_role("button", name="+ owasp-llm:LLM02").click()
    page.wait_for_load_state()
    assert page.input_value("#id_framework_tags").endswith("owasp-llm:LLM02")
    assert page.input_value("#id_title") == "Crescendo leaks a customer's address"
    shot(page, "crosswalk-edit-form")
    page.get_by_role("button", name="Save", exact=True).last.click()
    page.wait_for_url(f"**/findings/{finding.pk}/")
    finding.refresh_from_db()
    assert "owasp-llm:LLM02" in finding.framework_tags
    assert finding.title == "Crescendo leaks a customer's address"
