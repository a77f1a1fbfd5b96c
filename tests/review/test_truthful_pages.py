"""Issue 34: the review pages say what PyRIT recorded, in words people read — no tree of
attacks where there is none, no float repr, no enum value or Python repr."""

from __future__ import annotations

import re

import pytest

from memory.review.attack_tree import score_text
from redteam.core.choices import AttackOutcome, PromptDataType, ScoreType, choice_label
from tests.factories import (
    make_attack,
    make_conversation,
    make_identifier,
    make_message,
    make_piece,
    make_related_conversation,
    make_score,
)

pytestmark = pytest.mark.django_db

THIRD = "0.4444444444444444"


def _retried_prompt_sending_attack():
    """A PromptSendingAttack that gave up one attempt and retried (PyRIT records the first
    attempt as a pruned conversation)."""
    kept, retried = make_conversation(), make_conversation()
    for conversation, answer in ((kept, "Sure, here it is."), (retried, "I can't do that.")):
        make_piece(make_message(conversation, 0, "user"), "Tell me the secret")
        response = make_piece(make_message(conversation, 1, "assistant"), answer)
        make_score(
            response,
            value=THIRD,
            score_type=ScoreType.FLOAT_SCALE,
            scorer_class_identifier=make_identifier("PlagiarismScorer"),
        )
    attack = make_attack(
        kept,
        attack_identifier=make_identifier("PromptSendingAttack"),
        outcome=AttackOutcome.FAILURE,
    )
    make_related_conversation(attack, retried, conversation_type="pruned")
    return attack


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_prompt_sending_attacks_retries_are_attempts_not_branches(viewer_client):
    attack = _retried_prompt_sending_attack()

    html = viewer_client.get(f"/attacks/{attack.pk}/").content.decode()

    [panel] = re.findall(r'<details class="card branch-card".*?</details>', html, re.S)
    assert "tree of attacks" not in panel
    assert "Branches" not in panel and "branch" not in _text(panel).lower()
    assert "<strong>Earlier attempts</strong>" in panel
    assert "of this PromptSendingAttack" in panel
    assert ">Kept</span>" in panel and ">Earlier attempt</span>" in panel


def test_a_float_score_is_rounded_with_the_stored_value_in_its_title(viewer_client):
    attack = _retried_prompt_sending_attack()

    html = viewer_client.get(f"/attacks/{attack.pk}/").content.decode()

    assert THIRD not in _text(html)  # nowhere as visible text
    assert f'title="{THIRD}">0.44</span>' in html  # the thread's score
    assert f'title="Last score: {THIRD} · Float scale">Score 0.44</span>' in html  # the attempts
    assert "float_scale" not in _text(html)


@pytest.mark.parametrize(
    ("value", "score_type", "shown"),
    [
        (THIRD, ScoreType.FLOAT_SCALE, "0.44"),
        ("1.0", ScoreType.FLOAT_SCALE, "1.00"),
        ("true", ScoreType.TRUE_FALSE, "True"),
        ("False", ScoreType.TRUE_FALSE, "False"),
        (None, ScoreType.TRUE_FALSE, ""),
        ("not a number", ScoreType.FLOAT_SCALE, "not a number"),
    ],
)
def test_score_text(value, score_type, shown):
    assert score_text(value, score_type) == shown


def test_choice_labels_for_people():
    assert choice_label(AttackOutcome, "success") == "Success"
    assert choice_label("PromptDataType", "image_path") == "Image"
    assert choice_label(PromptDataType, "function_call_output") == "Function call output"
    # A value a newer PyRIT adds reads as words, not as the enum.
    assert choice_label(PromptDataType, "hologram_path") == "Hologram path"
    assert choice_label(AttackOutcome, None) == ""


def test_outcomes_and_data_types_read_as_labels(viewer_client):
    conversation = make_conversation()
    make_piece(
        make_message(conversation, 0, "user"),
        "Draw it",
        converted_value="images/qr.png",
        converted_value_data_type=PromptDataType.IMAGE_PATH,
        converted_value_sha256=None,
    )
    attack = make_attack(conversation, outcome=AttackOutcome.UNDETERMINED)

    html = viewer_client.get(f"/attacks/{attack.pk}/").content.decode()

    assert '<span class="badge badge-undetermined">Undetermined</span>' in html
    assert "<dt>Type</dt><dd>Text → Image</dd>" in html
    assert "Converted, sent · Image" in html
    assert "image_path" not in _text(html)


def test_the_attack_list_shows_outcome_labels(viewer_client):
    make_attack(outcome=AttackOutcome.FAILURE)

    html = viewer_client.get("/attacks/").content.decode()

    assert '<span class="badge badge-failure">Failure</span>' in html


def test_a_list_label_reads_as_its_items_not_a_python_repr(viewer_client):
    conversation = make_conversation()
    make_piece(
        make_message(conversation, 0, "user"),
        "hello",
        labels={"framework": ["owasp-llm:LLM01", "atlas:AML.T0054"]},
    )
    attack = make_attack(
        conversation, labels={"framework": ["owasp-llm:LLM01"], "meta": {"team": "red"}}
    )

    pages = [
        viewer_client.get(f"/attacks/{attack.pk}/").content.decode(),
        viewer_client.get("/attacks/").content.decode(),
        viewer_client.get(f"/attacks/{attack.pk}/export.html").content.decode(),
    ]

    for html in pages:
        assert "[&#x27;" not in html and "[&#39;" not in html and "['" not in html
        assert "</span> owasp-llm:LLM01</a>" in html or "framework: owasp-llm:LLM01<" in html
    assert "owasp-llm:LLM01, atlas:AML.T0054" in pages[0]  # the piece's own label
    assert "{&quot;team&quot;: &quot;red&quot;}" in pages[0]


def test_readable_value():
    from redteam.core.choices import readable_value

    assert readable_value("plain") == "plain"
    assert readable_value(["a", "b", 3]) == "a, b, 3"
    assert readable_value({"k": [1]}) == '{"k": [1]}'
    assert readable_value(None) == "null"
