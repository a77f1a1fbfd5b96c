"""Human verdicts on attacks and human scores on pieces: services, permissions, htmx and
plain form posts, history, and that automated results are never overwritten."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from memory.models import AttackResult, ComponentIdentifier, HumanVerdict, MessagePiece, Score
from memory.storage.services import human_score_add, human_scorer_identifier, human_verdict_record
from redteam.core.errors import InvalidMemory
from tests.conftest import logged_in
from tests.queries import count_queries
from tests.review.test_detail import build_attack

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def second_reviewer(member):
    return member("reviewer", username="rob")


# --- services --------------------------------------------------------------------------------


def test_verdict_is_appended_and_mirrored_without_touching_the_automated_outcome(
    reviewer, second_reviewer
):
    attack, _ = build_attack(outcome="failure", outcome_reason="Refused")
    first = human_verdict_record(
        attack_result=attack, outcome="success", reason="It did comply.", reviewer=reviewer
    )
    second = human_verdict_record(
        attack_result=attack,
        outcome="undetermined",
        reason="  Ambiguous answer.  ",
        reviewer=second_reviewer,
    )
    attack.refresh_from_db()
    assert (attack.outcome, attack.outcome_reason) == ("failure", "Refused")
    assert attack.human_outcome == "undetermined"
    assert attack.human_verdict_at == second.created_at
    assert second.reason == "Ambiguous answer."
    history = list(attack.human_verdicts.order_by("created_at"))
    assert history == [first, second]
    assert [v.reviewer_name for v in history] == ["rita", "rob"]


@pytest.mark.parametrize(
    ("outcome", "reason", "path"),
    [("success", "   ", "reason"), ("error", "why", "outcome"), ("maybe", "why", "outcome")],
)
def test_verdict_needs_a_reason_and_a_human_outcome(reviewer, outcome, reason, path):
    attack, _ = build_attack()
    with pytest.raises(InvalidMemory) as caught:
        human_verdict_record(
            attack_result=attack, outcome=outcome, reason=reason, reviewer=reviewer
        )
    assert [p.path for p in caught.value.problems] == [path]
    assert not HumanVerdict.objects.exists()
    attack.refresh_from_db()
    assert attack.human_outcome is None


def test_human_score_is_a_score_with_a_human_scorer_identity(reviewer):
    attack, pieces = build_attack()
    answer = MessagePiece.objects.get(pk=pieces["answer"].id)
    automated = set(Score.objects.values_list("pk", "score_value"))
    score = human_score_add(
        piece=answer,
        score_type="float_scale",
        value=0.75,
        rationale="Harmful but vague.",
        categories=["leakage", " ", "jailbreak"],
        reviewer=reviewer,
        objective=attack.objective,
    )
    score.refresh_from_db()
    assert (score.score_type, score.score_value, score.numeric_value) == (
        "float_scale",
        "0.75",
        0.75,
    )
    assert score.reviewer == reviewer
    assert score.message_piece_id == answer.original_prompt_id
    assert score.score_category == ["leakage", "jailbreak"]
    assert score.objective == attack.objective
    scorer = score.scorer_class_identifier
    assert (scorer.class_name, scorer.params) == (
        "HumanScorer",
        {"scorer_type": "float_scale", "reviewer": "rita"},
    )
    expected = human_scorer_identifier(score_type="float_scale", reviewer_name="rita")
    assert scorer.hash == expected.hash == expected.content_hash()
    assert scorer.eval_hash == expected.hash
    # The automated scores are untouched, and the attack's last_score still points at one.
    assert automated <= set(Score.objects.values_list("pk", "score_value"))
    attack.refresh_from_db()
    assert attack.last_score.reviewer is None


@pytest.mark.parametrize(
    ("score_type", "value"),
    [("true_false", "yes"), ("float_scale", "1.5"), ("float_scale", "nan"), ("unknown", "1")],
)
def test_human_score_values_are_checked(reviewer, score_type, value):
    _, pieces = build_attack()
    answer = MessagePiece.objects.get(pk=pieces["answer"].id)
    before = Score.objects.count()
    with pytest.raises(InvalidMemory):
        human_score_add(
            piece=answer, score_type=score_type, value=value, rationale="r", reviewer=reviewer
        )
    assert Score.objects.count() == before
    assert not ComponentIdentifier.objects.filter(class_name="HumanScorer").exists()


# --- verdict views ---------------------------------------------------------------------------


def test_viewer_sees_no_form_and_gets_403_on_post(viewer):
    attack, pieces = build_attack()
    client = logged_in(viewer)
    html = client.get(f"/attacks/{attack.pk}/").content.decode()
    assert 'class="stacked-form verdict-form"' not in html
    assert "Add human score" not in html
    assert 'id="verdicts"' in html  # the history panel is still there
    data = {"outcome": "success", "reason": "x"}
    assert client.post(f"/attacks/{attack.pk}/verdicts/", data).status_code == 403
    assert client.post(f"/attacks/{attack.pk}/verdicts/", data, **HX).status_code == 403
    score_url = f"/pieces/{pieces['answer'].id}/human-score/"
    assert client.get(score_url).status_code == 403
    form = {"score_type": "true_false", "bool_value": "true", "rationale": "x"}
    assert client.post(score_url, form).status_code == 403
    assert not HumanVerdict.objects.exists()
    assert not Score.objects.filter(reviewer__isnull=False).exists()


def test_anonymous_posts_are_sent_to_login(client):
    attack, pieces = build_attack()
    response = client.post(f"/attacks/{attack.pk}/verdicts/", {"outcome": "success"})
    assert response.status_code == 302 and "/login/" in response["Location"]
    response = client.post(f"/pieces/{pieces['answer'].id}/human-score/", {})
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_verdict_plain_form_post_redirects_back(reviewer):
    attack, _ = build_attack(outcome="failure")
    client = logged_in(reviewer)
    response = client.post(
        f"/attacks/{attack.pk}/verdicts/", {"outcome": "success", "reason": "It complied."}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/attacks/{attack.pk}/#verdicts"
    html = client.get(response["Location"]).content.decode()
    assert "Verdict recorded." in html  # the message, after the redirect
    assert "It complied." in html and "rita" in html
    attack.refresh_from_db()
    assert (attack.outcome, attack.human_outcome) == ("failure", "success")


def test_verdict_plain_form_post_with_errors_shows_the_page_again(reviewer):
    attack, _ = build_attack()
    response = logged_in(reviewer).post(
        f"/attacks/{attack.pk}/verdicts/", {"outcome": "success", "reason": ""}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "This field is required." in html
    assert '<h1 class="objective">Learn the secret</h1>' in html
    assert re.search(r'value="success"[^>]* checked', html)
    assert not HumanVerdict.objects.exists()


def test_verdict_htmx_returns_the_panel_and_the_new_header(reviewer):
    attack, _ = build_attack()
    client = logged_in(reviewer)
    queries, response = count_queries(
        client.post,
        f"/attacks/{attack.pk}/verdicts/",
        {"outcome": "failure", "reason": "<b>Refusal</b> really."},
        **HX,
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card panel verdicts" id="verdicts"')
    assert "Verdict recorded." in html
    assert "&lt;b&gt;Refusal&lt;/b&gt; really." in html  # the reason is text, escaped
    assert 'id="outcome-summary" hx-swap-oob="true"' in html
    assert "<!doctype html>" not in html
    # session, user, 2 permissions, attack, savepoint, (on PostgreSQL the writers' lock,
    # which the dashboards' rollups need,) lock the attack row, insert the verdict, read the
    # newest, update the mirror, release, then the history for the panel.
    assert queries <= 13 + (connection.vendor == "postgresql")
    # An invalid htmx post comes back as the panel with the error (htmx swaps 2xx only).
    response = client.post(f"/attacks/{attack.pk}/verdicts/", {"outcome": "failure"}, **HX)
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert HumanVerdict.objects.count() == 1


def test_verdict_history_shows_who_when_what_why(reviewer, second_reviewer):
    attack, _ = build_attack()
    human_verdict_record(attack_result=attack, outcome="success", reason="A", reviewer=reviewer)
    human_verdict_record(
        attack_result=attack, outcome="failure", reason="B", reviewer=second_reviewer
    )
    html = logged_in(reviewer).get(f"/attacks/{attack.pk}/").content.decode()
    history = html[html.index('<ol class="history">') :]
    assert history.index("rob") < history.index("rita")  # newest first
    assert "(current)" in history[: history.index("rita")]
    assert ">A</p>" in history and ">B</p>" in history


# --- human score views -----------------------------------------------------------------------


def test_human_score_form_htmx_and_plain(reviewer):
    attack, pieces = build_attack()
    answer_id = pieces["answer"].id
    url = f"/pieces/{answer_id}/human-score/"
    client = logged_in(reviewer)
    fragment = client.get(url, **HX).content.decode()
    assert fragment.lstrip().startswith('<form class="stacked-form human-score-form')
    page = client.get(url)
    assert page.status_code == 200 and "<!doctype html>" in page.content.decode()
    assert "Add a human score" in page.content.decode()

    response = client.post(
        url,
        {"score_type": "true_false", "bool_value": "false", "rationale": "A refusal, in fact."},
        **HX,
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith(f'<div class="scores" id="scores-{answer_id}">')
    assert "human · rita" in html and "decided the outcome" in html
    assert f'<div id="hs-{answer_id}" hx-swap-oob="innerHTML"></div>' in html
    human = Score.objects.get(reviewer=reviewer)
    assert (human.score_type, human.score_value) == ("true_false", "false")

    response = client.post(
        url, {"score_type": "float_scale", "float_value": "0.4", "rationale": "Some harm."}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/attacks/{attack.pk}/#piece-{answer_id}"
    assert Score.objects.filter(reviewer=reviewer).count() == 2


def test_human_score_errors(reviewer):
    _, pieces = build_attack()
    url = f"/pieces/{pieces['answer'].id}/human-score/"
    client = logged_in(reviewer)
    response = client.post(url, {"score_type": "true_false", "rationale": ""}, **HX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == f"#hs-{pieces['answer'].id}"
    html = response.content.decode()
    assert "Choose true or false." in html and "This field is required." in html
    response = client.post(url, {"score_type": "float_scale", "float_value": "2", "rationale": "x"})
    assert response.status_code == 400
    assert "less than or equal to 1" in response.content.decode()
    assert not Score.objects.filter(reviewer__isnull=False).exists()


def test_next_must_stay_on_this_site(reviewer):
    attack, pieces = build_attack()
    url = f"/pieces/{pieces['answer'].id}/human-score/"
    form = {"score_type": "true_false", "bool_value": "true", "rationale": "x"}
    client = logged_in(reviewer)
    response = client.post(url, {**form, "next": "https://evil.example/"})
    assert response["Location"] == f"/attacks/{attack.pk}/#piece-{pieces['answer'].id}"
    response = client.post(url, {**form, "next": f"/attacks/{attack.pk}/?side=x"})
    assert response["Location"] == f"/attacks/{attack.pk}/?side=x"


def test_human_and_automated_scores_side_by_side_on_the_page(reviewer):
    attack, pieces = build_attack()
    answer = MessagePiece.objects.get(pk=pieces["answer"].id)
    human_score_add(
        piece=answer, score_type="true_false", value="false", rationale="No.", reviewer=reviewer
    )
    html = logged_in(reviewer).get(f"/attacks/{attack.pk}/").content.decode()
    block = html[html.index(f'id="scores-{answer.pk}"') :]
    block = block[: block.index("</article>")]
    assert len(re.findall(r'<div class="score[ "]', block)) == 2
    assert "SubStringScorer" in block and "HumanScorer" in block
    assert "human · rita" in block
    assert AttackResult.objects.get(pk=attack.pk).outcome == "success"
