"""The demo command fills an empty database with every kind of memory the UI must show."""

from __future__ import annotations

import itertools
import re

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from memory.models import (
    AttackResult,
    Conversation,
    MediaBlob,
    Message,
    MessagePiece,
    RelatedConversation,
    Score,
)
from redteam.core.choices import AttackOutcome, ChatMessageRole, ConversationType, ScoreType
from seeds.models import Seed, SeedGroup

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings):
    call_command("demo", verbosity=0)


def test_demo_covers_all_outcomes_and_attack_kinds(demo):
    assert set(AttackResult.objects.values_list("outcome", flat=True)) == set(AttackOutcome.values)
    kinds = set(AttackResult.objects.values_list("attack_identifier__class_name", flat=True))
    assert {"PromptSendingAttack", "RedTeamingAttack", "TreeOfAttacksWithPruningAttack"} <= kinds
    targets = set(
        Conversation.objects.exclude(target_identifier=None).values_list(
            "target_identifier__params__model_name", flat=True
        )
    )
    assert len(targets) >= 3
    errored = AttackResult.objects.get(outcome=AttackOutcome.ERROR)
    assert errored.error_type == "ConnectionError" and errored.error_traceback


def test_demo_has_multimodal_converted_and_blocked_pieces(demo):
    assert MediaBlob.objects.filter(content_type="image/png").exists()
    assert MediaBlob.objects.filter(content_type="audio/wav").exists()
    image = MessagePiece.objects.filter(original_value_data_type="image_path").first()
    assert image.original_media is not None
    assert image.original_value_sha256 == image.original_media.sha256
    text_to_image = MessagePiece.objects.filter(
        original_value_data_type="text", converted_value_data_type="image_path"
    ).first()
    assert text_to_image.converted_media.content_type == "image/png"
    assert text_to_image.converters.get().identifier.class_name == "QRCodeConverter"
    converted = MessagePiece.objects.filter(
        original_value_data_type="text", converted_value_data_type="text"
    ).exclude(converted_value=F("original_value"))
    assert converted.exists()
    assert MessagePiece.objects.filter(response_error="blocked").exists()


def test_demo_has_threads_scores_and_related_conversations(demo):
    roles = set(Message.objects.values_list("role", flat=True))
    assert {
        ChatMessageRole.SYSTEM,
        ChatMessageRole.USER,
        ChatMessageRole.ASSISTANT,
        ChatMessageRole.SIMULATED_ASSISTANT,
    } <= roles
    assert Message.objects.filter(sequence__gte=6).exists()  # multi-turn
    types = set(RelatedConversation.objects.values_list("conversation_type", flat=True))
    assert {ConversationType.ADVERSARIAL, ConversationType.PRUNED} <= types
    assert set(Score.objects.values_list("score_type", flat=True)) == {
        ScoreType.TRUE_FALSE,
        ScoreType.FLOAT_SCALE,
    }
    assert not Score.objects.filter(score_rationale=None).exists()
    decided = AttackResult.objects.filter(outcome=AttackOutcome.SUCCESS).first()
    assert decided.last_score.get_value() is True
    assert decided.labels and decided.targeted_harm_categories
    assert decided.label_index.filter(key="operator").exists()


def test_demo_has_seed_datasets_and_groups(demo):
    assert Seed.objects.filter(seed_type="objective").count() >= 8
    assert Seed.objects.filter(is_general_technique=True, parameters=["prompt"]).exists()
    group = SeedGroup.objects.get(alias="badge")
    ordered = list(group.seeds.in_group_order().values_list("seed_type", "sequence", "role"))
    assert ordered[0][0] == "objective"
    assert [s for s in ordered[1:]] == sorted(ordered[1:], key=lambda s: s[1])
    assert group.seeds.filter(media__content_type="image/png").exists()


def test_demo_refuses_a_non_empty_database_unless_if_empty(demo):
    attacks = AttackResult.objects.count()
    with pytest.raises(CommandError):
        call_command("demo", verbosity=0)
    call_command("demo", "--if-empty", verbosity=0)
    assert AttackResult.objects.count() == attacks


def test_executed_turns_agree_with_the_outcome_reason_and_the_thread(demo):
    """A reason saying "achieved in 3 turns" sits next to "Executed turns 3"; a prepended
    exchange (Crescendo's opening, answered by a simulated assistant) is no executed turn."""
    checked = 0
    for attack in AttackResult.objects.exclude(outcome=AttackOutcome.ERROR):
        roles = list(
            Message.objects.filter(conversation=attack.conversation)
            .order_by("sequence")
            .values_list("role", flat=True)
        )
        prepended = sum(
            1
            for role, following in itertools.pairwise(roles)
            if role == ChatMessageRole.USER and following == ChatMessageRole.SIMULATED_ASSISTANT
        )
        assert attack.executed_turns == roles.count(ChatMessageRole.USER) - prepended, attack
        stated = re.search(r"in (\d+) turns", attack.outcome_reason or "")
        if stated:
            assert attack.executed_turns == int(stated.group(1)), attack.outcome_reason
            checked += 1
    assert checked >= 3
