"""One push: the rows of a PyRIT memory file Redline does not have yet, in batches.

A *cycle* reads, in one short read transaction, the highest rowid of every table (the
horizon: PyRIT writes a piece before the attack result naming it, so rows up to the horizon
only refer to rows up to it), then walks the file with the shared reader
(:class:`~pyrit_memory_reader.chunks.ChunkReader`) restricted to what was not sent: rows past
each append-only table's watermark, and rows of the tables PyRIT updates whose digest differs
from the one sent. Each chunk is posted to ``/api/v1/ingest/?partial=true`` (split to fit the
server's limits), its media files are sent, and only then is the state file updated, in one
transaction. ``--watch`` repeats the cycle whenever the file changes.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import signal
import socket
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pyrit_memory_reader.chunks import Chunk, ChunkReader, Selection, WarningLog, refused_line
from pyrit_memory_reader.errors import SchemaInFlux
from pyrit_memory_reader.media import (
    MediaFile,
    MediaFiles,
    match_media_values,
    payload_media_values,
)
from pyrit_memory_reader.rows import IdentifierCache
from pyrit_memory_reader.source import check_schema, open_source, reading_failed
from redline_push.api import Api, Fatal
from redline_push.state import State

#: Tables PyRIT only appends to: a watermark says what was sent.
APPEND_ONLY = ("PromptMemoryEntries", "ScoreEntries", "ScorableContentEntries", "EmbeddingData")
#: Tables PyRIT updates in place (and the verbatim ones): a digest per row says what was sent.
UPDATED_IN_PLACE = (
    "ScenarioResultEntries",
    "Conversations",
    "AttackResultEntries",
    "SeedPromptEntries",
)
#: Test hook: the client kills itself (SIGKILL) once Redline answered this many batches,
#: before it records them — the worst moment for a crash.
KILL_AFTER_ENV = "REDLINE_PUSH_KILL_AFTER_BATCHES"

_END = object()

_PATH_INDEX = re.compile(r"^([a-z_]+)\[(\d+)\](.*)$", re.DOTALL)


@dataclass
class Report:
    """What a push read, what Redline did with it, and what went wrong (the summary)."""

    schema: str = ""
    rows_read: Counter[str] = field(default_factory=Counter)
    created: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    batches: int = 0
    media_sent: int = 0
    media_known: int = 0
    media_missing: int = 0
    warnings: WarningLog = field(default_factory=WarningLog)
    started: float = field(default_factory=time.perf_counter)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def warn(self, kind: str, message: str) -> None:
        self.warnings.add(kind, message)


@dataclass
class _Prepared:
    """One chunk ready to send: its bodies (with list offsets), media files, watermarks."""

    chunk: Chunk
    bodies: list[tuple[bytes, dict[str, int]]] = field(default_factory=list)
    media: list[tuple[str, MediaFile, str]] = field(default_factory=list)
    watermarks: dict[str, tuple[int, str | None]] = field(default_factory=dict)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return {"$base64": base64.b64encode(bytes(value)).decode("ascii")}
    return str(value)


def encode(payload: dict[str, Any]) -> bytes:
    """The JSON body of a payload (UTF-8; text that is not valid Unicode escaped)."""
    try:
        return json.dumps(payload, ensure_ascii=False, default=_json_default).encode()
    except UnicodeEncodeError:
        # a lone surrogate: escaped, so Redline refuses that item alone
        return json.dumps(payload, default=_json_default).encode()


def count_items(payload: dict[str, Any]) -> int:
    """Items as Redline counts them against ``max_items`` (nested seeds included)."""
    count = 0
    for key, value in payload.items():
        if isinstance(value, list):
            count += len(value)
            if key == "seed_groups":
                count += sum(len(group.get("seeds") or ()) for group in value)
    return count


def split(payload: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, int]]]:
    """Two halves of a payload, each with the offset of its lists in the original (to map
    error paths back); seed groups are never cut."""
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    offsets: dict[str, int] = {}
    lists = [(k, v) for k, v in payload.items() if isinstance(v, list) and v]
    if len(lists) > 1:
        half = len(lists) // 2
        for key, value in lists[:half]:
            first[key] = value
        for key, value in lists[half:]:
            second[key] = value
    elif lists:
        key, value = lists[0]
        if len(value) < 2:
            return [(payload, {})]
        middle = len(value) // 2
        first[key], second[key] = value[:middle], value[middle:]
        offsets[key] = middle
    else:
        return [(payload, {})]
    return [(first, {}), (second, offsets)]


class Pusher:
    """Pushes one PyRIT memory file to one Redline (see the module docstring)."""

    def __init__(
        self,
        *,
        api: Api,
        database: Path,
        state: State,
        media_root: Path | None,
        labels: dict[str, str],
        batch_rows: int,
        stop: threading.Event,
        progress: Any,
        log: Callable[[str], None],
    ) -> None:
        self.api = api
        self.database = database
        self.state = state
        self.explicit_media_root = media_root is not None
        self.media_root = media_root if media_root is not None else database.parent
        self.labels = labels
        self.batch_rows = batch_rows
        self.stop = stop
        self.progress = progress
        self.log = log
        self.report = Report()
        #: schema notes already warned about (a file opened again says them again)
        self.noted: set[str] = set()
        self.source = {"host": socket.gethostname(), "database": str(database.resolve())}
        kill_after = os.environ.get(KILL_AFTER_ENV)
        self.kill_after = int(kill_after) if kill_after else None

    # --- the run ----------------------------------------------------------------------------

    def run(self, *, watch: bool, interval: float = 1.0) -> Report:
        """One cycle, or (``watch``) cycles until ``stop`` is set.

        A file PyRIT is creating or migrating (:class:`SchemaInFlux`) stops a one-shot push
        with its one line; ``watch`` says so once, waits, and opens the file again (its schema
        detected anew) until it reads.
        """
        self.limits = self.api.limits()
        if self.explicit_media_root and not self.media_root.is_dir():
            raise Fatal(f"{self.media_root}: media root is not a folder")
        with tempfile.TemporaryDirectory(prefix="redline-push-") as scratch:
            attempt, waiting = 0, ""
            while True:
                attempt += 1
                for old in Path(scratch).glob("scratch-*"):
                    # an earlier attempt's lookup tables, of a schema now gone
                    old.unlink()
                try:
                    self._follow(Path(scratch) / f"scratch-{attempt}.sqlite3", watch, interval)
                    return self.report
                except SchemaInFlux as exc:
                    if not watch:
                        raise
                    if str(exc) != waiting:
                        waiting = str(exc)
                        self.log(f"{waiting}; waiting")
                    if self.stop.wait(interval):
                        return self.report

    def _follow(self, scratch: Path, watch: bool, interval: float) -> None:
        """Open the file (a scratch database of its own) and push it: once, or until ``stop``.
        A read that fails because the file's schema moved raises :class:`SchemaInFlux`."""
        self.db, self.schema = open_source(self.database, scratch, check_integrity=not watch)
        try:
            if self.report.schema and self.report.schema != self.schema.label:
                self.log(f"{self.database}: schema now {self.schema.label}; following it")
            self.report.schema = self.schema.label
            for note in self.schema.notes:
                if note not in self.noted:
                    self.noted.add(note)
                    self.report.warn("schema newer than this Redline", note)
            self.ids = IdentifierCache()
            try:
                self._cycle()
                while watch and not self.stop.is_set():
                    if self._changed(interval):
                        self._cycle()
            except sqlite3.DatabaseError as exc:
                raise reading_failed(exc, self.db, self.schema, self.database) from None
        finally:
            self.db.close()

    def _changed(self, interval: float) -> bool:
        """Wait until PyRIT committed something since the last cycle began (``data_version``
        moved) or ``stop``."""
        while not self.stop.wait(interval):
            if self._data_version() != self.version:
                return True
        return False

    def _data_version(self) -> int:
        return self.db.execute("PRAGMA src.data_version").fetchone()[0]

    # --- one cycle ----------------------------------------------------------------------------

    def _tables(self) -> list[str]:
        return [t for t in self.schema.columns if t in (*APPEND_ONLY, *UPDATED_IN_PLACE)] + list(
            self.schema.verbatim
        )

    def _horizon(self) -> dict[str, int]:
        """The highest rowid of every table, read in one transaction (one snapshot)."""
        horizon = {}
        self.db.execute("BEGIN")
        try:
            for table in self._tables():
                try:
                    row = self.db.execute(f'SELECT max(rowid) FROM src."{table}"').fetchone()
                except sqlite3.OperationalError:  # WITHOUT ROWID: read whole
                    continue
                horizon[table] = row[0] if row[0] is not None else -1
        finally:
            self.db.execute("COMMIT")
        return horizon

    def _selection(self, reader: ChunkReader, horizon: dict[str, int]) -> dict[str, Selection]:
        select: dict[str, Selection] = {}
        for table in self._tables():
            if table not in horizon:
                select[table] = Selection()  # WITHOUT ROWID: every row, every cycle
            elif table in APPEND_ONLY:
                after = self._watermark(table)
                select[table] = Selection(after=after, until=horizon[table])
            else:
                sent = self.state.digests(table)
                changed = [
                    rowid
                    for rowid, digest in reader.digests(table, until=horizon[table])
                    if sent.get(rowid) != digest
                ]
                select[table] = Selection(after=None, rowids=changed)
        return select

    def _watermark(self, table: str) -> int:
        """The table's watermark, or -1 if the row it names is gone or another (a vacuumed
        or replaced file): then the table is sent again, which Redline finds unchanged."""
        rowid, key = self.state.watermark(table)
        if rowid < 0 or not self.schema.has(table, "id"):
            return rowid
        row = self.db.execute(f'SELECT id FROM src."{table}" WHERE rowid = ?', (rowid,)).fetchone()
        if row is None or str(row[0]) != key:
            self.log(f"{table}: the file was rewritten since the last push; sending it again")
            self.state.reset(table)
            return -1
        return rowid

    def _cycle(self) -> None:
        # taken first: a commit while the cycle runs makes the next cycle look again
        self.version = self._data_version()
        # a migration since the schema was detected: its readers would name what is gone
        check_schema(self.db, self.schema, self.database)
        horizon = self._horizon()
        tracked = frozenset(t for t in self._tables() if t not in APPEND_ONLY)
        reader = ChunkReader(
            self.db,
            self.schema,
            self.ids,
            chunk_rows=self.batch_rows,
            warn=self.report.warn,
            select={},
            track=tracked,
        )
        reader.select = self._selection(reader, horizon)
        totals = reader.totals()
        if not any(totals.values()):
            return
        self._list_media()
        self.progress.start_cycle(totals)
        # Reading and encoding the next batch (a thread: SQLite and the JSON encoder) overlap
        # waiting for Redline to write this one; at most two batches wait, so memory stays
        # bounded. Only the reader thread touches the source connection.
        ready: queue.Queue[Any] = queue.Queue(maxsize=2)
        quit_reading = threading.Event()
        thread = threading.Thread(
            target=self._read, args=(reader, ready, quit_reading), name="redline-push-reader"
        )
        thread.start()
        try:
            while (item := ready.get()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                self.report.rows_read[item.chunk.table] += item.chunk.rows
                self._send(item)
                self.progress.advance(item.chunk.table, item.chunk.rows)
                if self.stop.is_set():
                    break
        finally:
            quit_reading.set()
            while thread.is_alive():
                with contextlib.suppress(queue.Empty):
                    ready.get(timeout=0.1)
            thread.join()
        self.progress.end_cycle()

    def _read(self, reader: ChunkReader, ready: queue.Queue[Any], quit: threading.Event) -> None:
        """The reader thread: every chunk, prepared for sending, then ``_END``."""

        def put(item: Any) -> bool:
            while not quit.is_set():
                try:
                    ready.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for chunk in reader.chunks():
                if not put(self._prepare(chunk)):
                    return
        except BaseException as exc:  # handed to the sender, which raises it
            put(exc)
            return
        put(_END)

    def _prepare(self, chunk: Chunk) -> _Prepared:
        """Reader side: the request bodies, the media files named, the watermark rows' ids."""
        prepared = _Prepared(chunk)
        if chunk.payload is not None:
            prepared.bodies = self._bodies(self._labelled(chunk.payload))
            prepared.media = self._match_media(chunk.payload)
        for table, rowid in chunk.last_rowid.items():
            key = None
            if self.schema.has(table, "id"):
                row = self.db.execute(
                    f'SELECT id FROM src."{table}" WHERE rowid = ?', (rowid,)
                ).fetchone()
                key = str(row[0]) if row else None
            prepared.watermarks[table] = (rowid, key)
        return prepared

    def _list_media(self) -> None:
        self.db.execute("DROP TABLE IF EXISTS media_files")
        self.media = MediaFiles(
            self.db,
            self.media_root,
            explicit=self.explicit_media_root,
            max_bytes=self.limits.max_media_bytes,
        )

    # --- one chunk ----------------------------------------------------------------------------

    def _send(self, prepared: _Prepared) -> None:
        """Post the chunk (if it holds anything), send its media, then record it."""
        chunk = prepared.chunk
        failed: set[str] = set()
        media: list[tuple[str, str]] = []
        if chunk.payload is not None:
            for body, offsets in prepared.bodies:
                answer = self.api.ingest(body)
                self._count(answer)
                for error in answer.get("errors") or ():
                    path = _shift(str(error.get("path") or ""), offsets)
                    failed.add(path)
                    self.report.warn(
                        "row not accepted by Redline",
                        refused_line(path, error.get("id"), str(error.get("message"))),
                    )
            media = self._send_media(prepared.media)
            self.report.batches += 1
            if self.kill_after is not None and self.report.batches >= self.kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
        sent, refused = [], []
        for path, sources in chunk.sources.items():
            bad = any(f == path or f.startswith((path + ".", path + "[")) for f in failed)
            for source in sources:
                if bad:
                    refused.append((source.table, source.rowid))
                else:
                    sent.append((source.table, source.rowid, source.digest))
        self.state.commit(watermarks=prepared.watermarks, sent=sent, refused=refused, media=media)

    def _labelled(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``--label`` values onto pieces and attack results that lack those labels."""
        if not self.labels:
            return payload
        for key in ("message_pieces", "attack_results"):
            for item in payload.get(key) or ():
                labels = item.get("labels")
                item["labels"] = {**self.labels, **(labels if isinstance(labels, dict) else {})}
        return payload

    def _bodies(
        self, payload: dict[str, Any], offsets: dict[str, int] | None = None
    ) -> list[tuple[bytes, dict[str, int]]]:
        """The payload as request bodies, halved until each fits the server's body and item
        limits, in order, each with the offsets of its lists in the whole payload."""
        offsets = offsets or {}
        body = encode({**payload, "push_source": self.source})
        fits = (
            count_items(payload) <= self.limits.max_items
            and len(body) <= self.limits.max_body_bytes
        )
        halves = [] if fits else split(payload)
        if fits or len(halves) < 2:
            return [(body, offsets)]
        out = []
        for half, extra in halves:
            merged = {**offsets, **{k: offsets.get(k, 0) + v for k, v in extra.items()}}
            out.extend(self._bodies(half, merged))
        return out

    def _count(self, answer: dict[str, Any]) -> None:
        for kind, counts in (answer.get("counts") or {}).items():
            self.report.created[kind] += counts.get("created", 0)
            self.report.updated[kind] += counts.get("updated", 0)
            self.report.unchanged[kind] += counts.get("unchanged", 0)
            self.report.refused[kind] += counts.get("error", 0)

    def _match_media(self, payload: dict[str, Any]) -> list[tuple[str, MediaFile, str]]:
        """Reader side: ``(value, file, SHA-256)`` of each media file the payload names, once."""
        files, _, _ = match_media_values(
            self.media, payload_media_values(payload), warn=self.report.warn
        )
        found: list[tuple[str, MediaFile, str]] = []
        for (value, _), media in files.items():
            if media is None:
                self.report.media_missing += 1
            else:
                found.append((value, media, self.media.sha_of(media)))
        return found

    def _send_media(self, matched: list[tuple[str, MediaFile, str]]) -> list[tuple[str, str]]:
        """Each media file, linked by its SHA-256 when Redline has the bytes, uploaded
        otherwise. Returns the (SHA-256, location) pairs Redline holds."""
        done: list[tuple[str, str]] = []
        for value, media, digest in matched:
            if self.state.has_media(digest, value):
                continue
            if self._upload(media, digest, value):
                done.append((digest, value))
        return done

    def _upload(self, media: MediaFile, digest: str, location: str) -> bool:
        status = self.api.media(sha256=digest, location=location, content=None)
        if status == 404:
            try:
                content = media.path.read_bytes()
            except OSError as exc:
                self.report.warn("media file unreadable", f"{media.path.name}: {exc}")
                return False
            status = self.api.media(sha256=digest, location=location, content=content)
            if status in (200, 201):
                self.report.media_sent += 1
        elif status == 200:
            self.report.media_known += 1
        if status == 413:
            self.report.warn("media file over the server's size limit", location)
            return False
        return status in (200, 201)


def _shift(path: str, offsets: dict[str, int]) -> str:
    """An error path of a payload part as a path of the whole payload."""
    match = _PATH_INDEX.match(path)
    if not match or match.group(1) not in offsets:
        return path
    key, index, rest = match.groups()
    return f"{key}[{int(index) + offsets[key]}]{rest}"
