"""Blind review holds on every surface an unreviewed assignee can reach: the attack page, the
API, the admin (verdict list, search, the related-object pop-up, a verdict's page and its
history, the attack's page) and the human-label download. One rule decides
(``memory.storage.queues.blind_hidden_attacks``); leads and reviewers who already gave their
verdict see everything (docs/review.md, "Blind queues")."""

from __future__ import annotations

import pytest

from memory.findings.services import report_create
from tests.conftest import logged_in
from tests.markdown import gfm_text
from tests.review.test_human_labels import _attack
from tests.review.test_queue_pages import make_queue, verdict

pytestmark = pytest.mark.django_db

SECRET = "Ann-private-reasoning-7f3a"
VERDICTS = "/admin/memory/humanverdict/"


@pytest.fixture
def blind(lead, ann, bob):
    """A blind queue of Ann and Bob; Ann has judged its attack, Bob has not."""
    # In the queue (its filter: q=queue-a), with a text answer the human-label file can hold.
    attack, _ = _attack("queue-a #001", "Here is how.", outcome="failure")
    queue = make_queue(lead, [ann, bob], blind=True)
    recorded = verdict(attack, ann, "success", SECRET)
    return attack, queue, recorded


def _surfaces(attack, queue, recorded) -> dict[str, str]:
    return {
        "attack page": f"/attacks/{attack.pk}/",
        "attack page in queue mode": f"/attacks/{attack.pk}/?queue={queue.pk}",
        "API attack": f"/api/v1/attack-results/{attack.pk}/",
        "API attack list": "/api/v1/attack-results/",
        "API queue": f"/api/v1/review-queues/{queue.pk}/",
        "admin verdict list": VERDICTS,
        "admin verdict search": f"{VERDICTS}?q=ann",
        "admin verdict filter": f"{VERDICTS}?outcome__exact=success",
        "admin related-object pop-up": f"{VERDICTS}?_popup=1&_to_field=id",
        "admin verdict page": f"{VERDICTS}{recorded.pk}/change/",
        "admin verdict history": f"{VERDICTS}{recorded.pk}/history/",
        "admin attack page": f"/admin/memory/attackresult/{attack.pk}/change/",
        "human-label download": "/attacks/?format=human-labels",
    }


def _leaks(client, attack, queue, recorded) -> dict[str, int]:
    """Each surface that shows Ann's verdict (its reason, a link to it, the attack's human
    outcome or the attack's labelled row), with the status it answered."""
    leaks = {}
    for name, url in _surfaces(attack, queue, recorded).items():
        response = client.get(url, follow=True)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        html = body.decode()
        shown = (
            SECRET in html
            or f"{VERDICTS}{recorded.pk}/change/" in html
            or "field-human_outcome" in html
            or ("human-labels" in url and attack.objective in html)
        )
        if shown:
            leaks[name] = response.status_code
    return leaks


def test_an_unreviewed_assignee_sees_no_other_verdict_anywhere(blind, bob):
    attack, queue, recorded = blind
    assert logged_in(bob).get(VERDICTS).status_code == 200  # the admin is open to Bob
    assert _leaks(logged_in(bob), attack, queue, recorded) == {}


def test_after_their_own_verdict_and_for_a_lead_everything_shows(blind, bob, lead):
    attack, queue, recorded = blind
    expected = {
        "attack page",
        "attack page in queue mode",
        "admin verdict list",
        "admin verdict search",
        "admin verdict filter",
        "admin related-object pop-up",
        "admin verdict page",
        "admin verdict history",
        "admin attack page",
        "human-label download",
    }
    # The same walk finds the verdict where it is shown: the check above could fail.
    assert set(_leaks(logged_in(lead), attack, queue, recorded)) == expected
    verdict(attack, bob, "failure", "Bob's own reasoning")
    assert set(_leaks(logged_in(bob), attack, queue, recorded)) == expected


def test_a_reviewer_outside_the_queue_is_not_blinded(blind, member):
    cid = member("reviewer", username="cid")
    response = logged_in(cid).get(VERDICTS)
    assert SECRET in response.content.decode()


def test_the_hidden_verdict_s_page_answers_as_if_it_did_not_exist(blind, bob):
    _, _, recorded = blind
    response = logged_in(bob).get(f"{VERDICTS}{recorded.pk}/change/")
    assert response.status_code == 302 and response["Location"] == "/admin/"
    history = logged_in(bob).get(f"{VERDICTS}{recorded.pk}/history/")
    assert history.status_code == 302


# --- where the attack's human outcome shows: lists, filters, counts, downloads -----------------


def _count(client, query: str) -> int:
    response = client.get(f"/attacks/?{query}")
    assert response.status_code == 200
    return int(response["X-Result-Count"])


#: The badge of a success (only Ann's verdict says so; the stylesheet inlined in the HTML
#: file names the class too, so the whole element is looked for).
BADGE = 'class="badge badge-success">Success</span>'


def _outcome_views(client, attack) -> dict[str, object]:
    """What each surface says about the attack's human outcome (Ann said success; PyRIT
    recorded failure)."""
    csv_body = b"".join(client.get("/attacks/?format=csv").streaming_content).decode()
    json_body = b"".join(client.get("/attacks/?format=json").streaming_content).decode()
    markdown = client.get(f"/attacks/{attack.pk}/export.md").content.decode()
    html = client.get(f"/attacks/{attack.pk}/export.html").content.decode()
    listed = client.get("/attacks/").content.decode()
    return {
        "reviewed": _count(client, "has_human_verdict=true"),
        "not reviewed": _count(client, "has_human_verdict=false"),
        "outcome success": _count(client, "effective_outcome=success"),
        "outcome failure": _count(client, "effective_outcome=failure"),
        "list column": 'badge-human badge-plain">human</span>' in listed,
        "csv": ",success," in csv_body,
        "json": '"human_outcome": "success"' in json_body,
        "markdown": "**Human verdict:** Success" in markdown,
        "html": BADGE in html,
    }


SEEN = {
    "reviewed": 1,
    "not reviewed": 0,
    "outcome success": 1,
    "outcome failure": 0,
    "list column": True,
    "csv": True,
    "json": True,
    "markdown": True,
    "html": True,
}
UNSEEN = {
    "reviewed": 0,
    "not reviewed": 1,
    "outcome success": 0,
    "outcome failure": 1,
    "list column": False,
    "csv": False,
    "json": False,
    "markdown": False,
    "html": False,
}


def test_an_unreviewed_assignee_sees_the_automated_outcome_in_lists_and_downloads(blind, bob):
    attack, _, _ = blind
    assert _outcome_views(logged_in(bob), attack) == UNSEEN
    markdown = logged_in(bob).get(f"/attacks/{attack.pk}/export.md").content.decode()
    assert "**Outcome:** Failure" in markdown
    assert "Human verdict: hidden until you give yours (blind queue)" in gfm_text(markdown)


def test_a_lead_and_a_reviewer_after_their_verdict_see_the_human_outcome(blind, bob, lead):
    attack, _, _ = blind
    assert _outcome_views(logged_in(lead), attack) == SEEN
    # Bob's own verdict agrees with Ann's, so the newest outcome stays success.
    verdict(attack, bob, "success", "Bob's own reasoning")
    assert _outcome_views(logged_in(bob), attack) == SEEN


def _figures(user) -> dict[str, object]:
    """What the dashboard, the stats API and a report (source "human where reviewed") count
    of the one attack (Ann: success; PyRIT: failure)."""
    client = logged_in(user)
    summary = client.get("/api/v1/stats/summary?source=human").json()
    reviewed_summary = client.get(
        "/api/v1/stats/summary?source=human&has_human_verdict=true"
    ).json()
    page = client.get("/dashboards/?source=human").content.decode()
    report = report_create(actor=user, outcome_source="human")
    return {
        "api successes": summary["total"]["successes"],
        "api reviewed": summary["human_reviewed"],
        "api filter reviewed": reviewed_summary["total"]["attacks"],
        "dashboard success rate": "100.0 %" in page,
        "report successes": report.snapshot["executive"]["total"]["successes"],
        "report reviewed": report.snapshot["scope"]["attacks_with_verdict"],
    }


def test_figures_count_no_hidden_verdict_for_an_unreviewed_assignee(blind, bob, lead):
    seen = {
        "api successes": 1,
        "api reviewed": 1,
        "api filter reviewed": 1,
        "dashboard success rate": True,
        "report successes": 1,
        "report reviewed": 1,
    }
    assert _figures(lead) == seen
    assert _figures(bob) == {
        "api successes": 0,
        "api reviewed": 0,
        "api filter reviewed": 0,
        "dashboard success rate": False,
        "report successes": 0,
        "report reviewed": 0,
    }
    verdict(blind[0], bob, "success", "Bob's own reasoning")
    assert _figures(bob) == seen
