"""The leads' webhook tools: endpoints (secret write-only, shown once) and the delivery log.

The secret is never rendered back: the form has a write-only field for a new one, and a
generated secret is shown on the page the save answers with (not in a flash message, which
would travel through the session or a cookie), with ``Cache-Control: no-store``.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html

from memory.findings.admin import ReadOnlyAdmin
from memory.findings.webhooks import services, transport
from memory.models import SUBSCRIBABLE_EVENTS, WebhookDelivery, WebhookEndpoint
from redteam.core.admin import LargeTableAdminMixin


class WebhookEndpointForm(forms.ModelForm):
    """The endpoint without its secret; ``new_secret`` replaces it when given."""

    events = forms.MultipleChoiceField(
        choices=[(e.value, e.label) for e in SUBSCRIBABLE_EVENTS],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    new_secret = forms.CharField(
        required=False,
        strip=True,
        min_length=16,
        max_length=128,
        widget=forms.PasswordInput(render_value=False),
        label="Secret",
        help_text="Write-only. Leave empty to keep the current secret; a new endpoint without "
        "one gets a generated secret, shown once after saving.",
    )
    generate_secret = forms.BooleanField(
        required=False, label="Generate a new secret (shown once after saving)"
    )

    class Meta:
        model = WebhookEndpoint
        fields = ("name", "url", "events", "format", "active")

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            transport.check_literal(url, allow_private=settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES)
        except transport.Refused as refused:
            raise ValidationError(str(refused)) from None
        return url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ("name", "format", "subscribed", "active", "created_by", "created_at")
    list_filter = ("active", "format")
    list_select_related = ("created_by",)
    search_fields = ("name",)
    readonly_fields = ("created_by", "created_at", "updated_at")
    fields = (
        "name",
        "url",
        "events",
        "format",
        "active",
        "new_secret",
        "generate_secret",
        "created_by",
        "created_at",
        "updated_at",
    )
    actions = ("send_test_event",)

    @admin.display(description="events")
    def subscribed(self, obj: WebhookEndpoint) -> str:
        return ", ".join(obj.events) or "—"

    def save_model(
        self, request: HttpRequest, obj: WebhookEndpoint, form: Any, change: bool
    ) -> None:
        data = form.cleaned_data
        shown = services.webhook_endpoint_save(
            endpoint=obj,
            actor=request.user,
            new_secret=data.get("new_secret") or None,
            generate_secret=bool(data.get("generate_secret")),
        )
        if shown:
            request._webhook_secret_shown = shown  # type: ignore[attr-defined]

    def _secret_page(self, request: HttpRequest, obj: WebhookEndpoint) -> HttpResponse | None:
        secret = getattr(request, "_webhook_secret_shown", None)
        if not secret:
            return None
        response = TemplateResponse(
            request,
            "admin/memory/webhookendpoint/secret.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "endpoint": obj,
                "secret": secret,
                "title": f"Secret of {obj.name}",
            },
        )
        response["Cache-Control"] = "no-store"
        return response

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None):
        return self._secret_page(request, obj) or super().response_add(
            request, obj, post_url_continue
        )

    def response_change(self, request: HttpRequest, obj: Any):
        return self._secret_page(request, obj) or super().response_change(request, obj)

    @admin.action(description="Send a test event", permissions=["change"])
    def send_test_event(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for delivery in services.webhook_endpoints_ping(endpoints=list(queryset)):
            level = messages.SUCCESS if delivery.delivered_at else messages.ERROR
            outcome = (
                f"delivered (HTTP {delivery.status_code})"
                if delivery.delivered_at
                else f"not delivered: {delivery.error}"
            )
            self.message_user(request, f"{delivery.endpoint.name}: test event {outcome}", level)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(LargeTableAdminMixin, ReadOnlyAdmin):
    """The delivery log: read-only, with "retry now"."""

    list_display = (
        "created_at",
        "event",
        "endpoint",
        "state",
        "attempts",
        "status_code",
        "next_attempt_at",
        "delivered_at",
    )
    list_filter = ("state", "event", "endpoint", "created_at")
    list_select_related = ("endpoint",)
    # A UUID goes to the primary key (LargeTableAdminMixin); nothing else is searched.
    uuid_search_fields = ("id",)
    search_fields = ("id__exact",)
    date_hierarchy = None
    ordering = ("-created_at",)
    fields = (
        "id",
        "event",
        "event_id",
        "endpoint",
        "state",
        "attempts",
        "status_code",
        "error",
        "response_excerpt",
        "next_attempt_at",
        "last_attempt_at",
        "delivered_at",
        "created_at",
        "payload_json",
    )
    readonly_fields = fields
    actions = ("retry_now",)

    @admin.display(description="payload")
    def payload_json(self, obj: WebhookDelivery) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.payload, indent=2, ensure_ascii=False))

    def has_retry_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("memory.change_webhookdelivery")

    @admin.action(description="Retry now", permissions=["retry"])
    def retry_now(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        queued, sent = services.webhook_deliveries_retry(deliveries=queryset)
        delivered = sum(1 for d in sent if d.delivered_at)
        later = queued - len(sent)
        self.message_user(
            request,
            f"{queued} queued again; {len(sent)} tried now, {delivered} delivered"
            + (f"; {later} left to the worker." if later else "."),
            messages.SUCCESS if delivered == queued else messages.WARNING,
        )
