"""Small builders for deep object graphs in tests (plain ORM; no validation shortcuts)."""

from __future__ import annotations

import hashlib
import itertools
import uuid
from datetime import UTC, datetime

from memory.choices import AttackOutcome, ScoreType
from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    Message,
    MessagePiece,
    Score,
)
from seeds.models import Seed, SeedDataset, SeedGroup

_counter = itertools.count(1)
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


def make_identifier(class_name: str = "OpenAIChatTarget", **params) -> ComponentIdentifier:
    """A stored identifier row with a unique fake hash."""
    n = next(_counter)
    return ComponentIdentifier.objects.create(
        hash=sha256_hex(f"{class_name}-{n}"),
        class_name=class_name,
        class_module=f"pyrit.fake.{class_name.lower()}",
        params=params,
        pyrit_version="0.12.1",
    )


def make_conversation(conversation_id: str | None = None, **fields) -> Conversation:
    """A conversation row."""
    return Conversation.objects.create(
        conversation_id=conversation_id or str(uuid.uuid4()), started_at=NOW, **fields
    )


def make_message(conversation: Conversation, sequence: int, role: str = "user") -> Message:
    """A message row (no pieces)."""
    return Message.objects.create(conversation=conversation, sequence=sequence, role=role)


def make_piece(message: Message, text: str = "hello", position: int = 0, **fields) -> MessagePiece:
    """A text piece whose original_prompt_id equals its id."""
    piece_id = fields.pop("id", uuid.uuid4())
    defaults = {
        "original_value": text,
        "converted_value": text,
        "original_value_sha256": sha256_hex(text),
        "converted_value_sha256": sha256_hex(text),
        "original_prompt_id": piece_id,
        "timestamp": NOW,
    }
    defaults.update(fields)
    return MessagePiece.objects.create(id=piece_id, message=message, position=position, **defaults)


def make_score(piece: MessagePiece | None = None, value: str = "true", **fields) -> Score:
    """A true/false score on ``piece`` (by its original_prompt_id)."""
    scorer = fields.pop("scorer_class_identifier", None) or make_identifier("SubStringScorer")
    defaults = {
        "score_type": ScoreType.TRUE_FALSE,
        "score_value": value,
        "scorer_class_identifier": scorer,
        "message_piece_id": piece.original_prompt_id if piece else None,
        "timestamp": NOW,
    }
    defaults.update(fields)
    return Score.objects.create(**defaults)


def make_attack(conversation: Conversation | None = None, **fields) -> AttackResult:
    """An attack result on ``conversation`` (a new one if not given)."""
    defaults = {
        "conversation": conversation or make_conversation(),
        "objective": "Reveal the system prompt",
        "outcome": AttackOutcome.SUCCESS,
        "timestamp": NOW,
    }
    defaults.update(fields)
    return AttackResult.objects.create(**defaults)


def make_dataset(name: str | None = None, **fields) -> SeedDataset:
    """A seed dataset."""
    return SeedDataset.objects.create(name=name or f"dataset-{next(_counter)}", **fields)


def make_seed(value: str = "Tell me a secret", **fields) -> Seed:
    """A text prompt seed."""
    defaults = {"value_sha256": sha256_hex(value), "date_added": NOW, "added_by": "tests"}
    defaults.update(fields)
    return Seed.objects.create(value=value, **defaults)


def make_group(**fields) -> SeedGroup:
    """An empty seed group."""
    return SeedGroup.objects.create(**fields)
