"""``INSERT … ON CONFLICT DO NOTHING`` of many rows in a few multi-row statements, and keyed
``UPDATE`` of many rows in one ``executemany``.

Django's ``bulk_create`` builds a model instance per row (with its init signals) and compiles
every value through the SQL compiler; ``bulk_update`` builds one ``CASE WHEN`` per field over
every row. At ingestion sizes both cost far more than the database does. Here rows are plain
dicts and the statement is built once per model. Each value is converted by a per-column
adapter, chosen once per (field, connection): for the column types ingestion writes (text,
integers, floats, booleans, UUIDs, JSON, foreign keys to those) it does exactly what the
field's ``get_db_prep_save`` does for a value of the expected Python type, and any other value
(or a text that needs the NUL escape of ``redteam.core.nul``) goes through
``get_db_prep_save`` itself, so what is stored is identical.

Measured: converting values through ``get_db_prep_save`` was ~35 % of an ingestion's time
(issue 3's profile); with the adapters, conversion is ~7 % of the writing thread's CPU time
when importing the 100,000-piece benchmark file (issue 4).
SQLite (3.24+) and PostgreSQL both accept ``ON CONFLICT DO NOTHING``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.models import NOT_PROVIDED, Field, Model
from django.utils import timezone

from redteam.core.nul import ESCAPE, needs_json_escape

Adapter = Callable[[Any], Any]

_TEXT = frozenset({"CharField", "TextField", "SlugField", "EmailField", "URLField"})
_INTEGER = frozenset(
    {
        "IntegerField",
        "BigIntegerField",
        "SmallIntegerField",
        "PositiveIntegerField",
        "PositiveBigIntegerField",
        "PositiveSmallIntegerField",
        "AutoField",
        "BigAutoField",
        "SmallAutoField",
    }
)


def _columns(model: type[Model]) -> list[Field]:
    """Concrete fields, without a database-generated primary key."""
    return [
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and getattr(f, "db_returning", False))
    ]


def adapter(field: Field, connection: Any) -> Adapter:
    """A function turning a Python value into what ``field`` sends to ``connection``."""
    slow = field.get_db_prep_save
    alias = connection.alias

    def generic(value: Any) -> Any:
        # Adapters are cached per alias and shared by every thread (and inherited by forked
        # processes), so the slow path asks for the calling thread's own connection; closing
        # over ``connection`` made threads and forked workers talk on one socket.
        return slow(value, connections[alias])

    target = field.target_field if field.is_relation else field
    kind = target.get_internal_type()
    if kind in _TEXT:
        # A string with NUL or U+FFFE takes the field's own path, which escapes it (nul.py).
        return lambda v: (
            v
            if v is None or (type(v) is str and "\x00" not in v and ESCAPE not in v)
            else generic(v)
        )
    if kind in _INTEGER:
        return lambda v: v if v is None or type(v) is int else generic(v)
    if kind == "FloatField":
        return lambda v: v if v is None or type(v) is float else generic(v)
    if kind == "BooleanField":
        return lambda v: v if v is None or type(v) is bool else generic(v)
    if kind == "UUIDField":
        if connection.features.has_native_uuid_field:
            return lambda v: v if v is None or type(v) is uuid.UUID else generic(v)
        return lambda v: None if v is None else v.hex if type(v) is uuid.UUID else generic(v)
    if kind == "DateTimeField" and connection.vendor == "sqlite" and settings.USE_TZ:
        # adapt_datetimefield_value: an aware value made naive in the connection's zone
        zone = connection.timezone

        def datetime_value(v: Any) -> Any:
            if type(v) is datetime and v.tzinfo is zone:
                return str(v.replace(tzinfo=None))
            return generic(v)

        return datetime_value
    if kind == "JSONField" and not field.is_relation and connection.vendor == "sqlite":
        if getattr(field, "encoder", None) is not None:
            return generic
        # SQLite's adapt_json_value is json.dumps(value); empty containers are most rows
        empty = {dict: "{}", list: "[]"}
        dumps = json.dumps

        def json_value(v: Any) -> Any:
            if v is None:
                return None
            kind_of = type(v)
            if kind_of is dict or kind_of is list:
                if not v:
                    return empty[kind_of]
                dumped = dumps(v)
                return generic(v) if needs_json_escape(dumped) else dumped
            return generic(v)

        return json_value
    return generic


_ADAPTERS: dict[tuple[int, str, str], list[Adapter]] = {}


def _adapters(model: type[Model], fields: list[Field], connection: Any) -> list[Adapter]:
    key = (id(model), connection.alias, ",".join(f.attname for f in fields))
    found = _ADAPTERS.get(key)
    if found is None:
        found = _ADAPTERS[key] = [adapter(f, connection) for f in fields]
    return found


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
    adapt = _adapters(model, fields, connection)
    # A missing field's value is adapted once for every row, except a callable default that
    # must differ per row (``uuid4``); ``dict``/``list`` JSON defaults adapt to one constant.
    plan = []
    per_row = []
    for index, (field, prep) in enumerate(zip(fields, adapt, strict=True)):
        default = None
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            default = prep(now)
        elif callable(field.default) and field.get_internal_type() != "JSONField":
            per_row.append((index, field.attname, field.get_default, prep))
        elif field.default is not NOT_PROVIDED or field.null:
            default = prep(field.get_default())
        plan.append((field.attname, prep, default))
    values = [
        [prep(row[attname]) if attname in row else default for attname, prep, default in plan]
        for row in rows
    ]
    for index, attname, make, prep in per_row:
        for row, line in zip(rows, values, strict=True):
            if attname not in row:
                line[index] = prep(make())
    quote = connection.ops.quote_name
    head = (
        f"INSERT INTO {quote(model._meta.db_table)} "
        f"({', '.join(quote(f.column) for f in fields)}) VALUES "
    )
    one = f"({', '.join(['%s'] * len(fields))})"
    # One multi-row VALUES per chunk, not executemany. On PostgreSQL, psycopg binds
    # client-side and executemany would send one statement per row. On SQLite, executemany
    # releases and retakes the GIL for every row: with the importer's reader thread busy, a
    # row then waits for the GIL far longer than SQLite takes to insert it (a 10 µs message
    # row took 60 µs), while one statement per chunk hands the GIL over once.
    per_chunk = max(1, _max_params(connection) // len(fields))
    with connection.cursor() as cursor:
        for start in range(0, len(values), per_chunk):
            chunk = values[start : start + per_chunk]
            cursor.execute(
                head + ", ".join([one] * len(chunk)) + " ON CONFLICT DO NOTHING",
                [value for line in chunk for value in line],
            )


def _max_params(connection: Any) -> int:
    """Bound parameters one statement may carry: PostgreSQL's 65,535, or this SQLite's
    variable limit (32,766 by default since SQLite 3.32)."""
    if connection.vendor == "postgresql":
        return _PG_MAX_PARAMS
    return min(connection.features.max_query_params or 999, _PG_MAX_PARAMS)


_PG_MAX_PARAMS = 65_000
_MAX_IN = 30_000


def chunked(values: Iterable[Any], size: int = _MAX_IN) -> Iterator[list[Any]]:
    """``values`` in lists of at most ``size`` (30,000: one ``IN`` list under SQLite's and
    PostgreSQL's parameter limits)."""
    items = list(values)
    for start in range(0, len(items), size):
        yield items[start : start + size]


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


def update_rows(model: type[Model], names: Sequence[str], objs: Sequence[Model]) -> None:
    """Write the fields ``names`` of saved instances ``objs``: one keyed ``UPDATE`` statement
    run for every row (``executemany``), instead of ``bulk_update``'s ``CASE WHEN`` over all
    rows. ``auto_now`` fields among ``names`` get the current time."""
    if not objs:
        return
    connection = connections[router.db_for_write(model)]
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    pk = meta.pk
    adapt = _adapters(model, [*fields, pk], connection)
    now = timezone.now()
    for field in fields:
        if getattr(field, "auto_now", False):
            for obj in objs:
                setattr(obj, field.attname, now)
    quote = connection.ops.quote_name
    sql = (
        f"UPDATE {quote(meta.db_table)} SET "
        + ", ".join(f"{quote(f.column)} = %s" for f in fields)
        + f" WHERE {quote(pk.column)} = %s"
    )
    attnames = [f.attname for f in [*fields, pk]]
    values = [
        [prep(getattr(obj, name)) for prep, name in zip(adapt, attnames, strict=True)]
        for obj in objs
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, values)


def existing_values(model: type[Model], name: str, values: Any) -> set[Any]:
    """Which of ``values`` of field ``name`` are stored: ``SELECT name … WHERE name IN (…)``.

    One raw statement for up to 30,000 values (under SQLite's and PostgreSQL's parameter
    limits, so the statement count does not grow with any batch the API accepts): building
    the same filter through the ORM costs more than running it when the list is long, and a
    first ingestion finds nothing stored. Returns the members of ``values`` that exist.
    """
    connection = connections[router.db_for_read(model)]
    field = model._meta.get_field(name)
    prep = adapter(field, connection)
    # the database form of each value (a UUID is hex text on SQLite) -> the value as given
    by_db = {prep(v): v for v in values if v is not None}
    if not by_db:
        return set()
    quote = connection.ops.quote_name
    head = (
        f"SELECT {quote(field.column)} FROM {quote(model._meta.db_table)} "
        f"WHERE {quote(field.column)} IN "
    )
    keys = list(by_db)
    found = set()
    with connection.cursor() as cursor:
        for part in chunked(keys):
            cursor.execute(head + f"({', '.join(['%s'] * len(part))})", part)
            found.update(by_db[row[0]] for row in cursor.fetchall() if row[0] in by_db)
    return found
