"""``/api/v1/review-queues/``: who may read it, the progress and agreement of a queue, and
query counts that do not depend on the number of queues or attacks."""

from __future__ import annotations

import math

import pytest

from memory.storage.services import human_verdict_record, review_queue_save
from tests.conftest import logged_in
from tests.factories import make_attack
from tests.queries import get_counted

pytestmark = pytest.mark.django_db


def queue_of(lead, assignees, name="Queue A", required=2):
    return review_queue_save(
        user=lead,
        name=name,
        filter_query="q=queue-a&sort=objective",
        required_reviews=required,
        assignees=assignees,
        blind=True,
    )


def test_the_queue_list_needs_the_view_permission(lead, ann, bob, viewer, member):
    queue_of(lead, [ann, bob])
    assert logged_in(member()).get("/api/v1/review-queues/").status_code == 403
    body = logged_in(viewer).get("/api/v1/review-queues/").json()
    [row] = body["results"]
    assert row["name"] == "Queue A" and row["assignees"] == ["ann", "bob"]
    assert row["filter_query"] == "q=queue-a&sort=objective"
    assert (row["required_reviews"], row["blind"], row["created_by"]) == (2, True, "lena")
    assert "progress" not in row
    assert row["url"].endswith(f"/api/v1/review-queues/{row['id']}/")


def test_a_queues_detail_has_its_progress_and_agreement(lead, ann, bob):
    """(s, s) and (s, f) by ann and bob on success attacks: Fleiss κ = −1/3 (see the page
    test); Cohen's κ of the pair: ann always s, so p_e = p_o = 1/2 and κ = 0."""
    a1, a2, _ = (make_attack(objective=f"queue-a #{i}") for i in range(3))
    queue = queue_of(lead, [ann, bob])
    for attack, outcomes in ((a1, ("success", "success")), (a2, ("success", "failure"))):
        for user, outcome in zip((ann, bob), outcomes, strict=True):
            human_verdict_record(attack_result=attack, outcome=outcome, reason="r", reviewer=user)
    body = logged_in(ann).get(f"/api/v1/review-queues/{queue.pk}/").json()
    progress = body["progress"]
    assert {k: progress[k] for k in ("items", "complete", "started", "untouched")} == {
        "items": 3,
        "complete": 2,
        "started": 0,
        "untouched": 1,
    }
    assert (progress["disagreements"], progress["resolved"], progress["needs_you"]) == (1, 0, 1)
    assert math.isclose(progress["fleiss"]["kappa"], -1 / 3)
    assert (progress["fleiss"]["items"], progress["fleiss"]["fewer"]) == (2, 1)
    [pair] = progress["pairs"]
    assert pair["reviewers"] == ["ann", "bob"] and pair["n"] == 2 and pair["kappa"] == 0.0
    reviewers = {row["username"]: row for row in progress["reviewers"]}
    assert reviewers["ann"]["vs_automated"] == {"n": 2, "observed": 1.0, "kappa": None}
    assert reviewers["bob"]["reviewed"] == 2 and reviewers["bob"]["needs"] == 1


@pytest.mark.parametrize("size", [2, 12])
def test_query_counts_do_not_depend_on_queues_or_attacks(lead, ann, bob, size):
    for index in range(size):
        queue_of(lead, [ann, bob], name=f"Queue {index}")
    for index in range(size):
        attack = make_attack(objective=f"queue-a #{index}")
        human_verdict_record(attack_result=attack, outcome="success", reason="r", reviewer=ann)
    client = logged_in(ann)
    # 1 session, 2 user, 3-4 permissions, 5 count, 6 queues (+ creator), 7 their assignees.
    queries, _ = get_counted(client, "/api/v1/review-queues/")
    assert queries == 7
    # 1 session, 2 user, 3-4 permissions, 5 the queue, 6 its assignees (prefetched once, for
    # the output and the progress), 7 items, 8 verdicts, 9 resolutions.
    url = client.get("/api/v1/review-queues/").json()["results"][0]["url"]
    queries, _ = get_counted(client, url)
    assert queries == 9
