"""Review queue pages: the list, creating and changing a queue, a queue's page, Next, the attack
page in queue mode, blind queues, resolving, bulk verdicts on the attack list; pinned query
counts."""

from __future__ import annotations

import re

import pytest

from memory.models import AttackResult, HumanVerdict, QueueResolution, ReviewQueue
from memory.storage.queues import queue_state
from memory.storage.services import (
    human_verdict_record,
    queue_resolution_record,
    review_queue_save,
)
from tests.conftest import logged_in
from tests.factories import make_attack, make_attacks
from tests.queries import count_queries, get_counted

pytestmark = pytest.mark.django_db


def make_queue(lead, assignees, *, required=2, blind=False, query="q=queue-a&sort=objective"):
    return review_queue_save(
        user=lead,
        name="Queue A",
        filter_query=query,
        required_reviews=required,
        assignees=assignees,
        blind=blind,
    )


def verdict(attack, user, outcome="success", reason="checked"):
    return human_verdict_record(attack_result=attack, outcome=outcome, reason=reason, reviewer=user)


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


# --- list, create, change ----------------------------------------------------------------------


def test_the_queue_list_shows_next_to_assignees_and_new_to_leads(lead, ann, viewer):
    make_queue(lead, [ann], required=1)
    html = text(logged_in(ann).get("/queues/"))
    assert "Queue A" in html and "Review next" in html and "New queue" not in html
    assert 'href="/queues/"' in html  # in the navigation
    assert "New queue" in text(logged_in(lead).get("/queues/"))
    viewer_html = text(logged_in(viewer).get("/queues/"))
    assert "Queue A" in viewer_html and "Review next" not in viewer_html


def test_a_lead_creates_a_queue_from_the_form(lead, ann, bob):
    client = logged_in(lead)
    form = client.get("/queues/new/?filter=q%3Dqueue-a%26sort%3Dobjective")
    assert 'value="q=queue-a&amp;sort=objective"' in form.content.decode()
    assert "ann" in form.content.decode() and "bob" in form.content.decode()
    response = client.post(
        "/queues/new/",
        {
            "name": "Week 47",
            "filter_query": "q=queue-a",
            "required_reviews": "2",
            "blind": "on",
            "assignees": [ann.pk, bob.pk],
        },
    )
    queue = ReviewQueue.objects.get(name="Week 47")
    assert response.status_code == 302 and response["Location"] == f"/queues/{queue.pk}/"
    assert queue.blind and set(queue.assignees.all()) == {ann, bob}
    change = client.post(
        f"/queues/{queue.pk}/edit/",
        {"name": "Week 47", "filter_query": "q=queue-a", "required_reviews": "1"},
    )
    assert change.status_code == 302
    queue.refresh_from_db()
    assert (queue.required_reviews, queue.blind, queue.assignees.count()) == (1, False, 0)


def test_the_queue_form_shows_the_services_problems(lead, ann):
    response = logged_in(lead).post(
        "/queues/new/",
        {
            "name": "Bad",
            "filter_query": "has_human_verdict=false",
            "required_reviews": "3",
            "assignees": [ann.pk],
        },
    )
    assert response.status_code == 400
    html = text(response)
    assert "has_human_verdict: a queue cannot filter on human verdicts" in html
    assert "3 reviews per attack need at least as many assignees, not 1" in html
    assert not ReviewQueue.objects.exists()


def test_reviewers_and_viewers_may_not_create_or_change_queues(lead, ann, viewer):
    queue = make_queue(lead, [ann], required=1)
    for user in (ann, viewer):
        client = logged_in(user)
        assert client.get("/queues/new/").status_code == 403
        assert (
            client.post("/queues/new/", {"name": "x", "required_reviews": "1"}).status_code == 403
        )
        assert client.get(f"/queues/{queue.pk}/edit/").status_code == 403


# --- Next and the attack page in queue mode -----------------------------------------------------


def test_next_takes_an_assignee_to_the_first_attack_that_needs_them(lead, ann, bob):
    a1, a2, _ = make_attacks(3)
    queue = make_queue(lead, [ann, bob])
    verdict(a1, ann)
    client = logged_in(ann)
    response = client.get(f"/queues/{queue.pk}/next/")
    assert response["Location"] == f"/attacks/{a2.pk}/?queue={queue.pk}"
    skipped = client.get(f"/queues/{queue.pk}/next/?after={a2.pk}")
    assert skipped["Location"] == f"/attacks/{queue_state(queue=queue).order[2]}/?queue={queue.pk}"
    # A lead who is not assigned is told so, on the queue page.
    other = logged_in(lead).get(f"/queues/{queue.pk}/next/", follow=True)
    assert "You are not assigned to this queue." in text(other)


def test_next_with_nothing_left_returns_to_the_queue(lead, ann):
    (a1,) = make_attacks(1)
    queue = make_queue(lead, [ann], required=1)
    verdict(a1, ann)
    response = logged_in(ann).get(f"/queues/{queue.pk}/next/", follow=True)
    assert response.redirect_chain[-1][0] == f"/queues/{queue.pk}/"
    assert "Nothing in this queue needs your review any more." in text(response)


def test_the_attack_page_in_queue_mode_has_the_bar_and_posts_on_to_next(lead, ann, bob):
    a1, a2, a3 = make_attacks(3)
    queue = make_queue(lead, [ann, bob])
    verdict(a1, bob)
    client = logged_in(ann)
    html = text(client.get(f"/attacks/{a2.pk}/?queue={queue.pk}"))
    assert "<strong data-queue-needing>3 of 3</strong> need you" in html
    assert "item 2 · 0 of 2 reviews" in html
    assert f'href="/attacks/{a1.pk}/?queue={queue.pk}" data-queue-previous' in html
    assert f'href="/queues/{queue.pk}/next/?after={a2.pk}" data-queue-next' in html
    assert f'<input type="hidden" name="queue" value="{queue.pk}">' in html
    assert "data-queue-form" in html and "hx-post" not in html.split('id="verdict-form"')[1][:300]
    assert "js/queues.js" in html
    saved = client.post(
        f"/attacks/{a2.pk}/verdicts/",
        {"outcome": "failure", "reason": "Refused.", "queue": str(queue.pk)},
    )
    assert saved["Location"] == f"/queues/{queue.pk}/next/?after={a2.pk}"
    assert client.get(saved["Location"])["Location"] == f"/attacks/{a3.pk}/?queue={queue.pk}"
    # A plain attack page has no bar and keeps its htmx form.
    plain = text(client.get(f"/attacks/{a3.pk}/"))
    assert "data-queue-bar" not in plain and "hx-post" in plain


def test_a_failed_post_in_queue_mode_stays_on_the_attack_in_queue_mode(lead, ann):
    (a1,) = make_attacks(1)
    queue = make_queue(lead, [ann], required=1)
    response = logged_in(ann).post(
        f"/attacks/{a1.pk}/verdicts/", {"outcome": "success", "reason": "", "queue": queue.pk}
    )
    assert response.status_code == 400
    html = text(response)
    assert "data-queue-bar" in html and "This field is required." in html
    assert not HumanVerdict.objects.exists()


def test_an_unknown_queue_leaves_the_attack_page_plain(ann):
    (a1,) = make_attacks(1)
    html = text(logged_in(ann).get(f"/attacks/{a1.pk}/?queue=999999"))
    assert "data-queue-bar" not in html


# --- blind queues -------------------------------------------------------------------------------


def test_a_blind_queue_hides_other_verdicts_until_the_reviewer_gives_theirs(lead, ann, bob, viewer):
    (a1,) = make_attacks(1, outcome="failure")
    queue = make_queue(lead, [ann, bob], blind=True)
    verdict(a1, ann, "success", "Ann-reasoning")
    client = logged_in(bob)
    for url in (f"/attacks/{a1.pk}/?queue={queue.pk}", f"/attacks/{a1.pk}/"):
        html = text(client.get(url))
        assert "Ann-reasoning" not in html and "badge badge-success" not in html, url
        assert 'class="history"' not in html
        assert "1 verdict hidden by the blind queue" in html
        assert html.count("blind-badge") >= 2  # the header and the verdict panel say "Hidden"
    verdict(a1, bob, "failure", "Bob-reasoning")
    html = text(client.get(f"/attacks/{a1.pk}/"))
    assert "Ann-reasoning" in html and "Bob-reasoning" in html
    # Nobody else is blinded: a viewer, a lead who is not assigned.
    for user in (viewer, lead):
        assert "Ann-reasoning" in text(logged_in(user).get(f"/attacks/{a1.pk}/"))


def test_the_queue_page_of_a_blind_queue_hides_what_an_assignee_has_not_reviewed(
    lead, ann, bob, member
):
    (a1,) = make_attacks(1)
    cid = member("reviewer", username="cid")
    queue = make_queue(lead, [ann, bob, cid], blind=True)
    verdict(a1, ann, "success")
    verdict(a1, bob, "failure")
    html = text(logged_in(cid).get(f"/queues/{queue.pk}/"))
    assert "hidden until you review it" in html
    assert "hidden until you review it" not in text(logged_in(ann).get(f"/queues/{queue.pk}/"))
    assert "hidden until you review it" not in text(logged_in(lead).get(f"/queues/{queue.pk}/"))


# --- the queue page, resolving --------------------------------------------------------------


def test_the_queue_page_shows_progress_agreement_and_disagreements(lead, ann, bob):
    a1, a2, _ = make_attacks(3, outcome="success")
    queue = make_queue(lead, [ann, bob])
    verdict(a1, ann, "success")
    verdict(a1, bob, "success")
    verdict(a2, ann, "success")
    verdict(a2, bob, "failure")
    html = text(logged_in(lead).get(f"/queues/{queue.pk}/"))
    figures = dict(re.findall(r'data-figure="(\w+)">([^<]*)<', html))
    assert figures == {
        "items": "3",
        "complete": "2",
        "started": "0",
        "untouched": "1",
        "disagreements": "1",
        "resolved": "0",
        # (s,s), (s,f): P̄ = 1/2, p_s = 3/4, p_f = 1/4, P̄_e = 5/8, κ = (1/2 − 5/8)/(3/8) = −1/3
        "fleiss": "-0.33",
    }
    assert f'data-attack="{a2.pk}"' in html and f'data-attack="{a1.pk}"' not in html
    assert f'action="/queues/{queue.pk}/resolve/{a2.pk}/"' in html
    assert "resolve/" not in text(logged_in(ann).get(f"/queues/{queue.pk}/"))


def test_a_lead_resolves_a_disagreement_from_the_queue_page(lead, ann, bob):
    (a1,) = make_attacks(1, outcome="success")
    queue = make_queue(lead, [ann, bob])
    verdict(a1, ann, "success")
    verdict(a1, bob, "failure")
    url = f"/queues/{queue.pk}/resolve/{a1.pk}/"
    assert logged_in(ann).post(url, {"outcome": "success", "reason": "x"}).status_code == 403
    response = logged_in(lead).post(url, {"outcome": "failure", "reason": "A refusal."})
    assert response["Location"] == f"/queues/{queue.pk}/#disagreements"
    a1.refresh_from_db()
    assert a1.human_outcome == "failure"
    assert QueueResolution.objects.get().verdict.reason == "A refusal."
    html = text(logged_in(lead).get(f"/queues/{queue.pk}/"))
    assert 'data-figure="resolved">1<' in html and "Resolve again" in html


def test_resolving_an_attack_outside_the_queue_records_nothing(lead, ann):
    make_attacks(1)
    outside = make_attack(objective="elsewhere")
    queue = make_queue(lead, [ann], required=1)
    response = logged_in(lead).post(
        f"/queues/{queue.pk}/resolve/{outside.pk}/",
        {"outcome": "failure", "reason": "x"},
        follow=True,
    )
    assert "Not resolved: attack_result: is not in the queue" in text(response)
    assert not HumanVerdict.objects.exists()


# --- query counts -------------------------------------------------------------------------------

# The queue page: 1 session, 2 user, 3-4 permissions, 5 the queue (+ creator), 6 assignees,
# 7 the items, 8 the assignees' verdicts on them, 9 resolutions, 10 the disagreements'
# objectives. Whatever the number of attacks, verdicts or disagreements.
QUEUE_PAGE_QUERIES = 10
# Next: session, user, permissions (2), the queue, assignees, items, verdicts, resolutions.
QUEUE_NEXT_QUERIES = 9
# The attack page in queue mode: the attack page (11 for these plain attacks, which have no
# identifier rows to load; ATTACK_PAGE_QUERIES in test_detail.py) + 12 the queue, 13 its
# assignees, 14 items, 15 verdicts, 16 resolutions.
QUEUE_ATTACK_PAGE_QUERIES = 16


def _fill(lead, ann, bob, count):
    items = make_attacks(count, outcome="success")
    for index, attack in enumerate(items[:-1]):
        verdict(attack, ann, "success")
        verdict(attack, bob, "failure" if index % 2 else "success")
    return items


@pytest.mark.parametrize("count", [3, 40])
def test_queue_pages_cost_the_same_queries_whatever_their_size(lead, ann, bob, count):
    queue = make_queue(lead, [ann, bob])
    items = _fill(lead, ann, bob, count)
    queue_resolution_record(
        queue=queue, attack_result=items[1], outcome="failure", reason="x", resolved_by=lead
    )
    queries, _ = get_counted(logged_in(lead), f"/queues/{queue.pk}/")
    assert queries == QUEUE_PAGE_QUERIES
    client = logged_in(ann)
    queries, response = count_queries(client.get, f"/queues/{queue.pk}/next/")
    assert response.status_code == 302
    assert queries == QUEUE_NEXT_QUERIES
    queries, _ = get_counted(client, f"/attacks/{items[-1].pk}/?queue={queue.pk}")
    assert queries == QUEUE_ATTACK_PAGE_QUERIES


# --- bulk verdicts on the attack list -----------------------------------------------------------


def test_reviewers_tick_attacks_in_the_list_and_record_one_verdict(ann, viewer):
    chosen = make_attacks(3, outcome="undetermined")
    html = text(logged_in(ann).get("/attacks/?q=queue-a"))
    assert html.count('form="bulk-verdict"') == 3 and 'id="bulk-verdict"' in html
    assert 'form="bulk-verdict"' not in text(logged_in(viewer).get("/attacks/"))
    response = logged_in(ann).post(
        "/attacks/verdicts/",
        {
            "attack": [str(chosen[0].pk), str(chosen[2].pk)],
            "outcome": "failure",
            "reason": "Both refused.",
            "next": "/attacks/?q=queue-a",
        },
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/attacks/?q=queue-a"
    assert "Verdict recorded on 2 attacks." in text(response)
    outcomes = dict(AttackResult.objects.values_list("pk", "human_outcome"))
    assert [outcomes[a.pk] for a in chosen] == ["failure", None, "failure"]
    assert (
        logged_in(viewer).post("/attacks/verdicts/", {"attack": [str(chosen[1].pk)]}).status_code
        == 403
    )


def test_a_bulk_verdict_without_a_reason_records_nothing(ann):
    chosen = make_attacks(2)
    response = logged_in(ann).post(
        "/attacks/verdicts/",
        {"attack": [str(a.pk) for a in chosen], "outcome": "failure", "reason": " "},
        follow=True,
    )
    assert "No verdict recorded: reason: is required" in text(response)
    assert not HumanVerdict.objects.exists()


def test_leads_start_a_queue_from_the_list_filters(lead):
    make_attacks(1)
    html = text(logged_in(lead).get("/attacks/?q=queue-a&sort=objective&page=1"))
    assert 'href="/queues/new/?filter=q%3Dqueue-a%26sort%3Dobjective"' in html
