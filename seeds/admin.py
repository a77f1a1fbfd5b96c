"""Admin for seeds: datasets, seeds (and a filtered admin per seed type) and seed groups.

Unlike PyRIT memory, seeds are curated here, so these admins are editable. The seed table can
grow large (public jailbreak datasets), so lists share the memory admin's bounded paginator
and show value previews instead of whole templates. Values saved here get their SHA-256
recomputed (text only: a media seed's hash is the hash of its bytes).
"""

from __future__ import annotations

import hashlib
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from memory.admin_utils import (
    LargeTableAdminMixin,
    admin_changelist_url,
    admin_link,
    is_changelist,
    short_id,
    truncate,
)
from memory.choices import is_media_value
from seeds.choices import SeedType
from seeds.models import (
    Seed,
    SeedDataset,
    SeedGroup,
    SeedObjective,
    SeedPrompt,
    SeedSimulatedConversation,
)

#: The seed type each proxy model stands for.
PROXY_SEED_TYPES: dict[type[Seed], str] = {
    SeedPrompt: SeedType.PROMPT,
    SeedObjective: SeedType.OBJECTIVE,
    SeedSimulatedConversation: SeedType.SIMULATED_CONVERSATION,
}


def prepare_seed(seed: Seed, request: HttpRequest) -> None:
    """Fill what a curator does not type: the text hash, the date and who added the seed."""
    if not is_media_value(seed.data_type, seed.value):
        seed.value_sha256 = hashlib.sha256(seed.value.encode("utf-8")).hexdigest()
    if seed.date_added is None:
        seed.date_added = timezone.now()
    if not seed.added_by:
        seed.added_by = request.user.get_username()


class JSONDefaultsForm(forms.ModelForm):
    """A model form where an emptied JSON box means the field's default, not SQL NULL.

    Django turns an empty JSON input into ``None``, which a ``NOT NULL`` JSON column with a
    default (``[]``, ``{}``) rejects with an integrity error instead of a form error.
    """

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in self.fields:
            try:
                model_field = self._meta.model._meta.get_field(name)
            except FieldDoesNotExist:
                continue
            if (
                isinstance(model_field, models.JSONField)
                and not model_field.null
                and name in cleaned
                and cleaned[name] is None
            ):
                cleaned[name] = model_field.get_default()
        return cleaned


class SeedAdminForm(JSONDefaultsForm):
    """A seed form that pins the seed type of a proxy admin before validation.

    The type stays in the form (disabled) rather than being excluded: Django skips every
    constraint that mentions an excluded field, and "an objective is text" and "one objective
    per group" both mention ``seed_type``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fixed = PROXY_SEED_TYPES.get(self._meta.model)
        if fixed is not None:
            kwargs["initial"] = {**(kwargs.get("initial") or {}), "seed_type": fixed}
        super().__init__(*args, **kwargs)
        if fixed is not None and "seed_type" in self.fields:
            self.fields["seed_type"].disabled = True
            self.instance.seed_type = fixed


# --- Datasets -----------------------------------------------------------------------------------


@admin.register(SeedDataset)
class SeedDatasetAdmin(LargeTableAdminMixin, admin.ModelAdmin):
    """Seed datasets with their seed counts (one grouped query) and a link to their seeds."""

    form = JSONDefaultsForm
    list_display = ("name", "seed_type", "data_type", "seeds_link", "added_by", "date_added")
    list_filter = ("seed_type", "data_type")
    search_fields = ("name",)
    readonly_fields = ("seeds_link", "created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The seed count of every listed dataset in the same query as the rows.
        return super().get_queryset(request).annotate(seed_count=Count("seeds"))

    @admin.display(description="seeds", ordering="seed_count")
    def seeds_link(self, obj: SeedDataset) -> SafeString:
        return format_html(
            '<a href="{}">{}</a>',
            admin_changelist_url(Seed, dataset__id__exact=obj.pk),
            getattr(obj, "seed_count", "seeds"),
        )


# --- Seeds --------------------------------------------------------------------------------------


@admin.register(Seed)
class SeedAdmin(LargeTableAdminMixin, admin.ModelAdmin):
    """Every seed, whatever its type; editable.

    Search: a UUID finds a seed by id (indexed); other text matches names and values
    (``icontains``, a scan of the seed table).
    """

    form = SeedAdminForm
    list_display = (
        "short_id",
        "seed_type",
        "data_type",
        "value_preview",
        "name",
        "dataset",
        "group_link",
        "sequence",
        "is_general_technique",
        "date_added",
    )
    list_display_links = ("short_id",)
    list_select_related = ("dataset", "group")
    list_filter = ("dataset", "seed_type", "data_type", "is_general_technique")
    ordering = ("-created_at", "-id")
    uuid_search_fields = ("id",)
    search_fields = ("id__exact", "name__icontains", "value__icontains")
    search_help_text = "A UUID finds a seed by id; other text is searched in names and values."
    autocomplete_fields = ("dataset",)
    raw_id_fields = ("group", "media")
    readonly_fields = ("value_sha256", "created_at", "updated_at")
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "seed_type",
                    "value",
                    "data_type",
                    "name",
                    ("dataset", "dataset_name"),
                    ("group", "sequence", "role"),
                    "is_general_technique",
                )
            },
        ),
        (
            "Description",
            {
                "fields": (
                    "description",
                    "harm_categories",
                    "authors",
                    "groups",
                    "source",
                    ("date_added", "added_by"),
                )
            },
        ),
        ("Template", {"fields": ("parameters", "metadata", "response_json_schema")}),
        (
            "Simulated conversation",
            {
                "classes": ("collapse",),
                "fields": (
                    "num_turns",
                    "adversarial_chat_system_prompt_path",
                    "simulated_target_system_prompt_path",
                    "next_message_system_prompt_path",
                ),
            },
        ),
        (
            "Storage",
            {
                "classes": ("collapse",),
                "fields": (
                    "media",
                    "value_sha256",
                    "pyrit_version",
                    "extra",
                    ("created_at", "updated_at"),
                ),
            },
        ),
    )

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "date_added":
            kwargs.setdefault("initial", timezone.now)
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Seed, form: Any, change: bool) -> None:
        prepare_seed(obj, request)
        if "dataset" in form.changed_data and obj.dataset is not None:
            # Keep PyRIT's stored dataset name in step with the curated dataset.
            obj.dataset_name = obj.dataset.name
        super().save_model(request, obj, form, change)

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: Seed) -> str:
        return short_id(obj.pk)

    @admin.display(description="value")
    def value_preview(self, obj: Seed) -> str:
        # The whole value is loaded anyway: __str__ (the row checkbox's label) reads it.
        return truncate(obj.value)

    @admin.display(description="group")
    def group_link(self, obj: Seed) -> SafeString | str:
        if obj.group_id is None:
            return "-"
        return admin_link(SeedGroup, obj.group_id, obj.group.alias or short_id(obj.group_id))


class TypedSeedAdmin(SeedAdmin):
    """A seed admin restricted to one seed type (the proxy model's manager filters the rows)."""

    list_filter = ("dataset", "data_type", "is_general_technique")


@admin.register(SeedPrompt)
class SeedPromptAdmin(TypedSeedAdmin):
    """Prompt seeds only."""


@admin.register(SeedObjective)
class SeedObjectiveAdmin(TypedSeedAdmin):
    """Objective seeds only (always text, never a general technique)."""

    list_filter = ("dataset",)


@admin.register(SeedSimulatedConversation)
class SeedSimulatedConversationAdmin(TypedSeedAdmin):
    """Simulated-conversation seeds only; their settings are under "Simulated conversation"."""

    list_display = (*SeedAdmin.list_display, "num_turns")
    list_filter = ("dataset",)


# --- Groups -------------------------------------------------------------------------------------


class SeedInline(admin.TabularInline):
    """The seeds of a group in PyRIT's order: objective, simulated conversation, then sequence."""

    model = Seed
    form = SeedAdminForm
    extra = 0
    show_change_link = True
    fields = (
        "seed_type",
        "sequence",
        "role",
        "data_type",
        "value",
        "name",
        "is_general_technique",
    )

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "value":
            # Compact rows; the seed's own page has the full editor.
            kwargs["widget"] = forms.Textarea(attrs={"rows": 2, "cols": 60})
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).in_group_order()


@admin.register(SeedGroup)
class SeedGroupAdmin(LargeTableAdminMixin, admin.ModelAdmin):
    """Seed groups (one test case each), with their seeds editable inline."""

    list_display = ("short_id", "alias", "kind", "seed_count", "created_at")
    list_display_links = ("short_id", "alias")
    list_filter = ("kind",)
    ordering = ("-created_at", "-id")
    uuid_search_fields = ("id",)
    search_fields = ("id__exact", "alias__icontains")
    search_help_text = "A UUID finds a group by its id (PyRIT's prompt_group_id), or an alias."
    readonly_fields = ("id", "created_at")
    inlines = (SeedInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if is_changelist(request, self.opts):
            queryset = queryset.annotate(seed_count=Count("seeds"))
        return queryset

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        seeds = formset.save(commit=False)
        for seed in formset.deleted_objects:
            seed.delete()
        for seed in seeds:
            prepare_seed(seed, request)
            seed.save()
        formset.save_m2m()

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: SeedGroup) -> str:
        return short_id(obj.pk)

    @admin.display(description="seeds", ordering="seed_count")
    def seed_count(self, obj: SeedGroup) -> int:
        return obj.seed_count
