"""Walk a PyRIT memory file as ingestion payloads, table by table, chunk by chunk.

Order (each table in rowid order, so pieces keep PyRIT's insertion order inside a message):
scenario results (attack results point at them), pieces (a 1.x conversation row travels with
its conversation's first pieces), conversations without pieces, scorable content, scores,
attack results (their last response and last score are then known), seeds (a seed group is
never split across chunks), then the tables Redline keeps verbatim (PyRIT 1.2's operations,
findings, evidence and observations, and tables of a newer PyRIT).

Each :class:`Chunk` is one payload of PyRIT JSON shapes that Redline's ingestion accepts,
with the source rows it came from. Redline's importer normalises and writes each chunk in its
own transaction; ``redline-push`` posts it to ``/api/v1/ingest/``. A :class:`Selection` per
table narrows the walk to some rows (what changed since the last push); without one every row
is read.

Lookups live in the scratch database the source is attached to (``open_source``): labels per
conversation, the scenario owning each conversation, conversations already sent.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pyrit_memory_reader.rows import (
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
from pyrit_memory_reader.source import Schema

#: ``warn(kind, message)``: something the summary should list (a dropped reference, …).
Warn = Callable[[str, str], None]

# Warnings of one kind beyond this many are counted, not listed.
_EXAMPLES_PER_WARNING = 5


def refused_line(path: str, item_id: str | None, message: str) -> str:
    """A row Redline refused, for the summary: its id, the field the problem is in (the
    error path below the item, e.g. ``labels.<key>``) and why."""
    field = path.split("]", 1)[1].lstrip(".") if "]" in path else ""
    if item_id and field:
        return f"{item_id}: {field}: {message}"
    return f"{item_id or path}: {message}"


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


#: Source rows per chunk unless the caller says otherwise (Redline's importer: one transaction).
DEFAULT_CHUNK_ROWS = 5000
# SQLite's bound-parameter limit is 999 before 3.32: IN lists are cut to this many values.
_IN_LIST = 900


def row_digest(values: Sequence[Any]) -> str:
    """A short hash of one row's raw column values: equal rows, equal digests."""
    return hashlib.blake2b(
        repr(tuple(values)).encode("utf-8", "backslashreplace"), digest_size=16
    ).hexdigest()


@dataclass
class Selection:
    """Which rows of one table to read: rowids in (``after``, ``until``] (no range when
    ``after`` is None), then each of ``rowids`` (rows that changed below the range)."""

    after: int | None = -1
    until: int | None = None
    rowids: Sequence[int] = ()


class Source(NamedTuple):
    """One source row a chunk holds: its table, rowid and digest (when tracked)."""

    table: str
    rowid: int
    digest: str | None


@dataclass
class Chunk:
    """One payload of PyRIT JSON shapes and the source rows it was read from."""

    phase: str
    #: The table whose rows were read for this chunk, and how many.
    table: str
    rows: int
    #: What to ingest; None when there is nothing (the rows travelled with earlier chunks).
    payload: dict[str, Any] | None
    #: Payload item path (``attack_results[3]``, ``seed_groups[0]``) → the source rows it holds,
    #: for every row of a tracked table: an error at that path means those rows were refused.
    sources: dict[str, list[Source]] = field(default_factory=dict)
    #: The highest rowid read per table by range (what the push client remembers).
    last_rowid: dict[str, int] = field(default_factory=dict)


class _Row(NamedTuple):
    rowid: int
    digest: str | None
    data: dict[str, Any]


class ChunkReader:
    """Reads one attached source (``db``, schema ``schema``) as :class:`Chunk` objects.

    ``select`` maps a table to the rows to read (default: all of every table); ``track`` names
    the tables whose rows get a :func:`row_digest` and appear in ``Chunk.sources``.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        schema: Schema,
        ids: IdentifierCache,
        *,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        warn: Warn | None = None,
        select: dict[str, Selection] | None = None,
        track: frozenset[str] = frozenset(),
    ) -> None:
        self.db = db
        self.schema = schema
        self.ids = ids
        self.chunk_rows = chunk_rows
        self.warn: Warn = warn or (lambda kind, message: None)
        self.select = select
        self.track = track
        self.readers: dict[str, TableReader] = {}
        if schema.has("ScenarioResultEntries"):
            self.readers["ScenarioResultEntries"] = scenario_reader(schema, ids)
        self.readers["PromptMemoryEntries"] = piece_reader(schema, ids)
        if schema.has("Conversations"):
            self.readers["Conversations"] = conversation_reader(schema, ids)
        if schema.has("ScorableContentEntries"):
            self.readers["ScorableContentEntries"] = scorable_content_reader(schema)
        if schema.has("ScoreEntries"):
            self.readers["ScoreEntries"] = score_reader(schema, ids)
        if schema.has("AttackResultEntries"):
            self.readers["AttackResultEntries"] = attack_reader(schema, ids)
        if schema.has("SeedPromptEntries"):
            self.readers["SeedPromptEntries"] = seed_reader(schema)
        self.verbatim = {table: self._verbatim_reader(table) for table in schema.verbatim}
        self._build_lookups()

    # --- lookups ----------------------------------------------------------------------------

    def _build_lookups(self) -> None:
        # in the scratch database (not TEMP): disk, not memory, however big the file
        for table in ("conv_tags", "scenario_owner", "seen_conv"):
            self.db.execute(f"DROP TABLE IF EXISTS main.{table}")
        self._build_conversation_tags()
        self._build_scenario_owners()
        self.db.execute("CREATE TABLE seen_conv (conversation_id TEXT PRIMARY KEY) WITHOUT ROWID")

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
        first scenario naming a conversation winning; the reader does the same, so a
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

    # --- the walk ---------------------------------------------------------------------------

    def chunks(self) -> Iterator[Chunk]:
        """Every chunk of every table, in the order references need."""
        steps: list[tuple[str, str, str, Callable[[list[_Row]], Chunk]]] = []
        if "ScenarioResultEntries" in self.readers:
            steps.append(
                ("scenario results", "ScenarioResultEntries", "scenario_results", self._plain)
            )
        steps.append(("pieces", "PromptMemoryEntries", "message_pieces", self._pieces))
        if "Conversations" in self.readers:
            # conversations travel with their first pieces; these are the ones without any
            steps.append(
                ("conversations", "Conversations", "conversations", self._lone_conversations)
            )
        if "ScorableContentEntries" in self.readers:
            steps.append(
                ("scorable content", "ScorableContentEntries", "scorable_contents", self._plain)
            )
        if "ScoreEntries" in self.readers:
            steps.append(("scores", "ScoreEntries", "scores", self._plain))
        if "AttackResultEntries" in self.readers:
            steps.append(("attack results", "AttackResultEntries", "attack_results", self._attacks))
        for phase, table, key, handle in steps:
            self.phase, self.key = phase, key
            for rows, last in self._chunks(self.readers[table]):
                chunk = handle(rows)
                if last is not None:
                    chunk.last_rowid[table] = last
                yield chunk
        if "SeedPromptEntries" in self.readers:
            self.phase, self.key = "seeds", "seeds"
            for rows in self._seed_chunks(self.readers["SeedPromptEntries"]):
                yield self._seeds(rows)
        for table, reader in self.verbatim.items():
            self.phase, self.key = f"{table} (verbatim)", "pyrit_records"
            for rows, last in self._verbatim_chunks(reader):
                chunk = self._chunk(table, len(rows), {"pyrit_records": [r.data for r in rows]})
                self._add_sources(chunk, "pyrit_records", table, rows)
                if last is not None:
                    chunk.last_rowid[table] = last
                yield chunk
        if self.schema.has("EmbeddingData"):
            selection = self._selection("EmbeddingData")
            count = self._count("EmbeddingData", selection)
            last = None
            if selection is not None and selection.after is not None:
                last = self.db.execute(
                    "SELECT max(rowid) FROM src.EmbeddingData WHERE " + self._range(selection)
                ).fetchone()[0]
            chunk = Chunk("embeddings", "EmbeddingData", count, None)
            if last is not None:
                chunk.last_rowid["EmbeddingData"] = last
            if count:
                self.warn(
                    "not imported", f"{count} EmbeddingData rows (Redline keeps no embeddings)"
                )
            yield chunk

    def totals(self) -> dict[str, int]:
        """Source rows the walk will read per table (what progress counts against)."""
        tables = [*self.readers, *self.verbatim]
        if self.schema.has("EmbeddingData"):
            tables.append("EmbeddingData")
        return {table: self._count(table, self._selection(table)) for table in tables}

    def digests(self, table: str, *, until: int | None = None) -> Iterator[tuple[int, str]]:
        """``(rowid, digest)`` of every row of ``table`` (up to rowid ``until``), digested
        exactly as :meth:`chunks` digests what it reads: what a caller compares to find the
        rows that changed since it last read them."""
        reader = self.readers.get(table) or self.verbatim.get(table)
        if reader is None or (isinstance(reader, VerbatimReader) and not reader.has_rowid):
            return
        bound = "" if until is None else f" AND rowid <= {int(until)}"
        sql = (
            f'SELECT rowid, {reader.select} FROM src."{table}" WHERE rowid > ?{bound} '
            f"ORDER BY rowid LIMIT {self.chunk_rows}"
        )
        last = -1
        # a page per statement: no read lock held while rows are digested
        while rows := self.db.execute(sql, (last,)).fetchall():
            last = rows[-1][0]
            for row in rows:
                yield row[0], row_digest(row[1:])

    # --- reading ----------------------------------------------------------------------------

    def _selection(self, table: str) -> Selection | None:
        return None if self.select is None else self.select.get(table, Selection(after=None))

    @staticmethod
    def _range(selection: Selection) -> str:
        sql = f"rowid > {int(selection.after if selection.after is not None else -1)}"
        if selection.until is not None:
            sql += f" AND rowid <= {int(selection.until)}"
        return sql

    def _count(self, table: str, selection: Selection | None) -> int:
        if selection is None:
            return self.db.execute(f'SELECT count(*) FROM src."{table}"').fetchone()[0]
        count = len(selection.rowids)
        if selection.after is not None:
            count += self.db.execute(
                f'SELECT count(*) FROM src."{table}" WHERE {self._range(selection)}'
            ).fetchone()[0]
        return count

    def _digest(self, table: str, values: Sequence[Any]) -> str | None:
        return row_digest(values) if table in self.track else None

    def _chunks(self, reader: TableReader) -> Iterator[tuple[list[_Row], int | None]]:
        """Rows of ``reader``'s table, ``chunk_rows`` at a time (see :meth:`_rowid_chunks`)."""
        table = reader.table
        return self._rowid_chunks(
            table,
            reader.select,
            lambda r: _Row(r[0], self._digest(table, r[1:]), reader.to_dict(r[1:])),
        )

    def _rowid_chunks(
        self, table: str, select: str, make: Callable[[Any], _Row]
    ) -> Iterator[tuple[list[_Row], int | None]]:
        """Rows of ``table``, ``chunk_rows`` at a time: the selected rowids first, then the
        range in rowid order (keyset paging, so each chunk is one indexed range read however
        far into the table), each range chunk with its highest rowid."""
        selection = self._selection(table) or Selection()
        rowids = sorted(selection.rowids)
        step = min(self.chunk_rows, _IN_LIST)
        for start in range(0, len(rowids), step):
            part = rowids[start : start + step]
            raw = self.db.execute(
                f'SELECT rowid, {select} FROM src."{table}" '
                f"WHERE rowid IN ({', '.join('?' * len(part))}) ORDER BY rowid",
                part,
            ).fetchall()
            yield [make(r) for r in raw], None
        if selection.after is None:
            return
        last = selection.after
        until = "" if selection.until is None else f" AND rowid <= {int(selection.until)}"
        sql = (
            f'SELECT rowid, {select} FROM src."{table}" '
            f"WHERE rowid > ?{until} ORDER BY rowid LIMIT {self.chunk_rows}"
        )
        while True:
            raw = self.db.execute(sql, (last,)).fetchall()
            if not raw:
                return
            last = raw[-1][0]
            yield [make(r) for r in raw], last

    def _seed_chunks(self, reader: TableReader) -> Iterator[list[_Row]]:
        """Seeds ordered by group, then rowid; a chunk ends only between groups, since
        PyRIT's group rules hold for a group as a whole (contract §8.5). A selection reads the
        selected seeds with every seed of their groups."""
        grouped = self.schema.has("SeedPromptEntries", "prompt_group_id")
        where = ""
        selection = self._selection("SeedPromptEntries")
        if selection is not None:
            self.db.execute("DROP TABLE IF EXISTS main.wanted_seeds")
            self.db.execute("CREATE TABLE wanted_seeds (id INTEGER PRIMARY KEY)")
            self.db.executemany(
                "INSERT OR IGNORE INTO wanted_seeds VALUES (?)", [(r,) for r in selection.rowids]
            )
            if selection.after is not None:
                self.db.execute(
                    "INSERT OR IGNORE INTO wanted_seeds SELECT rowid FROM src.SeedPromptEntries "
                    f"WHERE {self._range(selection)}"
                )
            where = " WHERE rowid IN (SELECT id FROM wanted_seeds)"
            if grouped:
                where += (
                    " OR prompt_group_id IN (SELECT s.prompt_group_id FROM "
                    "src.SeedPromptEntries s JOIN wanted_seeds w ON s.rowid = w.id "
                    "WHERE s.prompt_group_id IS NOT NULL)"
                )
        sql = (
            f'SELECT rowid, prompt_group_id, {reader.select} FROM src."SeedPromptEntries"{where} '
            "ORDER BY prompt_group_id IS NULL, prompt_group_id, rowid"
            if grouped
            else f'SELECT rowid, NULL, {reader.select} FROM src."SeedPromptEntries"{where} '
            "ORDER BY rowid"
        )
        cursor = self.db.execute(sql)
        chunk: list[_Row] = []
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
                values = row[2:]
                chunk.append(
                    _Row(row[0], self._digest("SeedPromptEntries", values), reader.to_dict(values))
                )
        if chunk:
            yield chunk

    def _verbatim_reader(self, table: str) -> VerbatimReader:
        info = self.db.execute(f'PRAGMA src.table_info("{table}")').fetchall()
        reader = VerbatimReader(table, info, self.schema.alembic_revision)
        try:
            self.db.execute(f'SELECT rowid FROM src."{table}" LIMIT 1')
        except sqlite3.OperationalError:
            reader.has_rowid = False
        return reader

    def _verbatim_chunks(self, reader: VerbatimReader) -> Iterator[tuple[list[_Row], int | None]]:
        """The rows of a table kept verbatim, ``chunk_rows`` at a time, in rowid order (or
        primary-key order for a ``WITHOUT ROWID`` table, which is always read whole)."""
        table = reader.table
        if reader.has_rowid:
            yield from self._rowid_chunks(
                table,
                reader.select,
                lambda r: _Row(r[0], self._digest(table, r[1:]), reader.to_dict(r[0], r[1:])),
            )
            return
        order = ", ".join(f'"{c}"' for c in reader.key)
        cursor = self.db.execute(f'SELECT {reader.select} FROM src."{table}" ORDER BY {order}')
        while rows := cursor.fetchmany(self.chunk_rows):
            yield [_Row(0, None, reader.to_dict(None, row)) for row in rows], None

    # --- per kind -----------------------------------------------------------------------------

    def _chunk(self, table: str, rows: int, payload: dict[str, Any] | None) -> Chunk:
        return Chunk(self.phase, table, rows, payload)

    def _add_sources(
        self, chunk: Chunk, key: str, table: str, rows: list[_Row], start: int = 0
    ) -> None:
        if table in self.track:
            for index, row in enumerate(rows, start):
                chunk.sources[f"{key}[{index}]"] = [Source(table, row.rowid, row.digest)]

    def _plain(self, rows: list[_Row]) -> Chunk:
        table = {
            "scenario_results": "ScenarioResultEntries",
            "scorable_contents": "ScorableContentEntries",
            "scores": "ScoreEntries",
        }[self.key]
        chunk = self._chunk(table, len(rows), {self.key: [row.data for row in rows]})
        self._add_sources(chunk, self.key, table, rows)
        return chunk

    def _pieces(self, rows: list[_Row]) -> Chunk:
        """Pieces get what 1.x keeps elsewhere (contract §9.2): the conversation's target and the
        labels / harm categories of the attack results holding the conversation.

        A 1.x ``Conversations`` row is sent with the first chunk holding one of its pieces,
        so the conversation is created once, complete, instead of created and then updated.
        """
        pieces = [row.data for row in rows]
        conversation_ids = list({piece["conversation_id"] for piece in pieces})
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
        entities: list[_Row] = []
        if "Conversations" in self.readers:
            reader = self.readers["Conversations"]
            for row in self._lookup(
                f"SELECT rowid, {reader.select} FROM src.Conversations "
                "WHERE conversation_id IN ({})",
                conversation_ids,
            ):
                entity = reader.to_dict(row[1:])
                cid = entity.get("conversation_id")
                targets[cid] = entity.get("target_identifier")
                if cid not in seen:
                    entities.append(_Row(row[0], self._digest("Conversations", row[1:]), entity))
        tags = {
            cid: (_json_text(labels), _json_text(harms))
            for cid, labels, harms in self._lookup(
                "SELECT conversation_id, labels, harms FROM conv_tags "
                "WHERE conversation_id IN ({})",
                conversation_ids,
            )
        }
        for piece in pieces:
            cid = piece["conversation_id"]
            if piece.get("prompt_target_identifier") in (None, {}) and targets.get(cid):
                piece["prompt_target_identifier"] = targets[cid]
            found = tags.get(cid)
            if found is None:
                continue
            labels, harms = found
            if not piece.get("labels") and labels:
                piece["labels"] = dict(labels)
            if not piece.get("targeted_harm_categories") and harms:
                piece["targeted_harm_categories"] = list(harms)
        payload: dict[str, Any] = {"message_pieces": pieces}
        if entities:
            payload["conversations"] = [{"conversation": e.data, "messages": []} for e in entities]
        chunk = self._chunk("PromptMemoryEntries", len(rows), payload)
        self._add_sources(chunk, "conversations", "Conversations", entities)
        return chunk

    def _lone_conversations(self, rows: list[_Row]) -> Chunk:
        """1.x conversations without pieces. Every ``Conversations`` row is counted as read
        here; those with pieces were already sent with them."""
        ids = [row.data.get("conversation_id") for row in rows]
        seen = {
            r[0]
            for r in self._lookup(
                "SELECT conversation_id FROM seen_conv WHERE conversation_id IN ({})", ids
            )
        }
        lone = [row for row in rows if row.data.get("conversation_id") not in seen]
        if not lone:
            return self._chunk("Conversations", len(rows), None)
        chunk = self._chunk(
            "Conversations",
            len(rows),
            {"conversations": [{"conversation": r.data, "messages": []} for r in lone]},
        )
        self._add_sources(chunk, "conversations", "Conversations", lone)
        return chunk

    def _attacks(self, rows: list[_Row]) -> Chunk:
        """References that the file itself cannot satisfy are dropped with a warning, so the
        attack result is kept (ingestion refuses a dangling last response)."""
        attacks = [row.data for row in rows]
        self._attribute_to_scenarios(attacks)
        checks = (
            ("last_response", "PromptMemoryEntries", "piece"),
            ("last_score", "ScoreEntries", "score"),
            ("human_score", "ScoreEntries", "score"),
            ("attribution_parent_id", "ScenarioResultEntries", "scenario result"),
        )
        for key, table, what in checks:
            wanted = {attack[key] for attack in attacks if isinstance(attack.get(key), str)}
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
            for attack in attacks:
                value = attack.get(key)
                if isinstance(value, str) and value not in found:
                    self.warn(
                        f"attack result refers to a {what} not in the file; reference dropped",
                        f"{attack.get('attack_result_id')}: {key} {value}",
                    )
                    attack[key] = None
        chunk = self._chunk("AttackResultEntries", len(rows), {"attack_results": attacks})
        self._add_sources(chunk, "attack_results", "AttackResultEntries", rows)
        return chunk

    def _attribute_to_scenarios(self, attacks: list[dict[str, Any]]) -> None:
        """An attack result that names no scenario belongs to the one whose manifest lists its
        conversation (see :meth:`_build_scenario_owners`)."""
        unowned = [attack for attack in attacks if attack.get("attribution_parent_id") is None]
        if not unowned:
            return
        owners = {
            cid: (scenario_id, collection)
            for cid, scenario_id, collection in self._lookup(
                "SELECT conversation_id, scenario_id, collection FROM scenario_owner "
                "WHERE conversation_id IN ({})",
                {attack.get("conversation_id") for attack in unowned},
            )
        }
        for attack in unowned:
            owner = owners.get(attack.get("conversation_id"))
            if owner is None:
                continue
            attack["attribution_parent_id"], collection = owner
            if attack.get("attribution_data") is None:
                attack["attribution_data"] = {"parent_collection": collection}

    def _seeds(self, rows: list[_Row]) -> Chunk:
        groups: dict[str, list[_Row]] = {}
        loose: list[_Row] = []
        for row in rows:
            group_id = row.data.get("prompt_group_id")
            if isinstance(group_id, str) and group_id:
                groups.setdefault(group_id, []).append(row)
            else:
                loose.append(row)
        payload: dict[str, Any] = {}
        if loose:
            payload["seeds"] = [row.data for row in loose]
        if groups:
            payload["seed_groups"] = [
                {"seeds": [row.data for row in seeds]} for seeds in groups.values()
            ]
        chunk = self._chunk("SeedPromptEntries", len(rows), payload or None)
        self._add_sources(chunk, "seeds", "SeedPromptEntries", loose)
        if "SeedPromptEntries" in self.track:
            for index, seeds in enumerate(groups.values()):
                # a group is accepted or refused whole
                chunk.sources[f"seed_groups[{index}]"] = [
                    Source("SeedPromptEntries", row.rowid, row.digest) for row in seeds
                ]
        return chunk

    # --- helpers ----------------------------------------------------------------------------

    def _lookup(self, sql: str, values: Any) -> list[tuple[Any, ...]]:
        values = list(values)
        out: list[tuple[Any, ...]] = []
        for start in range(0, len(values), _IN_LIST):
            part = values[start : start + _IN_LIST]
            out.extend(self.db.execute(sql.format(", ".join("?" * len(part))), part).fetchall())
        return out


def _json_text(text: str | None) -> Any:
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None
