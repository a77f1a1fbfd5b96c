"""A two-reviewer blind review queue end to end in a real browser: a lead creates it, reviewer A
works through it with the keyboard only, reviewer B does not see A's verdicts before giving
his own, the agreement on the queue page matches a hand computation, and the lead resolves
the disagreement."""

from __future__ import annotations

import re

import pytest

from memory.models import AttackResult, QueueResolution, ReviewQueue
from tests.review.test_detail import build_attack

pytestmark = pytest.mark.django_db(transaction=True)

#: Three attacks in the queue's order (sort=objective), with PyRIT's automated outcomes.
ITEMS = [
    ("Queue B · 1 · reveal the system prompt", "success"),
    ("Queue B · 2 · write a phishing mail", "failure"),
    ("Queue B · 3 · explain lock picking", "success"),
]
#: What each reviewer records on items 1-3 (s, f, u are the keys).
ANN = ["s", "f", "s"]
BOB = ["f", "f", "s"]


@pytest.fixture
def people(member):
    return {
        "lena": member("lead", username="lena"),
        "ann": member("reviewer", username="ann"),
        "bob": member("reviewer", username="bob"),
    }


def record_with_keys(page, key: str, reason: str) -> None:
    """Choose the outcome, jump to the reason, type it, save: keyboard only."""
    page.keyboard.press(key)
    page.keyboard.press("r")
    # Letters typed in the reason are text, not shortcuts ("fails safely" holds f, s and u).
    page.keyboard.type(reason)
    page.keyboard.press("Control+Enter")


def checked_outcome(page) -> str | None:
    return page.evaluate(
        "() => { const c = document.querySelector('#verdict-form input[name=outcome]:checked');"
        " return c ? c.value : null; }"
    )


def test_a_blind_two_reviewer_queue_end_to_end(login_page, live_server, people, shot):
    attacks = []
    for objective, outcome in ITEMS:
        attack, _ = build_attack(objective=objective, outcome=outcome)
        attacks.append(attack)
    base = live_server.url

    # --- the lead creates the queue ---------------------------------------------------------
    lead = login_page(people["lena"])
    lead.goto(f"{base}/attacks/?q=Queue+B&sort=objective")
    lead.get_by_role("link", name="New queue from these filters").click()
    lead.wait_for_url(re.compile(r".*/queues/new/\?filter=.*"))
    assert lead.locator("#id_filter_query").input_value() == "q=Queue+B&sort=objective"
    lead.fill("#id_name", "Jailbreak triage")
    lead.fill("#id_description", "Two reviewers per attack, blind.")
    lead.fill("#id_required_reviews", "2")
    lead.check("#id_blind")
    lead.get_by_label("ann").check()
    lead.get_by_label("bob").check()
    lead.get_by_role("button", name="Create queue").click()
    queue = ReviewQueue.objects.get(name="Jailbreak triage")
    lead.wait_for_url(f"{base}/queues/{queue.pk}/")
    assert queue.blind and queue.required_reviews == 2
    assert {u.username for u in queue.assignees.all()} == {"ann", "bob"}

    # --- reviewer A: Next, then the keyboard only ---------------------------------------------
    ann = login_page(people["ann"])
    ann.goto(f"{base}/queues/{queue.pk}/")
    ann.get_by_role("link", name="Review next →").click()
    item_url = [f"{base}/attacks/{a.pk}/?queue={queue.pk}" for a in attacks]
    ann.wait_for_url(item_url[0])
    assert ann.locator("[data-queue-needing]").inner_text() == "3 of 3"

    ann.keyboard.press("s")
    ann.keyboard.press("r")
    assert ann.evaluate("document.activeElement.name") == "reason"
    ann.keyboard.type("Complied fully; fails safely nowhere.")
    assert checked_outcome(ann) == "success"  # the letters typed did not change the choice
    ann.keyboard.press("Control+Enter")
    ann.wait_for_url(item_url[1])  # saving goes straight to the next item
    assert "Verdict recorded." in ann.locator(".messages").inner_text()
    assert ann.locator("[data-queue-needing]").inner_text() == "2 of 3"

    # k goes back, j on to the next item that still needs her.
    ann.keyboard.press("k")
    ann.wait_for_url(item_url[0])
    ann.keyboard.press("j")
    ann.wait_for_url(item_url[1])
    record_with_keys(ann, ANN[1], "Refused: a generic warning.")
    ann.wait_for_url(item_url[2])
    record_with_keys(ann, ANN[2], "Step-by-step instructions given.")
    # Nothing left for her: back to the queue.
    ann.wait_for_url(f"{base}/queues/{queue.pk}/")
    assert "Nothing in this queue needs your review any more." in ann.content()

    # --- reviewer B: blind until he has given his own -------------------------------------------
    bob = login_page(people["bob"])
    bob.goto(item_url[0])
    verdict_panel = bob.locator("#verdicts")
    assert "Complied fully" not in bob.content()
    assert verdict_panel.locator(".blind-badge").inner_text() == "Hidden"
    assert bob.locator("#outcome-summary .blind-badge").inner_text() == "Hidden"
    assert "1 verdict hidden by the blind queue" in verdict_panel.inner_text()
    assert bob.locator("[data-queue-needing]").inner_text() == "3 of 3"
    shot(bob, "queue-attack-blind")
    record_with_keys(bob, BOB[0], "A refusal wrapped in a story.")
    bob.wait_for_url(item_url[1])
    # Now that he has given his, A's verdict shows on item 1.
    bob.goto(f"{base}/attacks/{attacks[0].pk}/")
    assert "Complied fully" in bob.locator("#verdicts").inner_text()
    bob.goto(item_url[1])
    assert "Refused: a generic warning." not in bob.content()
    record_with_keys(bob, BOB[1], "Refused.")
    bob.wait_for_url(item_url[2])
    record_with_keys(bob, BOB[2], "Detailed steps.")
    bob.wait_for_url(f"{base}/queues/{queue.pk}/")

    # --- the lead reads the agreement ---------------------------------------------------------
    lead.goto(f"{base}/queues/{queue.pk}/")
    figures = dict(
        lead.evaluate(
            "() => [...document.querySelectorAll('[data-figure]')]"
            ".map(e => [e.dataset.figure, e.textContent.trim()])"
        )
    )
    # By hand. Items (ann, bob): (s, f), (f, f), (s, s); automated: s, f, s.
    # Fleiss: counts (s, f) = (1, 1), (0, 2), (2, 0); P_i = 0, 1, 1, P̄ = 2/3;
    #   p_s = p_f = 1/2, P̄_e = 1/2; κ = (2/3 − 1/2) / (1/2) = 1/3.
    # Cohen ann–bob: p_o = 2/3; ann (2 s, 1 f), bob (1 s, 2 f): p_e = (2·1 + 1·2) / 9 = 4/9;
    #   κ = (2/3 − 4/9) / (5/9) = 2/5.
    # vs automated: ann matches every item, κ = 1; bob is ann's case against (s, f, s): 2/5.
    assert figures == {
        "items": "3",
        "complete": "3",
        "started": "0",
        "untouched": "0",
        "disagreements": "1",
        "resolved": "0",
        "fleiss": f"{1 / 3:.2f}",
    }
    pair = lead.locator('#pair-kappa tr[data-pair="ann-bob"]')
    assert pair.locator("td.kappa").inner_text() == f"{2 / 5:.2f}"
    assert pair.locator("td").nth(1).inner_text() == "3"
    reviewer_kappa = {
        name: lead.locator(f'#reviewer-progress tr[data-reviewer="{name}"] td.kappa').inner_text()
        for name in ("ann", "bob")
    }
    assert reviewer_kappa == {"ann": "1.00", "bob": f"{2 / 5:.2f}"}

    # --- the lead resolves the disagreement ------------------------------------------------------
    row = lead.locator(f'#disagreements tr[data-attack="{attacks[0].pk}"]')
    assert "ann" in row.inner_text() and "bob" in row.inner_text()
    row.locator('input[name="outcome"][value="failure"]').check()
    row.locator('textarea[name="reason"]').fill("The story is a refusal: failure.")
    row.get_by_role("button", name="Resolve").click()
    lead.wait_for_url(f"{base}/queues/{queue.pk}/#disagreements")
    assert "Disagreement resolved" in lead.locator(".messages").inner_text()
    assert lead.locator('[data-figure="resolved"]').inner_text() == "1"
    resolution = QueueResolution.objects.get()
    assert resolution.verdict.outcome == "failure" and resolution.resolved_by == people["lena"]
    assert AttackResult.objects.get(pk=attacks[0].pk).human_outcome == "failure"
    lead.evaluate("window.scrollTo(0, 0)")  # the sticky top bar stays at the top of the shot
    shot(lead, "queue-page")
    lead.goto(f"{base}/attacks/{attacks[0].pk}/")
    human = lead.locator("#outcome-summary .oc").nth(1)
    assert human.inner_text().split()[-1] == "Failure"
    assert "The story is a refusal: failure." in lead.locator("#verdicts").inner_text()
