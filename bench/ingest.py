"""Ingestion benchmark: a real gunicorn server, a real token, batches of PyRIT JSON over HTTP.

Posts 10,000 pieces with 10,000 scores and 1,000 attack results in batches of 1,000 pieces,
then posts the same batches again, and prints pieces/s and SQL statements per batch for both
passes, on SQLite and (when reachable) PostgreSQL. It also prints the server's CPU time (the
gunicorn workers' user + system time, read from ``/proc``) and pieces per server CPU-second:
on a virtual machine shared with other guests the wall clock drifts by ±25 % from one
minute to the next, the CPU time much less. After each round it prints every database's
figures as a ratio of the first one's (PostgreSQL ÷ SQLite), and the calibration loop before
and after the run. Usage::

    .venv/bin/python bench/ingest.py                    # both databases
    .venv/bin/python bench/ingest.py --rounds 3         # both, three times, interleaved
    .venv/bin/python bench/ingest.py --databases sqlite --batches 5 --batch-pieces 500

Figures and the machine they came from are recorded in docs/performance.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import serving  # noqa: E402
from bench.payloads import batch  # noqa: E402


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its children (gunicorn's workers);
    NaN where ``/proc`` is not available."""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        total = 0.0
        for child in [pid, *map(int, children)]:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        return total
    except (OSError, ValueError, IndexError):
        return float("nan")


def run(database: str, bodies: list[bytes], pieces_per_batch: int, workers: int) -> list[dict]:
    """Start a server on ``database`` and time both passes; returns one row per pass."""
    with serving(database, workers=workers) as server:
        if server is None:
            return []
        return [
            _pass(server.port, server.token, bodies, pieces_per_batch, label, server.pid)
            for label in ("first", "re-post")
        ]


def _pass(
    port: int, token: str, bodies: list[bytes], pieces_per_batch: int, label: str, server: int
) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    cpu_before = _cpu_seconds(server)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    seconds, queries, counts = [], [], {"created": 0, "unchanged": 0, "updated": 0}
    for body in bodies:
        started = time.perf_counter()
        conn.request("POST", "/api/v1/ingest/", body=body, headers=headers)
        response = conn.getresponse()
        payload = response.read()
        seconds.append(time.perf_counter() - started)
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {payload[:500]!r}")
        queries.append(int(response.getheader("X-Query-Count", "0")))
        for key in counts:
            counts[key] += json.loads(payload)["counts"]["message_pieces"][key]
    total = sum(seconds)
    cpu = _cpu_seconds(server) - cpu_before
    pieces = pieces_per_batch * len(bodies)
    return {
        "pass": label,
        "pieces": pieces,
        "seconds": total,
        "pieces_per_s": pieces / total,
        "server_cpu": cpu,
        "pieces_per_cpu_s": pieces / cpu if cpu > 0 else float("nan"),
        "batch_ms_median": statistics.median(seconds) * 1000,
        "queries": sorted(set(queries)),
        "pieces_created": counts["created"],
        "pieces_unchanged": counts["unchanged"],
    }


def calibration_ms() -> float:
    """The machine's speed now: best of ``python -m timeit "sum(i*i for i in range(2_000_000))"``
    in milliseconds, to record beside the figures."""
    out = subprocess.run(
        [sys.executable, "-m", "timeit", "sum(i*i for i in range(2_000_000))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    number, unit = out.split(":", 1)[1].split()[:2]
    return float(number) * {"sec": 1000.0, "msec": 1.0, "usec": 0.001}[unit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--batch-pieces", type=int, default=1000, help="pieces per batch")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument(
        "--rounds", type=int, default=1, help="run every database this many times, interleaved"
    )
    args = parser.parse_args()
    turns = 10
    conversations = args.batch_pieces // turns
    bodies = [
        json.dumps(batch(i, conversations=conversations, turns=turns)).encode()
        for i in range(args.batches)
    ]
    databases = args.databases.split(",")
    print(
        f"{args.batches} batches × ({args.batch_pieces} pieces + {args.batch_pieces} scores + "
        f"{conversations} attack results), {sum(map(len, bodies)) / 1e6:.1f} MB of JSON; "
        f"gunicorn with {args.workers} workers; {os.cpu_count()} CPUs; "
        f"calibration loop {calibration_ms():.0f} ms"
    )
    print(
        f"{'database':<10} {'pass':<8} {'pieces/s':>9} {'median batch':>13} {'server CPU':>11} "
        f"{'pieces/CPU-s':>13} {'queries/batch':>14}"
    )
    for _ in range(args.rounds):
        measured: dict[tuple[str, str], dict] = {}
        for database in databases:
            for row in run(database, bodies, args.batch_pieces, args.workers):
                measured[database, row["pass"]] = row
                queries = "–".join(map(str, (row["queries"][0], row["queries"][-1])))
                if len(row["queries"]) == 1:
                    queries = str(row["queries"][0])
                print(
                    f"{database:<10} {row['pass']:<8} {row['pieces_per_s']:>9.0f} "
                    f"{row['batch_ms_median']:>10.0f} ms {row['server_cpu']:>9.2f} s "
                    f"{row['pieces_per_cpu_s']:>13.0f} {queries:>14}"
                    f"   (created {row['pieces_created']}, unchanged {row['pieces_unchanged']})"
                )
        _print_ratios(measured, databases)
    print(f"calibration loop after the run: {calibration_ms():.0f} ms")


def _print_ratios(measured: dict[tuple[str, str], dict], databases: list[str]) -> None:
    """Each other database's figures against the first one's (PostgreSQL ÷ SQLite), this round."""
    base = databases[0]
    for database in databases[1:]:
        for label in ("first", "re-post"):
            peer, own = measured.get((base, label)), measured.get((database, label))
            if peer is None or own is None:
                continue
            wall = own["pieces_per_s"] / peer["pieces_per_s"]
            cpu = own["pieces_per_cpu_s"] / peer["pieces_per_cpu_s"]
            print(
                f"{database} ÷ {base}, {label}: pieces/s {wall:.2f}×, "
                f"pieces per server CPU-s {cpu:.2f}×"
            )


if __name__ == "__main__":
    main()
