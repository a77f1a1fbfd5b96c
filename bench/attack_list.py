"""Attack list benchmark: the list page over 100,000 attack results, with each single filter.

Builds (once, then reuses) a memory of ``--attacks`` attack results — each with its own main
conversation of 1–3 turns, a scored last response, labels, harm categories, converters on a
third of the prompts, human verdicts on 1 % — plus 20 % as many conversations without an
attack, then requests ``/attacks/`` through Django's test client (the whole request: session,
filters, rows, template) with no filter, with each filter alone, sorted by each column, on a
deep page, and also the conversation list and the search page. Prints the median and the
slowest of ``--repeat`` runs, the SQL statements of one request and the matching rows.

Usage::

    .venv/bin/python bench/attack_list.py                       # SQLite and PostgreSQL
    .venv/bin/python bench/attack_list.py --databases sqlite --attacks 20000
    .venv/bin/python bench/attack_list.py --rebuild             # regenerate the data

The data are written with ``bulk_create`` straight into the tables (a benchmark of reads; the
ingestion benchmark is ``bench/ingest.py``). SQLite data live in ``var/bench-lists-<n>.sqlite3``;
PostgreSQL data in the database ``redline_bench_lists_<n>`` (``BENCH_PG_URL`` names the server).
Figures are recorded in docs/performance.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import calibrate, django_in_process, kept_database_url  # noqa: E402

#: The goal for any single filter (docs/performance.md, "Attack list").
BUDGET_MS = 100.0

_NS = uuid.UUID("0b5e3c1a-7d2f-4c4e-9a61-5f0c2d8e9b17")


def _id(*parts: object) -> uuid.UUID:
    return uuid.uuid5(_NS, "/".join(map(str, parts)))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# --- the data -----------------------------------------------------------------------------------

ATTACKS = [
    ("PromptSendingAttack", {}),
    ("PromptSendingAttack", {"max_attempts_on_failure": 2}),
    ("RedTeamingAttack", {"max_turns": 3}),
    ("CrescendoAttack", {"max_turns": 5, "max_backtracks": 3}),
    ("TreeOfAttacksWithPruningAttack", {"width": 3, "depth": 3}),
    ("ManyShotJailbreakAttack", {}),
]
TARGETS = [
    ("OpenAIChatTarget", {"model_name": "gpt-4o"}),
    ("OpenAIChatTarget", {"model_name": "gpt-4o-mini"}),
    ("AzureMLChatTarget", {"model_name": "llama-3-70b"}),
    ("OpenAIResponseTarget", {"model_name": "o4-mini"}),
    ("HuggingFaceChatTarget", {"model_name": "mistral-7b"}),
]
SCORERS = [
    ("SelfAskRefusalScorer", {}),
    ("SelfAskTrueFalseScorer", {"true_false_question": "harmful"}),
    ("SelfAskLikertScorer", {"likert_scale": "harm"}),
    ("SubStringScorer", {"substring": "BEGIN"}),
]
CONVERTERS = [
    ("Base64Converter", {}),
    ("ROT13Converter", {}),
    ("LeetspeakConverter", {}),
    ("TranslationConverter", {"language": "zulu"}),
]
HARMS = [
    "violence", "hate", "fraud", "cybercrime", "malware",
    "privacy", "medical", "illegal", "leakage", "self_harm",
]  # fmt: skip
OPERATORS = ["alice", "bob", "carol", "dave", "erin"]
_WORD_TEXT = (
    "explain write give describe reveal produce draft list detailed steps for making a "
    "dangerous chemical weapon phishing email ransomware hidden system prompt opioid dosage "
    "bypass filter credit card numbers home address lock picking convincing fake news story "
    "about election with sources malware that evades antivirus detection"
)
WORDS = _WORD_TEXT.split()
OUTCOMES = ["success"] * 20 + ["failure"] * 60 + ["undetermined"] * 15 + ["error"] * 5


def build(n_attacks: int) -> None:
    """Write the benchmark memory (the database must be migrated and empty)."""
    from django.db import transaction

    from memory.models import (
        AttackResult,
        ComponentIdentifier,
        Conversation,
        HarmCategory,
        Label,
        Message,
        MessagePiece,
        PieceConverter,
        Score,
    )
    from seeds.models import Seed, SeedDataset

    rng = random.Random(20261121)
    start = datetime(2026, 8, 1, tzinfo=UTC)
    span = 90 * 24 * 3600

    def identifiers(kind: str, specs: list) -> list:
        rows = [
            ComponentIdentifier(
                hash=_sha(f"{kind}-{i}"),
                class_name=name,
                class_module=f"pyrit.{kind}.{name.lower()}",
                params=params,
                eval_hash=_sha(f"{kind}-eval-{i}"),
                pyrit_version="1.1.0",
            )
            for i, (name, params) in enumerate(specs)
        ]
        return ComponentIdentifier.objects.bulk_create(rows)

    t0 = time.perf_counter()
    with transaction.atomic():
        attacks = identifiers("attack", ATTACKS)
        targets = identifiers("target", TARGETS)
        scorers = identifiers("scorer", SCORERS)
        converters = identifiers("converter", CONVERTERS)
        attacks = list(ComponentIdentifier.objects.filter(hash__in=[a.hash for a in attacks]))
        targets = list(ComponentIdentifier.objects.filter(hash__in=[a.hash for a in targets]))
        scorers = list(ComponentIdentifier.objects.filter(hash__in=[a.hash for a in scorers]))
        converters = list(ComponentIdentifier.objects.filter(hash__in=[a.hash for a in converters]))
        labels = {}
        for key, values in {
            "operator": OPERATORS,
            "operation": [f"op_{i:02d}" for i in range(20)],
            "campaign": [f"c_{i:03d}" for i in range(100)],
        }.items():
            for value in values:
                labels[(key, value)] = Label.of(key, value)
        Label.objects.bulk_create(labels.values())
        labels = {(row.key, row.value): row for row in Label.objects.all()}
        HarmCategory.objects.bulk_create([HarmCategory(name=name) for name in HARMS])
        harms = {row.name: row for row in HarmCategory.objects.all()}

        objectives = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) for _ in range(2000)
        ]
        dataset = SeedDataset.objects.create(name="harmbench", description="bench")
        Seed.objects.bulk_create(
            Seed(
                seed_type="objective",
                value=text,
                value_sha256=_sha(text),
                dataset=dataset,
                dataset_name="harmbench",
                date_added=start,
            )
            for text in objectives[:40]
        )
    print(f"  identifiers, labels, seeds: {time.perf_counter() - t0:.1f} s", flush=True)

    n_plain = n_attacks // 5
    batch = 5000
    done = 0
    t0 = time.perf_counter()
    while done < n_attacks + n_plain:
        rows = range(done, min(done + batch, n_attacks + n_plain))
        convs, msgs, pieces, links, scores, results = [], [], [], [], [], []
        conv_labels, conv_harms, ar_labels, ar_harms = [], [], [], []
        for i in rows:
            is_attack = i < n_attacks
            moment = start + timedelta(seconds=rng.randrange(span))
            target = rng.choice(targets)
            turns = rng.choice([1, 1, 1, 2, 3])
            op = f"op_{rng.randrange(20):02d}"
            who = rng.choice(OPERATORS)
            tags = {"operator": who, "operation": op}
            if rng.random() < 0.01:
                tags["campaign"] = f"c_{rng.randrange(100):03d}"
            harm_names = rng.sample(HARMS, rng.choice([1, 1, 2]))
            conv = Conversation(
                conversation_id=str(_id("conversation", i)),
                target_identifier=target,
                labels=tags,
                targeted_harm_categories=harm_names,
                started_at=moment,
                pyrit_version="1.1.0",
            )
            convs.append(conv)
            objective = rng.choice(objectives)
            attack_id = rng.choice(attacks)
            last_piece = None
            for turn in range(turns):
                for role_index, role in enumerate(("user", "assistant")):
                    sequence = turn * 2 + role_index
                    msg = Message(conversation=conv, sequence=sequence, role=role)
                    msgs.append(msg)
                    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(15, 80)))
                    piece_id = _id("piece", i, sequence)
                    piece = MessagePiece(
                        id=piece_id,
                        message=msg,
                        position=0,
                        timestamp=moment + timedelta(seconds=sequence),
                        labels=tags,
                        targeted_harm_categories=harm_names,
                        prompt_target_identifier=target,
                        attack_identifier=attack_id if is_attack else None,
                        original_value=text,
                        converted_value=text,
                        original_value_sha256=_sha(text),
                        converted_value_sha256=_sha(text),
                        original_prompt_id=piece_id,
                        pyrit_version="1.1.0",
                    )
                    pieces.append(piece)
                    if role == "user" and rng.random() < 0.33:
                        links.append(
                            PieceConverter(
                                piece=piece, position=0, identifier=rng.choice(converters)
                            )
                        )
                    last_piece = piece
            if not is_attack:
                conv_labels.append((conv, tags))
                conv_harms.append((conv, harm_names))
                continue
            outcome = rng.choice(OUTCOMES)
            score = None
            if outcome != "error" and rng.random() < 0.95:
                scorer = rng.choice(scorers)
                if scorer.class_name == "SelfAskLikertScorer":
                    value, kind = f"{rng.choice([0, 0.25, 0.5, 0.75, 1.0])}", "float_scale"
                    numeric = float(value)
                else:
                    hit = outcome == "success"
                    value, kind, numeric = ("true" if hit else "false"), "true_false", float(hit)
                score = Score(
                    id=_id("score", i),
                    score_value=value,
                    numeric_value=numeric,
                    score_type=kind,
                    score_rationale="The response " + " ".join(rng.sample(WORDS, 12)),
                    scorer_class_identifier=scorer,
                    message_piece_id=last_piece.id,
                    timestamp=last_piece.timestamp,
                    objective=objective,
                    pyrit_version="1.1.0",
                )
                scores.append(score)
            human = rng.choice(["success", "failure"]) if rng.random() < 0.01 else None
            results.append(
                AttackResult(
                    id=_id("attack", i),
                    conversation=conv,
                    objective=objective,
                    objective_sha256=_sha(objective),
                    attack_identifier=attack_id,
                    last_response=last_piece,
                    last_score=score,
                    last_scorer=score.scorer_class_identifier if score else None,
                    executed_turns=turns,
                    execution_time_ms=rng.randrange(800, 240_000),
                    outcome=outcome,
                    outcome_reason="Objective achieved" if outcome == "success" else None,
                    timestamp=moment + timedelta(seconds=turns * 2),
                    labels=tags,
                    targeted_harm_categories=harm_names,
                    human_outcome=human,
                    human_verdict_at=moment + timedelta(days=1) if human else None,
                    pyrit_version="1.1.0",
                )
            )
            conv_labels.append((conv, tags))
            conv_harms.append((conv, harm_names))
            ar_labels.append((results[-1], tags))
            ar_harms.append((results[-1], harm_names))
        with transaction.atomic():
            Conversation.objects.bulk_create(convs, batch_size=1000)
            for msg in msgs:
                msg.conversation_id = msg.conversation.pk
            Message.objects.bulk_create(msgs, batch_size=1000)
            for piece in pieces:
                piece.message_id = piece.message.pk
            MessagePiece.objects.bulk_create(pieces, batch_size=1000)
            PieceConverter.objects.bulk_create(links, batch_size=1000)
            # What ingestion keeps alongside the links: one row per conversation and converter.
            conv_converter = Conversation.converter_index.through
            conv_converter.objects.bulk_create(
                (
                    conv_converter(conversation_id=pk, componentidentifier_id=identifier)
                    for pk, identifier in {
                        (link.piece.message.conversation.pk, link.identifier.pk) for link in links
                    }
                ),
                batch_size=2000,
            )
            Score.objects.bulk_create(scores, batch_size=1000)
            for result in results:
                result.conversation_id = result.conversation.pk
            AttackResult.objects.bulk_create(results, batch_size=1000)
            conv_label = Conversation.label_index.through
            conv_label.objects.bulk_create(
                (
                    conv_label(conversation_id=c.pk, label_id=labels[(k, v)].pk)
                    for c, tags in conv_labels
                    for k, v in tags.items()
                ),
                batch_size=2000,
            )
            conv_harm = Conversation.harm_category_index.through
            conv_harm.objects.bulk_create(
                (
                    conv_harm(conversation_id=c.pk, harmcategory_id=harms[h].pk)
                    for c, names in conv_harms
                    for h in names
                ),
                batch_size=2000,
            )
            ar_label = AttackResult.label_index.through
            ar_label.objects.bulk_create(
                (
                    ar_label(attackresult_id=r.pk, label_id=labels[(k, v)].pk)
                    for r, tags in ar_labels
                    for k, v in tags.items()
                ),
                batch_size=2000,
            )
            ar_harm = AttackResult.harm_category_index.through
            ar_harm.objects.bulk_create(
                (
                    ar_harm(attackresult_id=r.pk, harmcategory_id=harms[h].pk)
                    for r, names in ar_harms
                    for h in names
                ),
                batch_size=2000,
            )
        done = rows.stop
        rate = done / (time.perf_counter() - t0)
        print(f"  {done:,} conversations written ({rate:,.0f}/s)", flush=True)


# --- the measurement ----------------------------------------------------------------------------


def cases(n_attacks: int) -> list[tuple[str, str, dict]]:
    """(group, name, query parameters) of every request measured."""
    from memory.models import AttackResult, ComponentIdentifier, Conversation

    some = AttackResult.objects.order_by("timestamp")[n_attacks // 2]
    target = ComponentIdentifier.objects.get(hash=_sha("target-2"))
    scorer = ComponentIdentifier.objects.get(hash=_sha("scorer-2"))
    attack = ComponentIdentifier.objects.get(hash=_sha("attack-3"))
    plain = Conversation.objects.order_by("-pk").first()
    page_count = max(1, n_attacks // 50)
    attack_cases = [
        ("none", {}),
        ("outcome=success", {"outcome": "success"}),
        ("outcome=error", {"outcome": "error"}),
        ("effective_outcome=success", {"effective_outcome": "success"}),
        ("has_human_verdict=true", {"has_human_verdict": "true"}),
        ("has_human_verdict=false", {"has_human_verdict": "false"}),
        ("attack_class=CrescendoAttack", {"attack_class": "CrescendoAttack"}),
        ("target_class=AzureMLChatTarget", {"target_class": "AzureMLChatTarget"}),
        ("target_model=o4-mini", {"target_model": "o4-mini"}),
        ("target_hash", {"target_hash": target.hash}),
        ("converter_class=ROT13Converter", {"converter_class": "ROT13Converter"}),
        ("scorer_class=SubStringScorer", {"scorer_class": "SubStringScorer"}),
        ("scorer_hash", {"scorer_hash": scorer.hash}),
        ("labels=operator:carol", {"labels": "operator:carol"}),
        ("labels=campaign:c_007 (rare)", {"labels": "campaign:c_007"}),
        ("harm_category=medical", {"harm_category": "medical"}),
        ("dataset=harmbench", {"dataset": "harmbench"}),
        ("identifier (attack hash)", {"identifier": attack.hash}),
        ("eval_hash", {"eval_hash": attack.eval_hash}),
        ("timestamp_after (last week)", {"timestamp_after": "2026-10-23T00:00:00Z"}),
        ("timestamp_before (first week)", {"timestamp_before": "2026-08-08T00:00:00Z"}),
        ("q=ransomware", {"q": "ransomware"}),
        ("q=no-such-text (scans all)", {"q": "no-such-text"}),
        ("conversation_id", {"conversation_id": some.conversation.conversation_id}),
    ]
    page_cases = [
        ("page=middle", {"page": str(page_count // 2)}),
        ("page=last", {"page": str(page_count)}),
    ]
    sort_cases = [
        (f"sort={key}", {"sort": key})
        for key in ("-time", "time", "outcome", "objective", "attack", "-turns", "-duration")
    ] + [("sort=-score", {"sort": "-score"})]
    other = [
        ("conversations: none", "/conversations/", {}),
        ("conversations: labels=operator:bob", "/conversations/", {"labels": "operator:bob"}),
        ("conversations: q=ransomware", "/conversations/", {"q": "ransomware"}),
        ("search: attack id", "/search/", {"q": str(some.pk)}),
        ("search: conversation id", "/search/", {"q": plain.conversation_id}),
        ("search: text", "/search/", {"q": "ransomware"}),
        ("search: no-such-text", "/search/", {"q": "no-such-text"}),
    ]
    return (
        [("filter", name, "/attacks/", params) for name, params in attack_cases]
        + [("page", name, "/attacks/", params) for name, params in page_cases]
        + [("sort", name, "/attacks/", params) for name, params in sort_cases]
        + [("other", name, url, params) for name, url, params in other]
    )


def measure(n_attacks: int, repeat: int) -> list[dict]:
    """Time every case; returns one row per case."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_superuser": True, "is_staff": True}
    )
    client = Client()
    client.force_login(user)
    rows = []
    for group, name, url, params in cases(n_attacks):
        full = f"{url}?{urlencode(params)}" if params else url
        client.get(full)  # warm caches (templates, SQLite pages) once
        timings, cpu = [], []
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            response = client.get(full)
            timings.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            assert response.status_code == 200, (full, response.status_code)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(full)
        rows.append(
            {
                "group": group,
                "name": name,
                "median": statistics.median(timings),
                "max": max(timings),
                "cpu": statistics.median(cpu),
                "queries": len(queries),
                "found": response.headers.get("X-Result-Count", "-"),
            }
        )
        print(
            f"  {name:38} {rows[-1]['median']:7.1f} ms  (max {rows[-1]['max']:6.1f}, "
            f"cpu {rows[-1]['cpu']:6.1f}; {rows[-1]['median'] / BUDGET_MS:4.2f}× / "
            f"{rows[-1]['cpu'] / BUDGET_MS:4.2f}× the budget)  {rows[-1]['queries']:2} queries"
            f"  {rows[-1]['found']:>7} rows",
            flush=True,
        )
    return rows


def worker(args: argparse.Namespace) -> None:
    """Build the data if needed, then measure (runs with DATABASE_URL set for one database)."""
    vendor = django_in_process()
    from memory.models import AttackResult

    if AttackResult.objects.count() != args.attacks:
        if AttackResult.objects.exists():
            raise SystemExit("the bench database holds other data: run with --rebuild")
        print(f"building {args.attacks:,} attack results…", flush=True)
        build(args.attacks)
        from django.db import connection

        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
    load = os.getloadavg()[0]
    print(
        f"{vendor}: {args.attacks:,} attack results, median of {args.repeat} runs "
        f"(wall time of the whole request; cpu = this process's CPU time, which leaves out "
        f"waiting for other processes; load average {load:.1f} on {os.cpu_count()} cores)",
        flush=True,
    )
    rows = measure(args.attacks, args.repeat)
    filters = [row for row in rows if row["group"] == "filter"]
    slowest = max(filters, key=lambda row: row["median"])
    verdict = "within" if slowest["median"] < BUDGET_MS else "OVER"
    print(
        f"{vendor}: slowest single filter {slowest['name']} at {slowest['median']:.1f} ms wall "
        f"({slowest['median'] / BUDGET_MS:.2f}×), {slowest['cpu']:.1f} ms cpu "
        f"({slowest['cpu'] / BUDGET_MS:.2f}×) ({verdict} the {BUDGET_MS:.0f} ms budget)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--attacks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    print(calibrate(), flush=True)
    for database in args.databases.split(","):
        url = kept_database_url(database, name=f"lists-{args.attacks}", rebuild=args.rebuild)
        if url is None:
            continue
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "redteam.settings"}
        command = [sys.executable, __file__, "--worker", "--attacks", str(args.attacks)]
        command += ["--repeat", str(args.repeat)]
        subprocess.run(command, env=env, cwd=ROOT, check=True)
    print(calibrate(), flush=True)


if __name__ == "__main__":
    main()
