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
from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db import DatabaseError, connections, models
from django.db.models.functions import Substr
from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.html import format_html
from django.utils.safestring import SafeString

from redteam.core.uuids import parse_uuid

#: Rows counted exactly before a changelist switches to an estimate.
COUNT_LIMIT = 10_000


def table_row_estimate(model: type[models.Model], using: str) -> int | None:
    """The planner's row estimate for ``model``'s table, or None when the database has none.

    PostgreSQL keeps ``pg_class.reltuples`` up to date through autovacuum/ANALYZE (-1 before the
    first one); SQLite has ``sqlite_stat1`` only after ``ANALYZE`` has run. Either is a single
    catalogue read, whatever the table's size.
    """
    connection = connections[using]
    table = model._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)", [table]
            )
            row = cursor.fetchone()
        elif connection.vendor == "sqlite":
            try:
                # The first number of an index's stat is the number of rows in the table.
                cursor.execute(
                    "SELECT stat FROM sqlite_stat1 WHERE tbl = %s AND stat IS NOT NULL LIMIT 1",
                    [table],
                )
            except DatabaseError:  # No ANALYZE yet: the stat table does not exist.
                return None
            stat = cursor.fetchone()
            row = (int(stat[0].split()[0]),) if stat else None
        else:
            return None
    if not row or row[0] is None or row[0] < 0:
        return None
    return int(row[0])


class EstimatedCountPaginator(Paginator):
    """A paginator that never counts more than ``count_limit + 1`` rows.

    ``count`` runs ``SELECT COUNT(*) FROM (SELECT … LIMIT count_limit + 1)``: exact for small
    results, and cheap for huge ones because the database stops after ``count_limit + 1`` rows.
    When that bound is reached the count is a lower bound (``count_is_estimate``); for an
    unfiltered table it is replaced by the database's own row estimate (PostgreSQL
    ``reltuples``, SQLite ``sqlite_stat1``), one more catalogue query only in that case. Pages
    past the estimated end stay reachable (they may simply be empty), so an estimate that is too
    low never hides rows.

    Worst case: a filter or search that matches fewer than ``count_limit`` rows of a huge table
    still has to look at every row to prove it — narrow by an indexed filter (date, id) first.
    """

    count_limit = COUNT_LIMIT

    @cached_property
    def _bounded_count(self) -> int:
        object_list = self.object_list
        if not isinstance(object_list, models.QuerySet):
            return len(object_list)
        # Ordering is irrelevant to a count and would make the database sort before limiting;
        # selecting only the key keeps list annotations (previews) out of the counted rows.
        return object_list.order_by().values("pk")[: self.count_limit + 1].count()

    @cached_property
    def count_is_estimate(self) -> bool:
        """True when ``count`` is a lower bound or a planner estimate, not an exact count."""
        return self._bounded_count > self.count_limit

    @cached_property
    def count(self) -> int:
        bounded = self._bounded_count
        if not self.count_is_estimate:
            return bounded
        object_list = self.object_list
        if not object_list.query.where:
            estimate = table_row_estimate(object_list.model, using=object_list.db)
            if estimate is not None:
                return max(estimate, bounded)
        return bounded

    def validate_number(self, number: Any) -> int:
        if not self.count_is_estimate:
            return super().validate_number(number)
        # The end is unknown: accept any page from 1 on (a page past the end is empty).
        try:
            if isinstance(number, float) and not number.is_integer():
                raise ValueError
            number = int(number)
        except (TypeError, ValueError) as exc:
            raise PageNotAnInteger(self.error_messages["invalid_page"]) from exc
        if number < 1:
            raise EmptyPage(self.error_messages["min_page"])
        return number

    def page(self, number: Any):
        if not self.count_is_estimate:
            return super().page(number)
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        return self._get_page(self.object_list[bottom : bottom + self.per_page], number, self)


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
