"""The direct write path's pipeline: a reader process, preparer processes, this one writing.

Chunks come back in the file's order whatever the number of preparers, and a failure in any
stage (an exception, or a process that dies) ends the import with an error naming it, after
the chunks before it were written and with nothing of the failing one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from memory.models import AttackResult, MessagePiece
from memory.transfer.importers import runner
from memory.transfer.importers.errors import ImportFailed
from memory.transfer.importers.runner import Importer
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_110, copy_fixture, source_rows

pytestmark = pytest.mark.django_db

CHUNK = 40


def _piece_ids(db: Path) -> list[str]:
    return [
        row[0] for row in source_rows(db, 'SELECT id FROM "PromptMemoryEntries" ORDER BY rowid')
    ]


def _stored_ids() -> set[str]:
    return {str(pk) for pk in MessagePiece.objects.values_list("id", flat=True)}


def _assert_a_prefix_was_written(db: Path) -> None:
    """The chunks before the failure were committed, in the file's order; none after it."""
    ids, stored = _piece_ids(db), _stored_ids()
    assert 0 < len(stored) < len(ids)
    assert stored == set(ids[: len(stored)])


@pytest.mark.parametrize("preparers", [1, 2, 3])
def test_any_number_of_preparers_imports_the_same(monkeypatch, tmp_path, preparers):
    db = copy_fixture(DB_110, tmp_path)
    monkeypatch.setattr(Importer, "PREPARERS", preparers)
    phases: list[str] = []
    summary = import_pyrit_db(
        path=db, chunk_rows=CHUNK, progress=lambda p: phases.append(p["phase"])
    )
    assert summary.created["message_pieces"] == len(_piece_ids(db)) == len(_stored_ids())
    assert not any(summary.refused.values())
    # written in the file's order: no phase comes back after a later one started
    order = [phase for i, phase in enumerate(phases) if i == 0 or phases[i - 1] != phase]
    assert len(order) == len(set(order)), order


def test_an_error_in_the_reader_stops_the_import_after_the_chunks_before_it(monkeypatch, tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    real_chunks = runner.ChunkReader.chunks

    def two_chunks_then_fail(self):
        for number, chunk in enumerate(real_chunks(self)):
            if number == 2:
                raise ValueError("the disk went away")
            yield chunk

    monkeypatch.setattr(runner.ChunkReader, "chunks", two_chunks_then_fail)
    with pytest.raises(ValueError, match="the disk went away"):
        import_pyrit_db(path=db, chunk_rows=CHUNK)
    _assert_a_prefix_was_written(db)


def test_an_error_in_a_preparer_stops_the_import(monkeypatch, tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    real_normalize = runner.normalize_batch
    calls = {"n": 0}

    def fail_on_the_third(payload):
        calls["n"] += 1  # counted in the preparer process: one preparer sees every chunk
        if calls["n"] == 3:
            raise RuntimeError("a preparer broke")
        return real_normalize(payload)

    monkeypatch.setattr(runner, "normalize_batch", fail_on_the_third)
    with pytest.raises(RuntimeError, match="a preparer broke"):
        import_pyrit_db(path=db, chunk_rows=CHUNK)
    _assert_a_prefix_was_written(db)


@pytest.mark.parametrize("stage", ["_read_in_child", "_prepare_in_child"])
def test_a_process_that_dies_is_reported(monkeypatch, tmp_path, stage):
    db = copy_fixture(DB_110, tmp_path)
    monkeypatch.setattr(runner, stage, lambda *args: os._exit(7))
    name = "reader" if stage == "_read_in_child" else "preparer"
    with pytest.raises(ImportFailed, match=rf"{name}.* stopped \(exit code 7\)"):
        import_pyrit_db(path=db, chunk_rows=CHUNK)
    assert not _stored_ids()


@pytest.mark.parametrize("write_path", ["direct", "service"])
def test_a_value_too_long_for_its_column_refuses_its_row_on_either_path(tmp_path, write_path):
    """The value checks run beside the reader, once: the writer's service is told they ran
    (``checked``) and must still leave out the row they refused."""
    db = copy_fixture(DB_110, tmp_path)
    refused = source_rows(db, 'SELECT id FROM "AttackResultEntries" ORDER BY rowid LIMIT 1')[0][0]
    with sqlite3.connect(db) as source:
        source.execute(
            'UPDATE "AttackResultEntries" SET labels = ? WHERE id = ?',
            (json.dumps({"k" * 300: "v"}), refused),
        )
    attacks = source_rows(db, 'SELECT count(*) FROM "AttackResultEntries"')[0][0]
    summary = import_pyrit_db(path=db, chunk_rows=CHUNK, write_path=write_path)
    assert summary.refused["attack_results"] == 1
    assert summary.created["attack_results"] == attacks - 1
    assert not AttackResult.objects.filter(id=refused).exists()
    assert any(refused in line and "255" in line for line in summary.warnings), summary.warnings
    dry = import_pyrit_db(path=db, chunk_rows=CHUNK, write_path=write_path, dry_run=True)
    assert dry.refused["attack_results"] == 1


def test_a_slow_last_chunk_is_waited_for_after_the_reader_finished(monkeypatch, tmp_path):
    """The reader exits (code 0) once it has sent the end; the preparer may still be busy
    with the last chunk for longer than the writer's poll: that is not a dead process."""
    db = copy_fixture(DB_110, tmp_path)
    real_normalize = runner.normalize_batch

    def slow(payload):
        time.sleep(1.5)
        return real_normalize(payload)

    monkeypatch.setattr(runner, "normalize_batch", slow)
    summary = import_pyrit_db(path=db, chunk_rows=100_000)
    assert summary.created["message_pieces"] == len(_piece_ids(db)) == len(_stored_ids())


def test_an_error_that_does_not_pickle_still_reaches_the_writer(monkeypatch, tmp_path):
    db = copy_fixture(DB_110, tmp_path)

    class Unpicklable(Exception):
        def __reduce__(self):
            raise TypeError("not picklable")

    def broken(payload):
        raise Unpicklable("a preparer broke oddly")

    monkeypatch.setattr(runner, "normalize_batch", broken)
    with pytest.raises(ImportFailed, match="Unpicklable: a preparer broke oddly"):
        import_pyrit_db(path=db, chunk_rows=CHUNK)
