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

On PostgreSQL the rows travel as one array per column (``INSERT … SELECT * FROM unnest(…)``)
and look-ups as one array (``= ANY(…)``), not as one placeholder per value: see
:func:`_insert_unnest` for why and what it measured.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.models import NOT_PROVIDED, Field, Model
from django.utils import timezone

from redteam.core.nul import ESCAPE, escape_json, needs_json_escape

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
    if kind == "DateTimeField" and connection.vendor == "postgresql":
        # adapt_datetimefield_value returns the value; get_prep_value only touches naive ones
        return lambda v: (
            v if v is None or (type(v) is datetime and v.tzinfo is not None) else generic(v)
        )
    if kind == "DateTimeField" and connection.vendor == "sqlite" and settings.USE_TZ:
        # adapt_datetimefield_value: an aware value made naive in the connection's zone
        zone = connection.timezone

        def datetime_value(v: Any) -> Any:
            if type(v) is datetime and v.tzinfo is zone:
                return str(v.replace(tzinfo=None))
            return generic(v)

        return datetime_value
    if kind == "JSONField" and not field.is_relation:
        if getattr(field, "encoder", None) is not None:
            return generic
        return _json_adapter(generic)
    return generic


def _json_adapter(generic: Adapter) -> Adapter:
    """JSON text as the field would send it: ``json.dumps`` of the value, with NUL escaped
    (``JSONField.get_prep_value``) only when the text shows a string that needs it.

    SQLite's ``adapt_json_value`` is that ``json.dumps``; PostgreSQL's wraps the value for
    psycopg, which sends the same ``json.dumps`` text. Text is what an array of ``jsonb``
    (``_insert_unnest``) needs: every element of one column must be of one Python type.
    """
    empty = {dict: "{}", list: "[]"}  # empty containers are most rows
    dumps = json.dumps

    def json_value(v: Any) -> Any:
        if v is None:
            return None
        kind_of = type(v)
        if kind_of is dict or kind_of is list:
            if not v:
                return empty[kind_of]
        elif kind_of not in _JSON_SCALARS:
            prepared = generic(v)
            # PostgreSQL's adapter answers a psycopg ``Jsonb`` wrapper: its text instead
            wrapped = getattr(prepared, "obj", prepared)
            return prepared if wrapped is prepared else prepared.dumps(wrapped)
        dumped = dumps(v)
        return dumps(escape_json(v)) if needs_json_escape(dumped) else dumped

    return json_value


_JSON_SCALARS = frozenset({str, int, float, bool})
_ADAPTERS: dict[tuple[int, str, str], list[Adapter]] = {}


def _adapters(model: type[Model], fields: list[Field], connection: Any) -> list[Adapter]:
    key = (id(model), connection.alias, ",".join(f.attname for f in fields))
    found = _ADAPTERS.get(key)
    if found is None:
        found = _ADAPTERS[key] = [adapter(f, connection) for f in fields]
    return found


_NO_DEFAULT = object()


def _missing_value(field: Field, prep: Adapter, now: Any) -> tuple[bool, Any]:
    """What a row that leaves ``field`` out stores: ``(True, None)`` when it differs per row
    (a callable default such as ``uuid4``; ``dict``/``list`` JSON defaults are one constant),
    else ``(False, value)`` adapted by ``prep`` — the current time for ``auto_now`` fields,
    None for a nullable field without default, ``_NO_DEFAULT`` when there is none."""
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return False, prep(now)
    if callable(field.default) and field.get_internal_type() != "JSONField":
        return True, None
    if field.default is not NOT_PROVIDED or field.null:
        return False, prep(field.get_default())
    return False, _NO_DEFAULT


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
        varies, default = _missing_value(field, prep, now)
        if varies:
            per_row.append((index, field.attname, field.get_default, prep))
        if varies or default is _NO_DEFAULT:
            default = None  # the database refuses a NOT NULL column left out
        plan.append((field.attname, prep, default))
    values = [
        [prep(row[attname]) if attname in row else default for attname, prep, default in plan]
        for row in rows
    ]
    for index, attname, make, prep in per_row:
        for row, line in zip(rows, values, strict=True):
            if attname not in row:
                line[index] = prep(make())
    if connection.vendor == "postgresql":
        _insert_unnest(connection, model, fields, values)
        return
    quote = connection.ops.quote_name
    # One multi-row VALUES per chunk, not executemany. On SQLite, executemany
    # releases and retakes the GIL for every row: with the importer's reader thread busy, a
    # row then waits for the GIL far longer than SQLite takes to insert it (a 10 µs message
    # row took 60 µs), while one statement per chunk hands the GIL over once.
    _insert_multirow(
        connection,
        f"INSERT INTO {quote(model._meta.db_table)} "
        f"({', '.join(quote(f.column) for f in fields)}) VALUES ",
        values,
    )


def _insert_multirow(connection: Any, head: str, rows: Sequence[Sequence[Any]]) -> None:
    """``head`` (``INSERT INTO t (…) VALUES ``) with one multi-row ``VALUES … ON CONFLICT DO
    NOTHING`` per chunk of ``rows``, as many rows as the parameter limit allows."""
    width = len(rows[0])
    one = f"({', '.join(['%s'] * width)})"
    per_chunk = max(1, _max_params(connection) // width)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_chunk):
            chunk = rows[start : start + per_chunk]
            cursor.execute(
                head + ", ".join([one] * len(chunk)) + " ON CONFLICT DO NOTHING",
                [value for row in chunk for value in row],
            )


def column_names(model: type[Model]) -> list[str]:
    """The ``attname`` of each column :func:`column_values` and :func:`insert_columns` handle,
    in their order (concrete fields without a database-generated primary key)."""
    return [f.attname for f in _columns(model)]


def column_values(
    model: type[Model],
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    alias: str,
    later: Iterable[str] = (),
) -> list[list[Any] | None]:
    """``rows`` (tuples of the fields ``names``) as one list per column of ``model``
    (:func:`column_names` order), each value adapted as :func:`insert_rows` adapts it for
    connection ``alias``, and missing fields given their defaults as there. UUIDs are hex text
    on every database (what SQLite stores; PostgreSQL casts it), so columns pickle as plain
    strings. The columns named in ``later`` are left None: the caller fills them with what
    only the writer knows (surrogate keys: integers, which need no adapting).

    The importer's reader process prepares a chunk's columns with this, so the writing process
    only fills in keys and hands them to :func:`insert_columns`; it opens no connection."""
    connection = connections[alias]
    fields = _columns(model)
    adapt = _adapters(model, fields, connection)
    index = {name: i for i, name in enumerate(names)}
    skip = set(later)
    now = timezone.now()
    count = len(rows)
    columns: list[list[Any] | None] = []
    for field, prep in zip(fields, adapt, strict=True):
        name = field.attname
        if name in skip:
            columns.append(None)
            continue
        if name in index:
            i = index[name]
            column = [prep(row[i]) for row in rows]
        else:
            varies, default = _missing_value(field, prep, now)
            if varies:
                column = [prep(field.get_default()) for _ in range(count)]
            elif default is _NO_DEFAULT:
                raise ValueError(f"{model.__name__}.{name}: no value and no default")
            else:
                column = [default] * count
        target = field.target_field if field.is_relation else field
        if target.get_internal_type() == "UUIDField" and connection.features.has_native_uuid_field:
            column = [None if v is None else v.hex for v in column]
        columns.append(column)
    return columns


def insert_columns(
    model: type[Model], columns: Sequence[list[Any]], *, triggered: bool = False
) -> None:
    """Insert rows given as :func:`column_values` columns (every one filled), skipping rows
    whose unique key exists: on SQLite one ``executemany`` (the importer's writer runs alone
    in its process, so no other thread waits for the GIL between rows), on PostgreSQL the
    ``unnest`` statement of :func:`insert_rows`.

    ``triggered``: the table has row triggers (the dashboards' rollups, ``memory.models.
    rollup_sql``). On SQLite its rows then go in multi-row ``VALUES`` statements (as many
    rows as the parameter limit allows): ``executemany`` steps its one statement once per
    row, and with triggers each step re-runs the trigger program's set-up as well; measured
    on the importer's 50,000 scores, see docs/performance.md, "PyRIT database import"."""
    if not columns or not columns[0]:
        return
    connection = connections[router.db_for_write(model)]
    fields = _columns(model)
    quote = connection.ops.quote_name
    names = ", ".join(quote(f.column) for f in fields)
    table = quote(model._meta.db_table)
    if connection.vendor == "postgresql":
        arrays = _arrays(model, fields, connection)
        params = []
        for field, (_, encode), column in zip(fields, arrays, columns, strict=True):
            target = field.target_field if field.is_relation else field
            if target.get_internal_type() == "UUIDField":
                encode = _UUID_TEXT  # column_values sent the hex text
            params.append(encode(list(column)))
        sql = (
            f"INSERT INTO {table} ({names}) SELECT * FROM unnest("
            + ", ".join(f"%s::{cast}" for cast, _ in arrays)
            + ") ON CONFLICT DO NOTHING"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
        return
    rows = list(zip(*columns, strict=True))
    if triggered:
        _insert_multirow(connection, f"INSERT INTO {table} ({names}) VALUES ", rows)
        return
    one = f"({', '.join(['%s'] * len(fields))})"
    sql = f"INSERT INTO {table} ({names}) VALUES {one} ON CONFLICT DO NOTHING"
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _max_params(connection: Any) -> int:
    """Bound parameters one SQLite statement may carry: this SQLite's variable limit (32,766
    by default since SQLite 3.32), at most 65,000."""
    return min(connection.features.max_query_params or 999, 65_000)


def _insert_unnest(
    connection: Any, model: type[Model], fields: list[Field], values: list[list[Any]]
) -> None:
    """PostgreSQL: ``INSERT … SELECT * FROM unnest(%s::uuid[], %s::text[], …) ON CONFLICT DO
    NOTHING``, one array parameter per column, one statement whatever the row count.

    Django's cursors bind client-side, so with a multi-row ``VALUES`` (one placeholder per
    value, ~25,000 for 1,000 pieces) psycopg split the statement text at every placeholder
    and quoted every value in Python, and PostgreSQL parsed and planned a ``VALUES`` list as
    long. Here each column is one array literal spelled out by the encoders below with
    ``str`` methods (psycopg's own list dumper escapes element by element in Python), sent
    as one quoted string.

    Measured in-process (CPU of the writing process per 1,000-piece batch with 1,000 scores
    and 100 attack results, all of the ingestion service, in one sitting): multi-row
    ``VALUES`` 349 ms; ``unnest`` of lists that psycopg dumps 233 ms; binary ``COPY`` into a
    temporary table, then ``INSERT … SELECT … ON CONFLICT`` 195 ms, but three more
    statements per table (create the staging table, insert from it, empty it) and every
    staging table truncated at each commit; these literals: see docs/performance.md,
    "Ingestion API".
    """
    quote = connection.ops.quote_name
    arrays = _arrays(model, fields, connection)
    columns = list(zip(*values, strict=True))
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} "
        f"({', '.join(quote(f.column) for f in fields)}) SELECT * FROM unnest("
        + ", ".join(f"%s::{cast}" for cast, _ in arrays)
        + ") ON CONFLICT DO NOTHING"
    )
    params = [encode(list(column)) for (_, encode), column in zip(arrays, columns, strict=True)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


Encoder = Callable[[list[Any]], Any]


def _text_array(column: list[Any]) -> str:
    """``{"a","b\\"c",NULL}``: every element quoted, ``\\`` and ``"`` escaped."""
    if None not in column:
        return (
            '{"' + '","'.join([v.replace("\\", "\\\\").replace('"', '\\"') for v in column]) + '"}'
        )
    return (
        "{"
        + ",".join(
            [
                "NULL" if v is None else '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
                for v in column
            ]
        )
        + "}"
    )


def _plain_array(text: Callable[[Any], str]) -> Encoder:
    """An encoder for elements whose text needs no quoting (numbers, UUIDs, timestamps)."""

    def encode(column: list[Any]) -> str:
        return "{" + ",".join(["NULL" if v is None else text(v) for v in column]) + "}"

    return encode


def _as_list(column: list[Any]) -> list[Any]:
    return column


_ENCODERS: dict[str, Encoder] = {
    **dict.fromkeys(_TEXT, _text_array),
    "JSONField": _text_array,  # _json_adapter's JSON text
    **dict.fromkeys(_INTEGER, _plain_array(str)),
    "FloatField": _plain_array(repr),  # nan, inf and -inf read back as NaN and ±Infinity
    "BooleanField": _plain_array(lambda v: "t" if v else "f"),
    "UUIDField": _plain_array(lambda v: v.hex),
    "DateTimeField": _plain_array(datetime.isoformat),
}
_ARRAYS: dict[tuple[int, str, str], list[tuple[str, Encoder]]] = {}
_UUID_TEXT = _plain_array(str)


def _arrays(model: type[Model], fields: list[Field], connection: Any) -> list[tuple[str, Encoder]]:
    """Per column: the array type to cast to and the encoder of the adapted values.

    The cast drops a type modifier (``varchar(32)[]`` → ``varchar[]``): an explicit cast to
    ``varchar(32)`` would cut a longer value short, while the insert's own conversion refuses
    it, as it refused the value itself before. A column of another type (or a JSON field
    with its own encoder, which adapts to psycopg wrappers) sends the adapted values as a
    list, which psycopg dumps itself.
    """
    key = (id(model), connection.alias, ",".join(f.attname for f in fields))
    found = _ARRAYS.get(key)
    if found is None:
        found = []
        for field in fields:
            target = field.target_field if field.is_relation else field
            kind = target.get_internal_type()
            encode = _ENCODERS.get(kind, _as_list)
            if kind == "JSONField" and getattr(field, "encoder", None) is not None:
                encode = _as_list
            if kind == "UUIDField" and not connection.features.has_native_uuid_field:
                encode = _as_list
            found.append((re.sub(r"\(.*\)", "", field.db_type(connection)) + "[]", encode))
        _ARRAYS[key] = found
    return found


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


def existing_keys(model: type[Model], name: str, keys: Sequence[Any]) -> set[Any]:
    """Which of ``keys`` (values of field ``name`` as :func:`column_values` gives them: UUIDs
    as hex text) are stored. :func:`existing_values` for values adapted already."""
    if not keys:
        return set()
    connection = connections[router.db_for_read(model)]
    field = model._meta.get_field(name)
    quote = connection.ops.quote_name
    column, table = quote(field.column), quote(model._meta.db_table)
    target = field.target_field if field.is_relation else field
    uuids = target.get_internal_type() == "UUIDField"
    found = set()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cast, encode = _arrays(model, [field], connection)[0]
            cursor.execute(
                f"SELECT {column} FROM {table} WHERE {column} = ANY(%s::{cast})",
                [(_UUID_TEXT if uuids else encode)(list(keys))],
            )
            found.update(row[0].hex if uuids else row[0] for row in cursor.fetchall())
            return found
        for part in chunked(keys):
            cursor.execute(
                f"SELECT {column} FROM {table} WHERE {column} IN ({', '.join(['%s'] * len(part))})",
                part,
            )
            found.update(row[0] for row in cursor.fetchall())
    return found


def existing_values(model: type[Model], name: str, values: Any) -> set[Any]:
    """Which of ``values`` of field ``name`` are stored: ``SELECT name … WHERE name IN (…)``.

    One raw statement for up to 30,000 values (under SQLite's and PostgreSQL's parameter
    limits, so the statement count does not grow with any batch the API accepts): building
    the same filter through the ORM costs more than running it when the list is long, and a
    first ingestion finds nothing stored. Returns the members of ``values`` that exist.
    """
    return set(stored_column(model, name, values, column=name))


def stored_column(model: type[Model], name: str, values: Any, *, column: str) -> dict[Any, Any]:
    """The stored rows among ``values`` of field ``name``, each with its ``column``'s database
    value (a foreign key's attribute name, ``…_id``, gives the raw key): as
    :func:`existing_values`, one statement, mapping each member of ``values`` that exists."""
    connection = connections[router.db_for_read(model)]
    field = model._meta.get_field(name)
    other = model._meta.get_field(column)
    prep = adapter(field, connection)
    # the database form of each value (a UUID is hex text on SQLite) -> the value as given
    by_db = {prep(v): v for v in values if v is not None}
    if not by_db:
        return {}
    quote = connection.ops.quote_name
    select = (
        f"SELECT {quote(field.column)}, {quote(other.column)} "
        f"FROM {quote(model._meta.db_table)} WHERE {quote(field.column)} "
    )
    keys = list(by_db)
    found: dict[Any, Any] = {}
    if connection.vendor == "postgresql":
        # One array, not one placeholder per value (see _insert_unnest)
        cast, encode = _arrays(model, [field], connection)[0]
        with connection.cursor() as cursor:
            cursor.execute(select + f"= ANY(%s::{cast})", [encode(keys)])
            found.update((by_db[key], value) for key, value in cursor.fetchall() if key in by_db)
        return found
    with connection.cursor() as cursor:
        for part in chunked(keys):
            cursor.execute(select + f"IN ({', '.join(['%s'] * len(part))})", part)
            found.update((by_db[key], value) for key, value in cursor.fetchall() if key in by_db)
    return found
