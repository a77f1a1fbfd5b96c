"""Admin for PyRIT memory: a read-only operator's view of evidence, usable at millions of rows.

PyRIT memory is immutable evidence: it arrives through the ingestion API and is never edited
here. Every memory model is view-only (no add, no change); only superusers may delete (to
remove a bad import), and lookup tables and media are never deleted from the admin.

Every changelist runs a constant number of queries (session, user, bounded count, page rows):
``list_select_related`` covers each foreign key a column shows, columns never query per row,
sorting is limited to indexed columns (``sortable_by``) and heavy text/JSON columns are deferred
on lists. See ``redteam.core.admin`` for the paginator and the key-first search.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.contrib.admin.options import ActionLocation
from django.contrib.admin.utils import unquote
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from simple_history.admin import SimpleHistoryAdmin

from memory.models import (
    AttackLabel,
    AttackResult,
    ComponentIdentifier,
    ComponentIdentifierChild,
    Conversation,
    HarmCategory,
    HumanVerdict,
    ImportJob,
    Label,
    MediaBlob,
    MediaLocation,
    Message,
    MessagePiece,
    PieceConverter,
    PushSource,
    PyritRecord,
    QueueResolution,
    RelatedConversation,
    ReviewQueue,
    ScenarioResult,
    ScorableContent,
    Score,
)
from memory.storage.queues import (
    blind_hidden_attacks,
    reviewers_queryset,
    verdicts_visible_to,
)
from memory.storage.services import (
    memory_delete,
    memory_evidence,
    memory_reviewed,
    piece_correct,
    review_queue_problems,
    review_queue_save,
)
from redteam.core.admin import (
    LargeTableAdminMixin,
    admin_changelist_url,
    admin_link,
    is_changelist,
    json_display,
    preview,
    short_id,
    truncate,
)
from redteam.core.forms import StoredValuesAdminMixin, StoredValuesModelForm

#: A search term that can only be (a prefix of) a hex hash; shorter terms may be class names.
HASH_PREFIX_RE = re.compile(r"[0-9a-f]{6,64}")
#: Detail pages list at most this many linked rows (scores of a piece, pieces of a score).
DETAIL_LINK_LIMIT = 50
#: JSON columns no list shows; identifier params can hold whole system prompts.
IDENTIFIER_JSON = ("params", "children", "attributes")
CONVERSATION_JSON = ("retries", "labels", "targeted_harm_categories", "extra")


def joined(relation: str, fields: tuple[str, ...]) -> tuple[str, ...]:
    """``fields`` of the row joined through ``relation``, for ``defer()``."""
    return tuple(f"{relation}__{field}" for field in fields)


# --- Bases --------------------------------------------------------------------------------------


def deletion_problem(queryset: QuerySet, request: HttpRequest) -> str | None:
    """Why the confirmed deletion of ``queryset`` may not go ahead (None: it may)."""
    if not request.POST.get("reason", "").strip():
        return "Nothing was deleted: say why this memory is deleted (it is recorded)."
    reviewed = memory_reviewed(queryset=queryset)
    if reviewed and not request.POST.get("force"):
        return (
            f"Nothing was deleted: {reviewed} of the selected rows hold memory a human verdict "
            "refers to. Tick “delete the evidence of human verdicts too” to delete them anyway."
        )
    evidence = memory_evidence(queryset=queryset)
    if evidence and not request.POST.get("force"):
        return (
            f"Nothing was deleted: {evidence} of the selected rows are evidence of a finding. "
            "Tick “delete the evidence of human verdicts and findings too” to delete them anyway."
        )
    return None


def delete_selected_memory(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> Any:
    """Django's "delete selected" with the reason and confirmation evidence needs."""
    if request.POST.get("post"):
        problem = deletion_problem(queryset, request)
        if problem:
            modeladmin.message_user(request, problem, messages.ERROR)
            return None
    return delete_selected(modeladmin, request, queryset)


class EvidenceAdmin(LargeTableAdminMixin, admin.ModelAdmin):
    """View-only admin of PyRIT evidence; only superusers may delete.

    Changes would silently break what PyRIT reads back (hashes, score links, conversation
    order), so there is no add or change at all. ``detail_select_related`` joins what the
    detail page shows; ``list_defer`` drops heavy columns the list never shows.
    """

    detail_select_related: tuple[str, ...] = ()
    list_defer: tuple[str, ...] = ()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    # Deleting evidence: always with a reason, and memory a human verdict refers to only when
    # confirmed (``memory_delete``); both recorded in the history and the security log.
    delete_confirmation_template = "admin/memory/delete_confirmation.html"
    delete_selected_confirmation_template = "admin/memory/delete_selected_confirmation.html"

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        if request.method == "POST" and request.POST.get("post"):
            queryset = self.model._default_manager.filter(pk=unquote(object_id))
            problem = deletion_problem(queryset, request)
            if problem:
                messages.error(request, problem)
                return HttpResponseRedirect(request.get_full_path())
        return super().delete_view(request, object_id, extra_context)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple:
        # What cascades (an attack's verdicts, labels, related conversations) goes with the
        # evidence: only superusers delete here, and memory_delete records all of it. Django
        # would ask for a delete permission on each cascaded model, which read-only index
        # admins never give.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.delete_queryset(request, self.model._default_manager.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        memory_delete(
            queryset=queryset,
            actor=request.user,
            reason=request.POST.get("reason", ""),
            force=bool(request.POST.get("force")),
        )

    def get_actions(
        self, request: HttpRequest, action_location: Any = ActionLocation.CHANGE_LIST
    ) -> dict[str, Any]:
        actions = super().get_actions(request, action_location=action_location)
        if "delete_selected" in actions:
            actions["delete_selected"] = dataclasses.replace(
                actions["delete_selected"], func=delete_selected_memory
            )
        return actions

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if is_changelist(request, self.opts):
            return self.changelist_queryset(queryset.defer(*self.list_defer))
        # Detail and delete pages: one row, so join everything its read-only fields show.
        # (Never select_related() without names: that follows every foreign key.)
        if self.detail_select_related:
            queryset = queryset.select_related(*self.detail_select_related)
        return queryset

    def changelist_queryset(self, queryset: QuerySet) -> QuerySet:
        """Hook for list-only annotations (text previews)."""
        return queryset


class LookupAdmin(EvidenceAdmin):
    """View-only, never deleted: label/harm indexes and media blobs are shared by many rows."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """A read-only inline; ``list_select_related`` joins what its columns show."""

    extra = 0
    can_delete = False
    show_change_link = True
    list_select_related: tuple[str, ...] = ()

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if self.list_select_related:
            queryset = queryset.select_related(*self.list_select_related)
        return queryset


# --- Inlines ------------------------------------------------------------------------------------


class PieceConverterInline(ReadOnlyInline):
    """The converter chain of a piece, in applied order."""

    model = PieceConverter
    fk_name = "piece"
    fields = ("position", "identifier")
    list_select_related = ("identifier",)
    ordering = ("position",)
    show_change_link = False
    verbose_name = "converter"
    verbose_name_plural = "converter chain"


class MessagePieceInline(ReadOnlyInline):
    """The pieces of a message, in source order."""

    model = MessagePiece
    fields = ("position", "converted_value_data_type", "value", "response_error", "timestamp")
    readonly_fields = ("value",)
    ordering = ("position",)

    @admin.display(description="converted value")
    def value(self, obj: MessagePiece) -> str:
        return truncate(obj.converted_value, 120)


class MessageInline(ReadOnlyInline):
    """The messages of a conversation, in sequence order."""

    model = Message
    fields = ("sequence", "role")
    ordering = ("sequence",)


class RelatedConversationInline(ReadOnlyInline):
    """The helper conversations of an attack (adversarial chat, pruned branches, scorers)."""

    model = RelatedConversation
    fields = ("conversation", "conversation_type", "description")
    list_select_related = ("conversation",)
    show_change_link = False


class ComponentIdentifierChildInline(ReadOnlyInline):
    """The named children of an identifier (the edges behind its ``children`` JSON)."""

    model = ComponentIdentifierChild
    fk_name = "parent"
    fields = ("name", "position", "is_list", "child")
    list_select_related = ("child",)
    ordering = ("name", "position")
    show_change_link = False
    verbose_name = "child"
    verbose_name_plural = "children"


class ScoreInline(ReadOnlyInline):
    """The scores of one piece of loose scorable content."""

    model = Score
    fields = ("score_type", "score_value", "status", "scorer_class_identifier", "timestamp")
    list_select_related = ("scorer_class_identifier",)
    ordering = ("timestamp",)


# --- Conversations, messages, pieces ------------------------------------------------------------


@admin.register(Conversation)
class ConversationAdmin(EvidenceAdmin):
    """Conversations, newest first; the detail page links to its messages, pieces and attacks."""

    list_display = ("conversation_id", "started_at", "target_class", "pyrit_version")
    list_select_related = ("target_identifier",)
    list_filter = (("started_at", admin.DateFieldListFilter),)
    # Served backwards by the (started_at, conversation_id) index; conversation_id is unique.
    ordering = ("-started_at", "-conversation_id")
    sortable_by = ("started_at",)
    search_fields = ("conversation_id__exact",)
    search_help_text = "Exact PyRIT conversation id (indexed)."
    raw_id_fields = ("target_identifier",)
    # The label/harm indexes repeat the JSON shown below.
    exclude = (
        "label_index",
        "harm_category_index",
        "retries",
        "labels",
        "targeted_harm_categories",
        "extra",
    )
    readonly_fields = (
        "links",
        "labels_json",
        "targeted_harm_categories_json",
        "retries_json",
        "extra_json",
    )
    detail_select_related = ("target_identifier",)
    list_defer = (*CONVERSATION_JSON, *joined("target_identifier", IDENTIFIER_JSON))
    inlines = (MessageInline,)

    labels_json = json_display("labels")
    targeted_harm_categories_json = json_display("targeted_harm_categories")
    retries_json = json_display("retries")
    extra_json = json_display("extra")

    @admin.display(description="target")
    def target_class(self, obj: Conversation) -> str:
        return obj.target_identifier.class_name if obj.target_identifier else ""

    @admin.display(description="see also")
    def links(self, obj: Conversation) -> SafeString:
        return format_html(
            '<a href="{}">pieces</a> · <a href="{}">messages</a> · <a href="{}">attack results</a>',
            admin_changelist_url(MessagePiece, message__conversation__id__exact=obj.pk),
            admin_changelist_url(Message, conversation__id__exact=obj.pk),
            admin_changelist_url(AttackResult, conversation__id__exact=obj.pk),
        )


@admin.register(Message)
class MessageAdmin(EvidenceAdmin):
    """Messages (one turn each); find a conversation's turns by its conversation id."""

    list_display = ("__str__", "conversation_link", "sequence", "role")
    list_select_related = ("conversation",)
    list_defer = joined("conversation", CONVERSATION_JSON)
    list_filter = ("role",)
    # The unique (conversation, sequence) index. Spelled with the column name so the admin
    # sees a total ordering and does not append "-pk"; nothing else is indexed to sort by.
    ordering = ("conversation_id", "sequence")
    sortable_by = ()
    conversation_search_field = "conversation"
    search_fields = ("conversation__conversation_id__exact",)
    search_help_text = "Exact PyRIT conversation id (indexed)."
    raw_id_fields = ("conversation",)
    readonly_fields = ("conversation_link",)
    detail_select_related = ("conversation",)
    inlines = (MessagePieceInline,)

    @admin.display(description="conversation")
    def conversation_link(self, obj: Message) -> SafeString:
        return admin_link(Conversation, obj.conversation_id, obj.conversation.conversation_id)


class PieceCorrectionForm(forms.ModelForm):
    """A superuser's correction of a piece's values: the reason is required and recorded."""

    correction_reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Recorded in the piece's history and the security log. Findings holding this "
        "piece as evidence will show their seal broken.",
    )

    class Meta:
        model = MessagePiece
        fields = ("original_value", "converted_value")


@admin.register(MessagePiece)
class MessagePieceAdmin(EvidenceAdmin):
    """Message pieces — the biggest table. Key lookups are indexed; value search scans.

    Search: a UUID matches ``id`` or ``original_prompt_id`` (both indexed, nothing else is
    tried); any other text is matched with ``icontains`` in the original and converted values,
    which no index serves: on millions of rows, narrow by date or type first.
    """

    list_display = (
        "short_id",
        "conversation_link",
        "message__sequence",
        "message__role",
        "original_value_data_type",
        "converted_value_data_type",
        "response_error",
        "timestamp",
        "converted_preview",
    )
    list_display_links = ("short_id",)
    list_select_related = ("message__conversation",)
    list_filter = (
        "message__role",
        "converted_value_data_type",
        "original_value_data_type",
        "response_error",
        "originator",
        ("timestamp", admin.DateFieldListFilter),
    )
    ordering = ("-timestamp", "-id")
    # Only indexed columns: sorting anything else sorts the whole table.
    sortable_by = ("short_id", "timestamp")
    uuid_search_fields = ("id", "original_prompt_id")
    search_fields = ("id__exact", "original_value__icontains", "converted_value__icontains")
    search_help_text = (
        "A UUID finds a piece by id or original_prompt_id (indexed). Other text is searched "
        "inside original and converted values: a full scan on large memories."
    )
    raw_id_fields = (
        "message",
        "prompt_target_identifier",
        "attack_identifier",
        "scorer_identifier",
        "original_media",
        "converted_media",
    )
    # The converter chain is the inline below; JSON columns are shown pretty-printed.
    exclude = (
        "converter_identifiers",
        "labels",
        "prompt_metadata",
        "targeted_harm_categories",
        "extra",
    )
    readonly_fields = (
        "links",
        "scores",
        "labels_json",
        "prompt_metadata_json",
        "targeted_harm_categories_json",
        "extra_json",
    )
    detail_select_related = (
        "message__conversation",
        "prompt_target_identifier",
        "attack_identifier",
        "scorer_identifier",
        "original_media",
        "converted_media",
    )
    list_defer = (
        "labels",
        "prompt_metadata",
        "targeted_harm_categories",
        "original_value",
        "converted_value",
        "extra",
        *joined("message__conversation", CONVERSATION_JSON),
    )
    inlines = (PieceConverterInline,)
    #: What a superuser may correct, with a reason (``piece_correct``); the rest stays read-only.
    correctable_fields = ("original_value", "converted_value")

    labels_json = json_display("labels")
    prompt_metadata_json = json_display("prompt_metadata")
    targeted_harm_categories_json = json_display("targeted_harm_categories")
    extra_json = json_display("extra")

    def changelist_queryset(self, queryset: QuerySet) -> QuerySet:
        return queryset.annotate(_converted_preview=preview("converted_value"))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Only a superuser corrects a piece, one at a time, with a reason; lists stay view-only.
        return obj is not None and request.user.is_active and request.user.is_superuser

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs):
        if obj is not None and self.has_change_permission(request, obj):
            kwargs["form"] = PieceCorrectionForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        readonly = tuple(self.readonly_fields)
        if obj is None or not self.has_change_permission(request, obj):
            return readonly
        concrete = tuple(
            f.name
            for f in self.model._meta.concrete_fields
            if f.name not in self.correctable_fields and f.name not in (self.exclude or ())
        )
        return concrete + readonly

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        piece_correct(
            piece=obj,
            actor=request.user,
            reason=form.cleaned_data["correction_reason"],
            original_value=form.cleaned_data.get("original_value"),
            converted_value=form.cleaned_data.get("converted_value"),
        )

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest) -> bool:
        # The conversation page links here with its pieces; an indexed join through messages.
        if lookup == "message__conversation__id__exact":
            return True
        return super().lookup_allowed(lookup, value, request)

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: MessagePiece) -> str:
        return short_id(obj.pk)

    @admin.display(description="conversation")
    def conversation_link(self, obj: MessagePiece) -> SafeString:
        conversation = obj.message.conversation
        return admin_link(Conversation, conversation.pk, conversation.conversation_id)

    @admin.display(description="converted value")
    def converted_preview(self, obj: MessagePiece) -> str:
        return truncate(obj._converted_preview)

    @admin.display(description="see also")
    def links(self, obj: MessagePiece) -> SafeString:
        message = obj.message
        parts = [
            admin_link(Conversation, message.conversation_id, "conversation"),
            admin_link(Message, message.pk, f"message #{message.sequence} ({message.role})"),
        ]
        if obj.is_duplicate:
            parts.append(admin_link(MessagePiece, obj.original_prompt_id, "original piece"))
        return format_html_join(mark_safe(" · "), "{}", ((part,) for part in parts))

    @admin.display(description="scores")
    def scores(self, obj: MessagePiece) -> SafeString | str:
        # Scores point at original_prompt_id (not a foreign key), so every duplicate of a piece
        # shows them, as in PyRIT.
        rows = list(
            Score.objects.filter(message_piece_id=obj.original_prompt_id)
            .select_related("scorer_class_identifier")
            .order_by("timestamp")[:DETAIL_LINK_LIMIT]
        )
        if not rows:
            return "-"
        return format_html_join(
            mark_safe("<br>"),
            "{} {} = {} ({})",
            (
                (
                    admin_link(Score, score.pk, short_id(score.pk)),
                    score.score_type,
                    score.score_value,
                    score.scorer_class_identifier.class_name,
                )
                for score in rows
            ),
        )


@admin.register(PieceConverter)
class PieceConverterAdmin(EvidenceAdmin):
    """Converter-chain links (one row per converter applied to a piece)."""

    list_display = ("piece_link", "position", "identifier")
    list_select_related = ("identifier",)
    list_defer = joined("identifier", IDENTIFIER_JSON)
    sortable_by = ()
    uuid_search_fields = ("piece",)
    search_fields = ("piece__id__exact",)
    search_help_text = "Piece UUID (indexed)."
    raw_id_fields = ("piece", "identifier")

    @admin.display(description="piece")
    def piece_link(self, obj: PieceConverter) -> SafeString:
        return admin_link(MessagePiece, obj.piece_id, short_id(obj.piece_id))


# --- Scores -------------------------------------------------------------------------------------


@admin.register(Score)
class ScoreAdmin(EvidenceAdmin):
    """Scores, newest first; the detail page links to every piece the score applies to."""

    list_display = (
        "short_id",
        "score_type",
        "score_value",
        "status",
        "scorer_class",
        "piece_link",
        "timestamp",
    )
    list_display_links = ("short_id",)
    list_select_related = ("scorer_class_identifier",)
    list_filter = ("score_type", "status", ("timestamp", admin.DateFieldListFilter))
    ordering = ("-timestamp", "-id")
    sortable_by = ("short_id", "timestamp")
    uuid_search_fields = ("id", "message_piece_id")
    search_fields = ("id__exact", "^scorer_class_identifier__class_name")
    search_help_text = (
        "A UUID finds a score by id or by the piece it scores (indexed); other text matches "
        "the start of the scorer class name."
    )
    raw_id_fields = ("scorer_class_identifier", "scorable_content")
    exclude = ("score_category", "score_metadata", "scorable", "extra")
    readonly_fields = (
        "pieces",
        "score_category_json",
        "score_metadata_json",
        "scorable_json",
        "extra_json",
    )
    detail_select_related = ("scorer_class_identifier", "scorable_content")
    list_defer = (
        "score_value_description",
        "score_category",
        "score_rationale",
        "score_metadata",
        "objective",
        "scorable",
        "extra",
        *joined("scorer_class_identifier", IDENTIFIER_JSON),
    )

    score_category_json = json_display("score_category")
    score_metadata_json = json_display("score_metadata")
    scorable_json = json_display("scorable")
    extra_json = json_display("extra")

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: Score) -> str:
        return short_id(obj.pk)

    @admin.display(description="scorer")
    def scorer_class(self, obj: Score) -> str:
        return obj.scorer_class_identifier.class_name

    @admin.display(description="piece")
    def piece_link(self, obj: Score) -> SafeString | str:
        # Pieces are joined on original_prompt_id, so link to the filtered piece list.
        if obj.message_piece_id is None:
            return "-"
        return format_html(
            '<a href="{}">{}</a>',
            admin_changelist_url(MessagePiece, original_prompt_id=obj.message_piece_id),
            short_id(obj.message_piece_id),
        )

    @admin.display(description="scored pieces")
    def pieces(self, obj: Score) -> SafeString | str:
        if obj.message_piece_id is None:
            return "-"
        rows = list(
            MessagePiece.objects.filter(original_prompt_id=obj.message_piece_id)
            .order_by("timestamp")
            .only("id", "timestamp")[:DETAIL_LINK_LIMIT]
        )
        if not rows:
            return f"{obj.message_piece_id} (not stored)"
        return format_html_join(
            mark_safe("<br>"),
            "{}",
            ((admin_link(MessagePiece, piece.pk, piece.pk),) for piece in rows),
        )


@admin.register(ScorableContent)
class ScorableContentAdmin(EvidenceAdmin):
    """Loose content scored outside any conversation (PyRIT 1.1.0), with its scores inline."""

    list_display = ("short_id", "data_type", "value_preview", "timestamp")
    list_display_links = ("short_id",)
    list_filter = ("data_type", ("timestamp", admin.DateFieldListFilter))
    ordering = ("-timestamp", "-id")
    sortable_by = ("short_id",)
    uuid_search_fields = ("id",)
    search_fields = ("id__exact", "value__icontains")
    search_help_text = "A UUID finds the content by id; other text is searched in the value."
    # The value is not deferred like piece values: __str__ (the row checkbox's label) reads it.
    inlines = (ScoreInline,)

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: ScorableContent) -> str:
        return short_id(obj.pk)

    @admin.display(description="value")
    def value_preview(self, obj: ScorableContent) -> str:
        return truncate(obj.value)


# --- Attacks and scenarios ----------------------------------------------------------------------


@admin.register(AttackResult)
class AttackResultAdmin(EvidenceAdmin):
    """Attack results, newest first, with their related conversations inline.

    Search: a UUID matches the attack result id or its conversation's id (both indexed); other
    text is matched inside the objective (a scan).
    """

    list_display = (
        "short_id",
        "outcome",
        "objective_preview",
        "attack_class",
        "executed_turns",
        "conversation_link",
        "timestamp",
    )
    list_display_links = ("short_id",)
    list_select_related = ("attack_identifier", "conversation")
    list_filter = ("outcome", ("timestamp", admin.DateFieldListFilter))
    ordering = ("-timestamp", "-id")
    sortable_by = ("short_id", "timestamp")
    uuid_search_fields = ("id",)
    conversation_search_field = "conversation"
    search_fields = ("id__exact", "conversation__conversation_id__exact", "objective__icontains")
    search_help_text = (
        "A UUID finds an attack by its id or its conversation id (indexed); other text is "
        "searched inside objectives."
    )
    raw_id_fields = (
        "conversation",
        "attack_identifier",
        "atomic_attack_identifier",
        "last_response",
        "last_score",
        "attribution_parent",
    )
    exclude = (
        "label_index",
        "harm_category_index",
        "metadata",
        "labels",
        "targeted_harm_categories",
        "retry_events",
        "attribution_data",
        "extra",
    )
    readonly_fields = (
        "links",
        "metadata_json",
        "labels_json",
        "targeted_harm_categories_json",
        "retry_events_json",
        "attribution_data_json",
        "extra_json",
    )
    detail_select_related = (
        "conversation",
        "attack_identifier",
        "atomic_attack_identifier",
        "last_response",
        "last_score",
        "attribution_parent",
    )
    # Not the objective: __str__ (the row checkbox's label) reads it, and it is one sentence.
    list_defer = (
        "outcome_reason",
        "metadata",
        "labels",
        "targeted_harm_categories",
        "error_message",
        "error_traceback",
        "retry_events",
        "attribution_data",
        "extra",
        *joined("attack_identifier", IDENTIFIER_JSON),
        *joined("conversation", CONVERSATION_JSON),
    )
    inlines = (RelatedConversationInline,)

    metadata_json = json_display("metadata")
    labels_json = json_display("labels")
    targeted_harm_categories_json = json_display("targeted_harm_categories")
    retry_events_json = json_display("retry_events")
    attribution_data_json = json_display("attribution_data")
    extra_json = json_display("extra")

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        exclude = tuple(super().get_exclude(request, obj) or ())
        if obj is None:
            return exclude
        hidden = blind_hidden_attacks(user=request.user)
        if hidden is not None and hidden.filter(pk=obj.pk).exists():
            # The human outcome is the newest reviewer's verdict: blind review hides it.
            return (*exclude, "human_outcome", "human_verdict_at")
        return exclude

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: AttackResult) -> str:
        return short_id(obj.pk)

    @admin.display(description="objective")
    def objective_preview(self, obj: AttackResult) -> str:
        return truncate(obj.objective)

    @admin.display(description="attack")
    def attack_class(self, obj: AttackResult) -> str:
        return obj.attack_identifier.class_name if obj.attack_identifier else ""

    @admin.display(description="conversation")
    def conversation_link(self, obj: AttackResult) -> SafeString:
        conversation = obj.conversation
        return admin_link(Conversation, conversation.pk, short_id(conversation.conversation_id))

    @admin.display(description="see also")
    def links(self, obj: AttackResult) -> SafeString:
        return format_html(
            '<a href="{}">pieces of the conversation</a>',
            admin_changelist_url(
                MessagePiece, message__conversation__id__exact=obj.conversation_id
            ),
        )


@admin.register(RelatedConversation)
class RelatedConversationAdmin(EvidenceAdmin):
    """Helper conversations of attacks, one row per (attack, conversation)."""

    list_display = ("attack_link", "conversation_link", "conversation_type", "description")
    list_select_related = ("conversation",)
    list_defer = joined("conversation", CONVERSATION_JSON)
    list_filter = ("conversation_type",)
    sortable_by = ()
    uuid_search_fields = ("attack_result",)
    conversation_search_field = "conversation"
    search_fields = ("conversation__conversation_id__exact",)
    search_help_text = "An attack result id or a conversation id (indexed)."
    raw_id_fields = ("attack_result", "conversation")

    @admin.display(description="attack result")
    def attack_link(self, obj: RelatedConversation) -> SafeString:
        return admin_link(AttackResult, obj.attack_result_id, short_id(obj.attack_result_id))

    @admin.display(description="conversation")
    def conversation_link(self, obj: RelatedConversation) -> SafeString:
        return admin_link(Conversation, obj.conversation_id, obj.conversation.conversation_id)


@admin.register(ScenarioResult)
class ScenarioResultAdmin(EvidenceAdmin):
    """Scenario runs, newest first; the detail page links to the scenario's attack results."""

    list_display = (
        "scenario_name",
        "scenario_run_state",
        "scenario_class",
        "number_tries",
        "creation_time",
        "completion_time",
    )
    list_select_related = ("scenario_identifier",)
    list_defer = (
        "scenario_description",
        "labels",
        "display_group_map",
        "error_message",
        "error_attack_result_ids",
        "metadata",
        "extra",
        *joined("scenario_identifier", IDENTIFIER_JSON),
    )
    list_filter = ("scenario_run_state", ("creation_time", admin.DateFieldListFilter))
    ordering = ("-creation_time", "-id")
    sortable_by = ("creation_time",)
    uuid_search_fields = ("id",)
    search_fields = ("id__exact", "scenario_name__icontains")
    search_help_text = "A UUID finds a scenario result by id; other text matches scenario names."
    raw_id_fields = (
        "scenario_identifier",
        "objective_target_identifier",
        "objective_scorer_identifier",
    )
    exclude = (
        "labels",
        "display_group_map",
        "error_attack_result_ids",
        "metadata",
        "extra",
    )
    readonly_fields = (
        "links",
        "labels_json",
        "display_group_map_json",
        "error_attack_result_ids_json",
        "metadata_json",
        "extra_json",
    )
    detail_select_related = (
        "scenario_identifier",
        "objective_target_identifier",
        "objective_scorer_identifier",
    )

    labels_json = json_display("labels")
    display_group_map_json = json_display("display_group_map")
    error_attack_result_ids_json = json_display("error_attack_result_ids")
    metadata_json = json_display("metadata")
    extra_json = json_display("extra")

    @admin.display(description="scenario")
    def scenario_class(self, obj: ScenarioResult) -> str:
        return obj.scenario_identifier.class_name

    @admin.display(description="see also")
    def links(self, obj: ScenarioResult) -> SafeString:
        return format_html(
            '<a href="{}">attack results</a>',
            admin_changelist_url(AttackResult, attribution_parent__id__exact=obj.pk),
        )


# --- Identifiers --------------------------------------------------------------------------------


@admin.register(ComponentIdentifier)
class ComponentIdentifierAdmin(EvidenceAdmin):
    """Component identifiers (targets, converters, scorers, attacks…), newest first.

    Search: six or more hex digits are a hash prefix (served by the unique index on ``hash``;
    on PostgreSQL its ``varchar_pattern_ops`` twin); anything else matches the start of the
    class name.
    """

    list_display = (
        "class_name",
        "short_hash",
        "short_eval_hash",
        "pyrit_version",
        "class_module",
        "created_at",
    )
    list_defer = IDENTIFIER_JSON
    ordering = ("-id",)
    sortable_by = ("class_name",)
    search_fields = ("^class_name",)
    search_help_text = "A hash prefix (6+ hex digits, indexed) or the start of a class name."
    exclude = ("params", "children", "attributes")
    readonly_fields = ("links", "params_json", "children_json", "attributes_json")
    inlines = (ComponentIdentifierChildInline,)

    params_json = json_display("params")
    children_json = json_display("children")
    attributes_json = json_display("attributes")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        term = search_term.strip().lower()
        if HASH_PREFIX_RE.fullmatch(term):
            # Case-sensitive prefix on purpose: hashes are lower-case hex, and LIKE without
            # UPPER() is what the pattern index serves.
            return queryset.filter(hash__startswith=term), False
        return super().get_search_results(request, queryset, search_term)

    @admin.display(description="hash", ordering="hash")
    def short_hash(self, obj: ComponentIdentifier) -> str:
        return obj.short_hash

    @admin.display(description="eval hash")
    def short_eval_hash(self, obj: ComponentIdentifier) -> str:
        return short_id(obj.eval_hash)

    @admin.display(description="see also")
    def links(self, obj: ComponentIdentifier) -> SafeString:
        return format_html(
            '<a href="{}">used as a child by</a>',
            admin_changelist_url(ComponentIdentifierChild, child__id__exact=obj.pk),
        )


@admin.register(ComponentIdentifierChild)
class ComponentIdentifierChildAdmin(EvidenceAdmin):
    """Parent → child edges between identifiers."""

    list_display = ("parent", "name", "position", "is_list", "child")
    list_select_related = ("parent", "child")
    list_defer = (*joined("parent", IDENTIFIER_JSON), *joined("child", IDENTIFIER_JSON))
    list_filter = ("is_list",)
    sortable_by = ()
    search_fields = ("name__exact",)
    search_help_text = "A parent hash prefix (6+ hex digits, indexed) or an exact child name."
    raw_id_fields = ("parent", "child")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        term = search_term.strip().lower()
        if HASH_PREFIX_RE.fullmatch(term):
            return queryset.filter(parent__hash__startswith=term), False
        return super().get_search_results(request, queryset, search_term)


# --- Lookup tables and media --------------------------------------------------------------------


@admin.register(Label)
class LabelAdmin(LookupAdmin):
    """Distinct label pairs, with links to what carries them."""

    list_display = ("key", "value", "links")
    sortable_by = ("key",)
    search_fields = ("key", "value")

    @admin.display(description="labelled")
    def links(self, obj: Label) -> SafeString:
        return format_html(
            '<a href="{}">conversations</a> · <a href="{}">attack results</a>',
            admin_changelist_url(Conversation, label_index__id__exact=obj.pk),
            admin_changelist_url(AttackResult, label_index__id__exact=obj.pk),
        )


@admin.register(AttackLabel)
class AttackLabelAdmin(EvidenceAdmin):
    """Attack ↔ label links (kept by ingestion from each attack result's labels)."""

    list_display = ("attack_link", "label")
    list_select_related = ("label",)
    sortable_by = ()
    uuid_search_fields = ("attackresult",)
    search_fields = ("attackresult__id__exact",)
    search_help_text = "Attack result UUID (indexed)."
    raw_id_fields = ("attackresult", "label")

    @admin.display(description="attack result")
    def attack_link(self, obj: AttackLabel) -> SafeString:
        return admin_link(AttackResult, obj.attackresult_id, short_id(obj.attackresult_id))


@admin.register(HarmCategory)
class HarmCategoryAdmin(LookupAdmin):
    """Distinct harm categories, with links to what targets them."""

    list_display = ("name", "links")
    sortable_by = ("name",)
    search_fields = ("name",)

    @admin.display(description="targeted by")
    def links(self, obj: HarmCategory) -> SafeString:
        return format_html(
            '<a href="{}">conversations</a> · <a href="{}">attack results</a>',
            admin_changelist_url(Conversation, harm_category_index__id__exact=obj.pk),
            admin_changelist_url(AttackResult, harm_category_index__id__exact=obj.pk),
        )


@admin.register(MediaBlob)
class MediaBlobAdmin(LookupAdmin):
    """Stored media bytes, addressed by SHA-256."""

    list_display = ("short_sha256", "content_type", "size", "original_name", "created_at")
    list_filter = (("created_at", admin.DateFieldListFilter),)
    ordering = ("-id",)
    sortable_by = ("short_sha256",)
    search_fields = ("sha256__startswith",)
    search_help_text = "A SHA-256 prefix (lower-case hex, indexed)."

    @admin.display(description="sha256", ordering="sha256")
    def short_sha256(self, obj: MediaBlob) -> str:
        return obj.sha256[:12]


@admin.register(MediaLocation)
class MediaLocationAdmin(LookupAdmin):
    """The location strings media were uploaded for (used to link later pieces and seeds)."""

    list_display = ("key", "location", "blob", "created_at")
    list_select_related = ("blob",)
    ordering = ("-id",)
    sortable_by = ()
    search_fields = ("key__exact",)
    search_help_text = "An exact file name, e.g. 1732000000000001.png (indexed)."


@admin.register(HumanVerdict)
class HumanVerdictAdmin(LookupAdmin):
    """Reviewers' verdicts on attacks: an audit trail, recorded from the attack page.

    Blind review holds here too: every admin view of verdicts (list, search, detail, history,
    the related-object pop-up) starts from :meth:`get_queryset`, which leaves out what a blind
    queue hides from the user (``memory.storage.queues.verdicts_visible_to``).
    """

    list_display = ("created_at", "outcome", "reviewer_name", "attack_result", "reason")
    list_filter = ("outcome", ("created_at", admin.DateFieldListFilter))
    list_select_related = ("attack_result",)
    ordering = ("-created_at",)
    sortable_by = ("created_at",)
    search_fields = ("reviewer_name__exact",)
    search_help_text = "A reviewer's exact username."

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return verdicts_visible_to(user=request.user, verdicts=super().get_queryset(request))


@admin.register(ImportJob)
class ImportJobAdmin(LookupAdmin):
    """Imports of PyRIT databases uploaded in the browser (started from the Imports page)."""

    list_display = ("created_at", "source_name", "status", "size", "created_by", "finished_at")
    list_filter = ("status", ("created_at", admin.DateFieldListFilter))
    list_select_related = ("created_by",)
    ordering = ("-created_at",)
    sortable_by = ("created_at",)
    search_fields = ("source_name__icontains",)
    search_help_text = "Part of the uploaded file's name."


@admin.register(PushSource)
class PushSourceAdmin(LookupAdmin):
    """The machines and PyRIT databases ``redline-push`` ships from (as the client named them)."""

    list_display = ("host", "database", "created_at", "last_push_at")
    ordering = ("host", "database")
    sortable_by = ("host", "last_push_at")
    search_fields = ("host__icontains", "database__icontains")
    search_help_text = "Part of a host name or database path."


@admin.register(PyritRecord)
class PyritRecordAdmin(LookupAdmin):
    """PyRIT rows Redline has no model for yet (1.2 operations, findings, evidence,
    observations; tables of newer PyRIT versions), verbatim and read-only."""

    list_display = ("table", "pk_text", "alembic_revision", "pyrit_version", "updated_at")
    ordering = ("table", "pk_text")
    sortable_by = ("table",)
    list_defer = ("row",)
    search_fields = ("table__iexact", "pk_text__exact")
    search_help_text = "A PyRIT table name (FindingEntries) or a row's exact primary key."


# --- Review queues ------------------------------------------------------------------------------


class ReviewQueueAdminForm(StoredValuesModelForm):
    """The queue's settings, checked by the same rules as the app's form
    (``review_queue_problems``), with the problems on their fields."""

    class Meta:
        model = ReviewQueue
        fields = ("name", "description", "filter_query", "required_reviews", "blind", "assignees")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        problems = review_queue_problems(
            name=data.get("name", ""),
            filter_query=data.get("filter_query", ""),
            required_reviews=data.get("required_reviews") or 0,
            assignees=list(data.get("assignees") or []),
            queue=self.instance if self.instance.pk else None,
        )
        for problem in problems:
            self.add_error(problem.path if problem.path in self.fields else None, problem.message)
        return data


@admin.register(ReviewQueue)
class ReviewQueueAdmin(StoredValuesAdminMixin, SimpleHistoryAdmin):
    """Review queues: leads create and change them here or on the Queues page; both save
    through ``review_queue_save``. History lists who changed what."""

    form = ReviewQueueAdminForm
    list_display = ("name", "required_reviews", "blind", "filter_query", "created_by", "created_at")
    list_filter = ("blind",)
    list_select_related = ("created_by",)
    search_fields = ("name",)
    filter_horizontal = ("assignees",)
    readonly_fields = ("created_by", "created_at")

    def revert_disabled(self, request: HttpRequest, obj: Any = None) -> bool:
        return True  # a revert would bypass the service's checks

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "assignees":
            kwargs["queryset"] = reviewers_queryset()
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: ReviewQueue, form: Any, change: bool) -> None:
        data = form.cleaned_data
        review_queue_save(
            queue=obj,
            user=request.user,
            name=data["name"],
            description=data.get("description", ""),
            filter_query=data.get("filter_query", ""),
            required_reviews=data["required_reviews"],
            blind=data.get("blind", False),
            assignees=list(data.get("assignees") or []),
        )

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """The service has set the assignees already."""
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)


@admin.register(QueueResolution)
class QueueResolutionAdmin(LookupAdmin):
    """Leads' resolutions of disagreements: an audit trail, recorded from a queue's page."""

    list_display = ("created_at", "queue", "attack_result", "resolved_by", "verdict")
    list_filter = (("created_at", admin.DateFieldListFilter),)
    list_select_related = ("queue", "attack_result", "resolved_by", "verdict")
    ordering = ("-created_at",)
    sortable_by = ("created_at",)
    search_fields = ("queue__name__exact",)
    search_help_text = "A queue's exact name."
