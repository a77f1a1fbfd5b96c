"""Framework crosswalk benchmark: the OWASP / ATLAS / NIST dashboard widgets and the
``framework=`` drill-down, each against its peer measured in the same run.

Uses the dashboard benchmark's synthetic red team (``bench/dashboards.py``: 12 harm
categories, 6 attack classes, one or two harms per objective). Peers: the harm-category
widget (the one-query breakdown the framework widgets replace for a reader) and the
attack-class widget (two queries); for the filter, the attack list's count with
``harm_category=privacy``. Prints the calibration loop first, then per database each figure
in milliseconds (median of ``--repeat``) and as a ratio to its peer. Usage::

    .venv/bin/python bench/crosswalk.py --attacks 20000 --pieces 200000
    .venv/bin/python bench/crosswalk.py --databases sqlite --attacks 5000 --pieces 50000

Databases are ``var/bench-crosswalk-<attacks>.sqlite3`` and PostgreSQL
``redline_bench_crosswalk_<attacks>``, kept with ``--keep``. Figures: docs/dashboards.md.
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

from bench.common import pg_database  # noqa: E402


def _median_ms(fn, repeat: int) -> float:
    fn()  # warm: caches, statement preparation
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs)


def _child(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "redteam.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.http import QueryDict

    from bench.dashboards import generate
    from memory.dashboards.widgets import DashboardRequest
    from memory.models import AttackResult
    from memory.storage import aggregates as ag
    from memory.storage.crosswalk import crosswalk_load
    from memory.storage.filters import AttackResultFilter

    call_command("migrate", verbosity=0)
    crosswalk_load()
    if not AttackResult.objects.exists():
        started = time.perf_counter()
        counts = generate(attacks=args.attacks, pieces=args.pieces)
        print(f"  generated in {time.perf_counter() - started:.0f} s: {counts['attacks']:,}")
    vendor = connection.vendor

    def widget(name: str, query: str = "") -> float:
        def run() -> None:
            # A fresh request each time: the framework tally is cached per scope.
            request = DashboardRequest.from_query(QueryDict(query))
            ag.breakdown(request.scope, name)

        return _median_ms(run, args.repeat)

    def three(query: str = "") -> float:
        def run() -> None:
            request = DashboardRequest.from_query(QueryDict(query))
            for name in ("owasp", "atlas", "nist"):
                ag.breakdown(request.scope, name)

        return _median_ms(run, args.repeat)

    def count(query: str) -> float:
        def run() -> None:
            AttackResultFilter(QueryDict(query), queryset=AttackResult.objects.all()).qs.count()

        return _median_ms(run, args.repeat)

    rows: list[tuple[str, float, str, float]] = []
    for scope, query in (("all", ""), ("label", "labels=operation:op_red_fox")):
        harm = widget("harm_category", query)
        klass = widget("attack_class", query)
        rows.append((f"{scope}: harm category widget (peer)", harm, "", 0))
        rows.append((f"{scope}: attack class widget (peer)", klass, "", 0))
        rows.append((f"{scope}: OWASP widget", widget("owasp", query), "harm", harm))
        rows.append((f"{scope}: OWASP + ATLAS + NIST", three(query), "harm", harm))
    peer = count("harm_category=privacy")
    rows.append(("list count harm_category=privacy (peer)", peer, "", 0))
    for tag in ("owasp-llm:LLM02", "owasp-llm:LLM01", "atlas:AML.T0054"):
        rows.append((f"list count framework={tag}", count(f"framework={tag}"), "filter", peer))
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name, ms, against, base in rows:
        ratio = f"{ms / base:5.2f}x {against} peer" if base else ""
        print(f"{vendor:<10} {name:<44} {ms:8.1f} ms  {ratio}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--attacks", type=int, default=20_000)
    parser.add_argument("--pieces", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    calibration = subprocess.run(
        [sys.executable, "-m", "timeit", "sum(i*i for i in range(2_000_000))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"calibration (timeit sum of squares to 2,000,000): {calibration}")
    for database in args.databases.split(","):
        env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "bench-only-" + "x" * 50}
        env["ALLOWED_HOSTS"], env["LOG_LEVEL"] = "testserver", "WARNING"
        sqlite_path = ROOT / "var" / f"bench-crosswalk-{args.attacks}.sqlite3"
        pg_name = f"redline_bench_crosswalk_{args.attacks}"
        if database == "sqlite":
            if not args.keep:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{sqlite_path}{suffix}").unlink(missing_ok=True)
            env["DATABASE_URL"] = f"sqlite:///{sqlite_path}"
        else:
            if not args.keep:
                pg_database(pg_name, create=False)
            url = pg_database(pg_name, fresh=False)
            if url is None:
                continue
            env["DATABASE_URL"] = url
        print(f"--- {database}", flush=True)
        subprocess.run([sys.executable, __file__, "--child", *_forward(args)], env=env, check=True)
        if not args.keep and database != "sqlite":
            pg_database(pg_name, create=False)


def _forward(args: argparse.Namespace) -> list[str]:
    return [
        "--attacks",
        str(args.attacks),
        "--pieces",
        str(args.pieces),
        "--repeat",
        str(args.repeat),
    ]


if __name__ == "__main__":
    main()
