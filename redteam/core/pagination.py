"""Pagination that stays cheap on tables with millions of rows, for every list there is.

One rule everywhere: matches are counted only up to a cap (:func:`capped_count`). The API's
limit/offset pages cap ``limit``; the admin's changelists (:class:`EstimatedCountPaginator`)
fall back to the planner's estimate past the cap; the review lists (:func:`paginate`) say
"1,000+".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import FieldError
from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db import DatabaseError, connections, models
from django.db.models import Exists, OuterRef, QuerySet
from django.utils.functional import cached_property
from rest_framework import pagination

#: The largest page any list endpoint returns, whatever ``limit`` asks for.
MAX_PAGE_SIZE = 1000


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """Limit/offset pages with ``limit`` capped at :data:`MAX_PAGE_SIZE`, as on the cursor
    endpoints.

    DRF's own class has no cap: a ``limit`` beyond 64 bits reached the database, where SQLite
    refuses it ("datatype mismatch") and PostgreSQL overflows its bigint, so the request
    failed with a 500. A larger ``limit`` is clamped, not refused, like the cursor pages. (An
    ``offset`` past the end is answered with an empty page before any query is sliced.)
    """

    max_limit = MAX_PAGE_SIZE


def capped_count(queryset: QuerySet, cap: int) -> int:
    """How many rows ``queryset`` has, counting no further than ``cap + 1``.

    ``SELECT COUNT(*) FROM (SELECT pk … LIMIT cap + 1)``: exact for small results, cheap for
    huge ones because the database stops after ``cap + 1`` rows. Ordering is dropped (it would
    make the database sort before limiting) and only the key is selected (list annotations
    such as previews stay out of the counted rows).
    """
    return queryset.order_by().values("pk")[: cap + 1].count()


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
        return capped_count(object_list, self.count_limit)

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


#: The highest page number a list serves (its offset must fit the databases' 64-bit integers).
MAX_PAGE_NUMBER = 10**9


@dataclass
class Page:
    """One page of a list: its rows and what the pagination links need.

    ``count`` is exact when ``exact``; otherwise it is the cap and the list has more.
    """

    rows: list[Any]
    number: int
    per_page: int
    count: int
    exact: bool
    has_next: bool

    @property
    def num_pages(self) -> int | None:
        """Pages in the whole list (at least one), or None when the count is capped."""
        return max(1, -(-self.count // self.per_page)) if self.exact else None

    @property
    def has_other_pages(self) -> bool:
        """More than one page exists."""
        return self.number > 1 or self.has_next

    @property
    def start_index(self) -> int:
        """1-based index of the first row shown (0 when there is none)."""
        return (self.number - 1) * self.per_page + 1 if self.rows else 0

    @property
    def end_index(self) -> int:
        """1-based index of the last row shown."""
        return (self.number - 1) * self.per_page + len(self.rows)

    @property
    def count_display(self) -> str:
        """``1,234`` or ``1,000+``."""
        return f"{self.count:,}" if self.exact else f"{self.count:,}+"


def _sorts(queryset: QuerySet) -> bool:
    """SQLite's plan for ``queryset`` sorts all its rows (not only ties of an index's order)."""
    return "TEMP B-TREE FOR ORDER BY" in queryset.explain()


def walk_in_order(queryset: QuerySet, *, offset: int, limit: int) -> QuerySet:
    """The same rows in the same order, read by walking the ordering's index on SQLite when
    that is cheaper than SQLite's own plan.

    SQLite drives a filtered query from the filter's index (a label, a target, a harm
    category), joins every match and sorts them all before cutting the page: ~100–200 ms for
    20,000 matches of 100,000 attacks. When the matches are many (the capped count overflowed,
    so at least one row in ``cap / table`` matches) and the page is near the start, walking
    the ordering's index and testing each row with ``EXISTS`` stops after a page's worth: a
    few milliseconds. Rare matches keep SQLite's plan (the walk would visit most of the
    table before finding them), and so does a query SQLite already reads in order or whose
    ordering no index serves (the walk would sort too). Two ``EXPLAIN QUERY PLAN`` statements
    decide; PostgreSQL's planner makes this choice itself, so its queries are left alone.
    """
    connection = connections[queryset.db]
    if connection.vendor != "sqlite" or not queryset.query.where or not queryset.query.order_by:
        return queryset
    page = slice(offset, offset + limit)
    if not _sorts(queryset.values_list("pk")[page]):
        return queryset
    walk = queryset.model._default_manager.filter(
        Exists(queryset.order_by().filter(pk=OuterRef("pk")))
    ).order_by(*queryset.query.order_by)
    try:
        if _sorts(walk.values_list("pk")[page]):
            return queryset
    except FieldError:  # the ordering names an annotation of ``queryset``
        return queryset
    return walk


def paginate(
    queryset: QuerySet,
    *,
    page: str | None,
    load: Callable[[list[Any]], Iterable[Any]],
    per_page: int,
    cap: int,
    count_all: bool = False,
) -> Page:
    """The requested page (a bad page number gives the first, one past the end the last).

    Matches are counted up to ``cap`` (:func:`capped_count`) unless ``count_all``: an exact
    count visits every match, ~35 ms of CPU per 20,000 on SQLite, while the capped count stops
    early (bench/attack_list.py).

    Rows come in two steps: the filtered, ordered query selects only the page's primary keys,
    then ``load(pks)`` reads those rows with their joins. In one query SQLite (driving from a
    filter's index) joins every match before sorting and cutting the page.
    """
    count = queryset.order_by().count() if count_all else capped_count(queryset, cap)
    exact = count_all or count <= cap
    count = count if exact else cap
    try:
        number = max(int(page or 1), 1)
    except ValueError:
        number = 1
    # Past the count cap the last page is unknown; keep the offset a 64-bit integer.
    number = min(number, MAX_PAGE_NUMBER)
    if exact:
        number = min(number, max(1, -(-count // per_page)))
    offset = (number - 1) * per_page
    # Nothing matched: skip the page query (for a text filter it would scan the table again).
    pks = []
    if count:
        keys = queryset
        if not exact and offset < cap:
            keys = walk_in_order(queryset, offset=offset, limit=per_page + 1)
        pks = list(keys.values_list("pk", flat=True)[offset : offset + per_page + 1])
    has_next = len(pks) > per_page
    found = {row.pk: row for row in load(pks[:per_page])} if pks else {}
    rows = [found[pk] for pk in pks[:per_page] if pk in found]
    return Page(
        rows=rows, number=number, per_page=per_page, count=count, exact=exact, has_next=has_next
    )
