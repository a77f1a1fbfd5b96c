"""``INSERT … ON CONFLICT DO NOTHING`` of many rows in one ``executemany``.

Django's ``bulk_create`` builds a model instance per row (with its init signals) and compiles
every value through the SQL compiler; at ingestion sizes that costs more than the database
does. Here rows are plain dicts, the statement is built once per model, and each value goes
only through its field's ``get_db_prep_save``, the conversion Django itself applies, so what is
stored is identical. SQLite (3.24+) and PostgreSQL both accept ``ON CONFLICT DO NOTHING``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections, router
from django.db.models import NOT_PROVIDED, Field, Model
from django.utils import timezone


def _columns(model: type[Model]) -> list[Field]:
    """Concrete fields, without a database-generated primary key."""
    return [
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and getattr(f, "db_returning", False))
    ]


def insert_rows(model: type[Model], rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows`` (dicts keyed by field ``attname``) into ``model``'s table.

    Missing fields take their default; ``auto_now``/``auto_now_add`` fields the current time.
    Rows whose unique key already exists are skipped. One statement however many rows.
    """
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    fields = _columns(model)
    now = timezone.now()
    fillers = []
    for field in fields:
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            fillers.append((field.attname, lambda now=now: now))
        elif field.default is not NOT_PROVIDED or field.null:
            fillers.append((field.attname, field.get_default))
        else:
            fillers.append((field.attname, None))
    preps = [f.get_db_prep_save for f in fields]
    values = []
    for row in rows:
        line = []
        for (attname, fill), prep in zip(fillers, preps, strict=True):
            value = row[attname] if attname in row else (fill() if fill else None)
            line.append(prep(value, connection))
        values.append(line)
    quote = connection.ops.quote_name
    head = (
        f"INSERT INTO {quote(model._meta.db_table)} "
        f"({', '.join(quote(f.column) for f in fields)}) VALUES "
    )
    one = f"({', '.join(['%s'] * len(fields))})"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # psycopg binds client-side, so executemany would send one statement per row; one
            # multi-row VALUES per chunk (under PostgreSQL's 65,535 parameters) is far faster.
            per_chunk = max(1, _PG_MAX_PARAMS // len(fields))
            for start in range(0, len(values), per_chunk):
                chunk = values[start : start + per_chunk]
                cursor.execute(
                    head + ", ".join([one] * len(chunk)) + " ON CONFLICT DO NOTHING",
                    [value for line in chunk for value in line],
                )
        else:
            cursor.executemany(head + one + " ON CONFLICT DO NOTHING", values)


_PG_MAX_PARAMS = 65_000


def insert_ignore(objs: Sequence[Model]) -> None:
    """``insert_rows`` for unsaved model instances of one model (small row counts)."""
    if not objs:
        return
    model = type(objs[0])
    fields = [
        f
        for f in _columns(model)
        if not (getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False))
    ]
    insert_rows(model, [{f.attname: getattr(obj, f.attname) for f in fields} for obj in objs])
