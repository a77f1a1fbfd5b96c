"""Read API benchmark: the piece list at 1,000,000 pieces, and the attack list on the same data.

Reuses the dashboards benchmark's synthetic red team (``bench/dashboards.py``: 100,000 attack
results, ~1,000,000 pieces, 280,000 scores, most of them by scorers whose scores are never an
attack's last score), generated once and kept: ``var/bench-readapi-<attacks>.sqlite3`` and the
PostgreSQL database ``redline_bench_readapi_<attacks>`` (``--rebuild`` makes them again). Then
it requests, through Django's test client (session, permissions, queries, rendering):

* ``/api/v1/message-pieces/?limit=100``: the first page, the next (its ``next`` cursor), a page
  of 1,000, and the first page under each kind of filter; target 50 ms for a page of 100;
* ``/attacks/`` unfiltered and with the scorer filter (target 100 ms), with the scorer
  choices cached (the usual case) and just after a write (the first request after one).

Each figure is the median of ``--repeat`` runs, wall and CPU (this process: on SQLite the
database's work too; on a shared machine the steadier one), with its ratio to the target, the
number of SQL statements, and the calibration loop before and after.

Usage::

    .venv/bin/python bench/read_api.py                    # SQLite and PostgreSQL
    .venv/bin/python bench/read_api.py --databases sqlite --repeat 9

Figures are recorded in docs/performance.md ("Read API", "Attack list").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import calibrate, django_in_process, kept_database_url  # noqa: E402

PIECES_TARGET_MS = 50.0
ATTACKS_TARGET_MS = 100.0


def _cases() -> list[tuple[str, str, float]]:
    """(name, URL, target ms) of every request timed."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from memory.models import Conversation

    conversation = Conversation.objects.order_by("pk")[Conversation.objects.count() // 2]
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    first = client.get("/api/v1/message-pieces/", {"limit": 100}).json()
    pieces = "/api/v1/message-pieces/"
    week_ago = (datetime.now(UTC) - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        ("pieces: limit=100", f"{pieces}?limit=100", PIECES_TARGET_MS),
        ("pieces: limit=100, next page", first["next"], PIECES_TARGET_MS),
        ("pieces: limit=1000", f"{pieces}?limit=1000", PIECES_TARGET_MS * 10),
        (
            "pieces: conversation_id",
            f"{pieces}?limit=100&conversation_id={conversation.conversation_id}",
            PIECES_TARGET_MS,
        ),
        *(
            (f"pieces: {query}", f"{pieces}?limit=100&{query}", PIECES_TARGET_MS)
            for query in (
                "labels=operator:alice",
                "attack_class=CrescendoAttack",
                f"timestamp_before={week_ago}",
                "role=user",
                "response_error=blocked",
            )
        ),
        ("attacks: none", "/attacks/", ATTACKS_TARGET_MS),
        ("attacks: scorer_class", "/attacks/?scorer_class=SubStringScorer", ATTACKS_TARGET_MS),
    ]


def measure(repeat: int) -> list[dict]:
    """Time every case; one row each."""
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client

    from bench.dashboards import QueryCounter

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_superuser": True, "is_staff": True}
    )
    client = Client()
    client.force_login(user)
    rows = []
    cases = _cases()
    cases.append(("attacks: none, just after a write", "/attacks/", ATTACKS_TARGET_MS))
    for name, url, target in cases:
        client.get(url)
        wall, cpu = [], []
        for _ in range(repeat):
            if "after a write" in name:
                cache.clear()  # what a write does to the scorer choices' key
            t0, c0 = time.perf_counter(), time.process_time()
            response = client.get(url)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        counter = QueryCounter()
        with connection.execute_wrapper(counter):
            client.get(url)
        row = {
            "name": name,
            "median": statistics.median(wall),
            "cpu": statistics.median(cpu),
            "target": target,
            "queries": counter.count,
            "kb": len(response.content) / 1024,
        }
        rows.append(row)
        verdict = "within" if row["median"] < target else "OVER"
        print(
            f"  {name:40} {row['median']:7.1f} ms wall {row['median'] / target:5.2f}× target "
            f"({target:.0f} ms, {verdict}); {row['cpu']:7.1f} ms CPU "
            f"{row['cpu'] / target:5.2f}×; {row['queries']:2} queries {row['kb']:5.0f} KiB",
            flush=True,
        )
    return rows


def worker(args: argparse.Namespace) -> None:
    vendor = django_in_process()
    from memory.models import AttackResult

    if not AttackResult.objects.exists():
        from bench.dashboards import generate

        started = time.perf_counter()
        counts = generate(attacks=args.attacks, pieces=args.pieces)
        print(
            f"  generated in {time.perf_counter() - started:.0f} s: "
            + ", ".join(f"{v:,} {k}" for k, v in counts.items()),
            flush=True,
        )
    from memory.models import MessagePiece

    print(
        f"{vendor}: {AttackResult.objects.count():,} attack results, "
        f"{MessagePiece.objects.count():,} pieces; median of {args.repeat} runs; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
        flush=True,
    )
    measure(args.repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--attacks", type=int, default=100_000)
    parser.add_argument("--pieces", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    print(calibrate(), flush=True)
    for database in args.databases.split(","):
        url = kept_database_url(database, name=f"readapi-{args.attacks}", rebuild=args.rebuild)
        if url is None:
            continue
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "redteam.settings"}
        command = [sys.executable, __file__, "--worker", "--attacks", str(args.attacks)]
        command += ["--pieces", str(args.pieces), "--repeat", str(args.repeat)]
        subprocess.run(command, env=env, cwd=ROOT, check=True)
    print(calibrate(), flush=True)


if __name__ == "__main__":
    main()
