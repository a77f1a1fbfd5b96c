"""What a score says about the attack (memory.review.score_signals), and the page colouring
scores by it rather than by the word True."""

from __future__ import annotations

import re
import uuid

import pytest

from memory.review.score_signals import (
    ScorerShape,
    ScoreSignal,
    TrueMeans,
    read_score,
    true_means,
)
from memory.storage.services import attack_result_save, message_add, score_add
from memory.storage.specs import AttackResultSpec, PieceSpec, ScoreSpec
from redteam.core import identifiers as ids
from tests.conftest import logged_in

REFUSAL = ScorerShape("SelfAskRefusalScorer")
SUBSTRING = ScorerShape("SubStringScorer")
INVERTED_REFUSAL = ScorerShape("TrueFalseInverterScorer", (REFUSAL,))
LIKERT = ScorerShape("SelfAskLikertScorer")


def signal(value, scorer, *, objective=False, score_type="true_false") -> ScoreSignal:
    return read_score(
        score_type=score_type, score_value=value, scorer=scorer, is_objective=objective
    ).signal


@pytest.mark.parametrize(
    ("scorer", "expected"),
    [
        (REFUSAL, TrueMeans.FAILURE),
        (SUBSTRING, TrueMeans.SUCCESS),
        (ScorerShape("SelfAskTrueFalseScorer"), TrueMeans.SUCCESS),
        (ScorerShape("HumanScorer"), TrueMeans.SUCCESS),
        (INVERTED_REFUSAL, TrueMeans.SUCCESS),
        (ScorerShape("TrueFalseInverterScorer", (SUBSTRING,)), TrueMeans.FAILURE),
        # Inverting an inverter is the scorer itself.
        (ScorerShape("TrueFalseInverterScorer", (INVERTED_REFUSAL,)), TrueMeans.FAILURE),
        # An inverter whose sub-scorer was never stored: no direction to turn round.
        (ScorerShape("TrueFalseInverterScorer"), TrueMeans.UNKNOWN),
        # Composites: the sub-scorers' direction when they agree, unknown when they do not.
        (ScorerShape("TrueFalseCompositeScorer", (REFUSAL, REFUSAL)), TrueMeans.FAILURE),
        (ScorerShape("TrueFalseCompositeScorer", (REFUSAL, SUBSTRING)), TrueMeans.UNKNOWN),
        (ScorerShape("FloatScaleThresholdScorer", (LIKERT,)), TrueMeans.SUCCESS),
        (ScorerShape("PromptShieldScorer"), TrueMeans.UNKNOWN),
    ],
)
def test_what_a_scorers_true_means(scorer, expected):
    assert true_means(scorer) is expected


def test_a_refusal_scorers_true_is_the_attack_failing():
    assert signal("True", REFUSAL) is ScoreSignal.FAILED
    assert signal("false", REFUSAL) is ScoreSignal.SUCCEEDED
    reading = read_score(
        score_type="true_false", score_value="True", scorer=REFUSAL, is_objective=False
    )
    assert "SelfAskRefusalScorer" in reading.reason and "attack failed" in reading.reason


def test_the_objective_scorers_true_is_success_whatever_its_class():
    # PyRIT decides the outcome from the objective scorer: True is the objective achieved,
    # even for a bare refusal scorer someone configured as the objective scorer.
    for scorer in (INVERTED_REFUSAL, SUBSTRING, REFUSAL):
        assert signal("True", scorer, objective=True) is ScoreSignal.SUCCEEDED
        assert signal("False", scorer, objective=True) is ScoreSignal.FAILED
    reading = read_score(
        score_type="true_false", score_value="True", scorer=REFUSAL, is_objective=True
    )
    assert "objective achieved" in reading.reason


def test_measures_and_unreadable_values_are_neutral():
    assert signal("0.9", LIKERT, score_type="float_scale") is ScoreSignal.NEUTRAL
    assert signal("0.9", LIKERT, objective=True, score_type="float_scale") is ScoreSignal.NEUTRAL
    assert signal(None, SUBSTRING) is ScoreSignal.NEUTRAL
    assert signal("maybe", SUBSTRING, objective=True) is ScoreSignal.NEUTRAL
    assert signal("True", ScorerShape("PromptShieldScorer")) is ScoreSignal.NEUTRAL
    assert signal(" TRUE ", SUBSTRING) is ScoreSignal.SUCCEEDED
    assert ScoreSignal.NEUTRAL.label == "neutral"


# --- on the page -----------------------------------------------------------------------------

REFUSAL_ID = ids.ComponentIdentifier(
    "SelfAskRefusalScorer",
    "pyrit.score.true_false.self_ask_refusal_scorer",
    {"scorer_type": "true_false"},
)
OBJECTIVE_ID = ids.ComponentIdentifier(
    "TrueFalseInverterScorer",
    "pyrit.score.true_false.true_false_inverter_scorer",
    {"scorer_type": "true_false"},
    {"sub_scorers": [REFUSAL_ID]},
)
ATTACK_ID = ids.ComponentIdentifier(
    "RedTeamingAttack",
    "pyrit.executor.attack.multi_turn.red_teaming",
    {},
    {"objective_scorer": OBJECTIVE_ID},
)


def refused_then_complied() -> tuple[str, str, str]:
    """Two answers: a refusal (the refusal scorer says True, the objective scorer False)
    and a compliance (the objective scorer says True, the attack's last score)."""
    conversation_id = str(uuid.uuid4())
    refusal = PieceSpec(original_value="I can't help with that.")
    compliance = PieceSpec(original_value="Sure, here it is.")
    message_add(
        conversation_id=conversation_id, role="user", pieces=[PieceSpec(original_value="Tell me.")]
    )
    message_add(conversation_id=conversation_id, role="assistant", pieces=[refusal])
    message_add(
        conversation_id=conversation_id, role="user", pieces=[PieceSpec(original_value="Please.")]
    )
    message_add(conversation_id=conversation_id, role="assistant", pieces=[compliance])

    def add(piece, scorer, value):
        return score_add(
            spec=ScoreSpec(
                score_type="true_false",
                score_value=value,
                scorer_class_identifier=scorer,
                message_piece_id=piece.id,
                objective="Tell me",
            )
        )

    add(refusal, REFUSAL_ID, "True")
    add(refusal, OBJECTIVE_ID, "False")
    last = add(compliance, OBJECTIVE_ID, "True")
    attack, _ = attack_result_save(
        spec=AttackResultSpec(
            conversation_id=conversation_id,
            objective="Tell me",
            outcome="success",
            attack_identifier=ATTACK_ID,
            last_score_id=last.id,
        )
    )
    return str(attack.pk), str(refusal.id), str(compliance.id)


def _badges(html: str, piece_id: str) -> list[tuple[str, str]]:
    """(signal, value) of every true/false badge under one piece."""
    start = html.index(f'id="scores-{piece_id}"')
    block = html[start : html.index("</article>", start)]
    return re.findall(r'data-signal="(\w+)">(True|False)', block)


@pytest.mark.django_db
def test_a_refusal_scorers_true_is_not_shown_as_success(viewer):
    attack_pk, refusal, compliance = refused_then_complied()
    html = logged_in(viewer).get(f"/attacks/{attack_pk}/").content.decode()
    # Under the refusal: the refusal scorer's True and the objective scorer's False both say
    # the attack failed there; under the compliance the objective scorer's True succeeded.
    assert _badges(html, refusal) == [("failed", "True"), ("failed", "False")]
    assert _badges(html, compliance) == [("succeeded", "True")]
    assert "badge-succeeded" not in html[html.index(f'id="scores-{refusal}"') :][:3000]
    assert 'id="score-legend"' in html
    assert "auxiliary scorer whose True means the attack failed" in html
