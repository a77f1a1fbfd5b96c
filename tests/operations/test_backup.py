"""Backups: a database dump restores every table exactly (pg_dump/pg_restore on PostgreSQL, the
SQLite backup on SQLite, as docs/deployment.md says), and ``media_check`` tells whether the
media folder matches the database."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.db import connection

from memory.models import MediaBlob
from memory.models.media import media_store
from memory.transfer.importers.service import import_pyrit_db
from tests.conftest import FIXTURES_DIR

pytestmark = pytest.mark.django_db(transaction=True)

DB_110 = FIXTURES_DIR / "pyrit-1.1.0-small" / "memory.db"


def _tables() -> list[str]:
    with connection.cursor() as cursor:
        return sorted(connection.introspection.table_names(cursor))


def _rows(cursor, table: str) -> list[tuple]:
    cursor.execute(f'SELECT * FROM "{table}"')
    return sorted(cursor.fetchall(), key=repr)


def _pg_env() -> dict[str, str]:
    settings = connection.settings_dict
    env = {**os.environ, "PGHOST": settings["HOST"] or "127.0.0.1", "PGUSER": settings["USER"]}
    if settings.get("PORT"):
        env["PGPORT"] = str(settings["PORT"])
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = settings["PASSWORD"]
    return env


def _pg_rows(dbname: str, env: dict[str, str]) -> dict[str, list[tuple]]:
    """Every row of every table of ``dbname``, read by one plain client."""
    import psycopg

    with (
        psycopg.connect(
            host=env["PGHOST"], user=env["PGUSER"], port=env.get("PGPORT"), dbname=dbname
        ) as db,
        db.cursor() as cursor,
    ):
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {table: _rows(cursor, table) for (table,) in cursor.fetchall()}


def _sqlite_rows(path: str) -> dict[str, list[tuple]]:
    """Every row of every table of the SQLite file ``path``, read by one plain client."""
    db = sqlite3.connect(path)
    try:
        cursor = db.cursor()
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {table: _rows(cursor, table) for (table,) in cursor.fetchall()}
    finally:
        db.close()


def test_a_dump_restores_every_table_exactly(tmp_path):
    summary = import_pyrit_db(path=DB_110)
    assert summary.ok
    tables = _tables()
    assert len(tables) > 30

    if connection.vendor == "postgresql":
        name = connection.settings_dict["NAME"]
        restored_name = f"{name}_restored"
        env = _pg_env()
        dump = tmp_path / "redline.dump"
        # The commands docs/deployment.md gives.
        subprocess.run(["pg_dump", "-Fc", "-d", name, "-f", str(dump)], env=env, check=True)
        subprocess.run(["dropdb", "--if-exists", restored_name], env=env, check=True)
        subprocess.run(["createdb", restored_name], env=env, check=True)
        try:
            subprocess.run(
                ["pg_restore", "--no-owner", "-d", restored_name, str(dump)], env=env, check=True
            )
            original, restored = _pg_rows(name, env), _pg_rows(restored_name, env)
        finally:
            subprocess.run(["dropdb", "--if-exists", restored_name], env=env, check=True)
    else:
        backup = tmp_path / "backup.sqlite3"
        # What ``sqlite3 var/redline.sqlite3 ".backup backup.sqlite3"`` does, while in use.
        source = sqlite3.connect(connection.settings_dict["NAME"])
        target = sqlite3.connect(backup)
        source.backup(target)
        source.close()
        target.close()
        original = _sqlite_rows(connection.settings_dict["NAME"])
        restored = _sqlite_rows(str(backup))

    assert set(tables) <= set(original) == set(restored)
    assert sum(map(len, original.values())) > 500
    for table in original:
        assert restored[table] == original[table], table


def _media_check(*args: str) -> tuple[str, bool]:
    out = StringIO()
    try:
        call_command("media_check", *args, stdout=out)
    except CommandError as error:
        return out.getvalue() + str(error), False
    return out.getvalue(), True


def test_media_check_finds_missing_damaged_and_unclaimed_files():
    blobs = [media_store(data=f"image bytes {i}".encode()) for i in range(3)]
    text, ok = _media_check()
    assert ok and "3 media blobs" in text and "agree" in text

    default_storage.delete(blobs[0].file.name)
    with default_storage.open(blobs[1].file.name, "wb") as handle:
        handle.write(b"short")
    with default_storage.open(blobs[2].file.name, "wb") as handle:
        handle.write(b"image bytes X")  # same size, other bytes
    default_storage.save("blobs/ff/ff/" + "f" * 64, StringIO("stray"))

    text, ok = _media_check()
    assert not ok
    assert f"missing file: {blobs[0].sha256}" in text
    assert f"file of the wrong size: {blobs[1].sha256}" in text
    assert blobs[2].sha256 not in text  # same size: only --verify reads the bytes
    assert "file no blob names (safe to delete): blobs/ff/ff/" + "f" * 64 in text

    text, _ = _media_check("--verify")
    assert f"do not hash to its name: {blobs[2].sha256}" in text
    assert MediaBlob.objects.count() == 3
