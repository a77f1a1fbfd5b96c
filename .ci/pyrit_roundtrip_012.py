"""Prove the ``pyrit-0.12`` export profile against the real PyRIT 0.12.1 (run by its python).

    pyrit_roundtrip_012.py same EXPORT FIXTURE WORK
    pyrit_roundtrip_012.py newer EXPORT FIXTURE WORK

EXPORT: Redline's ``export_memory --profile pyrit-0.12`` of FIXTURE's memory.db. The docs'
loader (docs/examples/load_pyrit_0_12.py) builds PyRIT's objects from it and stores them in a
fresh PyRIT 0.12.1 memory under WORK with PyRIT's ``add_*`` calls; PyRIT's getters read them
back. ``same``: FIXTURE was written by 0.12.1, so the rows PyRIT wrote are compared, column by
column, with FIXTURE's. ``newer``: FIXTURE was written by PyRIT 1.1.0 (another schema): the
counts must equal the fixture's, every outcome too except ``error`` (0.12.1 has none), which
must be stored as ``undetermined`` with ``{"redline_replaced": {"outcome": "error"}}`` in the
attack's metadata.

Every mismatch is listed, then the script exits 1. No Django here: only PyRIT and the standard
library, so it checks what a PyRIT 0.12.1 user gets.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyrit.memory import CentralMemory, SQLiteMemory

#: Table -> (columns compared, why the others are not). Every other column must be equal.
TABLES = {
    "PromptMemoryEntries": (),
    "ScoreEntries": (),
    # 0.12.1's AttackResult has no time: add_attack_results_to_memory stamps the row with now.
    "AttackResultEntries": ("timestamp",),
    # Media seeds are copied into PyRIT's storage (a new path; value_sha256 is compared).
    "SeedPromptEntries": ("value",),
}

problems: list[str] = []


def check(what: str, got: Any, want: Any) -> None:
    if got != want:
        problems.append(f"{what}: got {got!r}, want {want!r}")


def _rows(path: Path, table: str) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        return {str(row["id"]): dict(row) for row in db.execute(f'SELECT * FROM "{table}"')}


def _json(value: Any) -> Any:
    """A JSON column's value parsed (key order and spacing are not data)."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _load(export_path: Path, fixture: Path, work: Path) -> tuple[SQLiteMemory, dict[str, int]]:
    """The export stored in a fresh PyRIT 0.12.1 memory by the docs' loader."""
    document = json.loads(export_path.read_text())
    check("export_format", document["export_format"], "redline-export/1+pyrit-0.12")
    check("note names the loader", "load_pyrit_0_12.py" in document.get("note", ""), True)
    loader_path = Path(__file__).resolve().parent.parent / "docs/examples/load_pyrit_0_12.py"
    spec = importlib.util.spec_from_file_location("load_pyrit_0_12", loader_path)
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)

    work.mkdir(parents=True, exist_ok=True)
    memory = SQLiteMemory(db_path=work / "pyrit.db")
    memory.results_path = str(work / "results")  # copies of seed media go here, not to $HOME
    CentralMemory.set_memory_instance(memory)
    os.chdir(fixture)  # media values are relative to the fixture folder
    return memory, loader.load(document, memory)


def _count(db: Path, sql: str) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchone()[0]


def newer(export_path: Path, fixture: Path, work: Path) -> None:
    started = time.monotonic()
    memory, counts = _load(export_path, fixture, work)
    every = datetime(1, 1, 1, tzinfo=UTC)
    source = fixture / "memory.db"
    for what, got, table in (
        ("pieces", len(memory.get_message_pieces()), "PromptMemoryEntries"),
        ("scores", len(memory.get_scores(sent_after=every)), "ScoreEntries"),
        ("attack results", len(memory.get_attack_results()), "AttackResultEntries"),
        ("seeds", len(memory.get_seeds()), "SeedPromptEntries"),
    ):
        check(f"{what} read back", got, _count(source, f'SELECT count(*) FROM "{table}"'))
    memory.dispose_engine()
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as connection:
        outcomes = {
            str(k): v for k, v in connection.execute("SELECT id, outcome FROM AttackResultEntries")
        }
    check("the fixture has an error outcome", "error" in outcomes.values(), True)
    stored = _rows(work / "pyrit.db", "AttackResultEntries")
    for key, outcome in outcomes.items():
        row = stored.get(key) or {}
        metadata = _json(row.get("attack_metadata")) or {}
        if outcome == "error":
            check(f"outcome of {key}", row.get("outcome"), "undetermined")
            check(f"metadata of {key}", metadata.get("redline_replaced"), {"outcome": "error"})
        else:
            check(f"outcome of {key}", row.get("outcome"), outcome)
            check(f"metadata of {key}", "redline_replaced" in metadata, False)
    print(
        f"PyRIT 0.12.1 loaded the pyrit-0.12 export of 1.1.0 memory: {counts}, "
        f"{sum(v == 'error' for v in outcomes.values())} error outcome(s) as undetermined, "
        f"in {time.monotonic() - started:.1f} s"
    )


def same(export_path: Path, fixture: Path, work: Path) -> None:
    started = time.monotonic()
    memory, counts = _load(export_path, fixture, work)

    # --- PyRIT's getters read back every object ---
    want = {t: _rows(fixture / "memory.db", t) for t in TABLES}
    pieces = memory.get_message_pieces()
    check("pieces read back", len(pieces), len(want["PromptMemoryEntries"]))
    scores = memory.get_scores(sent_after=datetime(1, 1, 1, tzinfo=UTC))
    check("scores read back", len(scores), len(want["ScoreEntries"]))
    attacks = memory.get_attack_results()
    check("attack results read back", len(attacks), len(want["AttackResultEntries"]))
    seeds = memory.get_seeds()
    check("seeds read back", len(seeds), len(want["SeedPromptEntries"]))
    check("pieces the loader built", counts["pieces"], len(want["PromptMemoryEntries"]))
    memory.dispose_engine()

    # --- the rows PyRIT wrote equal the fixture's, column by column ---
    for table, skipped in TABLES.items():
        got = _rows(work / "pyrit.db", table)
        check(f"{table} ids", sorted(got), sorted(want[table]))
        for key, row in want[table].items():
            back = got.get(key)
            if back is None:
                continue
            for column, value in row.items():
                if column not in skipped:
                    check(f"{table} {key} {column}", _json(back.get(column)), _json(value))
    print(
        f"PyRIT 0.12.1 loaded the pyrit-0.12 export: {len(pieces)} pieces, {len(scores)} scores, "
        f"{len(attacks)} attack results, {len(seeds)} seeds, in {time.monotonic() - started:.1f} s"
    )
    if not problems:
        skipped = ", ".join(f"{t}.{c}" for t, cs in TABLES.items() for c in cs)
        print(f"every row PyRIT wrote equals the fixture's, column by column (but {skipped})")


def main(argv: list[str]) -> int:
    modes = {"same": same, "newer": newer}
    if len(argv) != 4 or argv[0] not in modes:
        print(__doc__, file=sys.stderr)
        return 2
    modes[argv[0]](*(Path(a).resolve() for a in argv[1:]))
    if problems:
        print(f"{len(problems)} mismatches:", file=sys.stderr)
        for problem in problems[:200]:
            print(f"  {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
