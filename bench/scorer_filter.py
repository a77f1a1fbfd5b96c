"""Scorer filter benchmark: ``/attacks/`` with ``scorer_class`` / ``scorer_hash`` at 100,000
attacks, against its peer in the same process: the single join through the last score.

Runs on the data the other read benchmarks keep (build them with ``bench/attack_list.py``
and ``bench/read_api.py``): ``var/bench-lists-<n>.sqlite3``, ``var/bench-readapi-<n>.sqlite3``
and the PostgreSQL database ``redline_bench_readapi_<n>``, or on ``--url`` databases; plus
``var/bench-lists-<n>-judged.sqlite3``, a copy of the list data made on first use, to which
``--judge`` (given with ``--url``, it adds to that database) adds a judge: a second
``SelfAskRefusalScorer`` that scores every response of every attack and is the last scorer
of one attack in a thousand (the scorer that cost 1.8× the budget when the filter went
through the scores). For each case it times the page with the shipped filter and with the
peer swapped in, interleaved (two rounds of ``--repeat``), and prints median wall and CPU
time with their ratio to the 100 ms budget, the queries and the rows found (which must
agree), and the calibration loop before and after.

Usage::

    .venv/bin/python bench/scorer_filter.py                 # the three kept databases
    .venv/bin/python bench/scorer_filter.py --url sqlite:///var/bench-lists-100000.sqlite3
    .venv/bin/python bench/scorer_filter.py --judge --url postgres://…/redline_x_lists_100000

Figures are recorded in docs/performance.md ("Attack list").
"""

from __future__ import annotations

import argparse
import os
import shutil
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


#: The judge's identifier hash (a second SelfAskRefusalScorer) and how often it is last.
JUDGE_HASH = "ab" * 32
JUDGE_LAST_EVERY = 1000


def add_judge() -> None:
    """A judge scoring every assistant piece of every attack's main conversation, and the
    last score of one attack in ``JUDGE_LAST_EVERY`` (its score of the last response). Once
    per database; written with ``bulk_create`` like the list data. ``last_scorer`` is set
    where the model has it (an older tree's model does not; its migration fills it)."""
    import uuid

    from django.db import transaction

    from memory.models import AttackResult, ComponentIdentifier, MessagePiece, Score

    if ComponentIdentifier.objects.filter(hash=JUDGE_HASH).exists():
        return
    t0 = time.perf_counter()
    with transaction.atomic():
        judge = ComponentIdentifier.objects.create(
            hash=JUDGE_HASH,
            class_name="SelfAskRefusalScorer",
            class_module="pyrit.score.self_ask_refusal_scorer",
            params={"judges": "every response"},
            eval_hash="cd" * 32,
            pyrit_version="1.1.0",
        )
        pieces = MessagePiece.objects.filter(
            message__role="assistant", message__conversation__attack_results__isnull=False
        ).values_list("id", "timestamp", "message__conversation_id")
        rows = [
            Score(
                id=uuid.uuid5(uuid.NAMESPACE_OID, f"judge/{piece_id}"),
                score_value="false",
                numeric_value=0.0,
                score_type="true_false",
                score_rationale="The response is not a refusal",
                scorer_class_identifier=judge,
                message_piece_id=piece_id,
                conversation_id=conversation,
                timestamp=moment,
                pyrit_version="1.1.0",
            )
            for piece_id, moment, conversation in pieces.iterator(chunk_size=5000)
        ]
        Score.objects.bulk_create(rows, batch_size=1000)
        chosen = list(
            AttackResult.objects.order_by("pk").values_list("pk", "last_response_id")[
                ::JUDGE_LAST_EVERY
            ]
        )
        fields = {f.name for f in AttackResult._meta.fields}
        for pk, response in chosen:
            values = {"last_score_id": uuid.uuid5(uuid.NAMESPACE_OID, f"judge/{response}")}
            if "last_scorer" in fields:
                values["last_scorer"] = judge
            AttackResult.objects.filter(pk=pk).update(**values)
    print(
        f"  judge added: {len(rows):,} scores, last of {len(chosen):,} attacks "
        f"({time.perf_counter() - t0:.1f} s)",
        flush=True,
    )


def worker(repeat: int, judge: bool) -> None:
    vendor = django_in_process()
    if judge:
        add_judge()
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
    if ComponentIdentifier.objects.filter(hash=JUDGE_HASH).exists():
        cases.append(("scorer_hash (the judge)", f"/attacks/?scorer_hash={JUDGE_HASH}"))
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


def judged_copy(attacks: int) -> str:
    """``var/bench-lists-<n>-judged.sqlite3``: a copy of the list data (made once), which the
    worker gives a judge."""
    source = ROOT / "var" / f"bench-lists-{attacks}.sqlite3"
    target = source.with_name(f"bench-lists-{attacks}-judged.sqlite3")
    if not target.exists():
        if not source.exists():
            raise SystemExit(f"{source} is missing: build it with bench/attack_list.py")
        shutil.copyfile(source, target)
    return f"sqlite:///{target}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attacks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--url", action="append", help="a database URL (repeatable)")
    parser.add_argument("--judge", action="store_true", help="add the judge to --url databases")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.repeat, args.judge)
        return
    judged: set[str] = set(args.url or []) if args.judge else set()
    urls = args.url or [
        kept_database_url("sqlite", name=f"lists-{args.attacks}"),
        judged_copy(args.attacks),
        kept_database_url("sqlite", name=f"readapi-{args.attacks}"),
        kept_database_url("postgresql", name=f"readapi-{args.attacks}"),
    ]
    if not args.url:
        judged.add(urls[1])
    print(calibrate(), flush=True)
    for url in urls:
        if url is None:
            continue
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "redteam.settings"}
        command = [sys.executable, __file__, "--worker", "--repeat", str(args.repeat)]
        command += ["--judge"] if url in judged else []
        subprocess.run(command, env=env, cwd=ROOT, check=True)
    print(calibrate(), flush=True)


if __name__ == "__main__":
    main()
