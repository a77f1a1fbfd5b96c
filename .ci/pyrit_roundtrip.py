"""Prove Redline's exchange with the real PyRIT 1.1.0 (run by a PyRIT virtualenv's python).

    pyrit_roundtrip.py load EXPORT FIXTURE WORK
        EXPORT: Redline's ``export_memory --profile pyrit-1.1`` of FIXTURE's memory.db. Build
        PyRIT objects from it with ``model_validate``, store them in a fresh PyRIT SQLite
        memory under WORK with PyRIT's own ``add_*`` calls, read them back with PyRIT's
        getters, and compare counts and values with the export and with FIXTURE/memory.db.

    pyrit_roundtrip.py labels OBJECTIVE_CSV HARM_CSV
        Redline's human-label downloads (``export_human_labels``): PyRIT's
        ``HumanLabeledDataset.from_csv`` must read every row with the file's labels, objectives,
        harm category, responses and data types (the objective file's error responses as
        error pieces).

    pyrit_roundtrip.py counts REDLINE_COUNTS FIXTURE
        REDLINE_COUNTS: a JSON file of Redline's row counts after the docs' push example ran
        against FIXTURE's memory.db; they must equal the fixture's own.

Every mismatch is listed, then the script exits 1. No Django here: only PyRIT and the standard
library, so it checks what a PyRIT user would get.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyrit.memory import CentralMemory, SQLiteMemory
from pyrit.models import (
    AttackResult,
    Message,
    Score,
    SeedGroup,
    SeedObjective,
    SeedPrompt,
    SeedSimulatedConversation,
)
from pyrit.models.messages.conversations import Conversation
from pyrit.models.results.scenario_result import ScenarioResult

SEED_CLASSES = {
    "prompt": SeedPrompt,
    "objective": SeedObjective,
    "simulated_conversation": SeedSimulatedConversation,
}
#: Redline's count name -> the query giving the same count in a PyRIT 1.1.0 memory.db.
FIXTURE_COUNTS = {
    "conversations": "SELECT count(*) FROM Conversations",
    "pieces": "SELECT count(*) FROM PromptMemoryEntries",
    "scores": "SELECT count(*) FROM ScoreEntries",
    "scorable_contents": "SELECT count(*) FROM ScorableContentEntries",
    "attack_results": "SELECT count(*) FROM AttackResultEntries",
    "scenario_results": "SELECT count(*) FROM ScenarioResultEntries",
    "seeds": "SELECT count(*) FROM SeedPromptEntries",
    "seed_groups": "SELECT count(DISTINCT prompt_group_id) FROM SeedPromptEntries"
    " WHERE prompt_group_id IS NOT NULL",
}

problems: list[str] = []


def check(what: str, got: Any, want: Any) -> None:
    if got != want:
        problems.append(f"{what}: got {got!r}, want {want!r}")


def fixture_counts(fixture: Path) -> dict[str, int]:
    # Read-only: the fixture is compared, never written.
    with sqlite3.connect(f"file:{fixture / 'memory.db'}?mode=ro", uri=True) as db:
        return {name: db.execute(sql).fetchone()[0] for name, sql in FIXTURE_COUNTS.items()}


def fixture_values(fixture: Path, sql: str) -> dict[str, Any]:
    """``{id: value}`` rows of the fixture's memory.db, ids as 36-character UUID text."""
    with sqlite3.connect(f"file:{fixture / 'memory.db'}?mode=ro", uri=True) as db:
        return {_uuid(row[0]): row[1] for row in db.execute(sql)}


def _uuid(value: Any) -> str:
    text = str(value).lower()
    if len(text) == 32:
        text = f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
    return text


def load(export_path: Path, fixture: Path, work: Path) -> None:
    started = time.monotonic()
    document = json.loads(export_path.read_text())
    check("export_format", document["export_format"], "redline-export/1+pyrit-1.1")

    # --- build every object the way a PyRIT user would: model_validate, nothing removed ---
    items = document["conversations"]
    conversations = [Conversation.model_validate(c["conversation"]) for c in items]
    messages = [Message.model_validate(m) for c in items for m in c["messages"]]
    pieces = [p for m in messages for p in m.message_pieces]
    scores = [Score.model_validate(s) for s in document["scores"]]
    attacks = [AttackResult.model_validate(a) for a in document["attack_results"]]
    scenarios = [ScenarioResult.model_validate(s) for s in document["scenario_results"]]
    groups = [SeedGroup.model_validate(g) for g in document["seed_groups"]]
    loose_seeds = [SEED_CLASSES[s["seed_type"]].model_validate(s) for s in document["seeds"]]

    # --- store them in a fresh PyRIT memory with PyRIT's own calls ---
    work.mkdir(parents=True, exist_ok=True)
    memory = SQLiteMemory(db_path=work / "pyrit.db", silent=True)
    memory.results_path = str(work / "results")  # copies of seed media go here, not to $HOME
    CentralMemory.set_memory_instance(memory)
    for conversation in conversations:
        memory.add_conversation_to_memory(conversation=conversation)
    memory.add_message_pieces_to_memory(message_pieces=pieces)
    memory.add_scores_to_memory(scores=scores)
    memory.add_attack_results_to_memory(attack_results=attacks)
    memory.add_scenario_results_to_memory(scenario_results=scenarios)
    # Seed media values are paths relative to the fixture folder (PyRIT's dbdata beside it).
    os.chdir(fixture)
    asyncio.run(memory.add_seed_groups_to_memory_async(prompt_groups=groups))
    if loose_seeds:
        asyncio.run(memory.add_seeds_to_memory_async(seeds=loose_seeds))

    # --- read back with PyRIT's getters and compare with the export ---
    want_counts = fixture_counts(fixture)
    exported_scores = {s["id"]: s for s in document["scores"]}

    stored_pieces = {str(p.id): p for p in memory.get_message_pieces()}
    check("pieces stored", len(stored_pieces), want_counts["pieces"])
    for piece in pieces:
        back = stored_pieces.get(str(piece.id))
        if back is None:
            problems.append(f"piece {piece.id} missing")
            continue
        for field in (
            "role",
            "conversation_id",
            "sequence",
            "timestamp",
            "original_value",
            "original_value_data_type",
            "original_value_sha256",
            "converted_value",
            "converted_value_sha256",
            "response_error",
            "original_prompt_id",
            "prompt_metadata",
        ):
            check(f"piece {piece.id} {field}", getattr(back, field), getattr(piece, field))
        check(
            f"piece {piece.id} converters",
            [c.class_name for c in back.converter_identifiers],
            [c.class_name for c in piece.converter_identifiers],
        )

    targets = 0
    for conversation in conversations:
        back = memory._get_conversation(conversation_id=conversation.conversation_id)
        if back is None:
            problems.append(f"conversation {conversation.conversation_id} missing")
            continue
        targets += back.target_identifier is not None
        check(
            f"conversation {conversation.conversation_id} target",
            back.target_identifier and back.target_identifier.hash,
            conversation.target_identifier and conversation.target_identifier.hash,
        )
    check("conversations stored", len(conversations), want_counts["conversations"])

    # get_scores() with no filter returns nothing in 1.1.0: ask for every time instead.
    every_score = memory.get_scores(sent_after=datetime(1, 1, 1, tzinfo=UTC))
    stored_scores = {str(s.id): s for s in every_score}
    check("scores stored", len(stored_scores), want_counts["scores"])
    check("scores exported", len(exported_scores), want_counts["scores"])
    loose_contents = []
    for score_id, exported in exported_scores.items():
        back = stored_scores.get(score_id)
        if back is None:
            problems.append(f"score {score_id} missing")
            continue
        check(f"score {score_id} value", back.score_value, exported["score_value"])
        check(f"score {score_id} type", back.score_type, exported["score_type"])
        check(
            f"score {score_id} piece",
            str(back.message_piece_id) if back.message_piece_id else None,
            exported["message_piece_id"],
        )
        check(
            f"score {score_id} scorer",
            back.scorer_class_identifier.class_name,
            exported["scorer_class_identifier"]["class_name"],
        )
        scorable = exported.get("scorable") or {}
        if scorable.get("scorable_type") == "content":
            loose_contents.append((back, scorable))
    for back, scorable in loose_contents:
        content = memory.get_scorable_content(content_ids=[back.scorable.content_id])
        check(
            f"score {back.id} loose content",
            [c.value for c in content.values()],
            [scorable["value"]],
        )
    check("loose contents", len(loose_contents), want_counts["scorable_contents"])

    stored_attacks = {a.attack_result_id: a for a in memory.get_attack_results()}
    check("attack results stored", len(stored_attacks), want_counts["attack_results"])
    for attack in attacks:
        back = stored_attacks.get(attack.attack_result_id)
        if back is None:
            problems.append(f"attack result {attack.attack_result_id} missing")
            continue
        for field in ("conversation_id", "objective", "outcome", "executed_turns", "labels"):
            want = getattr(attack, field)
            check(f"attack {attack.attack_result_id} {field}", getattr(back, field), want)
        check(
            f"attack {attack.attack_result_id} last response",
            back.last_response and back.last_response.id,
            attack.last_response and attack.last_response.id,
        )
        check(
            f"attack {attack.attack_result_id} last score",
            back.last_score and str(back.last_score.id),
            attack.last_score and str(attack.last_score.id),
        )

    stored_scenarios = memory.get_scenario_results()
    check("scenario results stored", len(stored_scenarios), want_counts["scenario_results"])
    for scenario in stored_scenarios:
        (exported,) = [s for s in scenarios if s.id == scenario.id] or [None]
        if exported is None:
            problems.append(f"scenario {scenario.id} not in the export")
            continue
        check(
            f"scenario {scenario.id} attacks",
            Counter({k: len(v) for k, v in scenario.attack_results.items()}),
            Counter({k: len(v) for k, v in exported.attack_results.items()}),
        )

    stored_seeds = {str(s.id): s for s in memory.get_seeds()}
    exported_seeds = [*loose_seeds, *(s for g in groups for s in g.seeds)]
    check("seeds stored", len(stored_seeds), want_counts["seeds"])
    for seed in exported_seeds:
        back = stored_seeds.get(str(seed.id))
        if back is None:
            problems.append(f"seed {seed.id} missing")
            continue
        # Media seeds are copied into PyRIT's storage (a new path): compare their bytes' hash.
        check(f"seed {seed.id} sha256", back.value_sha256, seed.value_sha256)
        if seed.data_type == "text":
            check(f"seed {seed.id} value", back.value, seed.value)
        check(f"seed {seed.id} group", back.prompt_group_id, seed.prompt_group_id)
        check(f"seed {seed.id} dataset", back.dataset_name, seed.dataset_name)
    check("seed groups stored", len(memory.get_seed_groups()), want_counts["seed_groups"])

    # --- and with the fixture's own rows: ids and values PyRIT first wrote ---
    for sql, stored, what in (
        ("SELECT id, converted_value FROM PromptMemoryEntries", stored_pieces, "converted_value"),
        ("SELECT id, score_value FROM ScoreEntries", stored_scores, "score_value"),
        ("SELECT id, value_sha256 FROM SeedPromptEntries", stored_seeds, "value_sha256"),
    ):
        original = fixture_values(fixture, sql)
        check(f"{what}: ids", sorted(stored), sorted(original))
        for key, value in original.items():
            if key in stored:
                check(f"{what} of {key}", getattr(stored[key], what), value)
    outcomes = fixture_values(fixture, "SELECT id, outcome FROM AttackResultEntries")
    check("attack result ids", sorted(map(_uuid, stored_attacks)), sorted(outcomes))
    for key, attack in stored_attacks.items():
        check(f"outcome of {key}", attack.outcome.value, outcomes.get(_uuid(key)))
    memory.dispose_engine()
    print(
        f"PyRIT 1.1.0 loaded the export: {len(conversations)} conversations ({targets} with a "
        f"target), {len(stored_pieces)} pieces, {len(stored_scores)} scores "
        f"({len(loose_contents)} of loose content), {len(stored_attacks)} attack results, "
        f"{len(stored_scenarios)} scenario results, {len(stored_seeds)} seeds in "
        f"{len(groups)} groups, in {time.monotonic() - started:.1f} s"
    )


def counts(redline_counts: Path, fixture: Path) -> None:
    got = json.loads(redline_counts.read_text())
    want = fixture_counts(fixture)
    for name, expected in want.items():
        check(f"Redline {name} after the push example", got.get(name), expected)
    check("media pieces without their bytes", got.get("media_pieces_unlinked"), 0)
    check("media seeds without their bytes", got.get("media_seeds_unlinked"), 0)
    print(f"push example: Redline holds {got}; the fixture {want}")


def _file_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        handle.readline()  # the ``# dataset_version=…`` line
        return list(csv.DictReader(handle))


def labels(objective_csv: Path, harm_csv: Path) -> None:
    """Both label files load into PyRIT with exactly the file's rows and values."""
    from pyrit.score import HumanLabeledDataset
    from pyrit.score.scorer_evaluation.metrics_type import MetricsType

    for path, kind in ((objective_csv, MetricsType.OBJECTIVE), (harm_csv, MetricsType.HARM)):
        rows = _file_rows(path)
        check(f"{path.name}: rows in the file", len(rows) > 0, True)
        dataset = HumanLabeledDataset.from_csv(csv_path=path, metrics_type=kind)
        check(f"{path.name}: entries PyRIT read", len(dataset.entries), len(rows))
        raters = [c for c in rows[0] if c.startswith("human_score")] if rows else []
        for row, entry in zip(rows, dataset.entries, strict=False):
            piece = entry.conversation[0].message_pieces[0]
            # PyRIT strips the response it reads (``str(...).strip()``).
            check(f"{path.name}: response", piece.original_value, row["assistant_response"].strip())
            # An error piece stays one: PyRIT builds the piece with the row's data type.
            check(f"{path.name}: data type", piece.converted_value_data_type, row["data_type"])
            if kind == MetricsType.OBJECTIVE:
                check(f"{path.name}: objective", entry.objective, row["objective"].strip())
                want = [bool(int(row[c])) for c in raters]
            else:
                check(f"{path.name}: harm", entry.harm_category, row["harm_category"].strip())
                want = [float(row[c]) for c in raters]
            check(f"{path.name}: labels", list(entry.human_scores), want)
        errors = sum(row["data_type"] == "error" for row in rows)
        if kind == MetricsType.OBJECTIVE:
            # Of the fixture's three error responses, those of attacks with enough raters (one
            # with two): the file must hold one, read back as an error piece (checked above).
            check(f"{path.name}: has an error response", errors > 0, True)
        print(
            f"human labels: PyRIT read {len(dataset.entries)} {kind.value} entries from "
            f"{path.name} ({errors} error responses as error pieces)"
        )


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "load":
        load(Path(argv[1]).resolve(), Path(argv[2]).resolve(), Path(argv[3]).resolve())
    elif len(argv) == 3 and argv[0] == "labels":
        labels(Path(argv[1]), Path(argv[2]))
    elif len(argv) == 3 and argv[0] == "counts":
        counts(Path(argv[1]), Path(argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if problems:
        print(f"{len(problems)} mismatches:", file=sys.stderr)
        for problem in problems[:200]:
            print(f"  {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
