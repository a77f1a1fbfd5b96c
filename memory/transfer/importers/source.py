"""Open a PyRIT SQLite memory file read-only and tell which schema generation wrote it.

Contract §11: the generation is told by the tables and columns present (and, from PyRIT 0.14 on,
by the alembic revision), never by the file name. Everything here only reads the source: it
is attached read-only (``mode=ro``) to a private scratch database, where the importer keeps
its lookup tables, so the user's file is never written and memory stays bounded however big
it is.

Bad input raises :class:`~memory.transfer.importers.service.ImportFailed` with one line,
before anything is read into Redline.
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from memory.transfer.importers.errors import ImportFailed

SQLITE_MAGIC = b"SQLite format 3\x00"

#: PyRIT's alembic chain, base first (contract §11.5). A revision outside it is a schema we do
#: not know: newer than PyRIT 1.1.0, or a fork.
ALEMBIC_REVISIONS = (
    "ab8f2c1a9d07",
    "e373726d391b",
    "108a72344872",
    "7a1b2c3d4e5f",
    "9c8b7a6d5e4f",
    "f1a2b3c4d5e6",
    "b2f4c6a8d1e3",
    "c3d5e7f9a1b2",
    "d4e6f8a0b2c4",
    "e5f7a9c1b3d2",
    "24b44ef076b6",
    "a1c3e5d7f9b0",
    "3f6e8a0c2d4b",
    "d7e9f1a3b5c6",
    "4c9a6e1f2b7d",
    "5a1d3c7e9f04",
    "6b8d0f2a4c1e",
    "8e2c4a6b0d13",
    "0f2e4d6c8b1a",
    "8d1e3f5a7b9c",
)
ALEMBIC_HEAD_1_1_0 = "8d1e3f5a7b9c"

#: The tables the importer reads, in the order it reads them.
TABLES = (
    "ScenarioResultEntries",
    "Conversations",
    "PromptMemoryEntries",
    "ScorableContentEntries",
    "ScoreEntries",
    "AttackResultEntries",
    "SeedPromptEntries",
    "EmbeddingData",
)

#: Columns without which a table cannot be imported (present in every PyRIT version).
REQUIRED_COLUMNS = {
    "PromptMemoryEntries": {
        "id",
        "role",
        "conversation_id",
        "sequence",
        "timestamp",
        "original_value",
        "original_value_data_type",
        "original_prompt_id",
    },
    "ScoreEntries": {
        "id",
        "score_value",
        "score_type",
        "scorer_class_identifier",
        "prompt_request_response_id",
        "timestamp",
    },
    "AttackResultEntries": {"id", "conversation_id", "objective", "outcome"},
    "SeedPromptEntries": {"id", "value", "data_type"},
    "ScenarioResultEntries": {"id", "scenario_name"},
    "Conversations": {"conversation_id"},
    "ScorableContentEntries": {"id", "value", "data_type"},
}


@dataclass
class Schema:
    """What a PyRIT memory file contains: its generation, tables, columns and column types."""

    generation: str
    alembic_revision: str | None
    columns: dict[str, dict[str, str]] = field(default_factory=dict)

    def has(self, table: str, column: str | None = None) -> bool:
        """Whether ``table`` (and ``column`` of it) exists."""
        columns = self.columns.get(table)
        if columns is None:
            return False
        return column is None or column in columns

    def is_json(self, table: str, column: str) -> bool:
        """Whether the column is declared JSON (SQLAlchemy's JSON type, stored as text)."""
        return self.columns.get(table, {}).get(column, "").upper() == "JSON"

    @property
    def label(self) -> str:
        """How the summary names the schema."""
        if self.alembic_revision:
            return f"{self.generation} (alembic {self.alembic_revision})"
        return self.generation


def _uri(path: Path) -> str:
    return "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"


def open_source(path: Path, scratch: Path) -> tuple[sqlite3.Connection, Schema]:
    """A connection to a new scratch database at ``scratch`` with ``path`` attached as ``src``.

    Checks, in this order, with a one-line :class:`ImportFailed` for each: the file exists
    and starts with SQLite's header; SQLite can read it completely (``quick_check`` reads
    every page, so a truncated or damaged file fails here, before anything is imported);
    it holds PyRIT's ``PromptMemoryEntries``; its schema generation is one we know.
    """
    path = Path(path)
    if not path.is_file():
        raise ImportFailed(f"{path}: no such file")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if header != SQLITE_MAGIC:
        raise ImportFailed(f"{path}: not a SQLite database (a PyRIT memory file is one)")
    # URI filenames must be enabled on the main connection for ATTACH to honour ``mode=ro``
    connection = sqlite3.connect(
        "file:" + urllib.parse.quote(str(scratch)),
        uri=True,
        check_same_thread=False,
        isolation_level=None,
    )
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("ATTACH DATABASE ? AS src", (_uri(path),))
        _check_integrity(connection, path)
        schema = _detect(connection, path)
    except ImportFailed:
        connection.close()
        raise
    except sqlite3.DatabaseError as exc:
        connection.close()
        raise ImportFailed(f"{path}: corrupt or truncated SQLite file ({exc})") from exc
    return connection, schema


def _check_integrity(connection: sqlite3.Connection, path: Path) -> None:
    try:
        rows = connection.execute("PRAGMA src.quick_check(5)").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ImportFailed(f"{path}: corrupt or truncated SQLite file ({exc})") from exc
    findings = [row[0] for row in rows]
    if findings != ["ok"]:
        raise ImportFailed(
            f"{path}: corrupt or truncated SQLite file ({'; '.join(findings)[:300]})"
        )


def _detect(connection: sqlite3.Connection, path: Path) -> Schema:
    tables = [
        row[0]
        for row in connection.execute("SELECT name FROM src.sqlite_master WHERE type = 'table'")
    ]
    if "PromptMemoryEntries" not in tables:
        raise ImportFailed(
            f"{path}: a SQLite database, but not PyRIT memory (no PromptMemoryEntries table)"
        )
    columns: dict[str, dict[str, str]] = {}
    for table in tables:
        if table in TABLES:
            info = connection.execute(f'PRAGMA src.table_info("{table}")').fetchall()
            columns[table] = {row[1]: (row[2] or "") for row in info}
    for table, required in REQUIRED_COLUMNS.items():
        missing = required - set(columns.get(table, required))
        if missing:
            raise ImportFailed(
                f"{path}: unknown PyRIT schema ({table} lacks {', '.join(sorted(missing))})"
            )

    revision = None
    if "pyrit_memory_alembic_version" in tables:
        row = connection.execute("SELECT version_num FROM src.pyrit_memory_alembic_version")
        found = [r[0] for r in row.fetchall()]
        unknown = [r for r in found if r not in ALEMBIC_REVISIONS]
        if unknown or not found:
            raise ImportFailed(
                f"{path}: unknown PyRIT schema revision {', '.join(map(repr, unknown)) or 'none'}"
                f" (this Redline reads PyRIT up to 1.1.0, alembic {ALEMBIC_HEAD_1_1_0})"
            )
        # a merge point can leave two heads; the later one in the chain tells the schema
        revision = max(found, key=ALEMBIC_REVISIONS.index)
        generation = "PyRIT 1.1.0" if revision == ALEMBIC_HEAD_1_1_0 else "PyRIT 0.14 – 1.1"
    else:
        pieces = columns["PromptMemoryEntries"]
        if "orchestrator_identifier" in pieces:
            generation = "PyRIT 0.9 (pre-alembic)"
        elif "attack_identifier" in pieces:
            generation = "PyRIT 0.10 – 0.13 (pre-alembic)"
        else:
            raise ImportFailed(
                f"{path}: unknown PyRIT schema (no alembic version, and pieces carry neither "
                "attack_identifier nor orchestrator_identifier)"
            )
    return Schema(generation=generation, alembic_revision=revision, columns=columns)
