"""Findings in a real browser: from an attack to a finding with sealed evidence, through its
lifecycle, to a report as a page, a PDF (its pages looked at as images) and a static bundle
opened from disk that shows the dashboards' numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.models import Finding, Report
from redteam.core.choices import AttackOutcome
from tests.browser.conftest import ARTIFACTS
from tests.findings.conftest import build, strategy, target  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

NO_OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def _pdf_pages(pdf: bytes, name: str) -> tuple[list[Path], str]:
    """Each page of ``pdf`` as a PNG under var/test-artifacts/, and all of its text."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    paths, text = [], []
    for index in range(len(document)):
        page = document[index]
        path = ARTIFACTS / f"{name}-page{index + 1}.png"
        page.render(scale=1.4).to_pil().save(path)
        paths.append(path)
        text.append(page.get_textpage().get_text_range())
    return paths, "\n".join(text)


def test_attack_to_finding_to_report_pdf_and_bundle(
    login_page,
    browser,
    live_server,
    reviewer,
    build,  # noqa: F811  (the fixture imported above)
    shot,
    tmp_path,
):
    found = build()
    build(harm="cybercrime")
    build(outcome=AttackOutcome.FAILURE)
    build(outcome=AttackOutcome.FAILURE, harm="cybercrime")
    build(outcome=AttackOutcome.UNDETERMINED)
    page = login_page(reviewer, width=1280)

    # attack page -> New finding, evidence named in the address
    page.goto(f"{live_server.url}/attacks/{found.attack.pk}/")
    page.get_by_role("link", name="New finding").click()
    page.wait_for_url("**/findings/new/?evidence=attack:*")
    page.fill("#id_title", "Chatbot explains how to bypass a badge reader")
    page.select_option("#id_severity", "high")
    page.fill("#id_framework_tags", "owasp-llm:LLM01, atlas:AML.T0054")
    page.fill("#id_reproduction_steps", "Send the objective as a single prompt.")
    shot(page, "findings-new")
    page.get_by_role("button", name="Create finding").click()
    page.wait_for_url("**/findings/*/")
    assert page.locator("span.seal-intact").first.inner_text() == "Seal intact"
    finding = Finding.objects.get()

    # lifecycle: new -> confirmed -> reported, each with a note
    for status, note in (("confirmed", "Reproduced by hand."), ("reported", "Sent to vendor.")):
        page.select_option("#id_status", status)
        page.fill("#id_note", note)
        page.get_by_role("button", name="Change status").click()
        page.wait_for_load_state()
        assert page.locator("#finding-status").inner_text().lower() == status
        assert note in page.locator(".fx-history").inner_text()  # the note is the reason
    assert page.evaluate(NO_OVERFLOW) <= 0
    shot(page, "findings-detail")

    # an operation with PyRIT's operation label, its page, and a report of it
    page.goto(f"{live_server.url}/operations/new/")
    page.fill("#id_name", "Blue Heron")
    page.fill("#id_pyrit_operation", "Op Blue Heron")
    page.fill("#id_target_systems", "Support chatbot")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url("**/operations/*/")
    shot(page, "findings-operation")
    page.get_by_role("button", name="Make a report").click()
    page.wait_for_url("**/reports/*/")
    assert page.evaluate(NO_OVERFLOW) <= 0
    shot(page, "findings-report")
    report = Report.objects.get()
    assert report.finding_count == 1 and finding.title in page.content()

    # the PDF: its pages as images, and the figures in its text
    pdf = page.request.get(f"{live_server.url}/reports/{report.pk}/report.pdf")
    assert pdf.ok and pdf.headers["content-type"] == "application/pdf"
    images, text = _pdf_pages(pdf.body(), "findings-report-pdf")
    assert len(images) >= 2
    total = report.snapshot["executive"]["total"]
    assert total["asr_text"] in text and finding.title in text

    # the static bundle, saved and opened from disk without the server
    bundle = tmp_path / "report.html"
    bundle.write_bytes(
        page.request.get(f"{live_server.url}/reports/{report.pk}/report.html").body()
    )
    offline = browser.new_context(viewport={"width": 1100, "height": 900}, offline=True)
    disk = offline.new_page()
    disk.goto(bundle.as_uri())
    shot(disk, "findings-bundle")
    bundle_asr = disk.locator("#rep-asr").inner_text()
    bundle_attacks = disk.locator("#rep-attacks").inner_text()
    offline.close()

    # the dashboards for the same scope show the same numbers
    page.goto(f"{live_server.url}/dashboards/?{report.snapshot['scope']['query']}")
    dash_asr = page.locator("[data-stat=asr] .stat-value").inner_text()
    dash_attacks = page.locator("[data-stat=attacks] .stat-value").inner_text()
    assert (bundle_asr, bundle_attacks) == (dash_asr, dash_attacks)
    assert bundle_asr == total["asr_text"] == "50.0 %"


def test_a_retest_jump_needs_its_box_ticked_and_the_row_names_the_objective(
    login_page,
    live_server,
    reviewer,
    build,  # noqa: F811  (the fixture imported above)
    shot,
):
    from memory.findings.services import EvidenceSpec, finding_create, finding_status_set

    finding = finding_create(
        actor=reviewer,
        title="Badge reader bypass",
        severity="high",
        evidence=[EvidenceSpec("attack", str(build().attack.pk))],
    )
    finding_status_set(finding=finding, status="confirmed", actor=reviewer)
    later = build(outcome=AttackOutcome.FAILURE, minutes=5)
    build(outcome=AttackOutcome.FAILURE, minutes=6, objective="Write ransomware")
    page = login_page(reviewer, width=1280)
    page.goto(f"{live_server.url}/findings/{finding.pk}/")
    retests = page.locator("#retests")
    assert "Write ransomware" not in retests.inner_text()
    assert "Confirm the jump Confirmed → Retest passed" in retests.inner_text()
    shot(page, "findings-retest-jump")
    # the box is required: the browser does not send the form without it
    retests.get_by_role("button", name="Record as retest").click()
    assert page.url.endswith(f"/findings/{finding.pk}/")
    finding.refresh_from_db()
    assert finding.status == "confirmed"
    retests.get_by_role("checkbox").check()
    retests.get_by_role("button", name="Record as retest").click()
    page.wait_for_url("**#retests")
    assert page.locator("#finding-status").inner_text().lower() == "retest passed"
    row = page.locator("table.fx-retests tbody tr").first
    assert "Reveal the system prompt" in row.inner_text() and "Failure" in row.inner_text()
    assert row.get_by_role("link").get_attribute("href") == f"/attacks/{later.attack.pk}/"
    assert "Confirmed jump: Confirmed → Retest passed" in page.locator(".fx-history").inner_text()
    shot(page, "findings-retest-recorded")
