"""The curators' admin for seeds: datasets, seeds (and an admin per seed type) and seed groups.

Unlike PyRIT memory, seeds are curated here, so these admins are editable — but every save
goes through ``seeds.services`` (the functions the API and the YAML importer use), so the
same rules hold everywhere and every change lands in the history (django-simple-history,
"History" button). The seed table can grow large (public jailbreak datasets): lists share the
memory admin's bounded paginator and show value previews instead of whole templates.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import Count, JSONField, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from simple_history.admin import SimpleHistoryAdmin
from simple_history.template_utils import HistoricalRecordContextHelper

from redteam.core import identifiers as ids
from redteam.core.admin import (
    LargeTableAdminMixin,
    admin_changelist_url,
    admin_link,
    is_changelist,
    pretty_json,
    short_id,
    truncate,
)
from redteam.core.choices import is_media_value
from redteam.core.errors import InvalidMemory
from redteam.core.forms import StoredValuesAdminMixin
from seeds import admin_views, services, templating
from seeds.admin_filters import (
    AuthorFilter,
    HarmCategoryFilter,
    HasParametersFilter,
    IsTemplateFilter,
    SeedGroupFilter,
    TeamFilter,
)
from seeds.admin_forms import (
    DatasetChoiceForm,
    HarmCategoriesForm,
    JSONDefaultsForm,
    SeedAdminForm,
    SeedInlineFormSet,
)
from seeds.choices import SeedType
from seeds.models import (
    Seed,
    SeedDataset,
    SeedGroup,
    SeedObjective,
    SeedPrompt,
    SeedSimulatedConversation,
)


class _ReadableChanges(HistoricalRecordContextHelper):
    """A changed value as people read it: a JSON list as its items, an object as JSON, no
    value as "—" (simple_history shows Python's repr of a dict and "None")."""

    def prepare_delta_change_value(self, change: Any, value: Any) -> Any:
        value = super().prepare_delta_change_value(change, value)
        if value is None:
            return "—"
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            return ", ".join(str(v) for v in value) or "(none)"
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False)
        return value


class CuratedHistoryAdmin(StoredValuesAdminMixin, SimpleHistoryAdmin):
    """History pages with the changed fields of each version as a list people read, and the
    change-reason column only when a version has a reason; no "revert" (it would bypass the
    services' checks). JSON lists get small boxes."""

    history_list_display = ("changed_fields",)
    object_history_list_template = "admin/seeds/history_list.html"

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if isinstance(db_field, JSONField):
            kwargs["widget"] = forms.Textarea(attrs={"rows": 2, "cols": 60})
        elif db_field.name in ("source", "description"):
            kwargs["widget"] = forms.Textarea(attrs={"rows": 2, "cols": 80})
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def revert_disabled(self, request: HttpRequest, obj: Any = None) -> bool:
        return True

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        # Redline's writers give no change reason: a column of "None" would say nothing.
        versions = self.model.history.filter(**{self.model._meta.pk.attname: unquote(object_id)})
        with_reason = versions.exclude(history_change_reason=None).exclude(history_change_reason="")
        context = {**(extra_context or {}), "show_change_reason": with_reason.exists()}
        return super().history_view(request, object_id, extra_context=context)

    def get_historical_record_context_helper(
        self, request: HttpRequest, historical_record: Any
    ) -> HistoricalRecordContextHelper:
        return _ReadableChanges(self.model, historical_record)

    @admin.display(description="Changed fields")
    def changed_fields(self, record: Any) -> list[str]:
        """The fields this version changed, by their names for people (``Value sha256``);
        empty for the first version (the *Comment* column says "Created")."""
        previous = record.prev_record
        if previous is None:
            return []
        delta = record.diff_against(previous)
        return [capfirst(self.model._meta.get_field(c.field).verbose_name) for c in delta.changes]


# --- Datasets -----------------------------------------------------------------------------------


@admin.register(SeedDataset)
class SeedDatasetAdmin(LargeTableAdminMixin, CuratedHistoryAdmin):
    """Seed datasets: their PyRIT defaults, what they hold (counts), import and export."""

    form = JSONDefaultsForm
    list_display = ("name", "seed_type", "data_type", "seeds_link", "added_by", "date_added")
    list_filter = ("seed_type", "data_type")
    search_fields = ("name",)
    readonly_fields = ("seeds_link", "contents", "created_at", "updated_at")
    change_list_template = "admin/seeds/seeddataset/change_list.html"
    change_form_template = "admin/seeds/seeddataset/change_form.html"
    fieldsets = (
        (None, {"fields": ("name", "seeds_link", "contents")}),
        (
            "PyRIT dataset defaults",
            {
                "description": "The dataset-level keys of PyRIT's YAML format. New seeds "
                "added from this page start from them.",
                "fields": (
                    "default_seed_name",
                    "description",
                    "harm_categories",
                    "authors",
                    "groups",
                    "source",
                    ("data_type", "seed_type"),
                    ("date_added", "added_by"),
                ),
            },
        ),
        ("Storage", {"classes": ("collapse",), "fields": ("extra", ("created_at", "updated_at"))}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The seed count of every listed dataset in the same query as the rows.
        return super().get_queryset(request).annotate(seed_count=Count("seeds"))

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        return [
            path(
                "import/",
                wrap(lambda request: admin_views.import_view(self, request)),
                name="seeds_seeddataset_import",
            ),
            path(
                "<path:object_id>/export/",
                wrap(
                    lambda request, object_id: admin_views.dataset_export_view(
                        self, request, object_id
                    )
                ),
                name="seeds_seeddataset_export",
            ),
            *super().get_urls(),
        ]

    def save_model(self, request: HttpRequest, obj: SeedDataset, form: Any, change: bool) -> None:
        services.seed_dataset_save(dataset=obj, actor=request.user)

    def delete_model(self, request: HttpRequest, obj: SeedDataset) -> None:
        services.seed_dataset_delete(dataset=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for dataset in queryset:
            services.seed_dataset_delete(dataset=dataset, actor=request.user)

    @admin.display(description="seeds", ordering="seed_count")
    def seeds_link(self, obj: SeedDataset) -> SafeString:
        if obj.pk is None:
            return format_html("{}", "-")
        count = getattr(obj, "seed_count", None)
        if count is None:
            count = obj.seeds.count()
        add_url = reverse("admin:seeds_seed_add") + f"?dataset={obj.pk}"
        return format_html(
            '<a href="{}">{} seeds</a> · <a href="{}">add a seed</a>',
            admin_changelist_url(Seed, dataset__id__exact=obj.pk),
            count,
            add_url,
        )

    @admin.display(description="contents")
    def contents(self, obj: SeedDataset) -> SafeString:
        """Counts by seed type, data type and harm category, each linking to those seeds."""
        if obj.pk is None:
            return format_html("{}", "-")
        seeds = Seed.objects.filter(dataset=obj).order_by()
        by_type = seeds.values_list("seed_type").annotate(n=Count("pk")).order_by("seed_type")
        by_data = seeds.values_list("data_type").annotate(n=Count("pk")).order_by("data_type")
        harms: Counter[str] = Counter()
        for categories in seeds.values_list("harm_categories", flat=True):
            harms.update(dict.fromkeys(categories or [], 1))
        grouped = seeds.filter(group__isnull=False).values("group").distinct().count()
        base = admin_changelist_url(Seed, dataset__id__exact=obj.pk)

        def chips(rows: Any, param: str) -> SafeString:
            return format_html_join(
                " ",
                '<a class="seed-chip" href="{}&amp;{}={}">{} <b>{}</b></a>',
                ((base, param, value, value, n) for value, n in rows),
            ) or format_html("{}", "none")

        return format_html(
            '<table class="seed-counts"><tr><th>seed type</th><td>{}</td></tr>'
            "<tr><th>data type</th><td>{}</td></tr>"
            "<tr><th>harm category</th><td>{}</td></tr>"
            "<tr><th>seed groups</th><td>{}</td></tr></table>",
            chips(by_type, "seed_type__exact"),
            chips(by_data, "data_type__exact"),
            chips(sorted(harms.items()), "harm_category"),
            grouped,
        )


# --- Seeds --------------------------------------------------------------------------------------


@admin.register(Seed)
class SeedAdmin(LargeTableAdminMixin, CuratedHistoryAdmin):
    """Every seed, whatever its type; editable through the seed services.

    Search: a UUID finds a seed by id (indexed); other text matches names and values
    (``icontains``, a scan of the seed table).
    """

    form = SeedAdminForm
    change_form_template = "admin/seeds/seed/change_form.html"
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
    list_filter = (
        "dataset",
        "seed_type",
        "data_type",
        HarmCategoryFilter,
        AuthorFilter,
        TeamFilter,
        SeedGroupFilter,
        IsTemplateFilter,
        HasParametersFilter,
        "is_general_technique",
        ("date_added", admin.DateFieldListFilter),
    )
    ordering = ("-created_at", "-id")
    uuid_search_fields = ("id",)
    search_fields = ("id__exact", "name__icontains", "value__icontains")
    search_help_text = "A UUID finds a seed by id; other text is searched in names and values."
    autocomplete_fields = ("dataset",)
    raw_id_fields = ("group",)
    readonly_fields = (
        "value_sha256",
        "seed_identifier",
        "media_preview",
        "template_info",
        "created_at",
        "updated_at",
    )
    actions = (
        "move_to_dataset",
        "copy_to_dataset",
        "add_harm_categories",
        "remove_harm_categories",
        "export_yaml",
    )
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
        ("Media", {"fields": ("media_preview", "media_file")}),
        ("Duplicate detection", {"fields": ("value_sha256", "seed_identifier")}),
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
        (
            "Template",
            {"fields": ("template_info", "parameters", "metadata", "response_json_schema")},
        ),
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
                "fields": ("pyrit_version", "extra", ("created_at", "updated_at")),
            },
        ),
    )

    def get_urls(self) -> list:
        opts = self.opts
        return [
            path(
                "<path:object_id>/preview/",
                self.admin_site.admin_view(
                    lambda request, object_id: admin_views.template_preview_view(
                        self, request, object_id
                    )
                ),
                name=f"{opts.app_label}_{opts.model_name}_preview",
            ),
            *super().get_urls(),
        ]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        # A class of its own per request (the admin builds one each time): who is editing.
        return type(form.__name__, (form,), {"current_user": request.user})

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """A new seed of ``?dataset=<pk>`` starts from that dataset's PyRIT defaults."""
        initial = super().get_changeform_initial_data(request)
        initial.setdefault("date_added", timezone.now())
        # Only a plain 64-bit number is looked up: anything else from the URL is ignored.
        raw = request.GET.get("dataset", "")
        dataset = None
        if raw.isascii() and raw.isdigit() and int(raw) < 2**63:
            dataset = SeedDataset.objects.filter(pk=int(raw)).first()
        if dataset is None:
            # The admin copied the raw value in; the dataset select cannot render it.
            initial.pop("dataset", None)
        else:
            initial.update(
                {
                    "dataset": dataset.pk,
                    "dataset_name": dataset.name,
                    "name": dataset.default_seed_name or "",
                    "description": dataset.description or "",
                    "harm_categories": dataset.harm_categories,
                    "authors": dataset.authors,
                    "groups": dataset.groups,
                    "source": dataset.source or "",
                    "data_type": dataset.data_type,
                }
            )
            if self.model is Seed:
                initial["seed_type"] = dataset.seed_type
        return initial

    def save_model(self, request: HttpRequest, obj: Seed, form: Any, change: bool) -> None:
        spec = form.spec
        saved = services.seed_save(
            spec=spec,
            dataset=obj.dataset,
            group=obj.group,
            media_name=getattr(form.cleaned_data.get("media_file"), "name", ""),
            actor=request.user,
        )
        obj.pk = saved.pk
        for warning in services.seed_template_warnings(spec):
            messages.warning(request, f"Template: {warning}.")
        if is_media_value(saved.data_type, saved.value) and saved.media_id is None:
            messages.warning(request, "Media not uploaded yet: this seed has no file.")

    def delete_model(self, request: HttpRequest, obj: Seed) -> None:
        services.seed_delete(seeds=Seed.objects.filter(pk=obj.pk), actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        services.seed_delete(seeds=queryset, actor=request.user)

    # --- read-only displays ---

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

    @admin.display(description="seed identifier")
    def seed_identifier(self, obj: Seed) -> SafeString:
        """PyRIT's ``build_seed_identifier`` (contract §10.8): what attack identifiers embed."""
        if obj.pk is None or obj._state.adding:
            return format_html("{}", "computed when the seed is saved")
        identifier = ids.build_seed_identifier(obj)
        return format_html(
            '<span class="hash">{}</span>{}', identifier.hash, pretty_json(identifier.to_dict())
        )

    @admin.display(description="file")
    def media_preview(self, obj: Seed) -> SafeString:
        if obj.pk is None or obj.media_id is None:
            if obj.pk is not None and is_media_value(obj.data_type, obj.value):
                return format_html(
                    '<span class="seed-unresolved">Unresolved media: no file for “{}” yet. '
                    "Upload it below.</span>",
                    obj.value.strip(),
                )
            return format_html("{}", "no file")
        blob = obj.media
        url = reverse("api-media-detail", args=[blob.sha256])
        kind = blob.content_type.split("/", 1)[0]
        if kind == "image":
            player = format_html('<img class="seed-media" src="{}" alt="seed image">', url)
        elif kind in ("audio", "video"):
            player = format_html('<{} class="seed-media" controls src="{}"></{}>', kind, url, kind)
        else:
            player = format_html('<a href="{}">download</a>', url)
        return format_html(
            '{}<div class="help">{} · {} bytes · sha256 <span class="hash">{}</span></div>',
            player,
            blob.content_type,
            blob.size,
            blob.sha256,
        )

    @admin.display(description="template")
    def template_info(self, obj: Seed) -> SafeString:
        if obj.pk is None:
            return format_html("{}", "-")
        report = templating.analyse(obj.value, obj.parameters)
        if not report.is_template and not obj.parameters:
            return format_html("{}", "not a template")
        parts = []
        if report.syntax_error:
            parts.append(
                format_html('<span class="errornote">syntax error, {}</span>', report.syntax_error)
            )
        if report.used:
            parts.append(format_html("placeholders: {}", ", ".join(report.used)))
        if report.path_variables:
            parts.append(format_html("PyRIT path variables: {}", ", ".join(report.path_variables)))
        for warning in report.warnings:
            parts.append(format_html('<span class="seed-warning">{}</span>', warning))
        url = reverse("admin:seeds_seed_preview", args=[obj.pk])
        parts.append(format_html('<a class="button" href="{}">Preview the template</a>', url))
        return format_html_join("", "<div>{}</div>", ((p,) for p in parts))

    # --- bulk actions ---

    def _target_dataset(self, request: HttpRequest, queryset: QuerySet, action: str, verb: str):
        form = DatasetChoiceForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            return form.cleaned_data["dataset"], None
        page = admin_views.action_page(
            self,
            request,
            queryset,
            action=action,
            title=f"{verb} seeds to a dataset",
            form=form,
            button=verb,
        )
        return None, page

    @admin.action(description="Move selected seeds to a dataset…", permissions=["change"])
    def move_to_dataset(self, request: HttpRequest, queryset: QuerySet) -> Any:
        dataset, page = self._target_dataset(request, queryset, "move_to_dataset", "Move")
        if page is not None:
            return page
        moved = services.seeds_move_to_dataset(seeds=queryset, dataset=dataset, actor=request.user)
        self.message_user(request, f"Moved {moved} seeds to {dataset.name}.", messages.SUCCESS)
        return None

    @admin.action(description="Copy selected seeds to a dataset…", permissions=["add"])
    def copy_to_dataset(self, request: HttpRequest, queryset: QuerySet) -> Any:
        dataset, page = self._target_dataset(request, queryset, "copy_to_dataset", "Copy")
        if page is not None:
            return page
        copied, skipped = services.seeds_copy_to_dataset(
            seeds=queryset, dataset=dataset, actor=request.user
        )
        self.message_user(
            request,
            f"Copied {copied} seeds to {dataset.name}; {skipped} were already there.",
            messages.SUCCESS,
        )
        return None

    def _harm_action(self, request: HttpRequest, queryset: QuerySet, *, add: bool) -> Any:
        form = HarmCategoriesForm(request.POST if "apply" in request.POST else None)
        if not (form.is_bound and form.is_valid()):
            verb = "Add" if add else "Remove"
            return admin_views.action_page(
                self,
                request,
                queryset,
                action="add_harm_categories" if add else "remove_harm_categories",
                title=f"{verb} harm categories",
                form=form,
                button=verb,
            )
        categories = form.cleaned_data["categories"]
        changed = services.seeds_change_harm_categories(
            seeds=queryset,
            add=categories if add else (),
            remove=() if add else categories,
            actor=request.user,
        )
        self.message_user(request, f"Changed the harm categories of {changed} seeds.")
        return None

    @admin.action(description="Add harm categories…", permissions=["change"])
    def add_harm_categories(self, request: HttpRequest, queryset: QuerySet) -> Any:
        return self._harm_action(request, queryset, add=True)

    @admin.action(description="Remove harm categories…", permissions=["change"])
    def remove_harm_categories(self, request: HttpRequest, queryset: QuerySet) -> Any:
        return self._harm_action(request, queryset, add=False)

    @admin.action(description="Export selected seeds to YAML", permissions=["view"])
    def export_yaml(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse:
        return admin_views.seeds_export_response(queryset)


class TypedSeedAdmin(SeedAdmin):
    """A seed admin restricted to one seed type (the proxy model's manager filters the rows)."""

    list_filter = tuple(f for f in SeedAdmin.list_filter if f != "seed_type")


@admin.register(SeedPrompt)
class SeedPromptAdmin(TypedSeedAdmin):
    """Prompt seeds only."""


@admin.register(SeedObjective)
class SeedObjectiveAdmin(TypedSeedAdmin):
    """Objective seeds only (always text, never a general technique)."""


@admin.register(SeedSimulatedConversation)
class SeedSimulatedConversationAdmin(TypedSeedAdmin):
    """Simulated-conversation seeds only; their settings are under "Simulated conversation"."""

    list_display = (*SeedAdmin.list_display, "num_turns")


# --- Groups -------------------------------------------------------------------------------------


class SeedInline(StoredValuesAdminMixin, admin.TabularInline):
    """The seeds of a group in PyRIT's order: objective, simulated conversation, then sequence."""

    model = Seed
    formset = SeedInlineFormSet
    form = JSONDefaultsForm
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
            kwargs["widget"] = forms.Textarea(attrs={"rows": 2, "cols": 40})
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).in_group_order()


@admin.register(SeedGroup)
class SeedGroupAdmin(LargeTableAdminMixin, CuratedHistoryAdmin):
    """Seed groups (one test case each): the objective and the ordered prompts, edited together
    and checked by PyRIT's group rules before anything is saved."""

    list_display = ("short_id", "alias", "kind", "seed_count", "created_at")
    list_display_links = ("short_id", "alias")
    list_filter = ("kind",)
    ordering = ("-created_at", "-id")
    uuid_search_fields = ("id",)
    search_fields = ("id__exact", "alias__icontains")
    search_help_text = "A UUID finds a group by its id (PyRIT's prompt_group_id), or an alias."
    fields = ("id", "alias", "kind", "objective", "seeds_link", "created_at")
    readonly_fields = ("id", "kind", "objective", "seeds_link", "created_at")
    inlines = (SeedInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if is_changelist(request, self.opts):
            queryset = queryset.annotate(seed_count=Count("seeds"))
        return queryset

    def save_model(self, request: HttpRequest, obj: SeedGroup, form: Any, change: bool) -> None:
        # Saved together with its seeds in save_related (one service call, one transaction).
        if not change:
            services.seed_group_save(group=obj, members=[], actor=request.user)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        for formset in formsets:
            if isinstance(formset, SeedInlineFormSet):
                members = formset.member_specs()
                for spec in members:
                    spec.added_by = spec.added_by or request.user.get_username()
                try:
                    services.seed_group_save(
                        group=form.instance,
                        members=members,
                        deleted=formset.deleted_ids(),
                        actor=request.user,
                    )
                except InvalidMemory as exc:  # pragma: no cover - the formset checked first
                    messages.error(request, str(exc))
                # What formset.save() would have recorded, for the admin's change message.
                formset.new_objects = [f.instance for f in formset.extra_forms if f.has_changed()]
                formset.changed_objects = [
                    (f.instance, f.changed_data)
                    for f in formset.initial_forms
                    if f.has_changed() and f.instance.pk not in formset.deleted_ids()
                ]
                formset.deleted_objects = [
                    f.instance
                    for f in formset.initial_forms
                    if f.instance.pk in formset.deleted_ids()
                ]

    def delete_model(self, request: HttpRequest, obj: SeedGroup) -> None:
        services.seed_group_delete(group=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for group in queryset:
            services.seed_group_delete(group=group, actor=request.user)

    @admin.display(description="id", ordering="id")
    def short_id(self, obj: SeedGroup) -> str:
        return short_id(obj.pk)

    @admin.display(description="seeds", ordering="seed_count")
    def seed_count(self, obj: SeedGroup) -> int:
        return obj.seed_count

    @admin.display(description="objective")
    def objective(self, obj: SeedGroup) -> SafeString:
        if obj.pk is None:
            return format_html("{}", "-")
        objective = obj.seeds.filter(seed_type=SeedType.OBJECTIVE).first()
        if objective is None:
            return format_html("{}", "none (add a seed of type objective below)")
        return admin_link(Seed, objective.pk, truncate(objective.value, 200))

    @admin.display(description="seeds")
    def seeds_link(self, obj: SeedGroup) -> SafeString:
        if obj.pk is None:
            return format_html("{}", "-")
        return format_html(
            '<a href="{}">these seeds in the seed list</a>',
            admin_changelist_url(Seed, group=obj.pk),
        )
