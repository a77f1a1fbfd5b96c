"""Review queues: the services (permissions, validation), what counts as a review, the next
item, progress and agreement counts, resolutions and bulk verdicts."""

from __future__ import annotations

import math

import pytest
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from memory.models import AttackResult, HumanVerdict, QueueResolution, ReviewQueue
from memory.storage.queues import (
    blind_queues_of,
    hidden_by_blind_queue,
    queue_filter_params,
    queue_state,
)
from memory.storage.services import (
    human_verdict_record,
    human_verdicts_record_bulk,
    queue_resolution_record,
    review_queue_save,
)
from redteam.core.errors import InvalidMemory
from tests.factories import make_attack, make_attacks
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


@pytest.fixture
def cid(member):
    return member("reviewer", username="cid")


def make_queue(lead, assignees, *, required=2, query="q=queue-a&sort=objective", **kw):
    return review_queue_save(
        user=lead,
        name=kw.pop("name", "Queue A"),
        filter_query=query,
        required_reviews=required,
        assignees=assignees,
        **kw,
    )


def verdict(attack, user, outcome="success", reason="checked"):
    return human_verdict_record(attack_result=attack, outcome=outcome, reason=reason, reviewer=user)


def problems(caught) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for problem in caught.value.problems:
        out.setdefault(problem.path, []).append(problem.message)
    return out


# --- creating and changing queues ---------------------------------------------------------------


def test_a_lead_creates_a_queue_with_a_normalised_filter(lead, ann, bob):
    queue = review_queue_save(
        user=lead,
        name="  Jailbreaks, week 47 ",
        description="Look at the refusals",
        filter_query="/attacks/?q=queue-a&attack_class=&sort=objective",
        required_reviews=2,
        assignees=[ann, bob, ann],
        blind=True,
    )
    queue.refresh_from_db()
    assert queue.name == "Jailbreaks, week 47"
    assert queue.filter_query == "q=queue-a&sort=objective"
    assert (queue.required_reviews, queue.blind, queue.created_by) == (2, True, lead)
    assert set(queue.assignees.all()) == {ann, bob}
    assert {link.user_id for link in queue.history.first().assignees.all()} == {ann.pk, bob.pk}


@pytest.mark.parametrize("who", ["reviewer", "viewer", "curator", "ingest"])
def test_only_leads_create_or_change_queues(member, lead, ann, who):
    user = member(who, username=f"u-{who}")
    with pytest.raises(PermissionDenied):
        make_queue(user, [ann], required=1)
    queue = make_queue(lead, [ann], required=1)
    with pytest.raises(PermissionDenied):
        make_queue(user, [ann], required=1, queue=queue)


def test_queue_validation_names_every_problem(lead, ann, viewer):
    make_queue(lead, [ann], required=1, name="Taken")
    with pytest.raises(InvalidMemory) as caught:
        review_queue_save(
            user=lead,
            name="Taken",
            filter_query="has_human_verdict=false&colour=red&sort=size&identifier=xyz&page=2",
            required_reviews=3,
            assignees=[ann, viewer],
        )
    found = problems(caught)
    assert found["name"] == ["a queue named 'Taken' exists already"]
    assert found["required_reviews"] == [
        "3 reviews per attack need at least as many assignees, not 2"
    ]
    assert found["assignees"] == ["cannot record verdicts (reviewer role): vera"]
    messages = found["filter_query"]
    assert any(m.startswith("has_human_verdict: a queue cannot filter on human") for m in messages)
    assert "colour: not a filter of the attack list" in messages
    assert "page: not a filter of the attack list" in messages
    assert any(m.startswith("sort: 'size' is not one of") for m in messages)
    assert any(m.startswith("identifier: ") for m in messages)
    assert ReviewQueue.objects.get(name="Taken").required_reviews == 1  # unchanged


@pytest.mark.parametrize("required", [0, -1])
def test_a_queue_needs_at_least_one_review_per_item(lead, ann, required):
    with pytest.raises(InvalidMemory) as caught:
        make_queue(lead, [ann], required=required, name="", query="effective_outcome=success")
    found = problems(caught)
    assert set(found) == {"name", "required_reviews", "filter_query"}


def test_the_database_refuses_a_queue_needing_no_review():
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewQueue.objects.create(name="zero", required_reviews=0)


def test_changing_a_queue_keeps_its_name_free_for_itself(lead, ann, bob):
    queue = make_queue(lead, [ann], required=1)
    before = queue.history.count()
    changed = make_queue(lead, [ann, bob], required=2, queue=queue, blind=True)
    assert changed.pk == queue.pk
    assert set(changed.assignees.all()) == {ann, bob}
    assert queue.history.count() > before
    assert queue.history.first().blind is True


def test_a_pasted_url_or_query_string_is_read_the_same():
    for text in ("/attacks/?q=x&sort=-time", "?q=x&sort=-time", "q=x&sort=-time&outcome="):
        assert queue_filter_params(text).urlencode() == "q=x&sort=-time"


# --- what counts as a review, the next item, progress ----------------------------------------


def test_next_item_follows_the_filter_order_and_skips_what_is_done(lead, ann, bob, cid):
    a1, a2, a3 = make_attacks(3)
    make_attack(objective="another queue")  # not matched by the filter
    queue = make_queue(lead, [ann, bob, cid], required=2)
    state = queue_state(queue=queue)
    assert state.order == [a1.pk, a2.pk, a3.pk]
    assert state.next_for(ann.pk) == a1.pk

    verdict(a1, ann)
    state = queue_state(queue=queue)
    assert state.next_for(ann.pk) == a2.pk  # her own review done
    assert state.next_for(bob.pk) == a1.pk  # still short of 2 reviews

    verdict(a1, bob, "failure")
    state = queue_state(queue=queue)
    assert state.next_for(cid.pk) == a2.pk  # a1 is complete: nobody else is asked
    assert (state.needing(ann.pk), state.needing(bob.pk), state.needing(cid.pk)) == (2, 2, 2)

    # "Next" from an item moves on in queue order and wraps around, never to the item itself.
    assert state.next_for(cid.pk, after=a2.pk) == a3.pk
    assert state.next_for(cid.pk, after=a3.pk) == a2.pk
    assert state.previous(a3.pk) == a2.pk and state.previous(a1.pk) is None
    assert state.next_for(lead.pk) is None  # not an assignee


def test_the_sort_of_the_filter_orders_the_queue(lead, ann):
    a1, a2, a3 = make_attacks(3)
    queue = make_queue(lead, [ann], required=1, query="q=queue-a&sort=-objective")
    assert queue_state(queue=queue).order == [a3.pk, a2.pk, a1.pk]


def test_a_review_is_an_assignees_newest_verdict_and_never_a_resolution(lead, ann, bob, cid):
    (a1,) = make_attacks(1)
    verdict(a1, ann, "success")  # before the queue existed: counts
    queue = make_queue(lead, [ann, bob], required=2)
    verdict(a1, ann, "failure")  # her newer verdict replaces the older one
    verdict(a1, cid, "undetermined")  # not an assignee: does not count
    state = queue_state(queue=queue)
    assert {k: v.outcome for k, v in state.reviews[a1.pk].items()} == {ann.pk: "failure"}
    queue_resolution_record(
        queue=queue, attack_result=a1, outcome="success", reason="settled", resolved_by=lead
    )
    # Even a lead who is an assignee does not review by resolving.
    queue.assignees.add(lead)
    state = queue_state(queue=queue)
    assert set(state.reviews[a1.pk]) == {ann.pk}
    assert state.resolutions[a1.pk].verdict.outcome == "success"


def test_progress_counts_items_by_their_reviews(lead, ann, bob):
    a1, a2, a3, _ = make_attacks(4, outcome="failure")
    queue = make_queue(lead, [ann, bob], required=2)
    verdict(a1, ann, "success")
    verdict(a1, bob, "success")
    verdict(a2, ann, "success")
    verdict(a2, bob, "failure")
    verdict(a3, bob, "failure")
    queue_resolution_record(
        queue=queue, attack_result=a2, outcome="failure", reason="b is right", resolved_by=lead
    )
    state = queue_state(queue=queue)
    progress = state.progress()
    assert (progress.items, progress.complete, progress.started, progress.untouched) == (4, 2, 1, 1)
    assert (progress.disagreements, progress.resolved, progress.percent_complete) == (1, 1, 50)
    per = {row.user.username: row for row in state.reviewer_progress()}
    assert (per["ann"].reviewed, per["ann"].needs) == (2, 2)
    assert (per["bob"].reviewed, per["bob"].needs) == (3, 1)
    [item] = state.disagreements()
    assert item.attack_id == a2.pk and item.automated == "failure"
    assert [(user.username, outcome) for user, outcome in item.reviews] == [
        ("ann", "success"),
        ("bob", "failure"),
    ]
    assert item.resolution.verdict.reason == "b is right"


def test_agreement_figures_by_hand(lead, ann, bob, cid):
    """Three reviewers, N = 2, five attacks (automated outcome in brackets):

    ====  ==========  =======  =======  =======
    item  automated   ann      bob      cid
    ====  ==========  =======  =======  =======
    1     success     success  success  —
    2     success     success  failure  —
    3     failure     failure  failure  —
    4     failure     —        failure  failure
    5     success     success  —        —
    ====  ==========  =======  =======  =======

    Fleiss over items 1–4 (two reviews each; item 5 has fewer): counts (s, f, u) = (2,0,0),
    (1,1,0), (0,2,0), (0,2,0); P_i = 1, 0, 1, 1, P̄ = 3/4; p_s = 3/8, p_f = 5/8,
    P̄_e = 9/64 + 25/64 = 34/64; κ = (48/64 − 34/64) / (30/64) = 14/30 = 7/15.
    Cohen ann–bob (items 1–3): matrix s→s 1, s→f 1, f→f 1; p_o = 2/3; ann (2 s, 1 f),
    bob (1 s, 2 f): p_e = (2·1 + 1·2)/9 = 4/9; κ = (2/3 − 4/9)/(5/9) = 2/5.
    ann vs automated (items 1, 2, 3, 5): s, s, f, s against s, s, f, s: κ = 1.
    bob vs automated (1–4): s/s, s/f, f/f, f/f: p_o = 3/4, automated
    (2 s, 2 f), bob (1 s, 3 f): p_e = (2·1 + 2·3)/16 = 1/2, κ = 1/2.
    """
    items = make_attacks(5)
    automated = ["success", "success", "failure", "failure", "success"]
    for attack, outcome in zip(items, automated, strict=True):
        AttackResult.objects.filter(pk=attack.pk).update(outcome=outcome)
    table = {
        ann: ["success", "success", "failure", None, "success"],
        bob: ["success", "failure", "failure", "failure", None],
        cid: [None, None, None, "failure", None],
    }
    for user, outcomes in table.items():
        for attack, outcome in zip(items, outcomes, strict=True):
            if outcome:
                verdict(attack, user, outcome)
    state = queue_state(queue=make_queue(lead, [ann, bob, cid], required=2))
    figures = state.agreement()
    assert (figures.fleiss.items, figures.fewer, figures.more) == (4, 1, 0)
    assert math.isclose(figures.fleiss.kappa, 7 / 15)
    pairs = {(p.first.username, p.second.username): p.agreement for p in figures.pairs}
    assert math.isclose(pairs[("ann", "bob")].kappa, 2 / 5)
    assert pairs[("ann", "cid")].n == 0 and pairs[("ann", "cid")].kappa is None
    assert pairs[("bob", "cid")].n == 1
    per = {row.user.username: row.vs_automated for row in state.reviewer_progress()}
    assert per["ann"].kappa == 1.0
    assert math.isclose(per["bob"].kappa, 1 / 2)


def test_reading_a_queue_costs_the_same_queries_whatever_its_size(lead, ann, bob):
    def run():
        state = queue_state(queue=ReviewQueue.objects.get(name="Queue A"))
        return state, state.progress(), state.agreement(), state.disagreements()

    first = make_attacks(3)
    make_queue(lead, [ann, bob], required=2)
    for attack in first:
        verdict(attack, ann)
    small, _ = count_queries(run)
    for attack in make_attacks(30, tag="queue-a more"):
        verdict(attack, ann)
        verdict(attack, bob, "failure")
    queue_resolution_record(
        queue=ReviewQueue.objects.get(),
        attack_result=first[0],
        outcome="failure",
        reason="x",
        resolved_by=lead,
    )
    large, (state, *_) = count_queries(run)
    # The queue, its assignees, the items, the verdicts, the resolutions.
    assert small == large == 5
    assert len(state.order) == 33


# --- resolutions --------------------------------------------------------------------------------


def test_a_resolution_becomes_the_human_outcome_and_says_it_was_one(lead, ann, bob):
    (a1,) = make_attacks(1, outcome="success")
    queue = make_queue(lead, [ann, bob], required=2)
    verdict(a1, ann, "success")
    verdict(a1, bob, "failure")
    resolution = queue_resolution_record(
        queue=queue,
        attack_result=a1,
        outcome="failure",
        reason="The answer is a refusal.",
        resolved_by=lead,
    )
    a1.refresh_from_db()
    assert (a1.outcome, a1.human_outcome) == ("success", "failure")
    assert resolution.verdict.reviewer == lead and resolution.resolved_by == lead
    assert QueueResolution.objects.get().verdict.reason == "The answer is a refusal."
    assert HumanVerdict.objects.filter(attack_result=a1).count() == 3


def test_resolving_needs_the_lead_role_an_attack_of_the_queue_and_a_reason(lead, ann):
    (a1,) = make_attacks(1)
    outside = make_attack(objective="elsewhere")
    queue = make_queue(lead, [ann], required=1)
    with pytest.raises(PermissionDenied):
        queue_resolution_record(
            queue=queue, attack_result=a1, outcome="success", reason="x", resolved_by=ann
        )
    with pytest.raises(InvalidMemory) as caught:
        queue_resolution_record(
            queue=queue, attack_result=outside, outcome="error", reason=" ", resolved_by=lead
        )
    assert set(problems(caught)) == {"outcome", "reason", "attack_result"}
    assert not HumanVerdict.objects.exists() and not QueueResolution.objects.exists()


# --- bulk verdicts ------------------------------------------------------------------------------


def test_a_bulk_verdict_records_one_verdict_per_attack(ann):
    chosen = make_attacks(3, outcome="undetermined")
    recorded = human_verdicts_record_bulk(
        attack_results=[*chosen, chosen[0]], outcome="failure", reason="All refused.", reviewer=ann
    )
    assert len(recorded) == 3
    assert set(AttackResult.objects.values_list("human_outcome", flat=True)) == {"failure"}
    assert {v.reason for v in HumanVerdict.objects.all()} == {"All refused."}


def test_a_bulk_verdict_is_all_or_nothing(ann):
    chosen = make_attacks(2)
    gone = make_attack(objective="deleted meanwhile")
    AttackResult.objects.filter(pk=gone.pk).delete()
    with pytest.raises(AttackResult.DoesNotExist):
        human_verdicts_record_bulk(
            attack_results=[*chosen, gone], outcome="failure", reason="x", reviewer=ann
        )
    assert not HumanVerdict.objects.exists()
    assert not AttackResult.objects.filter(human_outcome__isnull=False).exists()


def test_a_bulk_verdict_needs_the_reviewer_role_a_selection_and_a_reason(viewer, ann):
    chosen = make_attacks(1)
    with pytest.raises(PermissionDenied):
        human_verdicts_record_bulk(
            attack_results=chosen, outcome="failure", reason="x", reviewer=viewer
        )
    with pytest.raises(InvalidMemory) as caught:
        human_verdicts_record_bulk(attack_results=[], outcome="error", reason="", reviewer=ann)
    assert set(problems(caught)) == {"attack_results", "outcome", "reason"}


# --- blind queues -------------------------------------------------------------------------------


def test_a_blind_queue_hides_an_attack_it_holds(lead, ann, bob):
    _, a2 = make_attacks(2)
    other = make_attack(objective="not in it")
    make_queue(lead, [ann, bob], required=2, blind=True)
    make_queue(lead, [ann], required=1, name="Open queue", query="q=not+in")
    queues = blind_queues_of(user=ann)
    assert [q.name for q in queues] == ["Queue A"]
    assert hidden_by_blind_queue(queues=queues, attack_id=a2.pk).name == "Queue A"
    assert hidden_by_blind_queue(queues=queues, attack_id=other.pk) is None
    assert blind_queues_of(user=lead) == []
