"""``redline-push`` and a database PyRIT is creating or migrating (issue 34): ``--watch`` says
so in one line and waits, then follows the file; a one-shot push stops with that line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from memory.models import MessagePiece
from tests.creating import databases_being_created
from tests.push.conftest import DATABASES, copy_database, count
from tests.push.test_push import assert_equals_source, eventually

pytestmark = pytest.mark.django_db(transaction=True)

LINE = "database is being created/migrated by PyRIT (revision "
MIGRATING = DATABASES["1.1.0"].parent.parent / "pyrit-1.1.0-migrating"
TRUTH = DATABASES["1.1.0"].parent.parent / "pyrit-1.1.0-truth" / "memory.db"
#: The states of a database real PyRIT 1.1.0 is creating, in the order it passes them.
UNDER_CREATION = [
    "00-empty.db",
    "01-ab8f2c1a9d07-version-table-only.db",
    "02-ab8f2c1a9d07-first-memory-table.db",
    "r01-ab8f2c1a9d07.db",
    "r07-b2f4c6a8d1e3.db",
    "r10-e5f7a9c1b3d2.db",
]


def _watch(url: str, token: str, db: Path, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """A ``--watch`` process whose stderr goes to a file the test reads while it runs."""
    err = tmp_path / "watch.err"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "redline_push",
            "--url",
            url,
            "--state",
            str(tmp_path / "state.sqlite3"),
            "--watch",
            "--interval",
            "0.2",
            str(db),
        ],
        env={**os.environ, "REDLINE_TOKEN": token},
        stdout=subprocess.PIPE,
        stderr=err.open("w"),
        text=True,
    )
    return process, err


def _stop(process: subprocess.Popen, err: Path) -> str:
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    return err.read_text()


@pytest.mark.parametrize("state", ["empty", "no tables", "alembic only"])
def test_a_one_shot_push_of_a_database_being_created_is_one_line_and_exit_2(push, tmp_path, state):
    status, _, err = push(databases_being_created(tmp_path)[state])
    assert status == 2
    assert LINE in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_watch_waits_for_a_database_being_created_then_follows_it(live_server, token, tmp_path):
    db = tmp_path / "dbdata" / "pyrit.db"
    db.parent.mkdir()
    db.write_bytes(b"")  # SQLite's file before PyRIT's first migration
    process, err = _watch(live_server.url, token, db, tmp_path)
    try:
        eventually(lambda: _assert_in(LINE, err.read_text()), 60)
        # alembic's version table, and a table of PyRIT's first migration, not stamped yet
        with sqlite3.connect(db) as connection:
            connection.execute("CREATE TABLE pyrit_memory_alembic_version (version_num VARCHAR)")
            connection.execute("CREATE TABLE EmbeddingData (id VARCHAR(36) PRIMARY KEY)")
        eventually(lambda: _assert_in("does not exist yet", err.read_text()), 60)
        # ... then the finished database
        with sqlite3.connect(DATABASES["1.1.0"]) as source, sqlite3.connect(db) as target:
            source.backup(target)
        eventually(lambda: assert_equals_source(db), 90)
        assert process.poll() is None
    finally:
        text = _stop(process, err)
    assert process.returncode == 0, text
    assert "Traceback" not in text
    waiting = [line for line in text.splitlines() if LINE in line]
    # one line per state seen, not one per look (a look every 0.2 s)
    assert 2 <= len(waiting) <= 3, waiting
    assert all(line.endswith("; waiting") for line in waiting)


def test_watch_survives_a_migration_of_the_database_it_follows(live_server, token, tmp_path):
    """The issue's crash: PyRIT's upgrade drops ``attack_results_json`` under a running
    watch, which then read the column it had detected (``no such column``)."""
    db = copy_database("0.12.1", tmp_path)
    process, err = _watch(live_server.url, token, db, tmp_path)
    try:
        eventually(lambda: assert_equals_source(db), 90)
        before = MessagePiece.objects.count()
        with sqlite3.connect(db) as connection:
            connection.execute("ALTER TABLE ScenarioResultEntries DROP COLUMN attack_results_json")
            columns = [r[1] for r in connection.execute("PRAGMA table_info(PromptMemoryEntries)")]
            values = ", ".join("?" if c in ("id", "original_prompt_id") else c for c in columns)
            new_id = uuid.uuid4().hex
            connection.execute(
                f"INSERT INTO PromptMemoryEntries ({', '.join(columns)}) "
                f"SELECT {values} FROM PromptMemoryEntries ORDER BY rowid LIMIT 1",
                (new_id, new_id),
            )
        eventually(lambda: _assert_equal(MessagePiece.objects.count(), before + 1), 60)
        assert count(db, "SELECT count(*) FROM PromptMemoryEntries") == before + 1
        assert process.poll() is None
    finally:
        text = _stop(process, err)
    assert process.returncode == 0, text
    assert "Traceback" not in text and "no such column" not in text.split(LINE)[0]
    assert sum(LINE in line for line in text.splitlines()) == 1, text


def _assert_in(part: str, text: str) -> None:
    assert part in text


def _assert_equal(a: object, b: object) -> None:
    assert a == b


@pytest.mark.parametrize("name", UNDER_CREATION)
def test_a_one_shot_push_of_each_real_state_under_creation_is_one_line(push, tmp_path, name):
    db = tmp_path / name
    db.write_bytes((MIGRATING / name).read_bytes())
    status, _, err = push(db)
    assert status == 2
    assert LINE in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_watch_follows_a_database_through_pyrit_creating_it(live_server, token, tmp_path):
    """Each state real PyRIT 1.1.0 leaves a new database in, one after the other under a
    running ``--watch``, then the memory it writes: a line per state, then the push."""
    db = tmp_path / "dbdata" / "pyrit.db"
    db.parent.mkdir()
    db.write_bytes(b"")
    process, err = _watch(live_server.url, token, db, tmp_path)
    try:
        eventually(lambda: _assert_in(LINE, err.read_text()), 60)
        for name in [*UNDER_CREATION[1:], "r20-8d1e3f5a7b9c.db"]:
            with sqlite3.connect(MIGRATING / name) as source, sqlite3.connect(db) as target:
                source.backup(target)
            if name.startswith("r") and name != "r20-8d1e3f5a7b9c.db":
                revision = name.split("-")[1].removesuffix(".db")
                eventually(lambda r=revision: _assert_in(f"revision {r};", err.read_text()), 60)
        with sqlite3.connect(TRUTH) as source, sqlite3.connect(db) as target:
            source.backup(target)
        eventually(lambda: assert_equals_source(db), 120)
        assert process.poll() is None
    finally:
        text = _stop(process, err)
    assert process.returncode == 0, text
    assert "Traceback" not in text
    assert all(line.endswith("; waiting") for line in text.splitlines() if LINE in line)
