"""Databases as a reader polling PyRIT's memory file can find them while PyRIT creates it:
shared by the importer's and the push client's tests of "being created/migrated"."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def databases_being_created(tmp_path: Path) -> dict[str, Path]:
    """An empty file, a SQLite file with no tables, and alembic's version table before the
    first migration (which creates the memory) is stamped."""
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    no_tables = tmp_path / "no-tables.db"
    sqlite3.connect(no_tables).execute("PRAGMA user_version = 0").close()
    alembic_only = tmp_path / "alembic-only.db"
    with sqlite3.connect(alembic_only) as connection:
        connection.execute("CREATE TABLE pyrit_memory_alembic_version (version_num VARCHAR(32))")
    return {"empty": empty, "no tables": no_tables, "alembic only": alembic_only}
