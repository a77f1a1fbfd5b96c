"""Conversations, messages and message pieces (contract §2 – §4)."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import Any

from django.apps import apps
from django.db import models
from django.db.models import F, Q
from simple_history.models import HistoricalRecords

from memory.models.identifiers import ComponentIdentifier
from memory.models.media import MediaBlob
from memory.models.push import PushSource
from memory.models.tags import HarmCategory, Label
from redteam.core import nul
from redteam.core.bulk import chunked
from redteam.core.choices import (
    ChatMessageRole,
    Originator,
    PromptDataType,
    PromptResponseError,
    is_media_value,
)
from redteam.core.constraints import UniqueIndex, choice_check, partial_index, sha256_or_null_check


class ConversationQuerySet(models.QuerySet):
    """Reads on conversations."""

    def ordered(self) -> ConversationQuerySet:
        """PyRIT's listing order: earliest piece first, then conversation id (contract §4.1)."""
        return self.order_by(models.F("started_at").asc(nulls_last=True), "conversation_id")


class Conversation(models.Model):
    """All pieces sharing one PyRIT ``conversation_id``.

    PyRIT 0.x has no conversation table: a conversation is implied by its pieces. PyRIT 1.x adds
    one, holding the target the conversation is held with and rolled-back retries. Labels and
    harm categories are kept here as the union over the conversation's pieces and attack results,
    with normalised links for indexed filtering.
    """

    conversation_id = nul.CharField(max_length=255, unique=True)
    target_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="target_conversations",
    )
    retries = nul.JSONField(default=list, blank=True)
    labels = nul.JSONField(default=dict, blank=True)
    targeted_harm_categories = nul.JSONField(default=list, blank=True)
    label_index = models.ManyToManyField(Label, blank=True, related_name="conversations")
    harm_category_index = models.ManyToManyField(
        HarmCategory, blank=True, related_name="conversations"
    )
    # Every converter identifier in the chain of any piece, written by ingestion like the label
    # index: "attacks using converter X" is then an indexed join, not a walk over every
    # piece's converter links (docs/performance.md).
    converter_index = models.ManyToManyField(
        ComponentIdentifier, blank=True, related_name="converted_conversations"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    # How many pieces the conversation holds, kept by ingestion: dashboards sum it over the
    # conversations behind filtered attacks instead of counting their pieces.
    piece_count = models.PositiveIntegerField(default=0, editable=False)
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    extra = nul.JSONField(default=dict, blank=True)
    # The push that created it (redline-push); its index serves the "pushed from" filter.
    push_source = models.ForeignKey(
        PushSource,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="conversations",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ConversationQuerySet.as_manager()
    # Who changed or deleted it, when and why (docs/deployment.md, "Audit").
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        indexes = [
            # Conversation listing in PyRIT order and date-range filters.
            models.Index(fields=["started_at", "conversation_id"], name="memory_conv_started_idx"),
            # Target breakdowns: an attack's conversation to its target, without the JSON.
            UniqueIndex(fields=["id", "target_identifier"], name="memory_conv_target_dash_idx"),
        ]

    def __str__(self) -> str:
        return self.conversation_id


class Message(models.Model):
    """One turn: the pieces of a conversation sharing a ``sequence`` (contract §3).

    The role lives here, once, so "all pieces of a message share a role" holds by construction;
    the unique (conversation, sequence) pair is PyRIT's grouping rule.
    """

    # No index of its own: the unique (conversation, sequence) index starts with it.
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages", db_index=False
    )
    sequence = models.IntegerField()
    role = nul.CharField(max_length=32, choices=ChatMessageRole.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "sequence"],
                name="%(app_label)s_%(class)s_unique_sequence",
            ),
            models.CheckConstraint(
                condition=Q(sequence__gte=0), name="%(app_label)s_%(class)s_sequence_gte_0"
            ),
            choice_check("role", ChatMessageRole, "%(app_label)s_%(class)s_role_valid"),
        ]
        # The unique constraint's index serves "a conversation's messages in sequence order".
        ordering = ["conversation", "sequence"]

    def __str__(self) -> str:
        return f"{self.conversation_id}#{self.sequence} ({self.role})"

    @property
    def api_role(self) -> str:
        """The role a chat API sees: ``simulated_assistant`` is sent as ``assistant``."""
        if self.role == ChatMessageRole.SIMULATED_ASSISTANT:
            return ChatMessageRole.ASSISTANT
        return self.role


class MessagePieceQuerySet(models.QuerySet):
    """Reads on pieces."""

    def of_conversation(self, conversation_id: str) -> MessagePieceQuerySet:
        """Every piece of a conversation, ordered as PyRIT orders them, in one query."""
        return (
            self.filter(message__conversation__conversation_id=conversation_id)
            .select_related("message")
            .order_by("message__sequence", "position")
        )

    def conversation_pks(self, piece_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
        """``{piece id: conversation pk}`` for the stored pieces among ``piece_ids``."""
        found: dict[uuid.UUID, int] = {}
        for chunk in chunked(piece_ids):
            found.update(self.filter(pk__in=chunk).values_list("pk", "message__conversation_id"))
        return found


class MessagePiece(models.Model):
    """One part (text, image, audio…) of one message: PyRIT's ``MessagePiece`` (contract §2.1).

    ``id`` is PyRIT's piece id. ``position`` keeps the source order inside the message, which
    PyRIT itself never stores. Media values stay the location strings PyRIT wrote; the bytes,
    once uploaded, hang off ``original_media`` / ``converted_media``.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the unique (message, position) index starts with it.
    message = models.ForeignKey(
        Message, on_delete=models.CASCADE, related_name="pieces", db_index=False
    )
    position = models.PositiveIntegerField(default=0)
    timestamp = models.DateTimeField()
    labels = nul.JSONField(default=dict, blank=True)
    prompt_metadata = nul.JSONField(default=dict, blank=True)
    targeted_harm_categories = nul.JSONField(default=list, blank=True)
    converter_identifiers = models.ManyToManyField(
        ComponentIdentifier, through="PieceConverter", related_name="converted_pieces", blank=True
    )
    prompt_target_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="target_pieces",
    )
    attack_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="attack_pieces",
    )
    scorer_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="scorer_pieces",
        db_index=False,  # partial index in Meta: only scorer conversations have one
    )
    original_value = nul.TextField()
    original_value_data_type = nul.CharField(
        max_length=32, choices=PromptDataType.choices, default=PromptDataType.TEXT
    )
    original_value_sha256 = nul.CharField(max_length=64, null=True, blank=True)
    original_media = models.ForeignKey(
        MediaBlob,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # partial index in Meta: text pieces have no media
    )
    # File name of a media original value, for linking media that arrives later (contract §13).
    original_media_key = nul.CharField(max_length=255, blank=True, default="")
    converted_value = nul.TextField(blank=True)
    converted_value_data_type = nul.CharField(
        max_length=32, choices=PromptDataType.choices, default=PromptDataType.TEXT
    )
    converted_value_sha256 = nul.CharField(max_length=64, null=True, blank=True)
    converted_media = models.ForeignKey(
        MediaBlob,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # partial index in Meta: text pieces have no media
    )
    converted_media_key = nul.CharField(max_length=255, blank=True, default="")
    response_error = nul.CharField(
        max_length=16, choices=PromptResponseError.choices, default=PromptResponseError.NONE
    )
    originator = nul.CharField(
        max_length=16, choices=Originator.choices, default=Originator.UNDEFINED
    )
    original_prompt_id = models.UUIDField()
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    # Fields a client sent that PyRIT's shapes do not define: kept, never dropped.
    extra = nul.JSONField(default=dict, blank=True)

    objects = MessagePieceQuerySet.as_manager()
    # Who changed or deleted it, when and why (docs/deployment.md, "Audit").
    history = HistoricalRecords()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["message", "position"], name="%(app_label)s_%(class)s_unique_position"
            ),
            choice_check(
                "original_value_data_type",
                PromptDataType,
                "%(app_label)s_%(class)s_original_type_valid",
            ),
            choice_check(
                "converted_value_data_type",
                PromptDataType,
                "%(app_label)s_%(class)s_converted_type_valid",
            ),
            choice_check(
                "response_error", PromptResponseError, "%(app_label)s_%(class)s_error_valid"
            ),
            choice_check("originator", Originator, "%(app_label)s_%(class)s_originator_valid"),
            sha256_or_null_check(
                "original_value_sha256", "%(app_label)s_%(class)s_original_sha256_hex"
            ),
            sha256_or_null_check(
                "converted_value_sha256", "%(app_label)s_%(class)s_converted_sha256_hex"
            ),
        ]
        indexes = [
            # Scores are joined on original_prompt_id (contract §6.4), never on id.
            models.Index(fields=["original_prompt_id"], name="memory_piece_orig_prompt_idx"),
            # The piece list API's order (newest first, the id breaking ties: its cursor pages)
            # read straight off the index, so a page of 100 reads 100 entries instead of
            # sorting every piece; and date-range filters.
            models.Index(fields=["timestamp", "id"], name="memory_piece_time_id_idx"),
            # Media arriving after its pieces is matched by the SHA-256 of its bytes (§13).
            # Partial, like every index below that most pieces (text) would only pad: each
            # index a piece row feeds is paid for on every ingestion and import.
            models.Index(
                fields=["original_value_sha256"],
                condition=~Q(original_media_key=""),
                name="memory_piece_orig_sha_idx",
            ),
            models.Index(
                fields=["converted_value_sha256"],
                condition=~Q(converted_media_key=""),
                name="memory_piece_conv_sha_idx",
            ),
            partial_index("original_media", "memory_piece_orig_media_idx"),
            partial_index("converted_media", "memory_piece_conv_media_idx"),
            partial_index("scorer_identifier", "memory_piece_scorer_idx"),
            # Media uploaded after its pieces is matched by file name; partial: text has none.
            partial_index("original_media_key", "memory_piece_orig_key_idx", unless=""),
            partial_index("converted_media_key", "memory_piece_conv_key_idx", unless=""),
            # "Blocked / errored responses" filters; partial, since almost every piece is fine.
            partial_index(
                "response_error", "memory_piece_error_idx", unless=PromptResponseError.NONE
            ),
            # Dashboards: a converter link's piece to its message, and a message's pieces with
            # the ids their scores are joined on.
            UniqueIndex(fields=["id", "message"], name="memory_piece_message_dash_idx"),
            models.Index(
                fields=["message", "original_prompt_id"], name="memory_piece_prompt_dash_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.converted_value_data_type})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save; a new piece also counts in its conversation and becomes the home of scores
        stored before it.

        Ingestion does both in bulk itself; this keeps them right for pieces saved one by one
        (the admin, tests).
        """
        adding = self._state.adding
        super().save(*args, **kwargs)
        if adding:
            Conversation.objects.filter(pk=self.message.conversation_id).update(
                piece_count=F("piece_count") + 1
            )
            # By name: scores.py imports this module (a score's home is its piece's).
            apps.get_model("memory", "Score").objects.adopt_homes([self.id])

    @property
    def role(self) -> str:
        """The role of the message this piece belongs to."""
        return self.message.role

    @property
    def sequence(self) -> int:
        """The sequence of the message this piece belongs to."""
        return self.message.sequence

    def has_error(self) -> bool:
        """PyRIT's ``has_error()``: the response carries an error marker."""
        return self.response_error != PromptResponseError.NONE

    def is_blocked(self) -> bool:
        """PyRIT's ``is_blocked()``: a content filter refused the request."""
        return self.response_error == PromptResponseError.BLOCKED

    @property
    def is_duplicate(self) -> bool:
        """True for a copy made by duplicating a conversation (``original_prompt_id != id``)."""
        return self.original_prompt_id != self.id

    @property
    def original_is_media(self) -> bool:
        """The original value names a file."""
        return is_media_value(self.original_value_data_type, self.original_value)

    @property
    def converted_is_media(self) -> bool:
        """The converted value names a file."""
        return is_media_value(self.converted_value_data_type, self.converted_value)


class PieceConverter(models.Model):
    """The ordered converter chain of a piece (``converter_identifiers``, in applied order)."""

    # No index of its own: the unique (piece, position) index starts with it.
    piece = models.ForeignKey(
        MessagePiece, on_delete=models.CASCADE, related_name="converters", db_index=False
    )
    position = models.PositiveIntegerField()
    identifier = models.ForeignKey(
        ComponentIdentifier, on_delete=models.PROTECT, related_name="piece_converter_links"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["piece", "position"], name="%(app_label)s_%(class)s_unique_position"
            ),
        ]
        ordering = ["piece", "position"]

    def __str__(self) -> str:
        return f"{self.piece_id}[{self.position}] {self.identifier}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save, and record the converter in its conversation's ``converter_index``.

        Ingestion writes links and index rows in bulk itself; this keeps the index right for
        links saved one by one (the admin, tests).
        """
        super().save(*args, **kwargs)
        conversation_id = (
            MessagePiece.objects.filter(pk=self.piece_id)
            .values_list("message__conversation_id", flat=True)
            .get()
        )
        Conversation.converter_index.through.objects.get_or_create(
            conversation_id=conversation_id, componentidentifier_id=self.identifier_id
        )
