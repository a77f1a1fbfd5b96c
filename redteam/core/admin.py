"""Admin building blocks for tables with millions of rows, shared by the memory and seeds admins.

The Django admin assumes small tables: it runs ``SELECT COUNT(*)`` over the whole table on every
changelist (twice, with ``show_full_result_count``), offers facet counts, and searches with
``icontains`` across every search field at once. On a PyRIT memory with millions of pieces each
of those is a full scan. The pieces here keep every changelist query bounded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db import models
from django.db.models.functions import Substr
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from redteam.core.pagination import EstimatedCountPaginator
from redteam.core.uuids import parse_uuid


class LargeTableAdminMixin:
    """Changelist settings every admin of a huge table shares.

    No full ``COUNT(*)`` (``EstimatedCountPaginator``, no "N total" second count), no facet
    counts (one ``GROUP BY`` over the table per filter choice), and a search term that is a UUID
    goes to indexed key columns only, never OR-ed with a text scan that would defeat the index:

    - ``uuid_search_fields``: exact lookups on this table's own indexed columns;
    - ``conversation_search_field``: a foreign key to ``Conversation``, matched by PyRIT's
      conversation id. The conversation rows are resolved first (one indexed query), because an
      OR across a join cannot use the indexes of both tables.

    Any other term falls through to Django's ``search_fields`` (documented per admin).
    """

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    uuid_search_fields: tuple[str, ...] = ()
    conversation_search_field: str | None = None

    def get_search_results(
        self, request: HttpRequest, queryset: models.QuerySet, search_term: str
    ) -> tuple[models.QuerySet, bool]:
        value = parse_uuid(search_term)
        if value is None or not (self.uuid_search_fields or self.conversation_search_field):
            return super().get_search_results(request, queryset, search_term)
        lookups: list[tuple[str, Any]] = [(field, value) for field in self.uuid_search_fields]
        if self.conversation_search_field:
            spellings = {search_term.strip(), str(value)}
            conversations = self.model._meta.get_field(
                self.conversation_search_field
            ).related_model._default_manager
            conversation_pks = list(
                conversations.filter(conversation_id__in=spellings).values_list("pk", flat=True)
            )
            lookups.append((f"{self.conversation_search_field}__in", conversation_pks))
        return queryset.filter(models.Q.create(lookups, connector=models.Q.OR)), False


def is_changelist(request: HttpRequest, opts: models.options.Options) -> bool:
    """True when ``request`` renders the changelist of the model described by ``opts``."""
    match = request.resolver_match
    return bool(match) and match.url_name == f"{opts.app_label}_{opts.model_name}_changelist"


def preview(field: str, length: int = 80) -> Substr:
    """An annotation with the first ``length + 1`` characters of a text column.

    Lists show a preview only; fetching the whole value of a hundred long model responses per
    page would move megabytes for nothing. One extra character tells ``truncate`` to add "…".
    """
    return Substr(field, 1, length + 1)


def truncate(text: str | None, length: int = 80) -> str:
    """``text`` cut to ``length`` characters, with an ellipsis when something was cut."""
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= length else text[: length - 1] + "…"


def short_id(value: Any, length: int = 8) -> str:
    """The first characters of an id or hash, as PyRIT and git display them."""
    return str(value)[:length] if value is not None else ""


def admin_change_url(model: type[models.Model], pk: Any) -> str:
    """The admin change page of ``model`` row ``pk``; no query."""
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[pk])


def admin_changelist_url(model: type[models.Model], **filters: Any) -> str:
    """The admin changelist of ``model``, filtered by ``filters`` (admin lookup parameters)."""
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    if filters:
        url = f"{url}?{urlencode(filters)}"
    return url


def admin_link(model: type[models.Model], pk: Any, text: Any) -> SafeString:
    """An escaped link to the admin change page of ``model`` row ``pk``."""
    if pk is None:
        return format_html("{}", "-")
    return format_html('<a href="{}">{}</a>', admin_change_url(model, pk), text)


def pretty_json(value: Any) -> SafeString:
    """``value`` as indented JSON in a ``<pre>``, HTML-escaped (it is untrusted PyRIT data)."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>', text)


def json_display(field: str, description: str | None = None) -> Callable[[Any, Any], SafeString]:
    """A read-only admin field showing JSON column ``field`` pretty-printed.

    Assign it in an admin class body (``params_json = json_display("params")``) and list the
    attribute name in ``readonly_fields``.
    """

    @admin.display(description=description or field.replace("_", " "))
    def display(model_admin: Any, obj: models.Model) -> SafeString:
        return pretty_json(getattr(obj, field))

    return display
