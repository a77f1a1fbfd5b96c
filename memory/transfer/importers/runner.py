"""The import of one PyRIT SQLite file: read it table by table, chunk by chunk, into the
ingestion service.

Order (each table in rowid order, so pieces keep PyRIT's insertion order inside a message):
scenario results (attack results point at them), pieces (a 1.x conversation row travels with
its conversation's first pieces), conversations without pieces, scorable content, scores,
attack results (their last response and last score are then stored), seeds (a seed group is
never split across chunks), then the tables Redline keeps verbatim (PyRIT 1.2's operations,
findings, evidence and observations, and tables of a newer PyRIT). Each chunk is normalised by
:func:`~memory.transfer.ingest.normalize.normalize_batch` and written by
:func:`~memory.storage.write.ingest_batch` in its own transaction: a failure leaves earlier
chunks imported and nothing of the failing one. Items the service refuses are left out and
reported; everything else of the chunk is written.

Memory stays bounded: a reader thread prepares at most two chunks ahead of the writer, and
lookups live in a scratch SQLite file (labels per conversation, conversations seen, the media
listing).
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from memory.models import MediaBlob, MediaLocation
from memory.models.media import media_key
from memory.storage.batch import NormalizedBatch
from memory.storage.write import ingest_batch
from memory.transfer.importers.errors import ImportFailed
from memory.transfer.importers.media_files import MediaFile, MediaFiles
from memory.transfer.importers.rows import (
    IdentifierCache,
    TableReader,
    VerbatimReader,
    attack_reader,
    conversation_reader,
    piece_reader,
    scenario_reader,
    scorable_content_reader,
    score_reader,
    seed_reader,
)
from memory.transfer.importers.source import TABLES, Schema, open_source
from memory.transfer.ingest.normalize import normalize_batch
from redteam.core.choices import is_media_value
from redteam.core.collector import fewer_collections
from redteam.core.errors import Problem

DEFAULT_CHUNK_ROWS = 5000
# Media files nothing named: counted, and this many listed by name.
_UNUSED_LISTED = 50
# Warnings of one kind beyond this many are counted, not listed.
_EXAMPLES_PER_WARNING = 5


class WarningLog:
    """Warnings grouped by kind: a count each and the first few messages, in arrival order."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self._lock = threading.Lock()  # the reader and the writer thread both warn

    def add(self, kind: str, message: str) -> None:
        """Record one warning of ``kind``."""
        with self._lock:
            self.counts[kind] += 1
            examples = self.examples.setdefault(kind, [])
            if len(examples) < _EXAMPLES_PER_WARNING:
                examples.append(message)

    def lines(self) -> list[str]:
        """One line per message kept, plus one per kind with more than were kept."""
        out = []
        for kind, examples in self.examples.items():
            out.extend(f"{kind}: {message}" for message in examples)
            more = self.counts[kind] - len(examples)
            if more > 0:
                out.append(f"{kind}: … and {more} more")
        return out


@dataclass
class Tally:
    """What the import did, summed over chunks (becomes the ``ImportSummary``)."""

    rows_read: dict[str, int] = field(default_factory=dict)
    created: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    media_matched: int = 0
    media_missing: int = 0
    media_unused: list[str] = field(default_factory=list)
    media_unused_count: int = 0
    warnings: WarningLog = field(default_factory=WarningLog)


# The table each ingestion kind comes from, for warnings about refused rows.
_TABLE_OF_KIND = {
    "conversations": "Conversations",
    "message_pieces": "PromptMemoryEntries",
    "scores": "ScoreEntries",
    "attack_results": "AttackResultEntries",
    "scenario_results": "ScenarioResultEntries",
    "seeds": "SeedPromptEntries",
    "seed_groups": "SeedPromptEntries",
    "scorable_contents": "ScorableContentEntries",
    "pyrit_records": "a table kept verbatim",
}


@dataclass
class _Prepared:
    """One chunk, read and normalised, on its way from the reader to the writer."""

    phase: str
    batch: NormalizedBatch
    problems: list[Problem]
    media: list[tuple[str, MediaFile]]
    #: Source rows the chunk holds: counted as done once the chunk is committed.
    rows: int = 0


class _Stopped(Exception):
    """The writer gave up (an error): the reader stops too."""


_END = object()


@contextlib.contextmanager
def _bulk_pragmas() -> Iterator[None]:
    """On SQLite, a larger page cache while importing: every chunk inserts into a dozen
    indexes keyed by random UUIDs and hashes, and with the default 2 MB cache most of those
    index pages are re-read for every chunk. Restored afterwards (the connection may serve a
    worker's next task)."""
    connection = transaction.get_connection()
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size")
        cache = cursor.fetchone()[0]
        cursor.execute("PRAGMA wal_autocheckpoint")
        checkpoint = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA cache_size = {-_IMPORT_CACHE_KIB}")
        # Checkpoint less often: index pages that every chunk touches are then copied back
        # to the database file once per many chunks instead of after each commit.
        cursor.execute(f"PRAGMA wal_autocheckpoint = {_IMPORT_CHECKPOINT_PAGES}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA cache_size = {int(cache)}")
            cursor.execute(f"PRAGMA wal_autocheckpoint = {int(checkpoint)}")
            if not connection.in_atomic_block:
                cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")


_IMPORT_CACHE_KIB = 128 * 1024
_IMPORT_CHECKPOINT_PAGES = 25_000


class Importer:
    """One run of the importer over one file.

    See :func:`memory.transfer.importers.service.import_pyrit_db`.
    """

    #: Seconds between two progress reports (at most).
    REPORT_INTERVAL = 0.5

    def __init__(
        self,
        *,
        path: Path,
        media_root: Path | None,
        dry_run: bool,
        progress: Callable[[dict[str, Any]], None] | None,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        actor: AbstractBaseUser | None = None,
    ) -> None:
        self.path = Path(path)
        self.actor = actor
        self.explicit_media_root = media_root is not None
        self.media_root = Path(media_root) if media_root is not None else self.path.parent
        self.dry_run = dry_run
        self.progress = progress
        self.chunk_rows = chunk_rows
        self.tally = Tally()
        self.ids = IdentifierCache(on_mismatch=self._hash_mismatch)
        #: Source rows committed (what progress reports); ``read`` runs ahead of it.
        self.done = 0
        self.read = 0
        self._unqueued = 0
        self.total = 0
        self.started = time.perf_counter()
        self._last_report = 0.0

    # --- the run ----------------------------------------------------------------------------

    def run(self) -> tuple[Schema, Tally]:
        """Validate the file, then import it; returns its schema and the tally."""
        with tempfile.TemporaryDirectory(prefix="redline-import-") as scratch:
            db, schema = open_source(self.path, Path(scratch) / "scratch.sqlite3")
            try:
                self.db, self.schema = db, schema
                self._prepare()
                with _bulk_pragmas(), fewer_collections():
                    self._import_all()
                count, names = self.media.unused(limit=_UNUSED_LISTED)
                self.tally.media_unused_count, self.tally.media_unused = count, names
            finally:
                db.close()
        return schema, self.tally

    def _prepare(self) -> None:
        counts = {}
        for table in [*TABLES, *self.schema.verbatim]:
            if self.schema.has(table) or table in self.schema.verbatim:
                counts[table] = self.db.execute(f'SELECT count(*) FROM src."{table}"').fetchone()[0]
        self.total = sum(counts.values())
        self.tally.rows_read = dict.fromkeys(counts, 0)
        if self.explicit_media_root and not self.media_root.is_dir():
            raise ImportFailed(f"{self.media_root}: media root is not a folder")
        self.media = MediaFiles(
            self.db,
            self.media_root,
            explicit=self.explicit_media_root,
            max_bytes=settings.REDLINE_MEDIA_MAX_BYTES,
        )
        for note in self.schema.notes:
            # a newer PyRIT than Redline knows: what was kept how (docs/import.md)
            self.tally.warnings.add("schema newer than this Redline", note)
        for name in self.media.too_large:
            self.tally.warnings.add("media file over the size limit, not imported", name)
        self._build_conversation_tags()
        self._build_scenario_owners()
        self.db.execute("CREATE TABLE seen_conv (conversation_id TEXT PRIMARY KEY) WITHOUT ROWID")
        if self.schema.has("Conversations"):
            self.conversations = conversation_reader(self.schema, self.ids)
        self._report("prepared", force=True)

    def _build_conversation_tags(self) -> None:
        """Contract §9.2 / §11.5: 1.x labels and harm categories live on attack results; every
        conversation of an attack (main and related) passes them to its pieces. The first
        attack naming a conversation wins, the main conversation before related ones."""
        self.db.execute(
            "CREATE TABLE conv_tags (conversation_id TEXT PRIMARY KEY, labels TEXT, harms TEXT)"
        )
        table = "AttackResultEntries"
        has_labels = self.schema.has(table, "labels")
        has_harms = self.schema.has(table, "targeted_harm_categories")
        if not self.schema.has(table) or not (has_labels or has_harms):
            return
        labels = "a.labels" if has_labels else "NULL"
        harms = "a.targeted_harm_categories" if has_harms else "NULL"
        wanted = (
            f"({labels} IS NOT NULL AND json_valid({labels}) AND {labels} NOT IN ('null', '{{}}'))"
            f" OR ({harms} IS NOT NULL AND json_valid({harms}) AND {harms} NOT IN ('null', '[]'))"
        )
        self.db.execute(
            f"INSERT OR IGNORE INTO conv_tags SELECT a.conversation_id, {labels}, {harms} "
            f"FROM src.{table} a WHERE {wanted} ORDER BY a.rowid"
        )
        for column in ("pruned_conversation_ids", "adversarial_chat_conversation_ids"):
            if not self.schema.has(table, column):
                continue
            self.db.execute(
                f"INSERT OR IGNORE INTO conv_tags SELECT j.value, {labels}, {harms} "
                f"FROM src.{table} a, json_each(CASE WHEN json_valid(a.{column}) "
                f"AND json_type(a.{column}) = 'array' THEN a.{column} ELSE '[]' END) j "
                f"WHERE ({wanted}) AND j.type = 'text' ORDER BY a.rowid"
            )

    def _build_scenario_owners(self) -> None:
        """Contract §11.5: before alembic ``9c8b7a6d5e4f`` an attack result named no scenario;
        the scenario listed its attacks in ``attack_results_json``, ``{atomic attack name:
        [conversation ids]}``. PyRIT's own upgrade turns that manifest into each attack
        result's ``attribution_parent_id`` and ``attribution_data.parent_collection``, the
        first scenario naming a conversation winning; the import does the same, so a
        scenario owns its attack results whichever version wrote the file."""
        self.db.execute(
            "CREATE TABLE scenario_owner "
            "(conversation_id TEXT PRIMARY KEY, scenario_id TEXT, collection TEXT)"
        )
        if not self.schema.has("ScenarioResultEntries", "attack_results_json"):
            return
        manifest = "s.attack_results_json"
        self.db.execute(
            "INSERT OR IGNORE INTO scenario_owner SELECT v.value, s.id, c.key "
            "FROM src.ScenarioResultEntries s, "
            f"json_each(CASE WHEN json_valid({manifest}) AND json_type({manifest}) = 'object' "
            f"THEN {manifest} ELSE '{{}}' END) c, "
            "json_each(CASE WHEN c.type = 'array' THEN c.value ELSE '[]' END) v "
            "WHERE v.type = 'text' ORDER BY s.rowid, c.id, v.id"
        )

    def _import_all(self) -> None:
        """Reading and normalising (a thread) overlap writing (this thread): while a chunk
        is in SQLite or PostgreSQL, which release the GIL, the next one is prepared. The
        queue holds at most two prepared chunks, so memory stays bounded."""
        prepared: queue.Queue[Any] = queue.Queue(maxsize=2)
        self._stop = threading.Event()
        reader = threading.Thread(
            target=self._produce, args=(prepared,), name="pyrit-import-reader", daemon=True
        )
        reader.start()
        try:
            while True:
                item = prepared.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise item
                self._write(item)
        finally:
            self._stop.set()
            while reader.is_alive():
                with contextlib.suppress(queue.Empty):
                    prepared.get(timeout=0.1)
            reader.join()
        # Rows read but never handed to the writer (nothing in them to write) are done too.
        self.done += self._unqueued
        self._unqueued = 0
        self._report("done", force=True)

    def _produce(self, prepared: queue.Queue[Any]) -> None:
        """The reader thread: every chunk of every table, prepared for writing."""
        self._out = prepared
        try:
            self._read_all()
        except _Stopped:
            return
        except BaseException as exc:  # handed to the writer, which raises it
            self._put(exc)
            return
        self._put(_END)

    def _put(self, item: Any) -> None:
        while not self._stop.is_set():
            try:
                self._out.put(item, timeout=0.1)
                return
            except queue.Full:
                continue
        raise _Stopped

    def _read_all(self) -> None:
        schema, ids = self.schema, self.ids
        steps: list[tuple[str, TableReader, str, Callable[[list[dict[str, Any]]], None]]] = []
        if schema.has("ScenarioResultEntries"):
            steps.append(
                ("scenario results", scenario_reader(schema, ids), "scenario_results", self._plain)
            )
        steps.append(("pieces", piece_reader(schema, ids), "message_pieces", self._pieces))
        if schema.has("Conversations"):
            # conversations travel with their first pieces; these are the ones without any
            steps.append(
                (
                    "conversations",
                    conversation_reader(schema, ids),
                    "conversations",
                    self._lone_conversations,
                )
            )
        if schema.has("ScorableContentEntries"):
            steps.append(
                (
                    "scorable content",
                    scorable_content_reader(schema),
                    "scorable_contents",
                    self._plain,
                )
            )
        if schema.has("ScoreEntries"):
            steps.append(("scores", score_reader(schema, ids), "scores", self._plain))
        if schema.has("AttackResultEntries"):
            steps.append(
                ("attack results", attack_reader(schema, ids), "attack_results", self._attacks)
            )
        for phase, reader, key, handle in steps:
            self.phase, self.key = phase, key
            for chunk in self._chunks(reader):
                handle(chunk)
        if schema.has("SeedPromptEntries"):
            self.phase, self.key = "seeds", "seeds"
            for chunk in self._seed_chunks(seed_reader(schema)):
                self._seeds(chunk)
        for table in schema.verbatim:
            self.phase, self.key = f"{table} (verbatim)", "pyrit_records"
            for chunk in self._verbatim_chunks(table):
                self._ingest({"pyrit_records": chunk})
        if schema.has("EmbeddingData"):
            count = self.db.execute("SELECT count(*) FROM src.EmbeddingData").fetchone()[0]
            self.tally.rows_read["EmbeddingData"] = count
            self._count_read(count)
            if count:
                self.tally.warnings.add(
                    "not imported",
                    f"{count} EmbeddingData rows (Redline keeps no embeddings)",
                )

    # --- reading ----------------------------------------------------------------------------

    def _chunks(self, reader: TableReader) -> Iterator[list[dict[str, Any]]]:
        """Rows of ``reader``'s table in rowid order, ``chunk_rows`` at a time (keyset paging,
        so each chunk is one indexed range read however far into the table)."""
        last = -1
        sql = (
            f'SELECT rowid, {reader.select} FROM src."{reader.table}" '
            f"WHERE rowid > ? ORDER BY rowid LIMIT {self.chunk_rows}"
        )
        while True:
            rows = self.db.execute(sql, (last,)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            self.tally.rows_read[reader.table] += len(rows)
            self._count_read(len(rows))
            yield [reader.to_dict(row[1:]) for row in rows]

    def _seed_chunks(self, reader: TableReader) -> Iterator[list[dict[str, Any]]]:
        """Seeds ordered by group, then rowid; a chunk ends only between groups, since
        PyRIT's group rules hold for a group as a whole (contract §8.5)."""
        sql = (
            f'SELECT rowid, prompt_group_id, {reader.select} FROM src."SeedPromptEntries" '
            "ORDER BY prompt_group_id IS NULL, prompt_group_id, rowid"
            if self.schema.has("SeedPromptEntries", "prompt_group_id")
            else f'SELECT rowid, NULL, {reader.select} FROM src."SeedPromptEntries" ORDER BY rowid'
        )
        cursor = self.db.execute(sql)
        chunk: list[dict[str, Any]] = []
        group = None
        while True:
            rows = cursor.fetchmany(self.chunk_rows)
            if not rows:
                break
            for row in rows:
                if len(chunk) >= self.chunk_rows and (row[1] is None or row[1] != group):
                    yield chunk
                    chunk = []
                group = row[1]
                chunk.append(reader.to_dict(row[2:]))
                self.tally.rows_read["SeedPromptEntries"] += 1
                self._count_read(1)
        if chunk:
            yield chunk

    def _verbatim_chunks(self, table: str) -> Iterator[list[dict[str, Any]]]:
        """Every row of a table kept verbatim, ``chunk_rows`` at a time, in rowid order (or
        primary-key order for a ``WITHOUT ROWID`` table)."""
        info = self.db.execute(f'PRAGMA src.table_info("{table}")').fetchall()
        reader = VerbatimReader(table, info, self.schema.alembic_revision)
        try:
            self.db.execute(f'SELECT rowid FROM src."{table}" LIMIT 1')
            order = "rowid"
        except sqlite3.OperationalError:
            order = ", ".join(f'"{c}"' for c in reader.key)
            rowid = "NULL"
        else:
            rowid = "rowid"
        sql = f'SELECT {rowid}, {reader.select} FROM src."{table}" ORDER BY {order}'
        cursor = self.db.execute(sql)
        while rows := cursor.fetchmany(self.chunk_rows):
            self.tally.rows_read[table] += len(rows)
            self._count_read(len(rows))
            yield [reader.to_dict(row[0], row[1:]) for row in rows]

    # --- per kind -----------------------------------------------------------------------------

    def _plain(self, rows: list[dict[str, Any]]) -> None:
        if self.key == "conversations":
            rows = [{"conversation": row, "messages": []} for row in rows]
        self._ingest({self.key: rows})

    def _pieces(self, rows: list[dict[str, Any]]) -> None:
        """Pieces get what 1.x keeps elsewhere (contract §9.2): the conversation's target and the
        labels / harm categories of the attack results holding the conversation.

        A 1.x ``Conversations`` row is sent with the first chunk holding one of its pieces,
        so the conversation is created once, complete, instead of created and then updated.
        """
        conversation_ids = list({row["conversation_id"] for row in rows})
        seen = {
            r[0]
            for r in self._lookup(
                "SELECT conversation_id FROM seen_conv WHERE conversation_id IN ({})",
                conversation_ids,
            )
        }
        fresh = [cid for cid in conversation_ids if cid not in seen]
        self.db.executemany(
            "INSERT INTO seen_conv (conversation_id) VALUES (?)", [(cid,) for cid in fresh]
        )
        targets: dict[str, Any] = {}
        entities: list[dict[str, Any]] = []
        if self.schema.has("Conversations"):
            reader = self.conversations
            for row in self._lookup(
                f"SELECT {reader.select} FROM src.Conversations WHERE conversation_id IN ({{}})",
                conversation_ids,
            ):
                entity = reader.to_dict(row)
                cid = entity.get("conversation_id")
                targets[cid] = entity.get("target_identifier")
                if cid not in seen:
                    entities.append({"conversation": entity, "messages": []})
        tags = {
            cid: (self._json_text(labels), self._json_text(harms))
            for cid, labels, harms in self._lookup(
                "SELECT conversation_id, labels, harms FROM conv_tags "
                "WHERE conversation_id IN ({})",
                conversation_ids,
            )
        }
        for row in rows:
            cid = row["conversation_id"]
            if row.get("prompt_target_identifier") in (None, {}) and targets.get(cid):
                row["prompt_target_identifier"] = targets[cid]
            found = tags.get(cid)
            if found is None:
                continue
            labels, harms = found
            if not row.get("labels") and labels:
                row["labels"] = dict(labels)
            if not row.get("targeted_harm_categories") and harms:
                row["targeted_harm_categories"] = list(harms)
        payload: dict[str, Any] = {"message_pieces": rows}
        if entities:
            payload["conversations"] = entities
        self._ingest(payload)

    def _lone_conversations(self, rows: list[dict[str, Any]]) -> None:
        """1.x conversations without pieces. Every ``Conversations`` row is counted as read
        here; those with pieces were already sent with them."""
        ids = [row.get("conversation_id") for row in rows]
        seen = {
            r[0]
            for r in self._lookup(
                "SELECT conversation_id FROM seen_conv WHERE conversation_id IN ({})", ids
            )
        }
        lone = [row for row in rows if row.get("conversation_id") not in seen]
        if lone:
            self._ingest({"conversations": [{"conversation": r, "messages": []} for r in lone]})

    def _attacks(self, rows: list[dict[str, Any]]) -> None:
        """References that the file itself cannot satisfy are dropped with a warning, so the
        attack result is kept (the ingestion service refuses a dangling last response)."""
        self._attribute_to_scenarios(rows)
        checks = (
            ("last_response", "PromptMemoryEntries", "piece"),
            ("last_score", "ScoreEntries", "score"),
            ("human_score", "ScoreEntries", "score"),
            ("attribution_parent_id", "ScenarioResultEntries", "scenario result"),
        )
        for key, table, what in checks:
            wanted = {row[key] for row in rows if isinstance(row.get(key), str)}
            if not wanted:
                continue
            found = set()
            if self.schema.has(table):
                found = {
                    r[0]
                    for r in self._lookup(
                        f'SELECT id FROM src."{table}" WHERE id IN ({{}})', wanted
                    )
                }
            for row in rows:
                value = row.get(key)
                if isinstance(value, str) and value not in found:
                    self.tally.warnings.add(
                        f"attack result refers to a {what} not in the file; reference dropped",
                        f"{row.get('attack_result_id')}: {key} {value}",
                    )
                    row[key] = None
        self._ingest({"attack_results": rows})

    def _attribute_to_scenarios(self, rows: list[dict[str, Any]]) -> None:
        """An attack result that names no scenario belongs to the one whose manifest lists its
        conversation (see :meth:`_build_scenario_owners`)."""
        unowned = [row for row in rows if row.get("attribution_parent_id") is None]
        if not unowned:
            return
        owners = {
            cid: (scenario_id, collection)
            for cid, scenario_id, collection in self._lookup(
                "SELECT conversation_id, scenario_id, collection FROM scenario_owner "
                "WHERE conversation_id IN ({})",
                {row.get("conversation_id") for row in unowned},
            )
        }
        for row in unowned:
            owner = owners.get(row.get("conversation_id"))
            if owner is None:
                continue
            row["attribution_parent_id"], collection = owner
            if row.get("attribution_data") is None:
                row["attribution_data"] = {"parent_collection": collection}

    def _seeds(self, rows: list[dict[str, Any]]) -> None:
        groups: dict[str, list[dict[str, Any]]] = {}
        loose = []
        for row in rows:
            group_id = row.get("prompt_group_id")
            if isinstance(group_id, str) and group_id:
                groups.setdefault(group_id, []).append(row)
            else:
                loose.append(row)
        payload: dict[str, Any] = {}
        if loose:
            payload["seeds"] = loose
        if groups:
            payload["seed_groups"] = [{"seeds": seeds} for seeds in groups.values()]
        self._ingest(payload)

    # --- writing ----------------------------------------------------------------------------

    def _ingest(self, payload: dict[str, Any]) -> None:
        """Reader side: normalise a chunk and find its media files, then queue it."""
        batch, problems = normalize_batch(payload)
        rows, self._unqueued = self._unqueued, 0
        self._put(_Prepared(self.phase, batch, problems, self._match_media(batch), rows))

    def _count_read(self, rows: int) -> None:
        """Reader side: ``rows`` more source rows read, not yet handed to the writer."""
        self.read += rows
        self._unqueued += rows

    def _write(self, item: _Prepared) -> None:
        """Writer side: store the chunk's media, then the chunk, in its own transaction."""
        self._store_media(item.media)
        if self.dry_run:
            self._dry_count(item.batch, item.problems)
        else:
            self._drop_unstored_references(item.batch)
            report = ingest_batch(
                batch=item.batch, problems=item.problems, partial=True, actor=self.actor
            )
            for kind, counts in report.counts.items():
                self.tally.created[kind] += counts["created"]
                self.tally.updated[kind] += counts["updated"]
                self.tally.unchanged[kind] += counts["unchanged"]
                self.tally.refused[kind] += counts["error"]
            for error in report.errors:
                self._refused(error["path"], error["id"], error["message"])
        # Committed (or, in a dry run, checked): only now do its rows count as done.
        self.done += item.rows
        self._report(item.phase)

    def _drop_unstored_references(self, batch: NormalizedBatch) -> None:
        """An attack's last response or last score that was refused earlier (a bad row) is
        not stored: the attack is kept without that reference rather than refused too."""
        from memory.models import MessagePiece
        from memory.models import Score as ScoreModel
        from redteam.core.bulk import existing_values

        attacks = batch.attack_results
        if not attacks:
            return
        in_batch_pieces = {p.spec.id for p in batch.pieces}
        in_batch_scores = {s.id for s in batch.scores}
        for attribute, model, in_batch, what in (
            ("last_response_id", MessagePiece, in_batch_pieces, "piece"),
            ("last_score_id", ScoreModel, in_batch_scores, "score"),
            ("human_score_id", ScoreModel, in_batch_scores, "score"),
        ):
            wanted = {getattr(a, attribute) for a in attacks} - in_batch - {None}
            stored = existing_values(model, "id", wanted) if wanted else set()
            for attack in attacks:
                value = getattr(attack, attribute)
                if value is not None and value not in in_batch and value not in stored:
                    self.tally.warnings.add(
                        f"attack result refers to a {what} that was not imported; "
                        "reference dropped",
                        f"{attack.id}: {attribute.removesuffix('_id')} {value}",
                    )
                    setattr(attack, attribute, None)

    def _hash_mismatch(self, identifier: Any) -> None:
        self.tally.warnings.add(
            "identifier hash kept as stored, though it is not the hash of its content",
            f"{identifier.class_name} {identifier.hash[:12]}… (content "
            f"{identifier.content_hash()[:12]}…, PyRIT {identifier.pyrit_version or '?'})",
        )

    def _refused(self, path: str, item_id: str | None, message: str) -> None:
        kind = path.split("[", 1)[0].split(".", 1)[0]
        table = _TABLE_OF_KIND.get(kind, kind)
        self.tally.warnings.add(f"row of {table} not imported", f"{item_id or path}: {message}")

    def _dry_count(self, batch: NormalizedBatch, problems: list[Problem]) -> None:
        """Dry run: what would be created or is already stored, by id, without writing."""
        from memory.models import (
            AttackResult,
            Conversation,
            MessagePiece,
            ScenarioResult,
            Score,
        )
        from seeds.models import Seed

        failed = {item.path for p in problems if (item := batch.item_at(p.path)) is not None}
        for problem in problems:
            item = batch.item_at(problem.path)
            self._refused(problem.path, item.id if item else None, problem.message)
        kinds: list[tuple[str, Any, list[Any], str]] = [
            ("message_pieces", MessagePiece, [p.spec for p in batch.pieces], "id"),
            ("scores", Score, batch.scores, "id"),
            ("attack_results", AttackResult, batch.attack_results, "id"),
            ("scenario_results", ScenarioResult, batch.scenario_results, "id"),
            ("seeds", Seed, batch.seeds, "id"),
            ("conversations", Conversation, batch.conversations, "conversation_id"),
        ]
        records = [r for r in batch.pyrit_records if batch.path_of(r) not in failed]
        if records:
            from memory.models import PyritRecord

            stored_records = set(
                PyritRecord.objects.filter(
                    table__in={r.table for r in records}, pk_text__in={r.pk for r in records}
                ).values_list("table", "pk_text")
            )
            known = sum(1 for r in records if (r.table, r.pk) in stored_records)
            self.tally.unchanged["pyrit_records"] += known
            self.tally.created["pyrit_records"] += len(records) - known
            self.tally.refused["pyrit_records"] += len(batch.pyrit_records) - len(records)
        for kind, model, specs, key in kinds:
            good = [s for s in specs if batch.path_of(s) not in failed]
            wanted = [getattr(s, key) for s in good]
            stored = set(
                model.objects.filter(**{f"{key}__in": wanted}).values_list(key, flat=True)
                if wanted
                else []
            )
            self.tally.unchanged[kind] += sum(1 for w in wanted if w in stored)
            self.tally.created[kind] += sum(1 for w in wanted if w not in stored)
            self.tally.refused[kind] += len(specs) - len(good)

    # --- media ------------------------------------------------------------------------------

    def _match_media(self, batch: NormalizedBatch) -> list[tuple[str, MediaFile]]:
        """Reader side: the listed file of each media value of the batch (contract §13), counting
        matched and missing values; returns the distinct (value, file) pairs found."""
        values: list[tuple[str, str | None]] = []
        for piece in batch.pieces:
            spec = piece.spec
            converted = (
                spec.original_value if spec.converted_value is None else spec.converted_value
            )
            converted_type = spec.converted_value_data_type or spec.original_value_data_type
            for value, data_type, sha in (
                (spec.original_value, spec.original_value_data_type, spec.original_value_sha256),
                (converted, converted_type, spec.converted_value_sha256),
            ):
                if is_media_value(data_type, value):
                    values.append((value, sha))
        for seed in batch.seeds:
            if is_media_value(seed.data_type, seed.value):
                values.append((seed.value, seed.value_sha256))
        found: dict[tuple[str, str | None], MediaFile | None] = {}
        for value, sha in values:
            if (value, sha) not in found:
                media, warning = self.media.find(value, sha)
                if warning:
                    self.tally.warnings.add("media not matched", warning)
                found[(value, sha)] = media
            if found[(value, sha)] is None:
                self.tally.media_missing += 1
            else:
                self.tally.media_matched += 1
        return [(value, media) for (value, _), media in found.items() if media is not None]

    def _store_media(self, matched: list[tuple[str, MediaFile]]) -> None:
        """Writer side: store the matched files content-addressed and record each value as
        a location of its blob; the ingestion service then links the pieces and seeds that
        name it (``memory.storage.media``)."""
        if self.dry_run or not matched:
            return
        from memory.models.media import media_store

        found: set[tuple[str, MediaBlob]] = set()
        blobs: dict[Path, MediaBlob] = {}
        for value, media in matched:
            blob = blobs.get(media.path)
            if blob is None:
                try:
                    data = media.path.read_bytes()
                except OSError as exc:
                    self.tally.warnings.add("media file unreadable", f"{media.path.name}: {exc}")
                    continue
                blob = blobs[media.path] = media_store(data=data, original_name=value)
            found.add((value, blob))
        if not found:
            return
        known = set(
            MediaLocation.objects.filter(key__in={media_key(v) for v, _ in found}).values_list(
                "blob_id", "location"
            )
        )
        MediaLocation.objects.bulk_create(
            [
                MediaLocation(blob=blob, location=value, key=media_key(value))
                for value, blob in found
                if (blob.pk, value) not in known
            ]
        )
        self._relink_stored(found)

    def _relink_stored(self, found: set[tuple[str, MediaBlob]]) -> None:
        """Pieces and seeds stored earlier without their bytes (an import without the media
        folder) get them now: re-running the import with ``--media-root`` attaches media."""
        from memory.storage.media import media_attach

        missing_before = set()
        from memory.models import MessagePiece
        from seeds.models import Seed

        keys = {media_key(v) for v, _ in found}
        for side in ("original", "converted"):
            missing_before |= set(
                MessagePiece.objects.filter(
                    **{f"{side}_media__isnull": True, f"{side}_media_key__in": keys}
                ).values_list(f"{side}_media_key", flat=True)
            )
        missing_before |= set(
            Seed.objects.filter(media__isnull=True, media_key__in=keys).values_list(
                "media_key", flat=True
            )
        )
        for value, blob in found:
            if media_key(value) in missing_before:
                with transaction.atomic():
                    media_attach(blob=blob, location=value)

    # --- helpers ----------------------------------------------------------------------------

    def _lookup(self, sql: str, values: Any) -> list[tuple[Any, ...]]:
        values = list(values)
        out: list[tuple[Any, ...]] = []
        for start in range(0, len(values), 900):
            part = values[start : start + 900]
            out.extend(self.db.execute(sql.format(", ".join("?" * len(part))), part).fetchall())
        return out

    @staticmethod
    def _json_text(text: str | None) -> Any:
        try:
            return None if text is None else json.loads(text)
        except ValueError:
            return None

    def _report(self, phase: str, *, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.perf_counter()
        if not force and now - self._last_report < self.REPORT_INTERVAL:
            return
        self._last_report = now
        elapsed = max(now - self.started, 1e-9)
        self.progress(
            {
                "phase": phase,
                "done": self.done,
                "total": self.total,
                "rate": self.done / elapsed,
            }
        )


__all__ = ["DEFAULT_CHUNK_ROWS", "Importer", "Tally", "WarningLog"]
