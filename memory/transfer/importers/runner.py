"""The import of one PyRIT SQLite file: read it table by table, chunk by chunk, into the
ingestion service.

The file is read by :mod:`pyrit_memory_reader` (shared with the ``redline-push`` client): its
:class:`~pyrit_memory_reader.chunks.ChunkReader` yields payloads of PyRIT JSON shapes in the
order references need (scenario results, pieces with their 1.x conversations, conversations
without pieces, scorable content, scores, attack results, seeds, tables kept verbatim). Each
chunk is normalised by
:func:`~memory.transfer.ingest.normalize.normalize_batch` and written by
:func:`~memory.storage.write.ingest_batch` in its own transaction: a failure leaves earlier
chunks imported and nothing of the failing one. Items the service refuses are left out and
reported; everything else of the chunk is written.

With the direct write path (the default) reading and normalising run in two more processes
(``Importer._import_all_forked``) and chunks of new rows are written by
:mod:`memory.transfer.importers.direct`; the rest, and every chunk with
``write_path="service"``, goes to the service as above.

Memory stays bounded: each hand-over (reader to preparer, preparer to writer, or the reader
thread to the writer) holds at most two chunks, and lookups live in a scratch SQLite file
(labels per conversation, conversations seen, the media listing). Identifiers are parsed
here, once per distinct text, into ``ComponentIdentifier`` objects (the reader alone would
leave them dicts).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import pickle
import queue
import signal
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
from memory.storage.lengths import batch_problems
from memory.storage.write import ingest_batch
from memory.transfer.importers.direct import DirectAttacks, DirectRows, DirectWriter, prepare
from memory.transfer.importers.errors import ImportFailed
from memory.transfer.ingest.normalize import normalize_batch
from memory.transfer.ingest.readers import parse_identifier
from pyrit_memory_reader.chunks import (
    DEFAULT_CHUNK_ROWS,
    ChunkReader,
    WarningLog,
    refused_line,
)
from pyrit_memory_reader.media import (
    MediaFile,
    MediaFiles,
    MediaValue,
    match_media_values,
    piece_owner,
)
from pyrit_memory_reader.rows import IdentifierCache
from pyrit_memory_reader.source import (
    TABLES,
    Schema,
    check_schema,
    open_source,
    reading_failed,
)
from redteam.core.choices import is_media_value
from redteam.core.collector import fewer_collections
from redteam.core.errors import Problem
from redteam.core.identifiers import ComponentIdentifier

# Media files nothing named: counted, and this many listed by name.
_UNUSED_LISTED = 50

#: ``direct`` (the default): new rows straight to the tables, the rest through the service
#: (``memory.transfer.importers.direct``); ``service``: every chunk through the service.
WRITE_PATHS = ("direct", "service")


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
    batch: NormalizedBatch | None
    problems: list[Problem]
    media: list[tuple[str, MediaFile]]
    #: Source rows the chunk holds: counted as done once the chunk is committed.
    rows: int = 0
    #: The chunk's columns for the direct write path (``direct.prepare``), when it is clean
    #: (neither the normaliser nor the service's value checks found a problem) and of the
    #: kinds that path writes.
    direct: DirectRows | DirectAttacks | None = None
    #: From the reader and preparer processes: the chunk as read, pickled, in place of
    #: ``batch`` (None) when ``direct`` is given; normalised again only if the service must
    #: take the chunk after all.
    payload: bytes | None = None

    def normalised(self) -> tuple[NormalizedBatch, list[Problem]]:
        """The chunk's batch and problems (normalising the payload when it came without),
        the value checks' included, as the writer's ``ingest_batch(checked=True)`` expects."""
        if self.batch is None:
            assert self.payload is not None
            self.batch, self.problems = _normalised_and_checked(pickle.loads(self.payload))
            self.payload = None
        return self.batch, self.problems


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
        write_path: str = WRITE_PATHS[0],
    ) -> None:
        if write_path not in WRITE_PATHS:
            raise ValueError(f"write_path must be one of {', '.join(WRITE_PATHS)}")
        self.path = Path(path)
        self.write_path = write_path
        self.direct = DirectWriter() if write_path == "direct" else None
        self.forked = False
        self.actor = actor
        self.explicit_media_root = media_root is not None
        self.media_root = Path(media_root) if media_root is not None else self.path.parent
        self.dry_run = dry_run
        self.progress = progress
        self.chunk_rows = chunk_rows
        self.tally = Tally()
        self.ids = IdentifierCache(parse=self._parse_identifier)
        self._checked: set[tuple[str, str]] = set()
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
                try:
                    self._prepare()
                    # the reading processes open the file again: on the schema detected here
                    check_schema(db, schema, self.path)
                    with _bulk_pragmas(), fewer_collections():
                        if self.forked:
                            self._import_all_forked(Path(scratch) / "reader.sqlite3")
                        else:
                            self._import_all()
                except sqlite3.DatabaseError as exc:
                    # PyRIT migrating the file meanwhile, or damage met late: one line
                    raise reading_failed(exc, db, schema, self.path) from None
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
        # Forking a process that runs other threads can copy a lock some thread holds into the
        # child for good: then the reader stays a thread of this process.
        self.forked = self.direct is not None and threading.active_count() == 1
        if self.forked:
            # the reader lives in the child process (``_import_all_forked``)
            self._report("prepared", force=True)
            return
        self.reader = ChunkReader(
            self.db,
            self.schema,
            self.ids,
            chunk_rows=self.chunk_rows,
            warn=self.tally.warnings.add,
        )
        self._report("prepared", force=True)

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

    #: Processes that normalise and prepare chunks on the direct write path, between the
    #: reader process and this one (``_import_all_forked``).
    PREPARERS = 1

    def _import_all_forked(self, scratch: Path) -> None:
        """The direct write path's pipeline, three stages in three processes: a reader
        (forked, so it starts at once with everything imported) reads the file chunk by
        chunk; a preparer normalises each chunk, runs the service's value checks and makes
        its columns; this process matches media and writes. With the reader and the preparer
        in one process that process set the pace and the writer waited for it a third of
        the time; as three stages the two cores are busy at once. Chunks are dealt to the
        preparers in turn and taken back in the same turn, so they are written in the
        file's order. At most two chunks wait in each pipe, so memory stays bounded in every
        process."""
        context = multiprocessing.get_context("fork")
        inboxes = [context.Queue(maxsize=2) for _ in range(self.PREPARERS)]
        outboxes = [context.Queue(maxsize=2) for _ in range(self.PREPARERS)]
        children = [
            context.Process(
                target=_read_in_child,
                args=(self, scratch, inboxes),
                name="pyrit-import-reader",
                daemon=True,
            ),
            *(
                context.Process(
                    target=_prepare_in_child,
                    args=(self, inbox, outbox),
                    name=f"pyrit-import-preparer-{number}",
                    daemon=True,
                )
                for number, (inbox, outbox) in enumerate(zip(inboxes, outboxes, strict=True))
            ),
        ]
        for child in children:
            child.start()
        try:
            for turn in itertools.count():
                kind, warnings, payload = _receive(outboxes[turn % len(outboxes)], children)
                for warning in warnings:
                    self.tally.warnings.add(*warning)
                if kind == "end":
                    break
                if kind == "error":
                    raise payload
                table, rows, chunk = payload
                self.tally.rows_read[table] += rows
                self._count_read(rows)
                if chunk is None:
                    continue
                phase, media, direct, body = chunk
                self.phase = phase
                done, self._unqueued = self._unqueued, 0
                if direct is None:
                    batch, problems = _unpack(body)
                    item = _Prepared(phase, batch, problems, self._match_media(media), done)
                else:
                    item = _Prepared(
                        phase, None, [], self._match_media(media), done, direct, payload=body
                    )
                self._write(item)
        finally:
            for child in children:
                if child.is_alive():
                    child.terminate()
                child.join()
            for channel in [*inboxes, *outboxes]:
                channel.close()
                channel.join_thread()
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
        for chunk in self.reader.chunks():
            self.tally.rows_read[chunk.table] += chunk.rows
            self._count_read(chunk.rows)
            if chunk.payload is not None:
                self.phase = chunk.phase
                self._ingest(chunk.payload)

    # --- writing ----------------------------------------------------------------------------

    def _ingest(self, payload: dict[str, Any]) -> None:
        """Reader side: normalise a chunk and find its media files, then queue it."""
        batch, problems = _normalised_and_checked(payload)
        rows, self._unqueued = self._unqueued, 0
        direct = _direct_rows(self, batch, problems)
        media = self._match_media(media_values(batch))
        self._put(_Prepared(self.phase, batch, problems, media, rows, direct))

    def _count_read(self, rows: int) -> None:
        """Reader side: ``rows`` more source rows read, not yet handed to the writer."""
        self.read += rows
        self._unqueued += rows

    def _write(self, item: _Prepared) -> None:
        """Writer side: store the chunk's media, then the chunk, in its own transaction."""
        self._store_media(item.media)
        if self.dry_run:
            self._dry_count(*item.normalised())
        else:
            report = None
            if self.direct is not None and item.direct is not None:
                # a chunk of attack results goes direct only when every row it names is
                # stored: no references to drop (``_drop_unstored_references``)
                report = self.direct.write(item.direct)
            if report is None:
                batch, problems = item.normalised()
                self._drop_unstored_references(batch)
                # the problems include the value checks' (``_normalised_and_checked``)
                report = ingest_batch(
                    batch=batch, problems=problems, partial=True, actor=self.actor, checked=True
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

    def _parse_identifier(self, data: dict[str, Any]) -> Any:
        """An identifier dict of the file as a ``ComponentIdentifier`` (checked once per
        distinct identifier); an invalid one goes on as data, for the normaliser to report."""
        problems: list[Problem] = []
        parsed = parse_identifier(data, "", problems)
        if problems or parsed is None:
            return data
        self._check_hash(parsed)
        return parsed

    def _check_hash(self, identifier: ComponentIdentifier) -> None:
        """Warn of each identifier (and child) whose stored hash is not its content's hash:
        kept verbatim (contract §10.5), but worth knowing (truncated params, another version's
        hashing rules)."""
        content = identifier.content_hash()
        if (identifier.hash, content) in self._checked:
            return
        self._checked.add((identifier.hash, content))
        for child in identifier.children.values():
            for node in child if isinstance(child, list) else [child]:
                self._check_hash(node)
        if identifier.hash != content:
            self._hash_mismatch(identifier)

    def _hash_mismatch(self, identifier: Any) -> None:
        self.tally.warnings.add(
            "identifier hash kept as stored, though it is not the hash of its content",
            f"{identifier.class_name} {identifier.hash[:12]}… (content "
            f"{identifier.content_hash()[:12]}…, PyRIT {identifier.pyrit_version or '?'})",
        )

    def _refused(self, path: str, item_id: str | None, message: str) -> None:
        kind = path.split("[", 1)[0].split(".", 1)[0]
        table = _TABLE_OF_KIND.get(kind, kind)
        self.tally.warnings.add(
            f"row of {table} not imported", refused_line(path, item_id, message)
        )

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

    def _match_media(self, values: list[MediaValue]) -> list[tuple[str, MediaFile]]:
        """The listed file of each media value of a batch (``media_values``; contract §13),
        counting matched and missing values and warning once per piece whose file has other
        bytes than PyRIT recorded; returns the distinct (value, file) pairs found. With the
        reader in a process of its own this runs in the writing one, which holds the media
        listing."""
        found, matched, missing = match_media_values(
            self.media, values, warn=self.tally.warnings.add
        )
        self.tally.media_matched += matched
        self.tally.media_missing += missing
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
        from memory.storage.media import media_attach, media_keys_waiting

        missing_before = media_keys_waiting(keys={media_key(v) for v, _ in found})
        for value, blob in found:
            if media_key(value) in missing_before:
                with transaction.atomic():
                    media_attach(blob=blob, location=value)

    # --- helpers ----------------------------------------------------------------------------

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


def media_values(batch: NormalizedBatch) -> list[MediaValue]:
    """(value, given SHA-256, owner) of each media value of the batch's pieces and seeds."""
    values: list[MediaValue] = []
    for piece in batch.pieces:
        spec = piece.spec
        owner = piece_owner(spec.id, piece.conversation_id)
        converted = spec.original_value if spec.converted_value is None else spec.converted_value
        converted_type = spec.converted_value_data_type or spec.original_value_data_type
        for value, data_type, sha in (
            (spec.original_value, spec.original_value_data_type, spec.original_value_sha256),
            (converted, converted_type, spec.converted_value_sha256),
        ):
            if is_media_value(data_type, value):
                values.append((value, sha, owner))
    for seed in batch.seeds:
        if is_media_value(seed.data_type, seed.value):
            values.append((seed.value, seed.value_sha256, f"seed {seed.id}"))
    return values


def _direct_rows(
    importer: Importer, batch: NormalizedBatch, problems: list[Problem]
) -> DirectRows | DirectAttacks | None:
    """Reader side: the chunk's columns for the direct write path, when it takes that path
    (a real import on it, the chunk clean and of its kinds). ``problems`` are the
    normaliser's and the value checks' (``_normalised_and_checked``)."""
    if importer.direct is None or importer.dry_run or problems:
        return None
    return prepare(batch)


class _Forward:
    """The child's warnings, sent to the parent with the next message."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str]] = []

    def add(self, kind: str, message: str) -> None:
        self.pending.append((kind, message))

    def take(self) -> list[tuple[str, str]]:
        taken, self.pending = self.pending, []
        return taken


def _receive(channel: Any, children: list[Any]) -> tuple[str, list[tuple[str, str]], Any]:
    """The next message of ``channel``, while every process of the pipeline lives."""
    while True:
        try:
            return channel.get(timeout=1.0)
        except queue.Empty:
            # a stage that finished its work exits with 0 while later stages still work
            for child in children:
                if child.exitcode not in (None, 0):
                    raise ImportFailed(
                        f"the import's {child.name} process stopped (exit code {child.exitcode})"
                    ) from None
            if all(child.exitcode is not None for child in children):
                try:
                    return channel.get(timeout=1.0)
                except queue.Empty:
                    raise ImportFailed(
                        "the import's processes stopped before the end of the file"
                    ) from None


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it pickles (the queue's feeder thread would drop it silently otherwise),
    else an ``ImportFailed`` naming it."""
    try:
        pickle.dumps(exc)
    except Exception:
        return ImportFailed(f"{type(exc).__name__}: {exc}")
    return exc


def _child_signals() -> None:
    """The parent's handlers (a task worker's graceful SIGTERM, say) are not a pipeline
    process's: the parent stops it with SIGTERM, and a Ctrl+C reaches the parent, which stops
    it too."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _read_in_child(importer: Importer, scratch: Path, inboxes: list[Any]) -> None:
    """The forked reader: every chunk of the file, as read (the payload pickled), dealt to
    the preparers' ``inboxes`` in turn; the end (or an error) goes to the one whose turn is
    next, and the end to the others too, so that they stop.

    It opens the file again (a SQLite connection must not cross a fork) with a scratch
    database of its own, and touches neither the parent's source connection nor Django's
    database connection (multiprocessing ends a forked child with ``os._exit``, so neither is
    closed here either)."""
    _child_signals()
    forward = _Forward()
    importer.tally.warnings = forward  # type: ignore[assignment]
    turn = 0
    try:
        db, schema = open_source(importer.path, scratch, check_integrity=False)
        reader = ChunkReader(
            db, schema, importer.ids, chunk_rows=importer.chunk_rows, warn=forward.add
        )
        for chunk in reader.chunks():
            payload = None
            if chunk.payload is not None:
                # pickled once here; the preparer unpickles it to normalise it and passes the
                # bytes on, in case the service must take the chunk after all (a re-import)
                payload = pickle.dumps(chunk.payload, protocol=pickle.HIGHEST_PROTOCOL)
            message = (chunk.table, chunk.rows, chunk.phase, payload)
            inboxes[turn % len(inboxes)].put(("rows", forward.take(), message))
            turn += 1
        db.close()
    except BaseException as exc:
        inboxes[turn % len(inboxes)].put(("error", forward.take(), _sendable(exc)))
        return
    for offset in range(len(inboxes)):
        inboxes[(turn + offset) % len(inboxes)].put(("end", forward.take(), None))


def _prepare_in_child(importer: Importer, inbox: Any, outbox: Any) -> None:
    """A forked preparer: each chunk of ``inbox`` normalised and checked, with its media
    values and, when it is clean and of the direct path's kinds, its columns, into
    ``outbox``; the end or an error passes through."""
    _child_signals()
    while True:
        kind, warnings, message = inbox.get()
        if kind != "rows":
            outbox.put((kind, warnings, message))
            return
        table, rows, phase, payload = message
        packed: tuple | None = None
        try:
            if payload is not None:
                batch, problems = _normalised_and_checked(pickle.loads(payload))
                media = media_values(batch)
                direct = _direct_rows(importer, batch, problems)
                if direct is None:
                    packed = (phase, media, None, _pack(batch, problems))
                else:
                    packed = (phase, media, direct, payload)
        except BaseException as exc:
            outbox.put(("error", warnings, _sendable(exc)))
            return
        outbox.put(("rows", warnings, (table, rows, packed)))


def _normalised_and_checked(payload: dict[str, Any]) -> tuple[NormalizedBatch, list[Problem]]:
    """A chunk normalised, with the normaliser's problems and the service's value checks'
    (lengths, text no database holds), run here beside the reader rather than in the
    writer: only a chunk with none may take the direct path, and the service, told they
    ran (``checked``), does not run them again."""
    batch, problems = normalize_batch(payload)
    return batch, [*problems, *batch_problems(batch)]


def _registered(batch: NormalizedBatch) -> Iterator[object]:
    """Every object of ``batch`` that may have a path (``NormalizedBatch.register``)."""
    yield from (p.spec for p in batch.pieces)
    for name in (
        "conversations",
        "scores",
        "attack_results",
        "seeds",
        "seed_groups",
        "seed_datasets",
        "scenario_results",
        "scorable_contents",
        "pyrit_records",
    ):
        yield from getattr(batch, name)


def _pack(batch: NormalizedBatch, problems: list[Problem]) -> tuple:
    """A batch for the pipe: its paths are keyed by object id, so they travel as (object,
    path) pairs, which pickle keeps pointing at the same objects."""
    paths = batch._paths
    pairs = [(obj, paths[id(obj)]) for obj in _registered(batch) if id(obj) in paths]
    if len(pairs) != len(paths):
        raise RuntimeError("a batch item without a known place; cannot send it")
    batch._paths = {}
    return (batch, pairs, problems)


def _unpack(packed: tuple) -> tuple[NormalizedBatch, list[Problem]]:
    batch, pairs, problems = packed
    batch._paths = {id(obj): path for obj, path in pairs}
    return batch, problems


__all__ = ["DEFAULT_CHUNK_ROWS", "WRITE_PATHS", "Importer", "Tally", "WarningLog"]
