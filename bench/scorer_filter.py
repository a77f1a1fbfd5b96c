"""Scorer filter benchmark: ``/attacks/`` with ``scorer_class`` / ``scorer_hash`` at 100,000
attacks, against its peer in the same process: the single join through the last score.

Runs on the data the other read benchmarks keep (build them with ``bench/attack_list.py``
and ``bench/read_api.py``): ``var/bench-lists-<n>.sqlite3``, ``var/bench-readapi-<n>.sqlite3``
and the PostgreSQL database ``redline_bench_readapi_<n>``, or on ``--url`` databases. For each
case it times the page with the shipped filter and with the peer swapped in, interleaved (two
rounds of ``--repeat``), and prints median wall and CPU time with their ratio to the 100 ms
budget, the queries and the rows found (which must agree), and the calibration loop before
and after.

Usage::

    .venv/bin/python bench/scorer_filter.py                 # the three kept databases
    .venv/bin/python bench/scorer_filter.py --url sqlite:///var/bench-lists-100000.sqlite3

Figures are recorded in docs/performance.md ("Attack list").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import calibrate, django_in_process, kept_database_url  # noqa: E402

BUDGET_MS = 100.0


def single_join(self, qs, name: str, value: str):
    """The peer: the last score's scorer through one join, for every use."""
    if not value:
        return qs
    field = "class_name" if name == "scorer_class" else "hash"
    return qs.filter(**{f"last_score__scorer_class_identifier__{field}": value})


def worker(repeat: int) -> None:
    vendor = django_in_process()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from memory.models import AttackResult, ComponentIdentifier
    from memory.storage.filters import AttackResultFilter

    shipped = AttackResultFilter.filter_last_scorer
    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_superuser": True, "is_staff": True}
    )
    client = Client()
    client.force_login(user)
    sub = ComponentIdentifier.objects.filter(class_name="SubStringScorer").order_by("pk").first()
    cases = [
        ("none", "/attacks/"),
        ("scorer_class=SubStringScorer", "/attacks/?scorer_class=SubStringScorer"),
        ("scorer_hash (SubStringScorer)", f"/attacks/?scorer_hash={sub.hash}"),
        ("scorer_class=SelfAskRefusalScorer", "/attacks/?scorer_class=SelfAskRefusalScorer"),
        ("scorer_class, sort=objective", "/attacks/?scorer_class=SubStringScorer&sort=objective"),
    ]
    print(
        f"{vendor}: {AttackResult.objects.count():,} attacks; median of 2 × {repeat} "
        f"interleaved; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
        flush=True,
    )
    for label, url in cases:
        wall: dict[str, list[float]] = {"join": [], "shipped": []}
        cpu: dict[str, list[float]] = {"join": [], "shipped": []}
        seen: dict[str, tuple[int, str]] = {}
        for _ in range(2):
            for variant, method in (("join", single_join), ("shipped", shipped)):
                AttackResultFilter.filter_last_scorer = method
                client.get(url)
                for _ in range(repeat):
                    t0, c0 = time.perf_counter(), time.process_time()
                    response = client.get(url)
                    wall[variant].append((time.perf_counter() - t0) * 1000)
                    cpu[variant].append((time.process_time() - c0) * 1000)
                    assert response.status_code == 200, url
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(url)
                seen[variant] = (len(queries), response.headers.get("X-Result-Count", "-"))
        AttackResultFilter.filter_last_scorer = shipped
        assert seen["join"][1] == seen["shipped"][1], (label, seen)
        line = f"  {label:34}"
        for variant in ("join", "shipped"):
            w, c = statistics.median(wall[variant]), statistics.median(cpu[variant])
            line += (
                f" | {variant}: {w:6.1f} / {c:6.1f} ms wall/CPU ({w / BUDGET_MS:4.2f}× / "
                f"{c / BUDGET_MS:4.2f}× budget), {seen[variant][0]} queries"
            )
        print(f"{line} | {seen['shipped'][1]} rows", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attacks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--url", action="append", help="a database URL (repeatable)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.repeat)
        return
    urls = args.url or [
        kept_database_url("sqlite", name=f"lists-{args.attacks}"),
        kept_database_url("sqlite", name=f"readapi-{args.attacks}"),
        kept_database_url("postgresql", name=f"readapi-{args.attacks}"),
    ]
    print(calibrate(), flush=True)
    for url in urls:
        if url is None:
            continue
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "redteam.settings"}
        command = [sys.executable, __file__, "--worker", "--repeat", str(args.repeat)]
        subprocess.run(command, env=env, cwd=ROOT, check=True)
    print(calibrate(), flush=True)


if __name__ == "__main__":
    main()
