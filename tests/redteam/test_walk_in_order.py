"""The review lists' page of keys read by walking the ordering's index (redteam.core.pagination).

The walk must return exactly the rows and order of the filtered query, on every page, with
ties in the first sort key; it is only taken on SQLite, only when the count overflowed its cap,
and only when SQLite's own plan would sort every match.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from memory.models import AttackResult
from redteam.core.pagination import paginate, walk_in_order
from tests.factories import NOW, make_attack, make_label

pytestmark = pytest.mark.django_db

ORDER = (F("timestamp").desc(), F("pk").desc())


@pytest.fixture
def labelled():
    """40 attacks over 8 timestamps (ties), every other one labelled ``operation:red``."""
    red, blue = make_label(value="red"), make_label(value="blue")
    for i in range(40):
        attack = make_attack(timestamp=NOW - timedelta(minutes=i % 8), objective=f"o{i}")
        attack.label_index.add(red if i % 2 else blue)
    return red


def _filtered(label):
    return AttackResult.objects.filter(label_index=label).order_by(*ORDER)


def _pks(queryset, offset, limit):
    return list(queryset.values_list("pk", flat=True)[offset : offset + limit])


@pytest.mark.parametrize("offset", [0, 3, 7, 19])
def test_the_walk_reads_the_same_rows_in_the_same_order(labelled, offset):
    queryset = _filtered(labelled)
    walk = walk_in_order(queryset, offset=offset, limit=4)
    assert _pks(walk, offset, 4) == _pks(queryset, offset, 4)
    assert len(_pks(walk, offset, 4)) == min(4, 20 - offset)


def test_on_sqlite_a_sorting_plan_is_replaced_by_the_index_walk(labelled):
    queryset = _filtered(labelled)
    walk = walk_in_order(queryset, offset=0, limit=4)
    if connection.vendor != "sqlite":
        assert walk is queryset  # PostgreSQL's planner chooses for itself
        return
    assert "TEMP B-TREE FOR ORDER BY" in queryset.values_list("pk")[:4].explain()
    assert walk is not queryset
    plan = walk.values_list("pk")[:4].explain()
    assert "memory_attack_timestamp_idx" in plan
    assert "TEMP B-TREE FOR ORDER BY" not in plan


def test_an_ordering_no_index_serves_keeps_the_plain_query(labelled):
    queryset = AttackResult.objects.filter(label_index=labelled).order_by("objective", "pk")
    assert walk_in_order(queryset, offset=0, limit=4) is queryset


def test_an_unfiltered_list_is_never_rewritten(labelled):
    queryset = AttackResult.objects.order_by(*ORDER)
    assert walk_in_order(queryset, offset=0, limit=4) is queryset


@pytest.mark.parametrize("page", ["1", "2", "4", "5"])
def test_pages_past_the_count_cap_equal_the_exactly_counted_pages(labelled, page):
    queryset = _filtered(labelled)
    load = AttackResult.objects.in_bulk

    def rows(**kwargs):
        result = paginate(queryset, page=page, load=lambda pks: load(pks).values(), **kwargs)
        return [row.pk for row in result.rows], result.has_next

    # 20 matches overflow a cap of 15: pages 1-4 start before the cap and may walk, page 5 not.
    capped = rows(per_page=4, cap=15)
    exact = rows(per_page=4, cap=15, count_all=True)  # counted in full: the plain query
    assert capped == exact
    assert capped[0]


def test_the_walk_is_chosen_only_when_the_count_overflows(labelled):
    queryset = _filtered(labelled)
    load = AttackResult.objects.in_bulk
    with CaptureQueriesContext(connection) as small:
        paginate(queryset, page="1", load=lambda pks: load(pks).values(), per_page=4, cap=100)
    with CaptureQueriesContext(connection) as big:
        paginate(queryset, page="1", load=lambda pks: load(pks).values(), per_page=4, cap=3)
    assert not any("EXPLAIN" in q["sql"] for q in small.captured_queries)
    explains = [q for q in big.captured_queries if "EXPLAIN" in q["sql"]]
    assert len(explains) == (2 if connection.vendor == "sqlite" else 0)
