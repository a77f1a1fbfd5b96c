"""Admin for operations, findings and reports: the curators' view, writing through the services.

Saving a finding here goes through ``finding_create`` / ``finding_update`` /
``finding_status_set`` like the pages and the API do, so the lifecycle rules, the seals and the
history are the same whichever door a change comes through. Evidence is attached on the
finding page or the API (it must be sealed); here it is read-only, with its seal state.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import ActionLocation
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from memory.findings import lifecycle, services
from memory.findings.selectors import seal_checks
from memory.models import (
    CrosswalkLoad,
    CrosswalkMapping,
    CrosswalkOrigin,
    Evidence,
    Finding,
    FindingComment,
    Framework,
    FrameworkEntry,
    Operation,
    Report,
    Retest,
)
from memory.storage import crosswalk
from redteam.core.errors import InvalidMemory


class EvidenceInline(admin.TabularInline):
    model = Evidence
    extra = 0
    can_delete = False
    fields = ("kind", "ref", "seal_state", "seal", "note", "attached_by", "attached_at")
    readonly_fields = fields
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).select_related("attached_by")

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any):
        # Every seal of the finding checked at once (inline instances live for one request).
        evidence = list(Evidence.objects.filter(finding=obj)) if obj is not None else []
        self._states = {check.evidence.pk: check.state for check in seal_checks(evidence)}
        return super().get_formset(request, obj, **kwargs)

    @admin.display(description="seal now")
    def seal_state(self, obj: Evidence) -> str:
        return getattr(self, "_states", {}).get(obj.pk, "—")


class CommentInline(admin.TabularInline):
    model = FindingComment
    extra = 0
    can_delete = False
    fields = ("author_name", "body", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RetestInline(admin.TabularInline):
    model = Retest
    extra = 0
    can_delete = False
    fields = ("attack_ref", "attack_outcome", "result", "recorded_by", "recorded_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


EDITABLE_FIELDS = services.EDITABLE


class FindingAdminForm(forms.ModelForm):
    """Refuses a status the lifecycle does not allow from the stored one."""

    class Meta:
        model = Finding
        fields = (*EDITABLE_FIELDS, "status")

    def clean_status(self) -> str:
        status = self.cleaned_data["status"]
        stored = self.instance.status if self.instance.pk else None
        if stored is not None and status != stored and not lifecycle.may_move(stored, status):
            allowed = lifecycle.labels(lifecycle.next_statuses(stored))
            raise ValidationError(
                f"{lifecycle.label(stored)} can move to {allowed}, not {lifecycle.label(status)}."
            )
        return status


@admin.register(Finding)
class FindingAdmin(SimpleHistoryAdmin):
    form = FindingAdminForm
    list_display = ("title", "severity", "status", "operation", "owner", "created_at")
    list_filter = ("status", "severity", "operation")
    list_select_related = ("operation", "owner")
    search_fields = ("title", "description", "id__exact")
    raw_id_fields = ("owner",)
    fields = (
        "title",
        "description",
        "severity",
        "status",
        "operation",
        "owner",
        "harm_categories",
        "framework_tags",
        "reproduction_steps",
        "remediation",
        "found_objective_sha256",
        "found_eval_hash",
        "found_target_hash",
        "found_at",
        "pyrit_id",
        "created_by",
        "created_at",
    )
    readonly_fields = (
        "found_objective_sha256",
        "found_eval_hash",
        "found_target_hash",
        "found_at",
        "pyrit_id",
        "created_by",
        "created_at",
    )
    inlines = (EvidenceInline, RetestInline, CommentInline)

    def save_model(self, request: HttpRequest, obj: Finding, form: Any, change: bool) -> None:
        data = form.cleaned_data
        try:
            if not change:
                created = services.finding_create(
                    actor=request.user,
                    status=data["status"],
                    **{k: data[k] for k in services.EDITABLE if k in data},
                )
                obj.pk = created.pk
                obj._state.adding = False
                return
            edits = {k: data[k] for k in services.EDITABLE if k in form.changed_data}
            if edits:
                services.finding_update(finding=obj, actor=request.user, **edits)
            if "status" in form.changed_data:
                current = Finding.objects.get(pk=obj.pk)
                services.finding_status_set(
                    finding=current, status=data["status"], actor=request.user
                )
        except InvalidMemory as error:
            messages.error(request, f"Not saved: {error}")


@admin.register(Operation)
class OperationAdmin(SimpleHistoryAdmin):
    list_display = ("name", "starts_on", "ends_on", "pyrit_operation", "attack_filter")
    search_fields = ("name", "pyrit_operation")
    filter_horizontal = ("members",)
    readonly_fields = ("pyrit_id", "created_by", "created_at")

    def save_model(self, request: HttpRequest, obj: Operation, form: Any, change: bool) -> None:
        data = form.cleaned_data
        try:
            saved = services.operation_save(
                actor=request.user,
                operation=obj if change else None,
                name=data["name"],
                description=data.get("description", ""),
                scope=data.get("scope", ""),
                target_systems=data.get("target_systems") or [],
                starts_on=data.get("starts_on"),
                ends_on=data.get("ends_on"),
                pyrit_operation=data.get("pyrit_operation", ""),
                attack_filter=data.get("attack_filter", ""),
            )
        except InvalidMemory as error:
            messages.error(request, f"Not saved: {error}")
            return
        obj.pk = saved.pk
        obj._state.adding = False


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("title", "operation", "attack_count", "finding_count", "created_at")
    list_select_related = ("operation",)
    readonly_fields = (
        "title",
        "operation",
        "scope_query",
        "snapshot_sha256",
        "attack_count",
        "finding_count",
        "created_by",
        "created_at",
    )
    exclude = ("snapshot",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only through the services (sealed, or part of a finding's record)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Evidence)
class EvidenceRowAdmin(ReadOnlyAdmin):
    list_display = ("finding", "kind", "ref", "seal", "attached_by", "attached_at")
    list_select_related = ("finding", "attached_by")
    list_filter = ("kind",)
    search_fields = ("ref", "seal", "finding__title")
    raw_id_fields = ("finding", "attack_result", "conversation", "piece", "score")


@admin.register(FindingComment)
class FindingCommentAdmin(ReadOnlyAdmin):
    list_display = ("finding", "author_name", "created_at")
    list_select_related = ("finding",)


@admin.register(Retest)
class RetestAdmin(ReadOnlyAdmin):
    list_display = ("finding", "attack_ref", "result", "recorded_at")
    list_select_related = ("finding",)


# --- the framework crosswalk ---------------------------------------------------------------


class CrosswalkRowAdmin(admin.ModelAdmin):
    """Crosswalk rows are saved through ``crosswalk_row_save``: an edit marks the row so that
    loading a newer shipped crosswalk leaves it alone (docs/findings.md)."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        crosswalk.crosswalk_row_save(row=obj, adding=not change)


@admin.register(Framework)
class FrameworkAdmin(CrosswalkRowAdmin):
    list_display = ("key", "name", "edition", "position", "edited")
    fields = ("key", "name", "edition", "url", "position", "edited")
    readonly_fields = ("edited",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # The key is the prefix of every tag findings carry: fixed once made.
        return ("key", "edited") if obj is not None else ("edited",)


@admin.register(FrameworkEntry)
class FrameworkEntryAdmin(CrosswalkRowAdmin):
    list_display = ("tag", "title", "framework", "edited")
    list_filter = ("framework",)
    list_select_related = ("framework",)
    search_fields = ("tag", "title")
    fields = ("framework", "code", "tag", "title", "url", "position", "edited")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # Findings carry the tag: an entry's framework and code are fixed once made.
        if obj is not None:
            return ("framework", "code", "tag", "edited")
        return ("tag", "edited")


@admin.register(CrosswalkMapping)
class CrosswalkMappingAdmin(CrosswalkRowAdmin):
    list_display = (
        "source_kind",
        "source_value",
        "entry",
        "active",
        "origin",
        "edited",
        "shipped_version",
    )
    list_filter = ("source_kind", "active", "origin", "edited", "entry__framework")
    list_select_related = ("entry",)
    search_fields = ("source_value", "entry__tag", "entry__title")
    fields = ("source_kind", "source_value", "entry", "active", "note", "origin", "edited")
    readonly_fields = ("origin", "edited", "shipped_version")
    actions = ("switch_off", "switch_on")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A deleted shipped row would come back with the next load: switch it off instead.
        if obj is not None and obj.origin == CrosswalkOrigin.SHIPPED:
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(
        self, request: HttpRequest, action_location: Any = ActionLocation.CHANGE_LIST
    ) -> dict[str, Any]:
        # Deleting shipped rows in bulk would undo itself at the next load: switch them off.
        found = super().get_actions(request, action_location)
        found.pop("delete_selected", None)
        return found

    @admin.action(description="Switch the selected rows off (kept through reloads)")
    def switch_off(self, request: HttpRequest, queryset: Any) -> None:
        count = crosswalk.crosswalk_rows_switch(rows=queryset, active=False)
        messages.success(request, f"{count} row(s) switched off.")

    @admin.action(description="Switch the selected rows on")
    def switch_on(self, request: HttpRequest, queryset: Any) -> None:
        count = crosswalk.crosswalk_rows_switch(rows=queryset, active=True)
        messages.success(request, f"{count} row(s) switched on.")


@admin.register(CrosswalkLoad)
class CrosswalkLoadAdmin(ReadOnlyAdmin):
    list_display = ("version", "loaded_at", "reset", "added", "updated", "removed", "kept_edited")
