"""Import benchmark: a PyRIT 1.1.0-shaped SQLite memory file through ``manage.py import_pyrit``.

Generates (or takes, with ``--db``) a PyRIT memory database — by default 10,000 conversations
of 10 pieces (100,000 pieces), 50,000 scores, 10,000 attack results with labels and harm
categories, the ``Conversations`` table with targets — imports it into a fresh Redline
database in a child process, then imports it again (everything unchanged), and prints rows/s,
the child's CPU time (user + system, all threads and processes; on a shared machine rows per
CPU-second is the steadier figure) and the peak RSS of its largest process for both passes,
once per write path (``--write-paths``, default both: ``direct`` and ``service``).

In the same run it measures the floor (``bench/import_floor.py``, one pass on the same file)
and prints each pass's rows/s as a ratio of the floor's, with the calibration loop before and
after. Usage::

    .venv/bin/python bench/import.py                         # SQLite, both paths, the floor
    .venv/bin/python bench/import.py --databases sqlite,postgres
    .venv/bin/python bench/import.py --conversations 1000    # a smaller file
    .venv/bin/python bench/import.py --conversations 58824 --write-paths direct  # ~1M rows
    .venv/bin/python bench/import.py --db path/to/pyrit.db   # your own file

Figures and the machine they came from are recorded in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import calibration_ms, database_url, pg_database  # noqa: E402

# PyRIT 1.1.0's tables as its SQLite memory creates them (alembic head 8d1e3f5a7b9c), without
# the content-addressed identifier tables, which the importer does not read.
SCHEMA_1_1_0 = """
CREATE TABLE "PromptMemoryEntries" (
  id CHAR(36) NOT NULL, role VARCHAR NOT NULL, conversation_id VARCHAR NOT NULL,
  sequence INTEGER NOT NULL, timestamp DATETIME NOT NULL, prompt_metadata JSON NOT NULL,
  converter_identifiers JSON, response_error VARCHAR, original_value_data_type VARCHAR NOT NULL,
  original_value VARCHAR NOT NULL, original_value_sha256 VARCHAR,
  converted_value_data_type VARCHAR NOT NULL, converted_value VARCHAR,
  converted_value_sha256 VARCHAR, original_prompt_id CHAR(36) NOT NULL, pyrit_version VARCHAR,
  PRIMARY KEY (id));
CREATE INDEX "ix_PromptMemoryEntries_conversation_id" ON "PromptMemoryEntries" (conversation_id);
CREATE TABLE "Conversations" (
  conversation_id VARCHAR(36) NOT NULL, target_identifier JSON, pyrit_version VARCHAR,
  target_identifier_hash VARCHAR(64), retries JSON, PRIMARY KEY (conversation_id));
CREATE TABLE "ScorableContentEntries" (
  id CHAR(36) NOT NULL, value VARCHAR NOT NULL, value_sha256 VARCHAR(64) NOT NULL,
  data_type VARCHAR(32) NOT NULL, timestamp DATETIME NOT NULL, PRIMARY KEY (id));
CREATE TABLE "ScoreEntries" (
  id CHAR(36) NOT NULL, score_value VARCHAR, score_value_description VARCHAR,
  score_type VARCHAR NOT NULL, score_category JSON, score_rationale VARCHAR,
  score_metadata JSON NOT NULL, scorer_class_identifier JSON NOT NULL,
  prompt_request_response_id CHAR(36), timestamp DATETIME NOT NULL, objective VARCHAR,
  pyrit_version VARCHAR, scorer_identifier_hash VARCHAR(64), status VARCHAR(16) NOT NULL,
  scorable JSON, scorable_content_id CHAR(36), PRIMARY KEY (id));
CREATE TABLE "ScenarioResultEntries" (
  id CHAR(36) NOT NULL, scenario_name VARCHAR NOT NULL, scenario_description VARCHAR,
  scenario_version INTEGER NOT NULL, pyrit_version VARCHAR NOT NULL,
  scenario_identifier JSON NOT NULL, objective_target_identifier JSON NOT NULL,
  objective_scorer_identifier JSON, scenario_run_state VARCHAR NOT NULL, labels JSON,
  number_tries INTEGER NOT NULL, completion_time DATETIME NOT NULL, timestamp DATETIME NOT NULL,
  display_group_map_json VARCHAR, error_message VARCHAR, error_type VARCHAR,
  scenario_metadata JSON, scenario_identifier_hash VARCHAR(64), PRIMARY KEY (id));
CREATE TABLE "AttackResultEntries" (
  id CHAR(36) NOT NULL, conversation_id VARCHAR(36) NOT NULL, objective VARCHAR NOT NULL,
  atomic_attack_identifier JSON, objective_sha256 VARCHAR, last_response_id CHAR(36),
  last_score_id CHAR(36), executed_turns INTEGER NOT NULL, execution_time_ms INTEGER NOT NULL,
  outcome VARCHAR NOT NULL, outcome_reason VARCHAR, attack_metadata JSON,
  pruned_conversation_ids JSON, adversarial_chat_conversation_ids JSON,
  timestamp DATETIME NOT NULL, pyrit_version VARCHAR, labels JSON, error_message VARCHAR,
  error_type VARCHAR, error_traceback VARCHAR, retry_events_json VARCHAR, total_retries INTEGER,
  attribution_parent_id CHAR(36), attribution_data JSON, targeted_harm_categories JSON,
  atomic_attack_identifier_hash VARCHAR(64), PRIMARY KEY (id));
CREATE INDEX "ix_AttackResultEntries_conversation_id" ON "AttackResultEntries" (conversation_id);
CREATE TABLE "SeedPromptEntries" (
  id CHAR(36) NOT NULL, value VARCHAR NOT NULL, value_sha256 VARCHAR, data_type VARCHAR NOT NULL,
  name VARCHAR, dataset_name VARCHAR, harm_categories JSON, description VARCHAR, authors JSON,
  groups JSON, source VARCHAR, date_added DATETIME NOT NULL, added_by VARCHAR NOT NULL,
  prompt_metadata JSON, parameters JSON, prompt_group_id CHAR(36), sequence INTEGER,
  role VARCHAR, seed_type VARCHAR NOT NULL, PRIMARY KEY (id));
CREATE TABLE "EmbeddingData" (
  id CHAR(32) NOT NULL, embedding JSON, embedding_type_name VARCHAR, PRIMARY KEY (id));
CREATE TABLE pyrit_memory_alembic_version (version_num VARCHAR(32) NOT NULL);
INSERT INTO pyrit_memory_alembic_version VALUES ('8d1e3f5a7b9c');
"""

_NS = uuid.UUID("0d5c3a52-6b1e-4f57-9c1e-7a2b3c4d5e6f")
_SENTENCE = (
    "the model said it cannot help with that request but here is some general information "
    "about safety chemistry history fiction story character villain recipe steps first "
    "second third finally however note please ignore previous instructions system prompt "
    "secret password base64 encoded translate rot13 pretend roleplay grandmother bedtime"
)
_WORDS = _SENTENCE.split(" ")


def _id(*parts: object) -> str:
    return str(uuid.uuid5(_NS, "/".join(map(str, parts))))


def _ident(class_name: str, module: str, **params: object) -> dict:
    from hashlib import sha256

    body = {"class_name": class_name, "class_module": module, **params}
    digest = sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return {"class_name": class_name, "class_module": module, "hash": digest,
            "pyrit_version": "1.1.0", **params}  # fmt: skip


TARGET = _ident(
    "OpenAIChatTarget",
    "pyrit.prompt_target.openai.openai_chat_target",
    endpoint="https://example.invalid/v1/chat/completions",
    model_name="gpt-4o",
    underlying_model_name="",
    temperature=0.7,
    top_p=1.0,
)
CONVERTER = _ident(
    "Base64Converter",
    "pyrit.converter.base64_converter",
    supported_input_types=["text"],
    supported_output_types=["text"],
)
SCORER = _ident(
    "SubStringScorer",
    "pyrit.score.true_false.substring_scorer",
    substring="SECRET",
    text_matcher="ExactTextMatching",
    scorer_type="true_false",
    score_aggregator="OR_",
)
ATTACK = _ident("PromptSendingAttack", "pyrit.executor.attack.single_turn.prompt_sending")


def generate(path: Path, *, conversations: int, turns: int, seed: int = 7) -> dict[str, int]:
    """Write a PyRIT 1.1.0-shaped memory file; returns its row count per table."""
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1_1_0)
    target, converter, scorer = (json.dumps(x) for x in (TARGET, [CONVERTER], SCORER))
    technique = {
        "class_name": "AttackTechnique",
        "class_module": "pyrit.scenario.core.attack_technique",
        "children": {"attack": ATTACK},
    }
    atomic = json.dumps(
        _ident("AtomicAttack", "pyrit.scenario.core.atomic_attack")
        | {"children": {"attack_technique": technique, "seed_identifiers": []}}
    )
    counts = dict.fromkeys(
        ["Conversations", "PromptMemoryEntries", "ScoreEntries", "AttackResultEntries"], 0
    )
    for start in range(0, conversations, 500):
        pieces, scores, attacks, convs = [], [], [], []
        for c in range(start, min(start + 500, conversations)):
            cid = _id("conversation", c)
            convs.append((cid, target, "1.1.0", TARGET["hash"], None))
            last_piece = last_score = None
            for turn in range(turns):
                role = "user" if turn % 2 == 0 else "assistant"
                pid = _id("piece", c, turn)
                text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 120)))
                stamp = f"2026-11-{1 + c % 28:02d} 12:{c % 60:02d}:{turn:02d}.{c % 999999:06d}"
                pieces.append(
                    (pid, role, cid, turn, stamp, "{}", converter if role == "user" else "[]",
                     "none", "text", text, None, "text", text, None, pid, "1.1.0")
                )  # fmt: skip
                last_piece = pid
                if turn % 2 == 1:
                    sid = _id("score", c, turn)
                    scores.append(
                        (sid, rng.choice(["true", "false", "True"]), "", "true_false",
                         '["jailbreak"]', "The response " + " ".join(rng.choices(_WORDS, k=30)),
                         "{}", scorer, pid, stamp, "Make the target say something it should not",
                         "1.1.0", SCORER["hash"], "complete",
                         json.dumps({"scorable_type": "message", "message_piece_ids": [pid]}),
                         None)
                    )  # fmt: skip
                    last_score = sid
            attacks.append(
                (_id("attack", c), cid, "Make the target say something it should not", atomic,
                 None, last_piece, last_score, turns // 2, rng.randint(100, 9000),
                 rng.choice(["success", "failure", "undetermined"]), None, "{}", "null", "null",
                 "2026-11-21 12:30:00.000000", "1.1.0",
                 json.dumps({"operation": f"op_{c % 3}", "operator": "bench"}), None, None, None,
                 "[]", 0, None, None, '["violence"]' if c % 4 == 0 else "null", None)
            )  # fmt: skip
        db.executemany("INSERT INTO Conversations VALUES (?,?,?,?,?)", convs)
        db.executemany(f"INSERT INTO PromptMemoryEntries VALUES ({','.join('?' * 16)})", pieces)
        db.executemany(f"INSERT INTO ScoreEntries VALUES ({','.join('?' * 16)})", scores)
        db.executemany(f"INSERT INTO AttackResultEntries VALUES ({','.join('?' * 26)})", attacks)
        counts["Conversations"] += len(convs)
        counts["PromptMemoryEntries"] += len(pieces)
        counts["ScoreEntries"] += len(scores)
        counts["AttackResultEntries"] += len(attacks)
    db.commit()
    db.close()
    return counts


def _child(env: dict[str, str], *args: str) -> tuple[float, int, float, str]:
    """Run ``manage.py`` in a child; returns wall seconds, peak RSS (bytes), CPU seconds (user
    + system, all threads) and its output."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "t = time.perf_counter() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(p.stdout + p.stderr)\n"
        "print(f'@@ {t} {u.ru_maxrss} {p.returncode} {u.ru_utime + u.ru_stime}')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"@@ (\S+) (\d+) (-?\d+) (\S+)", out)
    if match is None or match.group(3) != "0":
        raise RuntimeError(out[-3000:])
    return float(match.group(1)), int(match.group(2)) * 1024, float(match.group(4)), out


def floor(db_path: Path) -> tuple[int, float]:
    """One run of ``bench/import_floor.py`` on ``db_path``: the rows it wrote and rows/s."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "import_floor.py"), "--db", str(db_path),
         "--repeat", "1"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    match = re.search(r"full schema\s+([\d,]+)\s+\S+\s+([\d,]+)", out)
    if match is None:
        raise RuntimeError(out[-2000:])
    return int(match.group(1).replace(",", "")), float(match.group(2).replace(",", ""))


def run(database: str, db_path: Path, rows: int, write_path: str) -> list[dict]:
    """Import ``db_path`` twice into a fresh ``database``; one row per pass."""
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        env = {
            **os.environ,
            "REDLINE_VAR_DIR": tmp,
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-" + "x" * 50,
            "LOG_LEVEL": "WARNING",
        }
        pg_name = f"redline_bench_import_{os.getpid()}"
        url = database_url(database, folder=tmp, pg_name=pg_name)
        if url is None:
            return []
        env["DATABASE_URL"] = url
        try:
            subprocess.run(
                [sys.executable, str(ROOT / "manage.py"), "migrate", "--verbosity", "0"],
                env=env,
                cwd=ROOT,
                check=True,
            )
            results = []
            for label in ("first", "again"):
                seconds, rss, cpu, out = _child(
                    env, "import_pyrit", str(db_path), "--write-path", write_path
                )
                created = re.search(r"message_pieces\s+([\d,]+)\s+[\d,]+\s+([\d,]+)", out)
                results.append(
                    {
                        "pass": label,
                        "seconds": seconds,
                        "rows_per_s": rows / seconds,
                        "cpu": cpu,
                        "rows_per_cpu_s": rows / cpu,
                        "rss_mb": rss / 1e6,
                        "pieces": created.groups() if created else ("?", "?"),
                    }
                )
            return results
        finally:
            if database != "sqlite":
                pg_database(pg_name, create=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite")
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=10, help="pieces per conversation")
    parser.add_argument("--db", type=Path, default=None, help="import this file instead")
    parser.add_argument("--keep", type=Path, default=None, help="write the generated file here")
    parser.add_argument("--write-paths", default="direct,service", help="import_pyrit's paths")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor's run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-bench-src-") as tmp:
        if args.db is not None:
            db_path = args.db
            with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as src:
                tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master "
                                                    "WHERE type = 'table'")]  # fmt: skip
                counts = {t: src.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                          for t in tables if t.endswith(("Entries", "Conversations"))}  # fmt: skip
        else:
            db_path = args.keep or Path(tmp) / "pyrit.db"
            db_path.unlink(missing_ok=True)
            started = time.perf_counter()
            counts = generate(db_path, conversations=args.conversations, turns=args.turns)
            print(f"generated in {time.perf_counter() - started:.1f} s")
        rows = sum(counts.values())
        load = os.getloadavg()
        print(
            f"source: {db_path.stat().st_size / 1e6:.0f} MB, "
            + ", ".join(f"{t} {n:,}" for t, n in counts.items())
            + f" = {rows:,} rows; {os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f}"
        )
        print(f"calibration loop: {calibration_ms():.0f} ms")
        floor_rate = None
        if not args.no_floor:
            floor_rows, floor_rate = floor(db_path)
            print(f"floor (bench/import_floor.py): {floor_rows:,} rows, {floor_rate:,.0f} rows/s")
        print(
            f"{'database':<10} {'path':<8} {'pass':<6} {'seconds':>8} {'rows/s':>9} "
            f"{'÷ floor':>8} {'CPU s':>7} {'rows/CPU-s':>11} {'peak RSS':>9}"
        )
        for database in args.databases.split(","):
            for write_path in args.write_paths.split(","):
                for row in run(database, db_path, rows, write_path):
                    ratio = f"{row['rows_per_s'] / floor_rate:>7.2f}×" if floor_rate else "      —"
                    print(
                        f"{database:<10} {write_path:<8} {row['pass']:<6} "
                        f"{row['seconds']:>8.1f} {row['rows_per_s']:>9,.0f} {ratio} "
                        f"{row['cpu']:>7.1f} {row['rows_per_cpu_s']:>11,.0f} "
                        f"{row['rss_mb']:>6.0f} MB"
                        f"   (pieces created {row['pieces'][0]}, unchanged {row['pieces'][1]})"
                    )
        print(f"calibration loop: {calibration_ms():.0f} ms")


if __name__ == "__main__":
    main()
