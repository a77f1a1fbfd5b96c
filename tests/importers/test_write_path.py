"""The importer's direct write path stores exactly what the ingestion service stores.

Each file is imported through the service (``write_path="service"``), every table of both apps
is dumped, everything is rolled back, and the same file is imported through the direct path
and dumped again. The dumps must be equal: every column of every row of every table. The only
columns left out are the write times (``auto_now`` / ``auto_now_add``, and a history row's
copies of them and its ``history_date``), which differ between any two imports. Surrogate keys
are compared by rank (their order of insertion): on SQLite the rolled-back run leaves the
counters where they were, so they are equal outright; PostgreSQL sequences do not roll back,
so there they are offset, and the rank is what must match. Labels, harm categories and media
locations, inserted in the order of a Python set, are ranked by what they hold; the rows of a
many-to-many index (a conversation's labels) are the pair they link, without a key of their own.

Both imports must also announce the same successful attacks (``memory.storage.events``), and
after each the dashboards' rollups, which triggers keep, must equal a recount of the raw tables
(``rollup_sql.check``): the direct path inserts the triggered tables its own way.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection, models, transaction

from memory.models import ComponentIdentifier, HarmCategory, Label, MediaLocation, rollup_sql
from memory.storage import events
from memory.transfer.importers.direct import DirectWriter
from memory.transfer.importers.runner import Importer
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_12, FIXTURE_DBS, copy_fixture, source_rows

pytestmark = pytest.mark.django_db

FILES = {**FIXTURE_DBS, "1.2": DB_12}


class _Rollback(Exception):
    pass


#: Rows inserted in the order of a Python set (the service's ``_label_rows`` and ``_harm_rows``,
#: the importer's media locations, a set of (value, blob) pairs on both paths): their keys
#: follow no order of the file, so they are ranked by what they hold.
NATURAL_KEYS = {
    Label: ("key", "value"),
    HarmCategory: ("name",),
    MediaLocation: ("location", "blob__sha256"),
}


#: Reference data a migration loads and no import writes (the framework crosswalk), and the
#: dashboards' rollups, counts the triggers keep (their rows' order and the keys left at 0
#: follow the order of writes; tests/dashboards/test_rollups.py checks their counts).
NOT_IMPORTED = ("memory.models.crosswalk", "memory.models.rollups")


def _models() -> list[type[models.Model]]:
    return [
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.app_label in ("memory", "seeds")
        and not m._meta.proxy
        and m._meta.managed
        and m.__module__ not in NOT_IMPORTED
    ]


def _is_write_time(model: type[models.Model], f: models.Field) -> bool:
    if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
        return True
    # a history row copies its row's write times as plain columns, and has one of its own
    original = getattr(model, "instance_type", None)
    if original is not None:
        if f.name == "history_date":
            return True
        copied = {g.name for g in original._meta.concrete_fields if _is_write_time(original, g)}
        return f.name in copied
    return False


def _is_link(model: type[models.Model]) -> bool:
    """A many-to-many table: a surrogate key and two foreign keys, nothing else."""
    rest = [f for f in model._meta.concrete_fields if not f.primary_key]
    return _surrogate(model) and len(rest) == 2 and all(f.is_relation for f in rest)


def _surrogate(model: type[models.Model]) -> bool:
    return isinstance(model._meta.pk, models.AutoField)


def dump() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, surrogate keys (own and referenced) replaced by their rank."""
    tables = _models()
    ranks: dict[type[models.Model], dict[Any, int]] = {}
    for model in tables:
        if _surrogate(model):
            order = NATURAL_KEYS.get(model, ("pk",))
            pks = model._base_manager.order_by(*order).values_list("pk", flat=True)
            ranks[model] = {pk: rank for rank, pk in enumerate(pks)}
    out = {}
    for model in tables:
        fields = [
            f
            for f in model._meta.concrete_fields
            if not _is_write_time(model, f) and not (f.primary_key and _is_link(model))
        ]
        original = getattr(model, "instance_type", None)
        rows = []
        for values in model._base_manager.order_by("pk").values_list(*[f.attname for f in fields]):
            row = []
            for f, value in zip(fields, values, strict=True):
                target = f.related_model if f.is_relation else (model if f.primary_key else None)
                if original is not None and f.name == original._meta.pk.name:
                    target = original  # a history row's copy of its row's key
                if target in ranks and value is not None:
                    value = ("#", ranks[target][value])
                row.append(value)
            rows.append(tuple(row))
        rows.sort(key=repr)
        out[model._meta.db_table] = rows
    return out


@pytest.fixture
def direct_chunks(monkeypatch) -> list[int]:
    """Pieces and scores, or attack results, of every chunk the direct path wrote itself (not
    handed to the service), after a ``-1`` for each import whose reader ran in a second
    process."""
    written: list[int] = []
    original, original_attacks = DirectWriter._write, DirectWriter._write_attacks

    def spy(self, rows, stored):
        done = original(self, rows, stored)
        if done:
            written.append(rows.rows)
        return done

    def spy_attacks(self, rows):
        done = original_attacks(self, rows)
        if done:
            written.append(rows.rows)
        return done

    monkeypatch.setattr(DirectWriter, "_write", spy)
    monkeypatch.setattr(DirectWriter, "_write_attacks", spy_attacks)
    forked = Importer._import_all_forked

    def reader_in_a_process(self, scratch):
        written.append(-1)
        return forked(self, scratch)

    monkeypatch.setattr(Importer, "_import_all_forked", reader_in_a_process)
    return written


def _forget_media() -> None:
    """Stored media files outlive a rollback; gone, the next run names its blobs alike."""
    shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)


def _announced(run: Any) -> list[str]:
    """``run()``, and the attack ids it announced (``events.attacks_succeeded``), in order."""
    heard: list[str] = []

    def receiver(sender: Any, attack_ids: list[Any], **kwargs: Any) -> None:
        heard.extend(str(a) for a in attack_ids)

    events.attacks_succeeded.connect(receiver, dispatch_uid="test_write_path")
    try:
        run()
    finally:
        events.attacks_succeeded.disconnect(dispatch_uid="test_write_path")
    return heard


def _rollups_exact() -> None:
    """The dashboards' rollups, kept by triggers, equal a recount of the raw tables."""
    assert rollup_sql.check(connection) == []


def _through(db: Path, path: str) -> dict[str, Any]:
    summary: Any = None

    def run() -> None:
        nonlocal summary
        summary = import_pyrit_db(path=db, write_path=path)

    announced = _announced(run)
    _rollups_exact()
    return {
        "announced": announced,
        "created": summary.created,
        "updated": summary.updated,
        "unchanged": summary.unchanged,
        "refused": summary.refused,
        "warnings": sorted(summary.warnings),
        "media": (summary.media_matched, summary.media_missing, summary.media_unused_count),
        "rows_read": summary.rows_read,
    }


def both_paths(db: Path) -> tuple[tuple[dict, dict], tuple[dict, dict]]:
    """(service dump, report) and (direct dump, report) of importing ``db`` into an empty
    database (the service's run is rolled back before the direct one)."""
    service: tuple[dict, dict] = ({}, {})
    try:
        with transaction.atomic():
            report = _through(db, "service")
            service = (dump(), report)
            raise _Rollback
    except _Rollback:
        _forget_media()
    assert not any(dump().values()), "the service's import was not rolled back"
    report = _through(db, "direct")
    return service, (dump(), report)


def assert_same(service: dict, direct: dict) -> None:
    assert service.keys() == direct.keys()
    for table in service:
        assert len(service[table]) == len(direct[table]), table
        for ours, theirs in zip(service[table], direct[table], strict=True):
            assert ours == theirs, table


@pytest.mark.parametrize("version", list(FILES))
def test_direct_path_stores_what_the_service_stores(version, tmp_path, direct_chunks):
    db = copy_fixture(FILES[version], tmp_path)
    (service, service_report), (direct, direct_report) = both_paths(db)
    assert sum(direct_chunks) > 10, "the direct path wrote nothing itself"
    assert -1 in direct_chunks, "the reader did not run in a second process"
    assert sum(len(rows) for rows in service.values()) > 100
    assert service_report == direct_report
    assert_same(service, direct)


@pytest.mark.parametrize("version", list(FILES))
def test_direct_reimport_changes_nothing(version, tmp_path, direct_chunks):
    db = copy_fixture(FILES[version], tmp_path)
    first = import_pyrit_db(path=db, write_path="direct")
    before = dump()
    written = sum(n > 0 for n in direct_chunks)
    again = import_pyrit_db(path=db, write_path="direct")
    assert not any(again.created.values())
    assert not any(again.updated.values())
    assert again.unchanged["message_pieces"] == first.created["message_pieces"] > 0
    assert again.unchanged["scores"] == first.created["scores"]
    assert sum(n > 0 for n in direct_chunks) == written, "a stored row went direct"
    assert dump() == before


@pytest.mark.parametrize("preparers", [1, 2])
def test_direct_path_equals_the_service_on_the_benchmark_file(
    tmp_path, direct_chunks, monkeypatch, preparers
):
    """``bench/import.py``'s generated file (small: 60 conversations split over chunks of
    97 rows, so conversations continue across chunks and both paths take turns), with one
    preparer process and with two taking chunks in turn."""
    monkeypatch.setattr(Importer, "PREPARERS", preparers)
    generate = importlib.import_module("bench.import").generate
    db = tmp_path / "bench.db"
    generate(db, conversations=60, turns=7)
    service_dump: dict = {}
    service_announced: list[str] = []
    try:
        with transaction.atomic():
            service_announced = _announced(
                lambda: import_pyrit_db(path=db, write_path="service", chunk_rows=97)
            )
            _rollups_exact()
            service_dump = dump()
            raise _Rollback
    except _Rollback:
        _forget_media()
    direct_announced = _announced(
        lambda: import_pyrit_db(path=db, write_path="direct", chunk_rows=97)
    )
    _rollups_exact()
    assert service_announced and direct_announced == service_announced
    assert_same(service_dump, dump())
    # every chunk of pieces (each continues a conversation of the one before), of scores and
    # of attack results went direct
    pieces, scores, attacks = (
        source_rows(db, f'SELECT count(*) FROM "{table}"')[0][0]
        for table in ("PromptMemoryEntries", "ScoreEntries", "AttackResultEntries")
    )
    assert [n for n in direct_chunks if n > 0] == [
        *(min(97, pieces - start) for start in range(0, pieces, 97)),
        *(min(97, scores - start) for start in range(0, scores, 97)),
        *(min(97, attacks - start) for start in range(0, attacks, 97)),
    ]


def test_two_trees_under_one_hash_store_alike(tmp_path, direct_chunks):
    """A file can hold two identifiers with the same stored hash and different children (a
    hash PyRIT computed that Redline keeps verbatim; the importer warns). The service walks
    every tree, so the second tree's own child is stored too; the direct path must not keep
    only the first tree of each hash."""
    db = copy_fixture(FILES["1.1.0"], tmp_path)
    (piece_id, converters), *_ = source_rows(
        db,
        "SELECT id, converter_identifiers FROM PromptMemoryEntries "
        "WHERE converter_identifiers LIKE '%CaesarConverter%' ORDER BY timestamp DESC",
    )
    tree = json.loads(converters)
    tree[0]["children"] = {
        "inner": {
            "class_name": "OnlyHereConverter",
            "class_module": "tests.converters",
            "hash": "ab" * 32,
        }
    }
    with sqlite3.connect(db) as source:
        source.execute(
            "UPDATE PromptMemoryEntries SET converter_identifiers = ? WHERE id = ?",
            [json.dumps(tree), piece_id],
        )
    (service, service_report), (direct, direct_report) = both_paths(db)
    assert sum(direct_chunks) > 10, "the direct path wrote nothing itself"
    stored = ComponentIdentifier.objects.values_list("class_name", flat=True)
    assert "OnlyHereConverter" in stored
    assert service_report == direct_report
    assert_same(service, direct)
