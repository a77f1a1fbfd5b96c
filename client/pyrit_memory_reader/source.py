"""Open a PyRIT SQLite memory file read-only and tell which schema generation wrote it.

Contract §11: the generation is told by the tables and columns present (and, from PyRIT 0.14 on,
by the alembic revision), never by the file name. Everything here only reads the source: it
is attached read-only (``mode=ro``) to a private scratch database, where the importer keeps
its lookup tables, so the user's file is never written and memory stays bounded however big
it is.

Bad input raises :class:`~pyrit_memory_reader.errors.SourceError` with one line, before
anything is read. A schema newer than Redline knows is not bad input: what
Redline understands is imported, the rest kept verbatim (``Schema.notes`` say what), and only a
file without PyRIT's core table is refused.
"""

from __future__ import annotations

import contextlib
import sqlite3
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from pyrit_memory_reader.errors import SchemaInFlux, SourceError

SQLITE_MAGIC = b"SQLite format 3\x00"

#: PyRIT's alembic chain, base first (contract §11.5), then PyRIT 1.2 / main after 1.1.0's head
#: (branches and their merge points in topological order). A revision outside it is a schema we
#: do not know: newer than PyRIT main at ``c8d3e5f7a901``, or a fork.
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
    # PyRIT 1.2 / main (docs/import.md lists what each adds)
    "1b3d5f7a9c2e",
    "a4c6e8f0b2d1",
    "2f8c4d6a9b1e",
    "2c4e6a8b0d14",
    "2c4e6a8b0d1f",
    "7a9c1e3f5b2d",
    "9b2d4f6a8c0e",
    "fcecd0617e61",
    "aca1eba410d9",
    "a6c8e0f2b4d7",
    "6d8f0a2c4e61",
    "6767741d8c6f",
    "6ea3eb4b61c3",
    "34a18645c7e9",
    "901e6c7bf9d4",
    "c8d3e5f7a901",
    # PyRIT main after it: PersistedTargets (revises 8e2c4a6b0d13, a branch of its own)
    "6d8f0a2c4e6b",
)
ALEMBIC_HEAD_1_1_0 = "8d1e3f5a7b9c"
ALEMBIC_HEAD_1_2 = "c8d3e5f7a901"
#: The revisions a PyRIT release (or main) leaves a database at. PyRIT creates a database by
#: upgrading it from the base, one revision after the other: an empty memory at any other
#: revision is a database PyRIT is still creating (docs/import.md).
RELEASE_HEADS = ("3f6e8a0c2d4b", ALEMBIC_HEAD_1_1_0, ALEMBIC_HEAD_1_2, "6d8f0a2c4e6b")

#: The PyRIT versions this reader knows, as ``import_pyrit --help``, docs/import.md and the
#: Imports page say it (``tests/importers/test_known_versions.py`` holds them to it).
KNOWN_VERSIONS = f"0.9 to 1.2 (PyRIT main at alembic {ALEMBIC_HEAD_1_2})"

#: PyRIT's alembic bookkeeping table, and the prefix of the tables alembic's batch mode builds
#: while it migrates a SQLite table (copy, drop, rename).
ALEMBIC_TABLE = "pyrit_memory_alembic_version"
ALEMBIC_TEMPORARY = "_alembic_tmp_"
#: How a message names the revision of a file without one (yet).
NO_REVISION = "none yet"

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

#: Tables of PyRIT 1.2 Redline has no model for yet: kept verbatim (``PyritRecord``).
VERBATIM_TABLES = (
    "OperationEntries",
    "FindingEntries",
    "FindingEvidenceEntries",
    "ObservationEntries",
    "ObservationMessagePieceEntries",
    "ScoreObservationEntries",
    # PyRIT main's API-created targets (alembic 6d8f0a2c4e6b): registry name, type, parameters,
    # auth mode and ``secret_uri``, a reference to where the secret is kept, never its value
    "PersistedTargets",
)

#: Tables deliberately not read: alembic's bookkeeping, and PyRIT 1.x's content-addressed
#: identifier tables, which repeat the JSON columns and are partly stale by design (contract
#: §11.3). ``EmbeddingData`` is counted and warned about by the importer.
SKIPPED_TABLES = (
    "pyrit_memory_alembic_version",
    "AtomicAttackIdentifiers",
    "AtomicAttackSeedIdentifiers",
    "AttackIdentifiers",
    "AttackRequestConverterIdentifiers",
    "AttackResponseConverterIdentifiers",
    "AttackTechniqueIdentifiers",
    "AttackTechniqueSeedIdentifiers",
    "ConverterIdentifiers",
    "PromptConverterIdentifiers",
    "ScenarioIdentifiers",
    "ScorerIdentifierChildren",
    "ScorerIdentifiers",
    "SeedIdentifiers",
    "TargetIdentifierChildren",
    "TargetIdentifiers",
)

#: Every column some known PyRIT version has on the tables Redline reads. A column outside it
#: still goes into the object's ``extra``; the summary names it, since the PyRIT that wrote it
#: is newer than Redline (or the user added it).
KNOWN_COLUMNS = {
    "ScenarioResultEntries": {
        "attack_results_json", "completion_time", "display_group_map_json", "error_message",
        "error_type", "id", "labels", "number_tries", "objective_scorer_identifier",
        "objective_target_identifier", "pyrit_version", "scenario_description",
        "scenario_identifier", "scenario_identifier_hash", "scenario_init_data",
        "scenario_metadata", "scenario_name", "scenario_run_state", "scenario_version",
        "timestamp",
    },
    "Conversations": {
        "attack_result_id", "conversation_id", "pyrit_version", "retries", "target_identifier",
        "target_identifier_hash",
    },
    "PromptMemoryEntries": {
        "attack_identifier", "conversation_id", "converted_value", "converted_value_data_type",
        "converted_value_sha256", "converter_identifiers", "id", "labels",
        "orchestrator_identifier", "original_prompt_id", "original_value",
        "original_value_data_type", "original_value_sha256", "prompt_metadata",
        "prompt_target_identifier", "pyrit_version", "response_error", "role", "sequence",
        "targeted_harm_categories", "timestamp",
    },
    "ScorableContentEntries": {"data_type", "id", "timestamp", "value", "value_sha256"},
    "ScoreEntries": {
        "id", "is_intermediate", "objective", "prompt_request_response_id", "pyrit_version",
        "scorable", "scorable_content_id", "score_category", "score_metadata",
        "score_rationale", "score_type", "score_value", "score_value_description",
        "scored_expectation", "scorer_class_identifier", "scorer_identifier_hash", "status",
        "task", "timestamp",
    },
    "AttackResultEntries": {
        "adversarial_chat_conversation_ids", "atomic_attack_identifier",
        "atomic_attack_identifier_hash", "attack_identifier", "attack_metadata",
        "attribution_data", "attribution_parent_id", "automated_score_id", "conversation_id",
        "error_message", "error_traceback", "error_type", "executed_turns", "execution_time_ms",
        "human_score_id", "id", "labels", "last_response_id", "last_score_id", "objective",
        "objective_sha256", "objective_target_eval_hash_v1", "operation", "operator", "outcome",
        "outcome_reason", "preparation_conversation_ids", "pruned_conversation_ids",
        "pyrit_version", "retry_events_json", "targeted_harm_categories", "timestamp",
        "total_retries",
    },
    "SeedPromptEntries": {
        "added_by", "authors", "conditions", "data_type", "dataset_name", "date_added",
        "description", "groups", "harm_categories", "id", "is_objective", "name", "origin",
        "parameters", "prompt_group_id", "prompt_metadata", "role", "seed_type", "sequence",
        "source", "value", "value_sha256",
    },
    "EmbeddingData": {"embedding", "embedding_type_name", "id"},
}  # fmt: skip

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
    #: Tables kept verbatim (``PyritRecord``): PyRIT 1.2's, tables Redline does not know, and
    #: known tables this file holds in a shape Redline cannot read.
    verbatim: list[str] = field(default_factory=list)
    #: What a schema newer than Redline holds that Redline does not understand, one line each
    #: (the import summary lists them as warnings).
    notes: list[str] = field(default_factory=list)
    #: SQLite's schema cookie when the schema was detected (:func:`check_schema`)
    version: int = 0

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


def open_source(
    path: Path, scratch: Path, *, check_integrity: bool = True
) -> tuple[sqlite3.Connection, Schema]:
    """A connection to a new scratch database at ``scratch`` with ``path`` attached as ``src``.

    Checks, in this order, with a one-line :class:`SourceError` for each: the file exists
    and starts with SQLite's header; SQLite can read it completely (``quick_check`` reads
    every page, so a truncated or damaged file fails here, before anything is imported);
    it holds PyRIT's ``PromptMemoryEntries`` with the columns every version has. A newer
    schema (unknown revision, tables, columns) is read as far as Redline understands it.

    ``check_integrity=False`` skips ``quick_check``: a client following a database PyRIT is
    writing does not read every page (and hold a read lock that long); a damaged page then
    fails the read that meets it.
    """
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path}: no such file")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not header:
        # SQLite creates the file empty and writes its first page with the first table
        raise in_flux(path, "an empty file, not a SQLite database yet")
    if header != SQLITE_MAGIC:
        raise SourceError(f"{path}: not a SQLite database (a PyRIT memory file is one)")
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
        # PyRIT may be committing: wait for its write lock instead of failing at once
        connection.execute("PRAGMA busy_timeout = 10000")
        connection.execute("ATTACH DATABASE ? AS src", (_uri(path),))
        if check_integrity:
            _check_integrity(connection, path)
        schema = _detect(connection, path)
    except SourceError:
        connection.close()
        raise
    except sqlite3.DatabaseError as exc:
        connection.close()
        raise SourceError(f"{path}: corrupt or truncated SQLite file ({exc})") from exc
    return connection, schema


def _check_integrity(connection: sqlite3.Connection, path: Path) -> None:
    try:
        rows = connection.execute("PRAGMA src.quick_check(5)").fetchall()
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"{path}: corrupt or truncated SQLite file ({exc})") from exc
    findings = [row[0] for row in rows]
    if findings != ["ok"]:
        raise SourceError(f"{path}: corrupt or truncated SQLite file ({'; '.join(findings)[:300]})")


def _detect(connection: sqlite3.Connection, path: Path) -> Schema:
    tables = [
        row[0]
        for row in connection.execute(
            "SELECT name FROM src.sqlite_master WHERE type = 'table' ORDER BY name"
        )
    ]
    building = [t for t in tables if t.startswith(ALEMBIC_TEMPORARY)]
    if building:
        # alembic's batch mode rebuilds a table under this name, copies it and renames it
        raise in_flux(path, f"table {building[0]} is half built", connection=connection)
    if "PromptMemoryEntries" not in tables and (
        not [t for t in tables if not t.startswith("sqlite_")]
        or (ALEMBIC_TABLE in tables and stored_revision(connection) == NO_REVISION)
    ):
        # PyRIT creates its tables in its first migration, stamped only once it is done
        raise in_flux(path, "PromptMemoryEntries does not exist yet", connection=connection)
    if "PromptMemoryEntries" not in tables:
        found = ", ".join(t for t in tables if not t.startswith("sqlite_"))[:200] or "none"
        raise SourceError(
            f"{path}: a SQLite database, but not PyRIT memory (no PromptMemoryEntries table, "
            f"the core table of every PyRIT version; tables found: {found})"
        )
    notes: list[str] = []
    verbatim: list[str] = []
    columns: dict[str, dict[str, str]] = {}
    for table in tables:
        if table in TABLES:
            info = connection.execute(f'PRAGMA src.table_info("{table}")').fetchall()
            columns[table] = {row[1]: (row[2] or "") for row in info}
    missing = REQUIRED_COLUMNS["PromptMemoryEntries"] - set(columns["PromptMemoryEntries"])
    if missing:
        raise SourceError(
            f"{path}: unknown PyRIT schema (PromptMemoryEntries lacks {', '.join(sorted(missing))})"
        )
    for table, required in REQUIRED_COLUMNS.items():
        lacking = required - set(columns.get(table, required))
        if lacking:
            # a table Redline cannot read as what it was: kept as it is rather than refused
            del columns[table]
            verbatim.append(table)
            notes.append(
                f"table {table} lacks {', '.join(sorted(lacking))}; its rows were kept "
                "verbatim (PyritRecord), not read"
            )
    for table, known in KNOWN_COLUMNS.items():
        extra = [c for c in columns.get(table, {}) if c not in known]
        if extra:
            notes.append(
                f"{table} has columns this Redline does not know ({', '.join(extra)}); "
                "their values are kept in each object's extra"
            )
    unknown_tables = []
    for table in tables:
        if table in TABLES or table in SKIPPED_TABLES or table.startswith("sqlite_"):
            continue
        verbatim.append(table)
        if table not in VERBATIM_TABLES:
            unknown_tables.append(table)
    if unknown_tables:
        notes.append(
            f"tables unknown to this Redline, kept verbatim (PyritRecord): "
            f"{', '.join(unknown_tables)}"
        )

    revision = None
    if ALEMBIC_TABLE in tables:
        row = connection.execute("SELECT version_num FROM src.pyrit_memory_alembic_version")
        found = [r[0] for r in row.fetchall()]
        if not found:
            # alembic creates its table first and stamps it after the first migration
            raise in_flux(path, "no revision stamped yet", connection=connection)
        unknown = [r for r in found if r not in ALEMBIC_REVISIONS]
        if unknown or not found:
            # Newer than Redline (or a fork): read what is understood, say what is not.
            revision = unknown[0] if unknown else None
            generation = "PyRIT newer than this Redline knows"
            notes.insert(
                0,
                f"unknown PyRIT schema revision {', '.join(map(repr, unknown)) or 'none'} "
                f"(this Redline knows PyRIT up to alembic {ALEMBIC_HEAD_1_2}); imported what it "
                "understands",
            )
        else:
            if not set(found) & set(RELEASE_HEADS) and _memory_empty(connection, columns):
                raise in_flux(
                    path,
                    "a revision no PyRIT release stops at, and no memory written yet",
                    connection=connection,
                )
            # a merge point can leave two heads; the later one in the chain tells the schema
            revision = max(found, key=ALEMBIC_REVISIONS.index)
            position = ALEMBIC_REVISIONS.index(revision)
            if revision == ALEMBIC_HEAD_1_2:
                generation = "PyRIT 1.2"
            elif position > ALEMBIC_REVISIONS.index(ALEMBIC_HEAD_1_1_0):
                generation = "PyRIT 1.1 – 1.2"
            elif revision == ALEMBIC_HEAD_1_1_0:
                generation = "PyRIT 1.1.0"
            else:
                generation = "PyRIT 0.14 – 1.1"
    else:
        pieces = columns["PromptMemoryEntries"]
        if "orchestrator_identifier" in pieces:
            generation = "PyRIT 0.9 (pre-alembic)"
        elif "attack_identifier" in pieces:
            generation = "PyRIT 0.10 – 0.13 (pre-alembic)"
        else:
            raise SourceError(
                f"{path}: unknown PyRIT schema (no alembic version, and pieces carry neither "
                "attack_identifier nor orchestrator_identifier)"
            )
    return Schema(
        generation=generation,
        alembic_revision=revision,
        columns=columns,
        verbatim=verbatim,
        notes=notes,
        version=schema_version(connection),
    )


def _memory_empty(connection: sqlite3.Connection, columns: dict[str, dict[str, str]]) -> bool:
    """Whether none of the memory tables the file has holds a row (one probe per table)."""
    return not any(
        connection.execute(f'SELECT EXISTS (SELECT 1 FROM src."{table}")').fetchone()[0]
        for table in columns
    )


def schema_version(connection: sqlite3.Connection) -> int:
    """SQLite's schema cookie of the source: every change of its tables (PyRIT's migrations)
    moves it, so a reader can tell the schema it detected is no longer the file's."""
    return connection.execute("PRAGMA src.schema_version").fetchone()[0]


def stored_revision(connection: sqlite3.Connection | None) -> str:
    """The source's alembic revision as it reads now, for messages ("none yet" without one)."""
    if connection is None:
        return NO_REVISION
    try:
        rows = connection.execute(f"SELECT version_num FROM src.{ALEMBIC_TABLE}").fetchall()
    except sqlite3.DatabaseError:
        return NO_REVISION
    return ", ".join(str(row[0]) for row in rows) or NO_REVISION


def in_flux(path: Path, why: str, *, connection: sqlite3.Connection | None = None) -> SchemaInFlux:
    """The one-line error of a file PyRIT is creating or migrating (``why``: what was seen)."""
    return SchemaInFlux(
        f"{path}: database is being created/migrated by PyRIT "
        f"(revision {stored_revision(connection)}; {why})"
    )


def check_schema(connection: sqlite3.Connection, schema: Schema, path: Path) -> None:
    """Raise :class:`SchemaInFlux` when the source's tables changed since ``schema`` was
    detected (PyRIT migrated it meanwhile): what was detected no longer reads it."""
    if schema_version(connection) != schema.version:
        raise in_flux(path, "its tables changed while being read", connection=connection)


def reading_failed(
    exc: sqlite3.DatabaseError, connection: sqlite3.Connection, schema: Schema, path: Path
) -> SourceError:
    """The error to raise for ``exc``, met while reading a detected file: a migration running
    meanwhile (the schema moved, or a table or column it named is gone) is :class:`SchemaInFlux`;
    anything else, the file's damage, in one line."""
    moved = False
    with contextlib.suppress(sqlite3.DatabaseError):
        moved = schema_version(connection) != schema.version
    text = str(exc)
    if moved or text.startswith(("no such table", "no such column")):
        return in_flux(path, f"reading failed: {text}", connection=connection)
    return SourceError(f"{path}: corrupt or truncated SQLite file ({text})")
