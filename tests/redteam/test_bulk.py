"""The bulk writer stores every value as the ORM would, on SQLite and PostgreSQL alike: rows go
in as one multi-row ``VALUES`` on SQLite and as one array per column (``unnest``) on
PostgreSQL, where the arrays are spelled out by ``redteam.core.bulk`` itself."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import DataError, IntegrityError, connection, transaction

from memory.models import MessagePiece, Score
from redteam.core.bulk import (
    column_names,
    column_values,
    existing_keys,
    existing_values,
    insert_columns,
    insert_rows,
)
from tests.factories import make_conversation, make_identifier, make_message, sha256_hex
from tests.queries import captured_sql

pytestmark = pytest.mark.django_db

NUL = "\x00"
#: Text that an array literal or a SQL literal could get wrong.
AWKWARD = [
    'a "quoted" word',
    "back\\slash and \\\\ two",
    "{braces,comma}",
    "NULL",
    "",
    " padded ",
    "tab\tnew\nline\r",
    "ünïcödé ☃ 𝄞",
    f"nul{NUL}inside",
    "escape \ufffe char",
    "it's",
    '\\"',
    "}",
]


def _piece_row(message, position: int, text: str, **fields) -> dict:
    piece_id = uuid.uuid4()
    return {
        "id": piece_id,
        "message_id": message.pk,
        "position": position,
        "timestamp": datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=timezone(timedelta(hours=2))),
        "labels": {text or "empty": text, "n": "1"},
        "prompt_metadata": {"m": text, "list": [1, 2.5, None, True, {"deep": text}]},
        "targeted_harm_categories": [text],
        "original_value": text,
        "original_value_data_type": "text",
        "original_value_sha256": sha256_hex(text),
        "converted_value": text + text,
        "converted_value_data_type": "text",
        "converted_value_sha256": sha256_hex(text + text),
        "original_prompt_id": piece_id,
        **fields,
    }


def _assert_stored(model, rows: list[dict], names: list[str]) -> dict:
    """Every row of ``model`` is one of ``rows``, and gives back the fields ``names`` as they
    were given: equal and of the same type (JSON ``true`` is not ``1``). The rows by id."""
    stored = {obj.pk: obj for obj in model.objects.all()}
    assert set(stored) == {row["id"] for row in rows}
    for row in rows:
        for name in names:
            value = getattr(stored[row["id"]], name)
            assert (value, type(value)) == (row[name], type(row[name])), name
    return stored


def test_awkward_text_json_uuids_and_times_are_stored_exactly():
    message = make_message(make_conversation(), 0)
    rows = [_piece_row(message, i, text) for i, text in enumerate(AWKWARD)]
    insert_rows(MessagePiece, rows)

    names = ["original_value", "converted_value", "labels", "prompt_metadata"]
    names += ["targeted_harm_categories", "original_prompt_id", "position"]
    stored = _assert_stored(MessagePiece, rows, names)
    for piece in stored.values():
        assert piece.timestamp == datetime(2025, 1, 2, 1, 4, 5, 123456, tzinfo=UTC)
        # columns the rows leave out: NULL, or the field's default
        assert piece.prompt_target_identifier_id is None
        assert piece.extra == {}
    assert existing_values(MessagePiece, "id", [r["id"] for r in rows] + [uuid.uuid4()]) == {
        r["id"] for r in rows
    }


def test_prepared_columns_store_what_insert_rows_stores():
    """The importer's reader prepares columns (``column_values``, UUIDs as hex text) and its
    writer fills in a key column and inserts them (``insert_columns``): stored exactly as
    ``insert_rows`` stores the same rows; ``existing_keys`` finds them by their hex ids."""
    message = make_message(make_conversation(), 0)
    rows = [_piece_row(message, i, text) for i, text in enumerate(AWKWARD)]
    names = [name for name in rows[0] if name != "message_id"]
    columns = column_values(
        MessagePiece,
        names,
        [tuple(row[name] for name in names) for row in rows],
        alias=connection.alias,
        later=["message_id"],
    )
    ids = columns[column_names(MessagePiece).index("id")]
    assert ids == [row["id"].hex for row in rows]
    assert columns[column_names(MessagePiece).index("message_id")] is None
    columns[column_names(MessagePiece).index("message_id")] = [message.pk] * len(rows)
    insert_columns(MessagePiece, columns)

    names = ["original_value", "converted_value", "labels", "prompt_metadata"]
    names += ["targeted_harm_categories", "original_prompt_id", "position", "message_id"]
    stored = _assert_stored(MessagePiece, rows, names)
    for piece in stored.values():
        assert piece.timestamp == datetime(2025, 1, 2, 1, 4, 5, 123456, tzinfo=UTC)
        assert piece.prompt_target_identifier_id is None
        assert piece.extra == {}
    assert existing_keys(MessagePiece, "id", [*ids, uuid.uuid4().hex]) == set(ids)
    assert existing_keys(MessagePiece, "id", []) == set()


def test_floats_nulls_and_json_scalars_are_stored_exactly():
    scorer = make_identifier("SubStringScorer")
    values = [1 / 3, 1e-300, 0.0, 1.0, None]
    rows = [
        {
            "id": uuid.uuid4(),
            "score_value": None if value is None else repr(value),
            "numeric_value": value,
            "score_type": "float_scale",
            "status": "complete" if value is not None else "undetermined",
            "score_category": ["a", 'b"'],
            "scorer_class_identifier_id": scorer.pk,
            "timestamp": datetime(2026, 1, 1, tzinfo=UTC),
            "scored_expectation": text,
            "scorable": number,
        }
        for value, text, number in zip(
            values, ["x", "", 'q"', NUL, "NULL"], [1, 2.5, True, 0, -7], strict=True
        )
    ]
    insert_rows(Score, rows)

    names = ["numeric_value", "score_value", "score_category", "scored_expectation", "scorable"]
    stored = _assert_stored(Score, rows, names)
    assert all(score.score_metadata == {} for score in stored.values())


def test_a_row_whose_key_is_stored_is_skipped_in_one_statement():
    message = make_message(make_conversation(), 0)
    first = _piece_row(message, 0, "first")
    insert_rows(MessagePiece, [first])
    again = {**first, "original_value": "changed"}
    rows = [again, *(_piece_row(message, i, f"piece {i}") for i in range(1, 2001))]

    sql, _ = captured_sql(insert_rows, MessagePiece, rows)

    # PostgreSQL: 25 array parameters; SQLite: 50,025 variables, under the 65,000 it allows
    assert len(sql) == 1
    assert MessagePiece.objects.count() == 2001
    assert MessagePiece.objects.get(pk=first["id"]).original_value == "first"


def test_a_broken_check_constraint_is_refused_on_both_databases():
    message = make_message(make_conversation(), 0)
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_rows(MessagePiece, [_piece_row(message, 0, "x", original_value_data_type="bogus")])
    assert not MessagePiece.objects.exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite keeps any length")
def test_text_longer_than_its_column_is_refused_not_cut_short():
    """The arrays are cast to ``varchar[]``: a cast to ``varchar(32)[]`` would cut silently.
    (SQLite does not enforce lengths; ``redteam.core.lengths`` refuses such values first.)"""
    message = make_message(make_conversation(), 0)
    with pytest.raises(DataError), transaction.atomic():
        insert_rows(MessagePiece, [_piece_row(message, 0, "x", pyrit_version="1" * 33)])
    assert not MessagePiece.objects.exists()
