"""How SQLite plans a page of the piece list under the role, error and attack-class filters.

A page is read keys first (``KeysFirstMixin``): the ids and times of the page, newest first,
then its rows. At 1,000,000 pieces the keys query is fast only when SQLite walks the
(timestamp, id) index and stops at the page's end, or reads a small partial index; a plan
that starts from messages, or reads every piece, cost 0.5–1 s (docs/performance.md, "Read
API"). The plans are checked with no statistics (a database never analysed) and with
statistics like those of the benchmark's data.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from memory.models import MessagePiece
from memory.storage.filters import MessagePieceFilter
from tests.api.conftest import get_json

pytestmark = pytest.mark.django_db

sqlite_only = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the plans of SQLite's query planner"
)


#: sqlite_stat1 rows of a memory like the benchmark's (1,000,000 pieces in 500,000 messages
#: of 100,000 conversations, 1 in 1,000 pieces an error): what ANALYZE wrote for the pages
#: benchmark's data, scaled up. With them the old join was planned from the message table.
BENCH_STATS = [
    ("memory_message", "sqlite_autoindex_memory_message_1", "500000 5 1"),
    ("memory_messagepiece", "sqlite_autoindex_memory_messagepiece_1", "1000000 1"),
    ("memory_messagepiece", "sqlite_autoindex_memory_messagepiece_2", "1000000 2 1"),
    ("memory_messagepiece", "memory_piece_time_id_idx", "1000000 3 1"),
    ("memory_messagepiece", "memory_piece_prompt_dash_idx", "1000000 2 1"),
    ("memory_messagepiece", "memory_piece_message_dash_idx", "1000000 1 1"),
    ("memory_messagepiece", "memory_piece_orig_prompt_idx", "1000000 1"),
    ("memory_messagepiece", "memory_piece_error_idx", "1000 500"),
]


@pytest.fixture(params=["no statistics", "statistics of a large memory"])
def statistics(request):
    """The plans with no statistics (a database never analysed) and with a large one's."""
    if request.param == "no statistics":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("DELETE FROM sqlite_stat1")
        cursor.executemany("INSERT INTO sqlite_stat1 VALUES (%s, %s, %s)", BENCH_STATS)
        cursor.execute("ANALYZE sqlite_schema")  # load them into the planner
    yield
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM sqlite_stat1")
        cursor.execute("ANALYZE sqlite_schema")


def _keys_plan(params: dict[str, list[str]]) -> str:
    """SQLite's plan of the keys query of a first page of 100 under ``params``."""
    queryset = MessagePieceFilter(params, queryset=MessagePiece.objects.all()).qs
    keys = queryset.order_by("-timestamp", "-id").values("pk", "timestamp", "id")[:101]
    sql, values = keys.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", values)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


@sqlite_only
@pytest.mark.parametrize("roles", [["user"], ["assistant", "system"]])
def test_role_walks_the_pages_index_and_never_sorts(statistics, roles):
    plan = _keys_plan({"role": roles})
    assert "memory_piece_time_id_idx" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


@sqlite_only
def test_an_error_is_found_through_the_partial_error_index(statistics):
    # One value, the usual query. For several, SQLite without statistics prefers walking the
    # page's index; with them (ANALYZE, as the benchmark's data has) it takes this index.
    plan = _keys_plan({"response_error": ["blocked"]})
    assert "memory_piece_error_idx" in plan, plan


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        (["blocked"], {"pb_blocked"}),
        (["none"], {"pa_user", "pa_reply", "pb_image"}),
        (["none", "blocked"], {"pa_user", "pa_reply", "pb_image", "pb_blocked"}),
    ],
)
def test_response_error_with_and_without_none(admin_client, memory_world, errors, expected):
    names = {
        getattr(memory_world, name).id: name
        for name in ("pa_user", "pa_reply", "pb_image", "pb_blocked")
    }
    status, body = get_json(
        admin_client, "/api/v1/message-pieces/", response_error=errors, limit=100
    )
    assert status == 200
    assert {names[uuid.UUID(row["id"])] for row in body["results"]} == expected


def _attack_class_world():
    """Pieces of two attack classes (one with two identifiers) and of none."""
    from tests.factories import make_conversation, make_identifier, make_message, make_piece

    crescendo = [make_identifier("CrescendoAttack"), make_identifier("CrescendoAttack")]
    other = make_identifier("PromptSendingAttack")
    message = make_message(make_conversation(), 0)
    expected = set()
    for position, identifier in enumerate([*crescendo, other, None, crescendo[0]]):
        piece = make_piece(message, position=position, attack_identifier=identifier)
        if identifier in crescendo:
            expected.add(piece.pk)
    return expected


@pytest.mark.parametrize("walk_after", [0, 1000])
def test_attack_class_matches_the_same_pieces_by_walk_or_list(monkeypatch, walk_after):
    from memory.storage import filters

    expected = _attack_class_world()
    monkeypatch.setattr(filters, "WALK_AFTER", walk_after)
    found = MessagePieceFilter({"attack_class": "CrescendoAttack"}, MessagePiece.objects.all()).qs
    assert set(found.values_list("pk", flat=True)) == expected
    unknown = MessagePieceFilter({"attack_class": "NoSuchAttack"}, MessagePiece.objects.all()).qs
    assert not unknown.exists()


@sqlite_only
def test_a_common_attack_class_walks_the_pages_index_and_never_sorts(statistics, monkeypatch):
    from memory.storage import filters

    _attack_class_world()
    monkeypatch.setattr(filters, "WALK_AFTER", 0)  # as when thousands of pieces have it
    plan = _keys_plan({"attack_class": "CrescendoAttack"})
    assert "memory_piece_time_id_idx" in plan, plan
    assert "TEMP B-TREE" not in plan, plan
