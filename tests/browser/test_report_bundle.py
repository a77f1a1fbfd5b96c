"""The static report bundle (report.html) opened from disk in Chromium: hostile memory runs
nothing and fetches nothing, and the report still shows (its CSP allows its own styles)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memory.findings.services import EvidenceSpec, finding_create, operation_save, report_create
from redteam.core.choices import AttackOutcome
from tests.factories import make_attack, make_conversation, make_message, make_piece, make_score

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = (
    '</script></title><img src=x onerror=alert(1)> <a href="javascript:alert(2)">js</a> '
    '<img src="http://127.0.0.1:9/x.png"> <link rel=stylesheet href="file:///etc/passwd"> '
    "<script>alert(3)</script> <iframe src=http://127.0.0.1:9/></iframe>"
)


def _hostile_report(reviewer):
    conversation = make_conversation()
    user, assistant = (
        make_message(conversation, 0, "user"),
        make_message(conversation, 1, "assistant"),
    )
    make_piece(user, HOSTILE)
    response = make_piece(assistant, "Sure: " + HOSTILE)
    score = make_score(response, "true")
    attack = make_attack(
        conversation,
        objective=HOSTILE,
        outcome=AttackOutcome.SUCCESS,
        last_score=score,
        targeted_harm_categories=["violence"],
    )
    operation = operation_save(actor=reviewer, name="Op " + HOSTILE[:60], description=HOSTILE)
    finding_create(
        actor=reviewer,
        title="Finding " + HOSTILE[:150],
        description=HOSTILE,
        reproduction_steps=HOSTILE,
        remediation=HOSTILE,
        operation=operation,
        evidence=[EvidenceSpec("attack", str(attack.pk))],
    )
    return report_create(actor=reviewer, title="Report " + HOSTILE[:150])


def test_the_bundle_from_disk_runs_and_fetches_nothing_and_still_shows(
    browser, reviewer, tmp_path, shot
):
    report = _hostile_report(reviewer)
    client = Client()
    client.force_login(reviewer)
    body = client.get(reverse("report-download", args=[report.pk, "html"])).content
    path = tmp_path / "report.html"
    path.write_bytes(body)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    requests, blocked, dialogs, violations = [], [], [], []
    page.on("request", lambda request: requests.append(request.url))
    # Chromium reports a request its CSP stopped, then fails it with "csp": it never left.
    page.on(
        "requestfailed",
        lambda request: blocked.append(request.url) if request.failure == "csp" else None,
    )
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    shot(page, "report-bundle-hostile")

    assert dialogs == []
    assert requests == [path.as_uri()]
    text = page.inner_text("body")
    assert "onerror=alert(1)" in text and "<script>alert(3)</script>" in text
    assert page.locator(".report img, .report script, .report iframe").count() == 0
    # The page's own inline styles (the <style> block and the CI bars' style attributes) apply
    # under its CSP: nothing of its own is blocked.
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "1100px"
    assert violations == []
    assert page.locator(".rep-ci span[style]").count() > 0

    # Were any of it markup (a template bug), the file's own CSP still lets nothing load.
    with (
        page.expect_event("requestfailed", lambda r: r.url.endswith("pixel.png")),
        page.expect_event("requestfailed", lambda r: r.url == "file:///etc/passwd"),
    ):
        page.evaluate(
            """() => {
                const img = document.createElement("img");
                img.src = "http://127.0.0.1:9/pixel.png";
                document.body.append(img);
                const css = document.createElement("link");
                css.rel = "stylesheet";
                css.href = "file:///etc/passwd";
                document.head.append(css);
            }"""
        )
    assert sorted(blocked) == ["file:///etc/passwd", "http://127.0.0.1:9/pixel.png"]
    assert [url for url in requests if url not in blocked] == [path.as_uri()]
    context.close()
