"""Import floor: how fast can *any* Python import of a PyRIT file into Redline's SQLite schema be?

Not Redline's importer. A deliberately minimal, single-threaded loop reads the same PyRIT 1.1.0
file as ``bench/import.py`` and writes its conversations, messages, pieces (with their converter
links) and scores straight into a freshly migrated Redline SQLite database with
``executemany``. It keeps only what a
lean import could not skip — parsing UUIDs and timestamps, re-serialising JSON, hashing text
values, looking identifiers up once per distinct JSON text — and none of what the ingestion
service adds on top (per-item statuses and refusals, merging into stored rows, labels and
harm categories copied from attack results, media, attack results themselves, Django).

It answers one question for issue 4's target (≥ 20,000 rows/s on two cores): what the schema
and the interpreter alone cost. It prints rows/s for the rows it imports, and splits the time
into SQLite statements, commits, source reads and the Python in between. ``--drop-indexes``
repeats the run with the piece and score tables' secondary indexes dropped first, to show
what those indexes cost. Usage::

    .venv/bin/python bench/import_floor.py                  # generates the benchmark file
    .venv/bin/python bench/import_floor.py --db pyrit.db    # an existing PyRIT 1.1.0 file
    .venv/bin/python bench/import_floor.py --drop-indexes

Figures are recorded in docs/performance.md ("Import floor").
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHUNK = 5000
PIECE_SOURCE = (
    "id, role, conversation_id, sequence, timestamp, prompt_metadata, converter_identifiers, "
    "response_error, original_value_data_type, original_value, original_value_sha256, "
    "converted_value_data_type, converted_value, converted_value_sha256, original_prompt_id, "
    "pyrit_version"
)
SCORE_SOURCE = (
    "id, score_value, score_value_description, score_type, score_category, score_rationale, "
    "score_metadata, scorer_class_identifier, prompt_request_response_id, timestamp, "
    "objective, pyrit_version, status, scorable"
)
PIECE_COLUMNS = (
    "id, message_id, position, timestamp, labels, prompt_metadata, targeted_harm_categories, "
    "original_value, original_value_data_type, original_value_sha256, converted_value, "
    "converted_value_data_type, converted_value_sha256, response_error, originator, "
    "original_prompt_id, pyrit_version, extra, prompt_target_identifier_id, original_media_key, "
    "converted_media_key"
)
SCORE_COLUMNS = (
    "id, score_value, numeric_value, score_value_description, score_type, score_category, "
    "score_rationale, score_metadata, scorer_class_identifier_id, message_piece_id, "
    "conversation_id, timestamp, objective, status, scorable, pyrit_version, extra"
)


class Clock:
    """Seconds spent in each kind of step."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def run(self, kind: str, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``, its time added to ``kind``."""
        started = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.seconds[kind] = self.seconds.get(kind, 0.0) + time.perf_counter() - started


def _json(text: str | None, empty: str) -> str:
    if text is None or text == "null":
        return empty
    value = json.loads(text)
    return json.dumps(value) if value else empty


def _time(text: str) -> str:
    return str(datetime.fromisoformat(text))


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class LeanImport:
    """The minimal import loop (see the module docstring)."""

    def __init__(self, source: Path, target: Path) -> None:
        self.src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        self.db = sqlite3.connect(target, isolation_level=None)
        for pragma in ("journal_mode = wal", "synchronous = normal", "cache_size = -131072"):
            self.db.execute(f"PRAGMA {pragma}")
        self.clock = Clock()
        self.now = str(datetime.now())
        self.identifiers: dict[str, int | None] = {}
        self.conversations: dict[str, int] = {}
        self.piece_homes: dict[str, int] = {}
        self.targets = dict(
            self.src.execute("SELECT conversation_id, target_identifier FROM Conversations")
        )
        self.rows = 0

    def _sql(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        return self.clock.run("SQLite statements", self.db.execute, sql, params)

    def _many(self, sql: str, rows: list[tuple]) -> None:
        self.clock.run("SQLite statements", self.db.executemany, sql, rows)

    def _identifier(self, text: str | None) -> int | None:
        if not text or text == "null":
            return None
        found = self.identifiers.get(text, 0)
        if found != 0:
            return found
        params = json.loads(text)
        digest = params.get("hash") or _sha(json.dumps(params, sort_keys=True))
        self._sql(
            "INSERT OR IGNORE INTO memory_componentidentifier (hash, class_name, class_module, "
            "params, children, attributes, eval_hash, pyrit_version, content_hash, created_at) "
            "VALUES (?, ?, ?, ?, '{}', '{}', NULL, '', ?, ?)",
            (digest, params.get("class_name", ""), params.get("class_module", ""),
             json.dumps(params), digest, self.now),
        )  # fmt: skip
        pk = self._sql(
            "SELECT id FROM memory_componentidentifier WHERE hash = ?", (digest,)
        ).fetchone()[0]
        self.identifiers[text] = pk
        return pk

    def _chunks(self, table: str, columns: str) -> Iterable[list[tuple]]:
        last = -1
        sql = f'SELECT rowid, {columns} FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT {CHUNK}'
        while rows := self.clock.run("source reads", self.src.execute(sql, (last,)).fetchall):
            last = rows[-1][0]
            self.rows += len(rows)
            yield rows

    def _in(self, sql: str, keys: list[Any]) -> sqlite3.Cursor:
        return self._sql(sql.format(", ".join("?" * len(keys))), keys)

    def pieces(self) -> None:
        """Conversations, messages and pieces, one transaction per chunk."""
        for rows in self._chunks("PromptMemoryEntries", PIECE_SOURCE):
            self._sql("BEGIN IMMEDIATE")
            new = list(dict.fromkeys(r[3] for r in rows if r[3] not in self.conversations))
            self._many(
                "INSERT INTO memory_conversation (conversation_id, retries, labels, "
                "targeted_harm_categories, started_at, pyrit_version, extra, created_at, "
                "updated_at, target_identifier_id, piece_count) "
                "VALUES (?, '[]', '{}', '[]', ?, '', '{}', ?, ?, ?, 0) ON CONFLICT DO NOTHING",
                [(c, self.now, self.now, self.now, self._identifier(self.targets.get(c)))
                 for c in new],
            )  # fmt: skip
            if new:
                self.conversations.update(
                    (cid, pk)
                    for pk, cid in self._in(
                        "SELECT id, conversation_id FROM memory_conversation "
                        "WHERE conversation_id IN ({})",
                        new,
                    )
                )
            roles = {(self.conversations[r[3]], r[4]): r[2] for r in reversed(rows)}
            self._many(
                "INSERT INTO memory_message (conversation_id, sequence, role) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [(c, s, role) for (c, s), role in roles.items()],
            )
            messages = {
                (c, s): pk
                for pk, c, s in self._in(
                    "SELECT id, conversation_id, sequence FROM memory_message "
                    "WHERE conversation_id IN ({})",
                    list({c for c, _ in roles}),
                )
            }
            positions: dict[int, int] = {}
            out, links = [], []
            for r in rows:
                piece_id = uuid.UUID(r[1]).hex
                conversation = self.conversations[r[3]]
                message = messages[(conversation, r[4])]
                position = positions[message] = positions.get(message, -1) + 1
                original = r[10]
                converted = original if r[13] is None else r[13]
                for index, converter in enumerate(json.loads(r[7]) if r[7] else []):
                    links.append((piece_id, index, self._identifier(json.dumps(converter))))
                out.append(
                    (piece_id, message, position, _time(r[5]), "{}", _json(r[6], "{}"), "[]",
                     original, r[9], r[11] or _sha(original), converted, r[12] or r[9],
                     r[14] or _sha(converted), r[8] or "none", "undefined",
                     uuid.UUID(r[15]).hex, r[16] or "", "{}",
                     self._identifier(self.targets.get(r[3])), "", "")
                )  # fmt: skip
                self.piece_homes[piece_id] = conversation
            self._many(
                f"INSERT INTO memory_messagepiece ({PIECE_COLUMNS}) "
                f"VALUES ({', '.join('?' * 21)}) ON CONFLICT DO NOTHING",
                out,
            )
            self._many(
                "INSERT INTO memory_piececonverter (piece_id, position, identifier_id) "
                "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                links,
            )
            self.clock.run("commits", self.db.execute, "COMMIT")

    def scores(self) -> None:
        """Scores, homed on their piece's conversation."""
        for rows in self._chunks("ScoreEntries", SCORE_SOURCE):
            self._sql("BEGIN IMMEDIATE")
            out = []
            for r in rows:
                piece = uuid.UUID(r[9]).hex if r[9] else None
                value = r[2]
                numeric = (
                    (1.0 if value.lower() == "true" else 0.0)
                    if r[4] == "true_false"
                    else float(value)
                )
                out.append(
                    (uuid.UUID(r[1]).hex, value, numeric, r[3], r[4], _json(r[5], "[]"), r[6],
                     _json(r[7], "{}"), self._identifier(r[8]), piece,
                     self.piece_homes.get(piece), _time(r[10]), r[11], r[13],
                     _json(r[14], "{}"), r[12] or "", "{}")
                )  # fmt: skip
            self._many(
                f"INSERT INTO memory_score ({SCORE_COLUMNS}) "
                f"VALUES ({', '.join('?' * 17)}) ON CONFLICT DO NOTHING",
                out,
            )
            self.clock.run("commits", self.db.execute, "COMMIT")


def _migrated(folder: Path) -> Path:
    """A freshly migrated Redline SQLite database in ``folder``."""
    env = {
        **os.environ,
        "REDLINE_VAR_DIR": str(folder),
        "DATABASE_URL": f"sqlite:///{folder}/empty.sqlite3",
        "SECRET_KEY": "bench-only-" + "x" * 50,
        "DEBUG": "0",
    }
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--verbosity", "0"],
        env=env,
        cwd=ROOT,
        check=True,
    )
    with sqlite3.connect(folder / "empty.sqlite3") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return folder / "empty.sqlite3"


def _drop_indexes(path: Path) -> list[str]:
    """Drop the piece and score tables' secondary indexes (not the unique ones that the
    ``ON CONFLICT`` and the schema's uniqueness rely on)."""
    with sqlite3.connect(path) as db:
        names = [
            name
            for name, table, sql in db.execute(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index'"
            )
            if table in ("memory_messagepiece", "memory_score")
            and sql is not None
            and not sql.startswith("CREATE UNIQUE")
        ]
        for name in names:
            db.execute(f'DROP INDEX "{name}"')
    return names


def run(source: Path, empty: Path, *, drop_indexes: bool) -> None:
    """One lean import of ``source`` into a copy of ``empty``; prints its figures."""
    with tempfile.TemporaryDirectory(prefix="redline-floor-") as tmp:
        target = Path(tmp) / "floor.sqlite3"
        shutil.copy(empty, target)
        dropped = _drop_indexes(target) if drop_indexes else []
        started = time.perf_counter()
        lean = LeanImport(source, target)
        lean.pieces()
        lean.scores()
        seconds = time.perf_counter() - started
        spent = lean.clock.seconds
        python = seconds - sum(spent.values())
        label = f"without {len(dropped)} indexes" if drop_indexes else "full schema"
        print(
            f"{label:<22} {lean.rows:>8,} {seconds:>8.2f} {lean.rows / seconds:>9,.0f} "
            f"{spent.get('SQLite statements', 0):>10.2f} {spent.get('commits', 0):>8.2f} "
            f"{spent.get('source reads', 0):>8.2f} {python:>8.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None, help="a PyRIT 1.1.0 file to read")
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=10, help="pieces per conversation")
    parser.add_argument("--repeat", type=int, default=2, help="runs per variant")
    parser.add_argument("--drop-indexes", action="store_true", help="also run without indexes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-floor-src-") as tmp:
        source = args.db
        if source is None:
            source = Path(tmp) / "pyrit.db"
            generate = importlib.import_module("bench.import").generate
            generate(source, conversations=args.conversations, turns=args.turns)
        empty = _migrated(Path(tmp))
        print(
            f"{'schema':<22} {'rows':>8} {'seconds':>8} {'rows/s':>9} {'SQLite s':>10} "
            f"{'commit s':>8} {'read s':>8} {'Python s':>8}"
        )
        for drop in (False, True) if args.drop_indexes else (False,):
            for _ in range(args.repeat):
                run(source, empty, drop_indexes=drop)


if __name__ == "__main__":
    main()
