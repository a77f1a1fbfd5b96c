"""Export benchmark: ``manage.py export_memory`` on a growing memory, peak RSS and items/s.

Fills a fresh database with the synthetic PyRIT 0.12 batches of ``bench/payloads.py`` (100
conversations of 10 pieces, a score per piece, an attack result per conversation per batch),
and after each size step runs the export in a child process, printing wall time, items/s,
output size and the child's peak RSS. Bounded memory shows as a flat RSS column. Usage::

    .venv/bin/python bench/export.py                       # SQLite, 10 / 50 / 100 batches
    .venv/bin/python bench/export.py --database postgres
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import pg_database  # noqa: E402

CHILD = """
import json, sys, time, django
django.setup()
from django.core.management import call_command
started = time.perf_counter()
call_command("export_memory", "--out", sys.argv[1], *sys.argv[2:])
# VmHWM, not ru_maxrss: Linux carries the parent's peak into a forked child's ru_maxrss.
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
print(json.dumps({"seconds": time.perf_counter() - started, "rss_mb": int(hwm) / 1024}))
"""

FILL = """
import sys, django
django.setup()
sys.path.insert(0, {root!r})
from bench.payloads import batch
from memory.transfer.ingest.service import ingest
for index in range(int(sys.argv[1]), int(sys.argv[2])):
    report = ingest(payload=batch(index))
    assert report.ok, report.errors[:3]
"""


def run(env, *args, capture=True):
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=ROOT, check=True, capture_output=capture, text=True
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--steps", default="10,50,100", help="batches after each step")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="redline-bench-export-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "redteam.settings", "MEDIA_ROOT": str(work)}
    env["REDLINE_VAR_DIR"] = str(work)
    if args.database == "postgres":
        url = pg_database("redline_bench_export")
        if url is None:
            raise SystemExit("PostgreSQL is unreachable")
        env["DATABASE_URL"] = url
    else:
        env["DATABASE_URL"] = f"sqlite:///{work / 'db.sqlite3'}"
    run(env, "manage.py", "migrate", "--verbosity", "0")
    done = 0
    print("batches  pieces   seconds  pieces/s  MB out  peak RSS MB  (chunk 200)")
    for step in [int(s) for s in args.steps.split(",")]:
        run(env, "-c", FILL.format(root=str(ROOT)), str(done), str(step))
        done = step
        out = work / "export.json"
        result = json.loads(run(env, "-c", CHILD, str(out)).stdout.strip().splitlines()[-1])
        pieces = step * 1000  # the payload batches hold 1,000 pieces each
        print(
            f"{step:>7}  {pieces:>6}  {result['seconds']:>8.1f}  "
            f"{pieces / result['seconds']:>8,.0f}  {out.stat().st_size / 1e6:>6.1f}  "
            f"{result['rss_mb']:>11.0f}"
        )


if __name__ == "__main__":
    main()
