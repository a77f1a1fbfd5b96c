"""Admin for API tokens: create one (shown once), see which are in use, revoke them.

The hash is never shown or editable. Adding a token goes through ``api_token_create``, the
same service as ``manage.py create_api_token``; the plain token appears once, in the success
message.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db.models import QuerySet
from django.http import HttpRequest

from redteam.core.forms import StoredValuesAdminMixin, StoredValuesModelForm
from redteam.models import ApiToken
from redteam.tokens import api_token_create, api_tokens_revoke


class ApiTokenAddForm(StoredValuesModelForm):
    """What the admin chooses when creating a token; the key is generated."""

    class Meta:
        model = ApiToken
        fields = ["user", "name", "scope", "expires_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(StoredValuesAdminMixin, admin.ModelAdmin):
    """Tokens of every user; a token's user, scope and key never change after creation."""

    list_display = [
        "key_prefix",
        "user",
        "name",
        "scope",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_display_links = ["key_prefix", "name"]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter), "created_at"]
    list_select_related = ["user"]
    search_fields = ["key_prefix", "name", "user__username"]
    autocomplete_fields = ["user"]
    date_hierarchy = "created_at"
    actions = ["revoke_selected"]
    fields = [
        "user",
        "name",
        "scope",
        "key_prefix",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]

    def get_form(
        self, request: HttpRequest, obj: ApiToken | None = None, change: bool = False, **kwargs
    ) -> Any:
        if obj is None:
            kwargs["form"] = ApiTokenAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        if obj is None:
            return list(ApiTokenAddForm.Meta.fields)
        return self.fields

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        if obj is None:
            return []
        return [field for field in self.fields if field != "name"]

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = api_token_create(
            user=obj.user, scope=obj.scope, name=obj.name, expires_at=obj.expires_at
        )
        # The admin goes on with ``obj`` (log entry, redirect): make it the saved row.
        obj.pk = token.pk
        obj.refresh_from_db()
        obj._state.adding = False
        messages.success(
            request,
            f"The new API token is {raw} — copy it now: it is stored hashed and "
            f"will not be shown again.",
        )

    @admin.action(description="Revoke selected tokens", permissions=["change"])
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = api_tokens_revoke(tokens=queryset)
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)


# Django's own user and group admins, re-registered with forms that keep what the user did not
# change: the user form's date-time boxes show whole seconds, so a save dropped microseconds.
admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class RedlineUserAdmin(StoredValuesAdminMixin, UserAdmin):
    """Django's user admin, saving only what was changed."""


@admin.register(Group)
class RedlineGroupAdmin(StoredValuesAdminMixin, GroupAdmin):
    """Django's group admin, saving only what was changed."""
