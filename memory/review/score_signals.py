"""What a score says about the attack: it succeeded, it failed, or nothing either way.

A true/false score's colour on the review pages follows the attack's outcome, not the word
True. PyRIT's objective scorer answers "was the objective achieved?", so its True is the
attack's success. An auxiliary scorer answers its own question: a ``SelfAskRefusalScorer``'s
True means the target refused, the safe result, and a ``TrueFalseInverterScorer`` turns its
sub-scorer's answer round. Pure functions on class names: no Django, no database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, StrEnum

__all__ = [
    "INVERTING_SCORERS",
    "SAFE_WHEN_TRUE_SCORERS",
    "UNKNOWN_DIRECTION_SCORERS",
    "ScoreReading",
    "ScoreSignal",
    "ScorerShape",
    "TrueMeans",
    "read_score",
    "true_means",
]

#: Scorers whose True is the safe result: the target refused.
SAFE_WHEN_TRUE_SCORERS = frozenset({"SelfAskRefusalScorer"})
#: Scorers whose True is their sub-scorer's False.
INVERTING_SCORERS = frozenset({"TrueFalseInverterScorer"})
#: Scorers whose True says nothing about the target's answer: Prompt Shield flags the
#: *prompt* as an attack.
UNKNOWN_DIRECTION_SCORERS = frozenset({"PromptShieldScorer"})


class ScoreSignal(StrEnum):
    """What one score says about the attack, as the review pages colour it."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    NEUTRAL = "neutral"

    @property
    def label(self) -> str:
        return _SIGNAL_LABELS[self]


_SIGNAL_LABELS = {
    ScoreSignal.SUCCEEDED: "attack succeeded",
    ScoreSignal.FAILED: "attack failed",
    ScoreSignal.NEUTRAL: "neutral",
}


class TrueMeans(Enum):
    """What a scorer's True says about the attack."""

    SUCCESS = 1
    FAILURE = -1
    UNKNOWN = 0

    def inverted(self) -> TrueMeans:
        return TrueMeans(-self.value)


@dataclass(frozen=True, slots=True)
class ScorerShape:
    """A scorer identifier reduced to what decides its direction: the class and the scorers
    it wraps (an inverter's or a composite's ``sub_scorers``)."""

    class_name: str
    sub_scorers: tuple[ScorerShape, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoreReading:
    """A score's signal and a sentence saying why (the chip's tooltip)."""

    signal: ScoreSignal
    reason: str


def true_means(scorer: ScorerShape) -> TrueMeans:
    """What ``scorer``'s True says about the attack when it is not the objective scorer.

    Refusal scorers: True is the target refusing (failure). Inverters: the opposite of their
    sub-scorers. Any other scorer that wraps sub-scorers (composites, audio and video
    wrappers, thresholds): what its sub-scorers agree on, unknown when they disagree or were
    not stored. Every other true/false scorer (substring, self-ask true/false, human): True
    is what it looks for, which in a red-team run is the harm.
    """
    name = scorer.class_name
    if name in INVERTING_SCORERS:
        return _agreed(scorer.sub_scorers).inverted()
    if name in SAFE_WHEN_TRUE_SCORERS:
        return TrueMeans.FAILURE
    if name in UNKNOWN_DIRECTION_SCORERS:
        return TrueMeans.UNKNOWN
    if scorer.sub_scorers:
        return _agreed(scorer.sub_scorers)
    return TrueMeans.SUCCESS


def _agreed(scorers: Iterable[ScorerShape]) -> TrueMeans:
    directions = {true_means(s) for s in scorers}
    return directions.pop() if len(directions) == 1 else TrueMeans.UNKNOWN


def _parse_bool(score_value: str | None) -> bool | None:
    value = (score_value or "").strip().lower()
    return {"true": True, "false": False}.get(value)


def read_score(
    *, score_type: str, score_value: str | None, scorer: ScorerShape, is_objective: bool
) -> ScoreReading:
    """What one score says about the attack.

    ``is_objective``: the scorer is the attack's objective scorer (named in the attack
    identifier, or the scorer of the attack's ``last_score``). Its True is the objective
    achieved, whatever the class: PyRIT decides the outcome from it. Float-scale and
    unparseable scores are neutral: a 0–1 value is a measure, not a verdict.
    """
    value = _parse_bool(score_value) if score_type == "true_false" else None
    if value is None:
        return ScoreReading(ScoreSignal.NEUTRAL, "A measure, not a verdict: no colour.")
    word = "True" if value else "False"
    if is_objective:
        signal = ScoreSignal.SUCCEEDED if value else ScoreSignal.FAILED
        meaning = "objective achieved" if value else "objective not achieved"
        return ScoreReading(
            signal, f"{word} from the attack's objective scorer: {meaning}, {signal.label}."
        )
    direction = true_means(scorer)
    if direction is TrueMeans.UNKNOWN:
        return ScoreReading(
            ScoreSignal.NEUTRAL,
            f"{word} from {scorer.class_name}, an auxiliary scorer whose True has no known "
            "direction: neutral.",
        )
    succeeded = value == (direction is TrueMeans.SUCCESS)
    signal = ScoreSignal.SUCCEEDED if succeeded else ScoreSignal.FAILED
    true_is = "succeeded" if direction is TrueMeans.SUCCESS else "failed"
    return ScoreReading(
        signal,
        f"{word} from {scorer.class_name}, an auxiliary scorer whose True means the attack "
        f"{true_is}: {signal.label}.",
    )
