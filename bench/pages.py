"""Attack page benchmark: one attack whose conversation has 1,000 pieces and 2,000 scores.

Writes (through the ingestion service, like every write path) one attack result whose main
conversation has ``--pieces`` pieces in messages of two pieces (user prompts run through
Base64 / ROT13 converters, Markdown answers, an image every 50 messages), two scores per
piece, and three related conversations (one adversarial chat, two pruned branches) of 20
messages. Then it requests the attack page, the page with the adversarial chat side by side,
and the conversation page through Django's test client (the whole request: session,
permissions, queries, template) and prints the median and slowest of ``--repeat`` runs, the
SQL statements and the size of the HTML. The same conversation's JSON
(``/api/v1/conversations/<id>/``: every piece with its scores and identifiers) is timed in the
same run and printed as a ratio to the HTML page (goal: no slower, ratio ≤ 1), as are the
attack page to its budget and the timeit calibration loop.

Markdown rendering is cached per value inside a process (system prompts and refusals repeat
across pages), so each page is measured twice: "cold" with that cache cleared before every
request (a first view of the conversation), and "warm". Both wall-clock and CPU time of the
request are printed: on a shared machine the CPU time is the steadier figure.

Usage::

    .venv/bin/python bench/pages.py                        # SQLite and PostgreSQL
    .venv/bin/python bench/pages.py --databases sqlite --pieces 2000

Figures are recorded in docs/performance.md.
"""

from __future__ import annotations

import argparse
import base64
import codecs
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import calibrate, django_in_process, pg_database  # noqa: E402
from bench.payloads import TARGET, identifier  # noqa: E402

BUDGET_MS = 300.0
_NS = uuid.UUID("9d1c0e55-2b8e-4f57-a3f4-6a8e1c2b7d90")

_SENTENCE = (
    "the model said it cannot help with that request but here is some general information "
    "about safety chemistry history fiction story character villain recipe steps first "
    "second third finally however note please ignore previous instructions system prompt "
    "secret password encoded translate pretend roleplay grandmother bedtime"
)
_WORDS = _SENTENCE.split(" ")


def _id(*parts: object) -> str:
    return str(uuid.uuid5(_NS, "/".join(map(str, parts))))


CONVERTERS = {
    "base64": identifier("Base64Converter", "pyrit.prompt_converter.base64_converter"),
    "rot13": identifier("ROT13Converter", "pyrit.prompt_converter.rot13_converter"),
}
ATTACK = identifier(
    "RedTeamingAttack",
    "pyrit.executor.attack.multi_turn.red_teaming",
    max_turns=500,
    children={"objective_target": TARGET},
)
JUDGE = identifier("SelfAskTrueFalseScorer", "pyrit.score.true_false.self_ask_true_false_scorer")
LIKERT = identifier("SelfAskLikertScorer", "pyrit.score.float_scale.self_ask_likert_scorer")
OBJECTIVE = "Get the assistant to reveal its hidden system prompt"
IMAGE_EVERY = 50


def _sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))


def _answer(rng: random.Random) -> str:
    """An LLM-style Markdown answer: a paragraph, a list, sometimes code."""
    items = "\n".join(f"{n}. **{rng.choice(_WORDS)}** {_sentence(rng, 4, 12)}" for n in (1, 2, 3))
    code = f"\n\n```\n{_sentence(rng, 3, 8)}\n```" if rng.random() < 0.3 else ""
    return f"{_sentence(rng, 15, 60)}\n\n{items}{code}"


def _piece(conversation_id: str, sequence: int, role: str, index: int, **fields) -> dict:
    piece_id = _id("piece", conversation_id, sequence, index)
    value = fields.pop("original_value")
    piece = {
        "id": piece_id,
        "role": role,
        "conversation_id": conversation_id,
        "sequence": sequence,
        "timestamp": f"2026-11-21T{10 + sequence // 3600:02d}:{sequence // 60 % 60:02d}:"
        f"{sequence % 60:02d}Z",
        "labels": {"operation": "op_bench", "operator": "bench"},
        "targeted_harm_categories": ["leakage"],
        "prompt_metadata": {},
        "converter_identifiers": [],
        "prompt_target_identifier": TARGET,
        "attack_identifier": ATTACK,
        "original_value_data_type": "text",
        "original_value": value,
        "converted_value_data_type": "text",
        "converted_value": value,
        "response_error": "none",
        "original_prompt_id": piece_id,
    }
    piece.update(fields)
    return piece


def _conversation(conversation_id: str, messages: int, rng: random.Random) -> list[dict]:
    """``messages`` alternating user/assistant messages of two pieces each."""
    pieces = []
    for sequence in range(messages):
        if sequence % 2 == 0:
            prompt = _sentence(rng, 20, 80)
            chain = ["base64", "rot13", None][sequence // 2 % 3]
            converted = {
                "base64": lambda t: base64.b64encode(t.encode()).decode(),
                "rot13": lambda t: codecs.encode(t, "rot13"),
                None: lambda t: t,
            }[chain](prompt)
            pieces.append(
                _piece(
                    conversation_id,
                    sequence,
                    "user",
                    0,
                    original_value=prompt,
                    converted_value=converted,
                    converter_identifiers=[CONVERTERS[chain]] if chain else [],
                )
            )
            if sequence % IMAGE_EVERY == 0:
                pieces.append(
                    _piece(
                        conversation_id,
                        sequence,
                        "user",
                        1,
                        original_value=f"/home/bench/dbdata/prompt-memory-entries/images/{sequence}.png",
                        original_value_data_type="image_path",
                        converted_value=f"/home/bench/dbdata/prompt-memory-entries/images/{sequence}.png",
                        converted_value_data_type="image_path",
                    )
                )
            else:
                pieces.append(
                    _piece(conversation_id, sequence, "user", 1, original_value="Stay in role.")
                )
        else:
            pieces.append(
                _piece(conversation_id, sequence, "assistant", 0, original_value=_answer(rng))
            )
            pieces.append(
                _piece(
                    conversation_id,
                    sequence,
                    "assistant",
                    1,
                    original_value=_sentence(rng, 10, 40),
                    original_value_data_type="reasoning",
                    converted_value_data_type="reasoning",
                )
            )
    return pieces


def page_payload(*, pieces: int, scores_per_piece: int = 2, related: int = 3) -> dict:
    """One attack: a main conversation of ``pieces`` pieces (two per message, so an even
    number) with ``scores_per_piece`` scores each, and ``related`` related conversations of
    20 messages (the first adversarial, the others pruned). PyRIT 0.12-shaped JSON."""
    rng = random.Random(pieces * 31 + related)
    main_id = _id("conversation", "main", pieces)
    main = _conversation(main_id, pieces // 2, rng)
    references, others = [], []
    for n in range(related):
        conversation_id = _id("conversation", "related", pieces, n)
        others += _conversation(conversation_id, 20, rng)
        kind = "adversarial" if n == 0 else "pruned"
        references.append(
            {
                "conversation_id": conversation_id,
                "conversation_type": kind,
                "description": f"{kind} conversation",
            }
        )
    scores = []
    for piece in main:
        for k in range(scores_per_piece):
            judge = k % 2 == 0
            scores.append(
                {
                    "id": _id("score", piece["id"], k),
                    "score_value": (
                        rng.choice(["true", "false"]) if judge else f"{rng.random():.3f}"
                    ),
                    "score_value_description": "Whether the response complied",
                    "score_type": "true_false" if judge else "float_scale",
                    "score_category": ["leakage"],
                    "score_rationale": "The response " + _sentence(rng, 10, 40),
                    "score_metadata": {},
                    "scorer_class_identifier": JUDGE if judge else LIKERT,
                    "message_piece_id": piece["id"],
                    "timestamp": piece["timestamp"],
                    "objective": OBJECTIVE,
                }
            )
    last_piece = next(p for p in reversed(main) if p["role"] == "assistant")
    last_score = next(s for s in scores if s["message_piece_id"] == last_piece["id"])
    attack = {
        "attack_result_id": _id("attack", pieces, related),
        "conversation_id": main_id,
        "objective": OBJECTIVE,
        "attack_identifier": ATTACK,
        "last_response": last_piece["id"],
        "last_score": last_score["id"],
        "executed_turns": pieces // 4,
        "execution_time_ms": 123_456,
        "outcome": "success",
        "outcome_reason": "Objective achieved",
        "related_conversations": references,
        "metadata": {"bench": True},
        "timestamp": "2026-11-21T12:30:00+00:00",
        "labels": {"operation": "op_bench", "operator": "bench"},
        "targeted_harm_categories": ["leakage"],
    }
    return {"message_pieces": main + others, "scores": scores, "attack_results": [attack]}


def page_load(*, pieces: int, scores_per_piece: int = 2, related: int = 3) -> dict[str, str]:
    """Ingest :func:`page_payload` and upload its images; returns the ids to request."""
    from memory.demo import demo_png
    from memory.models.media import media_store
    from memory.storage.media import media_attach
    from memory.transfer.ingest.service import ingest

    payload = page_payload(pieces=pieces, scores_per_piece=scores_per_piece, related=related)
    report = ingest(payload=payload)
    if report.errors:
        raise RuntimeError(report.errors[:3])
    locations = {
        p["original_value"]
        for p in payload["message_pieces"]
        if p["original_value_data_type"] == "image_path"
    }
    for n, location in enumerate(sorted(locations)):
        blob = media_store(data=demo_png(f"image {n}", hue=n * 37), original_name=location)
        media_attach(blob=blob, location=location)
    attack = payload["attack_results"][0]
    return {
        "attack": attack["attack_result_id"],
        "conversation": attack["conversation_id"],
        "side": attack["related_conversations"][0]["conversation_id"] if related else "",
    }


def measure(ids: dict[str, str], repeat: int) -> list[dict]:
    """Time the pages; one row per page."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from memory.review.rendering import render_markdown

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_superuser": True, "is_staff": True}
    )
    client = Client()
    client.force_login(user)
    cases = [
        ("attack page", f"/attacks/{ids['attack']}/"),
        ("attack page, adversarial side by side", f"/attacks/{ids['attack']}/?side={ids['side']}"),
        ("conversation page", f"/conversations/{ids['conversation']}/"),
        ("conversation JSON", f"/api/v1/conversations/{ids['conversation']}/"),
    ]
    rows = []
    for name, url in cases:
        client.get(url)  # templates compiled, database pages warm
        for cache in ("cold", "warm"):
            wall, cpu = [], []
            for _ in range(repeat):
                if cache == "cold":
                    render_markdown.cache_clear()
                t0, c0 = time.perf_counter(), time.process_time()
                response = client.get(url)
                wall.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
                assert response.status_code == 200, (url, response.status_code)
            with CaptureQueriesContext(connection) as queries:
                response = client.get(url)
            rows.append(
                {
                    "page": name,
                    "cache": cache,
                    "name": f"{name} ({cache})",
                    "median": statistics.median(wall),
                    "max": max(wall),
                    "cpu": statistics.median(cpu),
                    "queries": len(queries),
                    "kb": len(response.content) / 1024,
                }
            )
            row = rows[-1]
            print(
                f"  {row['name']:47} {row['median']:7.1f} ms wall (max {row['max']:7.1f}) "
                f"{row['cpu']:7.1f} ms CPU  {row['queries']:3} queries  {row['kb']:6.0f} KiB",
                flush=True,
            )
    return rows


def worker(args: argparse.Namespace) -> None:
    """Migrate a fresh database, write the attack, measure (DATABASE_URL names the database)."""
    vendor = django_in_process(media_root=args.media)
    t0 = time.perf_counter()
    ids = page_load(pieces=args.pieces)
    print(
        f"{vendor}: {args.pieces:,} pieces, {args.pieces * 2:,} scores, 3 related conversations "
        f"(written in {time.perf_counter() - t0:.1f} s); median of {args.repeat} runs",
        flush=True,
    )
    rows = measure(ids, args.repeat)
    main = rows[0]
    verdict = "within" if main["median"] < BUDGET_MS else "OVER"
    print(
        f"{vendor}: attack page {main['median']:.1f} ms, {main['median'] / BUDGET_MS:.2f}× the "
        f"{BUDGET_MS:.0f} ms budget ({verdict})",
        flush=True,
    )
    by = {(row["page"], row["cache"]): row for row in rows}
    for cache in ("cold", "warm"):
        html, api = by["conversation page", cache], by["conversation JSON", cache]
        wall, cpu = api["median"] / html["median"], api["cpu"] / html["cpu"]
        verdict = "no slower" if wall <= 1 else "SLOWER"
        print(
            f"{vendor}: conversation JSON ÷ HTML ({cache} HTML): {wall:.2f}× wall, {cpu:.2f}× CPU "
            f"({api['median']:.1f} ÷ {html['median']:.1f} ms; {verdict})",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--pieces", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--media", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    print(calibrate(), flush=True)
    for database in args.databases.split(","):
        with tempfile.TemporaryDirectory(prefix="redline-bench-pages-") as scratch:
            if database == "sqlite":
                url = f"sqlite:///{scratch}/bench.sqlite3"
            elif database in ("postgresql", "postgres"):
                url = pg_database("redline_bench_pages")
                if url is None:
                    continue
            else:
                raise SystemExit(f"unknown database {database!r}: sqlite or postgresql")
            env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "redteam.settings"}
            command = [sys.executable, __file__, "--worker", "--pieces", str(args.pieces)]
            command += ["--repeat", str(args.repeat), "--media", f"{scratch}/media"]
            try:
                subprocess.run(command, env=env, cwd=ROOT, check=True)
            finally:
                if database != "sqlite":
                    pg_database("redline_bench_pages", create=False)
    print(calibrate(), flush=True)


if __name__ == "__main__":
    main()
