"""Push benchmark: ``redline-push`` of bench/import.py's PyRIT file against ``import_pyrit`` of it.

Generates the same PyRIT 1.1.0-shaped database as ``bench/import.py`` (by default 10,000
conversations, 100,000 pieces, 50,000 scores, 10,000 attack results: 170,000 rows), imports
it with ``manage.py import_pyrit`` into a fresh Redline database, then pushes it with the
``redline-push`` client (a child process) to a fresh Redline served by gunicorn (production
settings, two workers) on the same machine, and prints rows/s of both first passes, their
ratio (the target: the push at least half as fast as the local import), and a second push
(nothing to send). Usage::

    .venv/bin/python bench/push.py                          # SQLite
    .venv/bin/python bench/push.py --databases sqlite,postgres
    .venv/bin/python bench/push.py --conversations 1000     # a smaller file
    .venv/bin/python bench/push.py --batch-rows 5000        # the client's batch size

Figures and the machine they came from are recorded in docs/performance.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import serving  # noqa: E402

bench_import = importlib.import_module("bench.import")


def push(url: str, token: str, db: Path, state: Path, batch_rows: int) -> tuple[float, str]:
    """Run ``redline-push`` once in a child; wall seconds and its output."""
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "redline_push",
            "--url",
            url,
            "--state",
            str(state),
            "--batch-rows",
            str(batch_rows),
            str(db),
        ],
        env={**os.environ, "REDLINE_TOKEN": token},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(result.stdout[-3000:] + result.stderr[-3000:])
    return seconds, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite")
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=10, help="pieces per conversation")
    parser.add_argument("--batch-rows", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-bench-push-") as tmp:
        db = Path(tmp) / "pyrit.db"
        counts = bench_import.generate(db, conversations=args.conversations, turns=args.turns)
        rows = sum(counts.values())
        load = os.getloadavg()
        print(
            f"source: {db.stat().st_size / 1e6:.0f} MB, {rows:,} rows; {os.cpu_count()} CPUs, "
            f"load {load[0]:.1f} {load[1]:.1f}; client batches of {args.batch_rows:,} rows"
        )
        print(f"{'database':<10} {'what':<22} {'seconds':>8} {'rows/s':>9}")
        for database in args.databases.split(","):
            imported = bench_import.run(database, db, rows)
            if not imported:
                print(f"{database:<10} (unreachable)")
                continue
            first = imported[0]
            print(
                f"{database:<10} {'import_pyrit, first':<22} {first['seconds']:>8.1f} "
                f"{first['rows_per_s']:>9,.0f}"
            )
            with serving(database, workers=2) as server:
                if server is None:
                    continue
                url = f"http://127.0.0.1:{server.port}"
                state = Path(tmp) / f"state-{database}.sqlite3"
                seconds, out = push(url, server.token, db, state, args.batch_rows)
                created = re.search(r"message_pieces\s+([\d,]+)", out)
                print(
                    f"{database:<10} {'redline-push, first':<22} {seconds:>8.1f} "
                    f"{rows / seconds:>9,.0f}   (pieces created "
                    f"{created.group(1) if created else '?'}; "
                    f"{first['seconds'] / seconds:.2f}× the import's rate)"
                )
                again, out = push(url, server.token, db, state, args.batch_rows)
                sent = "nothing sent" if ", 0 batches" in out else "rows sent again!"
                print(
                    f"{database:<10} {'redline-push, again':<22} {again:>8.1f} {'':>9}   ({sent})"
                )


if __name__ == "__main__":
    main()
