"""What a push has sent: a small SQLite file per (Redline URL, PyRIT database).

- ``watermark``: for each append-only table (pieces, scores, scorable content, embeddings),
  the highest rowid sent and the ``id`` of that row — if the row at that rowid no longer has
  that id, the file was rewritten (vacuumed, replaced) and the table is sent again from the
  start;
- ``digest``: for each row of a table PyRIT updates in place (attack results, scenario results,
  conversations, seeds, the tables kept verbatim), the digest of the row as sent — a row whose
  digest differs, or that has none, is sent (again);
- ``media``: the (SHA-256, location) pairs Redline holds.

Everything a batch changes here is committed in one transaction, only after Redline answered
the batch. A crash before that resends the batch, which Redline's ingestion reports
``unchanged``: nothing is lost and nothing duplicated.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS watermark (
    tbl TEXT PRIMARY KEY, last_rowid INTEGER NOT NULL, last_id TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS digest (
    tbl TEXT NOT NULL, row INTEGER NOT NULL, digest TEXT NOT NULL, PRIMARY KEY (tbl, row)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS media (
    sha256 TEXT NOT NULL, location TEXT NOT NULL, PRIMARY KEY (sha256, location)
) WITHOUT ROWID;
"""


def default_state_path(url: str, database: Path) -> Path:
    """``<user cache>/redline-push/<hash of URL and database path>.sqlite3``."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = hashlib.sha256(f"{url.rstrip('/')}\x00{database.resolve()}".encode()).hexdigest()
    return base / "redline-push" / f"{name[:24]}.sqlite3"


class State:
    """The state file of one push (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    # --- reads ------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def watermark(self, table: str) -> tuple[int, str | None]:
        """``(last rowid sent, its id)``; ``(-1, None)`` when nothing was sent."""
        row = self.db.execute(
            "SELECT last_rowid, last_id FROM watermark WHERE tbl = ?", (table,)
        ).fetchone()
        return (row[0], row[1]) if row else (-1, None)

    def digests(self, table: str) -> dict[int, str]:
        """rowid → digest of every row of ``table`` sent."""
        return dict(self.db.execute("SELECT row, digest FROM digest WHERE tbl = ?", (table,)))

    def has_media(self, sha256: str, location: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM media WHERE sha256 = ? AND location = ?", (sha256, location)
            ).fetchone()
            is not None
        )

    # --- one batch's changes, committed together -----------------------------------------------

    def commit(
        self,
        *,
        watermarks: dict[str, tuple[int, str | None]],
        sent: Iterable[tuple[str, int, str]],
        refused: Iterable[tuple[str, int]],
        media: Iterable[tuple[str, str]],
    ) -> None:
        """Record one batch Redline answered: new watermarks, digests of the rows it took,
        rows it refused (forgotten, so they are offered again), media it holds."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT OR REPLACE INTO watermark VALUES (?, ?, ?)",
                [(table, rowid, key) for table, (rowid, key) in watermarks.items()],
            )
            self.db.executemany("INSERT OR REPLACE INTO digest VALUES (?, ?, ?)", sent)
            self.db.executemany("DELETE FROM digest WHERE tbl = ? AND row = ?", refused)
            self.db.executemany("INSERT OR IGNORE INTO media VALUES (?, ?)", media)

    def reset(self, table: str) -> None:
        """Forget what was sent of ``table``: the next cycle sends all of it again."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("DELETE FROM watermark WHERE tbl = ?", (table,))
            self.db.execute("DELETE FROM digest WHERE tbl = ?", (table,))

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
