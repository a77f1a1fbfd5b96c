"""Small builders for deep object graphs in tests (plain ORM; no validation shortcuts)."""

from __future__ import annotations

import hashlib
import itertools
import uuid
from datetime import UTC, datetime

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    Message,
    MessagePiece,
    Score,
)
from redteam.core.choices import AttackOutcome, ScoreType
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
    # The last score's scorer, as ingestion keeps it on the attack.
    if "last_scorer" not in fields and "last_scorer_id" not in fields:
        if (score := fields.get("last_score")) is not None:
            defaults["last_scorer_id"] = score.scorer_class_identifier_id
        elif (score_id := fields.get("last_score_id")) is not None:
            defaults["last_scorer_id"] = (
                Score.objects.filter(pk=score_id)
                .values_list("scorer_class_identifier_id", flat=True)
                .first()
            )
    return AttackResult.objects.create(**defaults)


def make_attacks(count: int, tag: str = "queue-a", **fields) -> list[AttackResult]:
    """``count`` attacks whose objectives (``<tag> #001``…) sort in creation order."""
    return [make_attack(objective=f"{tag} #{i:03d}", **fields) for i in range(1, count + 1)]


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


# --- Builders for the remaining memory models (admin tests) -------------------------------------


def make_piece_converter(piece: MessagePiece, identifier=None, position: int = 0):
    """A link of ``piece``'s converter chain (a new converter identifier if not given)."""
    from memory.models import PieceConverter

    return PieceConverter.objects.create(
        piece=piece,
        position=position,
        identifier=identifier or make_identifier("Base64Converter"),
    )


def make_identifier_child(parent: ComponentIdentifier, child=None, name: str = "converter"):
    """A single (non-list) child edge from ``parent``."""
    from memory.models import ComponentIdentifierChild

    return ComponentIdentifierChild.objects.create(
        parent=parent, name=name, child=child or make_identifier("Base64Converter")
    )


def make_scorable_content(value: str = "loose text"):
    """Loose content scored outside any conversation."""
    from memory.models import ScorableContent

    return ScorableContent.objects.create(
        value=value, value_sha256=sha256_hex(value), timestamp=NOW
    )


def make_related_conversation(attack: AttackResult, conversation=None, **fields):
    """An adversarial-chat conversation related to ``attack``."""
    from memory.models import RelatedConversation
    from redteam.core.choices import ConversationType

    fields.setdefault("conversation_type", ConversationType.ADVERSARIAL)
    return RelatedConversation.objects.create(
        attack_result=attack, conversation=conversation or make_conversation(), **fields
    )


def make_scenario(**fields):
    """A scenario result with its own scenario identifier."""
    from memory.models import ScenarioResult

    defaults = {"scenario_name": "foundry.red_team", "creation_time": NOW}
    defaults.update(fields)
    defaults.setdefault("scenario_identifier", make_identifier("RedTeamScenario"))
    return ScenarioResult.objects.create(**defaults)


def make_media_blob(data: bytes | None = None, content_type: str = "image/png"):
    """A stored media blob (written under the test's MEDIA_ROOT)."""
    from django.core.files.base import ContentFile

    from memory.models import MediaBlob

    data = data if data is not None else f"blob-{next(_counter)}".encode()
    digest = hashlib.sha256(data).hexdigest()
    blob = MediaBlob(sha256=digest, size=len(data), content_type=content_type)
    blob.file.save(digest, ContentFile(data), save=False)
    blob.save()
    return blob


def make_label(key: str = "operation", value: str | None = None):
    """A distinct label pair."""
    from memory.models import Label

    return Label.objects.create(key=key, value=value or f"op_{next(_counter)}")


def make_harm_category(name: str | None = None):
    """A distinct harm category."""
    from memory.models import HarmCategory

    return HarmCategory.objects.create(name=name or f"harm-{next(_counter)}")
