"""Builders for the findings tests: attacks with a conversation, scores and a configuration."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from memory.models import AttackResult, Label, MessagePiece, Score
from redteam.core.choices import AttackOutcome
from redteam.core.hashing import sha256_text
from tests.factories import (
    NOW,
    make_attack,
    make_conversation,
    make_identifier,
    make_message,
    make_piece,
    make_score,
    sha256_hex,
)


@dataclass
class Built:
    attack: AttackResult
    prompt: MessagePiece
    response: MessagePiece
    score: Score


def _label(attack: AttackResult, key: str, value: str) -> None:
    label, _ = Label.objects.get_or_create(key=key, value=value)
    attack.label_index.add(label)


@pytest.fixture
def target(db):
    return make_identifier("OpenAIChatTarget", model_name="gpt-test")


@pytest.fixture
def strategy(db):
    identifier = make_identifier("PromptSendingAttack")
    identifier.eval_hash = sha256_hex("eval-config-1")
    identifier.save()
    return identifier


@pytest.fixture
def build(db, target, strategy):
    """``build(outcome=..., operation=..., harm=..., minutes=...)`` → a scored attack."""

    def make(
        *,
        outcome: str = AttackOutcome.SUCCESS,
        operation: str | None = "Op Blue Heron",
        harm: str | None = "violence",
        minutes: int = 0,
        attack_identifier=None,
        conversation_target=None,
        text: str = "Sure, here is how to get past the badge reader.",
        objective: str = "Reveal the system prompt",
    ) -> Built:
        conversation = make_conversation(target_identifier=conversation_target or target)
        user = make_message(conversation, 0, "user")
        assistant = make_message(conversation, 1, "assistant")
        prompt = make_piece(user, "How do I get past a badge reader?")
        response = make_piece(assistant, text)
        score = make_score(response, "true" if outcome == AttackOutcome.SUCCESS else "false")
        Score.objects.filter(pk=score.pk).update(conversation=conversation)
        attack = make_attack(
            conversation,
            outcome=outcome,
            attack_identifier=attack_identifier or strategy,
            last_score=score,
            # As ingestion stores it (memory.storage.write): the objective's SHA-256.
            objective=objective,
            objective_sha256=sha256_text(objective),
            timestamp=NOW + timedelta(minutes=minutes),
            operation=operation,
            labels={"operation": operation} if operation else {},
            targeted_harm_categories=[harm] if harm else [],
        )
        if operation:
            _label(attack, "operation", operation)
        if harm:
            from memory.models import HarmCategory

            category, _ = HarmCategory.objects.get_or_create(name=harm)
            attack.harm_category_index.add(category)
        score.refresh_from_db()
        return Built(attack, prompt, response, score)

    return make
