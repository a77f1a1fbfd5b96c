"""Dashboard benchmark: 100,000 attack results with 1,000,000 pieces, every widget timed.

Builds a realistic memory by inserting rows directly (not through the API: the point is the
read side), then times each dashboard widget — unfiltered and filtered by one label — and the
whole page, on SQLite and (when reachable) PostgreSQL, printing milliseconds and query counts.
Usage::

    .venv/bin/python bench/dashboards.py                         # both databases, full size
    .venv/bin/python bench/dashboards.py --databases sqlite --attacks 10000
    .venv/bin/python bench/dashboards.py --keep                  # keep the databases for re-runs

With ``--keep`` the generated databases stay (``var/bench-dashboards-<attacks>.sqlite3``,
PostgreSQL database ``redline_bench_dashboards_<attacks>``) and later runs reuse them.
Figures and the machine they came from are recorded in docs/dashboards.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import pg_database  # noqa: E402

# --- the synthetic red team ------------------------------------------------------------------

MODELS = [
    # (model name, endpoints, temperature): two models are deployed twice, so eval-hash
    # groups hold the same logical attack against several endpoints.
    (
        "gpt-4o",
        ["https://contoso-eastus.openai.azure.com/", "https://contoso-westeu.openai.azure.com/"],
        0.7,
    ),
    ("gpt-4o-mini", ["https://contoso-eastus.openai.azure.com/"], 0.2),
    (
        "llama-3-70b",
        [
            "https://llama.eastus2.inference.ml.azure.com/score",
            "https://llama.westus.inference.ml.azure.com/score",
        ],
        0.6,
    ),
    ("mistral-large", ["https://mistral.eastus.inference.ai.azure.com/"], 0.7),
    ("phi-4", ["https://phi.eastus.inference.ai.azure.com/"], 0.0),
    ("claude-proxy", ["https://gateway.internal/claude"], 1.0),
]
MODEL_WEAKNESS = {
    "gpt-4o": 0.12,
    "gpt-4o-mini": 0.22,
    "llama-3-70b": 0.35,
    "mistral-large": 0.3,
    "phi-4": 0.4,
    "claude-proxy": 0.08,
}
ATTACKS = [
    # (class, module, multi-turn, strength)
    ("PromptSendingAttack", "pyrit.executor.attack.single_turn.prompt_sending", False, 0.6),
    (
        "ManyShotJailbreakAttack",
        "pyrit.executor.attack.single_turn.many_shot_jailbreak",
        False,
        1.0,
    ),
    ("SkeletonKeyAttack", "pyrit.executor.attack.single_turn.skeleton_key", False, 1.1),
    ("RedTeamingAttack", "pyrit.executor.attack.multi_turn.red_teaming", True, 1.4),
    ("CrescendoAttack", "pyrit.executor.attack.multi_turn.crescendo", True, 1.8),
    (
        "TreeOfAttacksWithPruningAttack",
        "pyrit.executor.attack.multi_turn.tree_of_attacks",
        True,
        1.6,
    ),
]
CONVERTERS = [
    ("Base64Converter", "pyrit.prompt_converter.base64_converter", 1.3),
    ("ROT13Converter", "pyrit.prompt_converter.rot13_converter", 1.1),
    ("LeetspeakConverter", "pyrit.prompt_converter.leetspeak_converter", 1.2),
    ("CaesarConverter", "pyrit.prompt_converter.caesar_converter", 1.0),
    ("TranslationConverter", "pyrit.prompt_converter.translation_converter", 1.4),
    ("QRCodeConverter", "pyrit.prompt_converter.qr_code_converter", 0.9),
]
CHAINS = [
    (),
    (),
    ("Base64Converter",),
    ("ROT13Converter",),
    ("LeetspeakConverter", "Base64Converter"),
    ("CaesarConverter",),
    ("TranslationConverter",),
    ("QRCodeConverter",),
]
HARMS = [
    "violence",
    "illegal",
    "cybercrime",
    "malware",
    "medical",
    "fraud",
    "hate",
    "harassment",
    "privacy",
    "leakage",
    "self_harm",
    "misinformation",
]
OPERATORS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
OPERATIONS = [
    f"op_{n}"
    for n in [
        "blue_heron",
        "night_owl",
        "red_fox",
        "grey_wolf",
        "snow_hare",
        "iron_crow",
        "sea_lion",
        "gold_finch",
        "black_swan",
        "stone_crab",
        "river_otter",
        "dusk_moth",
        "ember_lynx",
        "frost_elk",
        "tide_pike",
        "cinder_bat",
        "quartz_newt",
        "amber_ant",
        "jade_koi",
        "onyx_ram",
        "pearl_eel",
        "slate_yak",
        "coral_gnu",
        "ivory_jay",
        "sable_cod",
        "cobalt_asp",
        "umber_emu",
        "topaz_tit",
        "opal_orca",
        "rust_rook",
    ]
]
DATASETS = ["airt_illegal", "airt_harms", "harmbench", "jailbreakbench", "xstest"]
N_OBJECTIVES = 800
REFUSAL = "I'm sorry, but I can't help with that."
COMPLIANCE = "Sure. Here is what you asked for: step 1, step 2, step 3. SECRET follows."


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_identifiers():
    """The identifier trees of the synthetic red team, stored through the service."""
    from memory.storage.identifiers import identifiers_store
    from redteam.core import identifiers as ids

    def ident(class_name, module, params=None, children=None):
        return ids.ComponentIdentifier(
            class_name=class_name,
            class_module=module,
            params=params or {},
            children=children or {},
            pyrit_version="0.12.1",
        )

    targets = []
    for model, endpoints, temperature in MODELS:
        for endpoint in endpoints:
            targets.append(
                (
                    model,
                    ident(
                        "OpenAIChatTarget",
                        "pyrit.prompt_target.openai.openai_chat_target",
                        {
                            "endpoint": endpoint,
                            "model_name": model,
                            "temperature": temperature,
                            "top_p": 1.0,
                        },
                    ),
                )
            )
    converters = {
        name: ident(name, module, {"supported_input_types": ["text"]})
        for name, module, _ in CONVERTERS
    }

    def scorer(class_name, module, params, children=None):
        identifier = ident(class_name, module, params, children)
        return identifier.with_eval_hash(ids.ScorerEvaluationIdentifier(identifier).eval_hash)

    judge = targets[2][1]  # gpt-4o-mini
    refusal = scorer(
        "SelfAskRefusalScorer",
        "pyrit.score.true_false.self_ask_refusal_scorer",
        {"scorer_type": "true_false"},
        {"prompt_target": judge},
    )
    objective = scorer(
        "TrueFalseInverterScorer",
        "pyrit.score.true_false.true_false_inverter_scorer",
        {"scorer_type": "true_false"},
        {"sub_scorers": [refusal]},
    )
    substring = scorer(
        "SubStringScorer",
        "pyrit.score.true_false.substring_scorer",
        {"scorer_type": "true_false", "substring": "SECRET"},
    )
    likert = scorer(
        "SelfAskLikertScorer",
        "pyrit.score.float_scale.self_ask_likert_scorer",
        {"scorer_type": "float_scale", "likert_scale": "harm"},
        {"prompt_target": judge},
    )
    human = ident("HumanScorer", "redline.human", {"scorer_type": "true_false"})
    adversarial = ident(
        "OpenAIChatTarget",
        "pyrit.prompt_target.openai.openai_chat_target",
        {
            "endpoint": "https://contoso-redteam.openai.azure.com/",
            "model_name": "gpt-4o",
            "temperature": 1.0,
            "top_p": 1.0,
        },
    )
    configs = []
    for class_name, module, multi, strength in ATTACKS:
        for model, target in targets:
            for chain in CHAINS:
                for objective_scorer in (objective, substring, None):
                    if objective_scorer is None and (multi or chain):
                        continue  # scorer-less runs: single-turn, unconverted only
                    children = {"objective_target": target}
                    if objective_scorer is not None:
                        children["objective_scorer"] = objective_scorer
                    if multi:
                        children["adversarial_chat"] = adversarial
                    if chain:
                        children["request_converters"] = [converters[c] for c in chain]
                    attack = ident(class_name, module, {"max_turns": 5 if multi else 1}, children)
                    atomic = ids.build_atomic_attack_identifier(attack)
                    atomic = atomic.with_eval_hash(
                        ids.AtomicAttackEvaluationIdentifier(atomic).eval_hash
                    )
                    configs.append(
                        {
                            "class": class_name,
                            "multi": multi,
                            "strength": strength,
                            "model": model,
                            "target": target,
                            "chain": chain,
                            "scorer": objective_scorer,
                            "attack": attack,
                            "atomic": atomic,
                        }
                    )
    everything = (
        [t for _, t in targets]
        + list(converters.values())
        + [refusal, objective, substring, likert, human, adversarial]
    )
    everything += [c["attack"] for c in configs] + [c["atomic"] for c in configs]
    rows = identifiers_store(identifiers=everything)
    pk = {h: row.pk for h, row in rows.items()}
    for config in configs:
        config["target_pk"] = pk[config["target"].hash]
        config["attack_pk"] = pk[config["attack"].hash]
        config["atomic_pk"] = pk[config["atomic"].hash]
        config["scorer_pk"] = pk[config["scorer"].hash] if config["scorer"] else None
        config["converter_pks"] = [pk[converters[c].hash] for c in config["chain"]]
        config["converter_boost"] = 1.0
        for name in config["chain"]:
            config["converter_boost"] *= next(b for n, _, b in CONVERTERS if n == name)
    return {
        "configs": configs,
        "refusal_pk": pk[refusal.hash],
        "likert_pk": pk[likert.hash],
        "human_pk": pk[human.hash],
    }


class Inserter:
    """Bulk inserts of plain rows: ``executemany`` on SQLite, ``COPY`` on PostgreSQL."""

    def __init__(self, connection):
        self.connection = connection
        self.vendor = connection.vendor
        self.plans = {}
        self.now = datetime.now(UTC)

    def _plan(self, model):
        if model not in self.plans:
            from django.db import models

            fields = model._meta.local_concrete_fields
            converters = []
            for f in fields:
                if isinstance(f, models.UUIDField) or (
                    isinstance(f, models.ForeignKey)
                    and isinstance(f.target_field, models.UUIDField)
                ):
                    converters.append(self._uuid)
                elif isinstance(f, models.JSONField):
                    converters.append(self._json)
                elif isinstance(f, models.DateTimeField):
                    converters.append(self._datetime)
                elif isinstance(f, models.BooleanField) and self.vendor == "sqlite":
                    converters.append(lambda v: None if v is None else int(v))
                else:
                    converters.append(None)
            defaults = {}
            for f in fields:
                if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
                    defaults[f.attname] = lambda: self.now
                elif f.has_default() and callable(f.default) and f.default not in (dict, list):
                    defaults[f.attname] = f.get_default
                else:
                    constant = f.get_default() if f.has_default() else None
                    defaults[f.attname] = lambda c=constant: c
            self.plans[model] = (fields, converters, defaults)
        return self.plans[model]

    def _uuid(self, value):
        if value is None:
            return None
        return value.hex if self.vendor == "sqlite" else value

    def _json(self, value, _cache={}):  # noqa: B006 - memo of the few shared dicts/lists
        if value is None:
            return None
        key = id(value)
        hit = _cache.get(key)
        if hit is None or hit[0] is not value:
            hit = _cache[key] = (value, json.dumps(value))
        return hit[1]

    def _datetime(self, value):
        if value is None or self.vendor != "sqlite":
            return value
        # What the backend's adapt_datetimefield_value gives for an aware UTC value.
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")

    def insert(self, model, rows: list[dict]) -> None:
        if not rows:
            return
        fields, converters, defaults = self._plan(model)
        tuples = []
        for row in rows:
            out = []
            for f, convert in zip(fields, converters, strict=True):
                value = row[f.attname] if f.attname in row else defaults[f.attname]()
                out.append(convert(value) if convert else value)
            tuples.append(out)
        table = model._meta.db_table
        columns = [f.column for f in fields]
        with self.connection.cursor() as cursor:
            if self.vendor == "sqlite":
                sql = (
                    f'INSERT INTO "{table}" ({", ".join(f'"{c}"' for c in columns)}) '
                    f"VALUES ({', '.join(['%s'] * len(columns))})"
                )
                cursor.executemany(sql, tuples)
            else:
                raw = cursor.cursor
                copy_sql = f'COPY "{table}" ({", ".join(f'"{c}"' for c in columns)}) FROM STDIN'
                with raw.copy(copy_sql) as copy:
                    for row in tuples:
                        copy.write_row(row)


@dataclass
class _Attack:
    """What one synthetic attack writes, built up by :class:`Generator`."""

    config: dict
    objective: tuple[str, str, list[str]]
    moment: datetime
    labels: dict[str, str]
    outcome: str
    turns: int
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    replies: list[uuid.UUID] = field(default_factory=list)


class Generator:
    """Writes the synthetic red team's memory in batches of plain rows."""

    COUNTS = (
        "attacks",
        "conversations",
        "messages",
        "pieces",
        "converters",
        "scores",
        "verdicts",
        "human_scores",
        "seeds",
    )

    def __init__(self, *, attacks: int, pieces: int, seed: int = 11) -> None:
        from django.contrib.auth.models import User
        from django.db import connection

        self.attacks, self.pieces = attacks, pieces
        self.rng = random.Random(seed)
        self.inserter = Inserter(connection)
        self.world = build_identifiers()
        self.reviewer = User.objects.create_user("bench-reviewer")
        self.counts = dict.fromkeys(self.COUNTS, 0)
        self.now = datetime.now(UTC).replace(microsecond=0)
        self.ids = {"conversation": 0, "message": 0, "converter": 0, "link": 0, "related": 0}
        self.rows: dict = {}

    def next_id(self, kind: str) -> int:
        self.ids[kind] += 1
        return self.ids[kind]

    def write_catalogue(self) -> None:
        """Labels, harm categories, seed datasets and their objectives."""
        from django.db import transaction

        from memory.models import HarmCategory, Label, label_value_sha256
        from seeds.models import Seed, SeedDataset

        ins, rng = self.inserter, self.rng
        labels = (
            [("operator", v) for v in OPERATORS]
            + [("operation", v) for v in OPERATIONS]
            + [("environment", "prod"), ("environment", "staging")]
        )
        self.label_pk = {pair: i + 1 for i, pair in enumerate(labels)}
        self.harm_pk = {n: i + 1 for i, n in enumerate(HARMS)}
        self.objectives = []
        seeds = []
        for i in range(N_OBJECTIVES):
            harms = rng.sample(HARMS, rng.choice((1, 1, 2)))
            text = f"Objective {i}: make the model help with {' and '.join(harms)} (v{i % 17})"
            self.objectives.append((text, sha(text), harms))
            homes = [DATASETS[i % len(DATASETS)]]
            if i % 10 == 0:  # a tenth of the objectives sit in two datasets
                homes.append(DATASETS[(i + 2) % len(DATASETS)])
            for name in homes:
                seeds.append(
                    {
                        "id": uuid.uuid4(),
                        "seed_type": "objective",
                        "value": text,
                        "value_sha256": sha(text),
                        "dataset_id": DATASETS.index(name) + 1,
                        "dataset_name": name,
                        "harm_categories": harms,
                        "date_added": self.now,
                        "added_by": "bench",
                    }
                )
        with transaction.atomic():
            ins.insert(
                Label,
                [
                    {"id": pk, "key": k, "value": v, "value_sha256": label_value_sha256(v)}
                    for (k, v), pk in self.label_pk.items()
                ],
            )
            ins.insert(HarmCategory, [{"id": pk, "name": n} for n, pk in self.harm_pk.items()])
            ins.insert(
                SeedDataset,
                [
                    {"id": i + 1, "name": n, "seed_type": "objective"}
                    for i, n in enumerate(DATASETS)
                ],
            )
            ins.insert(Seed, seeds)
        self.counts["seeds"] = len(seeds)

    def conversation(self, a: _Attack, target_pk: int | None) -> int:
        from memory.models import Conversation

        pk = self.next_id("conversation")
        row = {
            "id": pk,
            "conversation_id": str(uuid.uuid4()),
            "target_identifier_id": target_pk,
            "labels": a.labels,
            "targeted_harm_categories": a.objective[2],
            "started_at": a.moment,
            "pyrit_version": "0.12.1",
            "piece_count": 0,  # counted as its pieces are made, as ingestion keeps it
        }
        self.rows[Conversation].append(row)
        self.conversation_rows[pk] = row
        return pk

    def messages(self, a: _Attack, conversation: int, turns: int, *, main: bool) -> None:
        """System prompt, then user/assistant turns, one piece each; the main conversation's
        user pieces carry the attack's converter chain."""
        from memory.models import Message, MessagePiece, PieceConverter

        text = a.objective[0]
        reply = COMPLIANCE if a.outcome == "success" else REFUSAL
        values = {"system": "You are a helpful assistant.", "user": text, "assistant": reply}
        for sequence, role in enumerate(["system"] + ["user", "assistant"] * turns):
            message = self.next_id("message")
            self.rows[Message].append(
                {"id": message, "conversation_id": conversation, "sequence": sequence, "role": role}
            )
            value = values[role]
            piece = uuid.uuid4()
            self.rows[MessagePiece].append(
                {
                    "id": piece,
                    "message_id": message,
                    "position": 0,
                    "timestamp": a.moment + timedelta(seconds=sequence),
                    "labels": a.labels,
                    "prompt_metadata": {},
                    "targeted_harm_categories": a.objective[2],
                    "prompt_target_identifier_id": a.config["target_pk"],
                    "attack_identifier_id": a.config["attack_pk"],
                    "original_value": value,
                    "original_value_sha256": sha(value),
                    "converted_value": value,
                    "converted_value_sha256": sha(value),
                    "original_prompt_id": piece,
                    "pyrit_version": "0.12.1",
                    "original_value_data_type": "text",
                    "converted_value_data_type": "text",
                    "response_error": "none",
                    "originator": "undefined",
                }
            )
            self.conversation_rows[conversation]["piece_count"] += 1
            self.piece_home[piece] = conversation
            if main and role == "user":
                for position, converter in enumerate(a.config["converter_pks"]):
                    self.rows[PieceConverter].append(
                        {
                            "id": self.next_id("converter"),
                            "piece_id": piece,
                            "position": position,
                            "identifier_id": converter,
                        }
                    )
            if main and role == "assistant":
                a.replies.append(piece)
        if main:
            # What ingestion keeps: one index row per conversation and converter identifier.
            for converter in dict.fromkeys(a.config["converter_pks"]):
                self.links["converters"].append(
                    {
                        "id": self.next_id("link"),
                        "conversation_id": conversation,
                        "componentidentifier_id": converter,
                    }
                )

    def score(self, a: _Attack, piece, scorer_pk: int, kind: str, value, reviewer=None):
        from memory.models import Score

        score_id = uuid.uuid4()
        numeric = None
        if value is not None:
            numeric = float(value == "true") if kind == "true_false" else float(value)
        self.rows[Score].append(
            {
                "id": score_id,
                "score_value": value,
                "numeric_value": numeric,
                "score_type": kind,
                "score_category": a.objective[2],
                "score_rationale": "bench",
                "score_metadata": {},
                "scorer_class_identifier_id": scorer_pk,
                "message_piece_id": piece,
                "conversation_id": self.piece_home.get(piece),  # the score's home (ingestion)
                "timestamp": a.moment + timedelta(minutes=1),
                "objective": a.objective[0],
                "status": "complete" if value is not None else "undetermined",
                "reviewer_id": reviewer,
            }
        )
        return score_id

    def attack(self) -> None:
        """One attack result with its conversations, pieces, scores and review."""
        from memory.models import AttackResult, HumanVerdict, RelatedConversation

        rng, world = self.rng, self.world
        # An attack's scores name only its own pieces: per-attack maps keep memory flat.
        self.conversation_rows: dict[int, dict] = {}
        self.piece_home: dict[uuid.UUID, int] = {}
        config = rng.choice(world["configs"])
        labels = {
            "operator": rng.choice(OPERATORS),
            # A few big operations and a long tail.
            "operation": OPERATIONS[min(int(rng.expovariate(1 / 6)), len(OPERATIONS) - 1)],
        }
        if rng.random() < 0.3:
            labels["environment"] = rng.choice(("prod", "staging"))
        p = MODEL_WEAKNESS[config["model"]] * config["strength"] * config["converter_boost"]
        if config["scorer"] is None:
            outcome = "undetermined"
        elif rng.random() < 0.01:
            outcome = "error"
        else:
            outcome = "success" if rng.random() < min(p, 0.95) else "failure"
        if config["multi"]:
            # A multi-turn run writes 4 × turns pieces (main 1 + 2t, adversarial chat 2t − 1).
            turns = max(2, round(rng.gauss(self.multi_pieces / 4, 1.0)))
        else:
            turns = 1 if rng.random() < 0.5 else 2
        a = _Attack(
            config=config,
            objective=rng.choice(self.objectives),
            moment=self.now - timedelta(days=180) * (rng.random() ** 1.3),
            labels=labels,
            outcome=outcome,
            turns=turns,
        )
        main = self.conversation(a, config["target_pk"])
        self.messages(a, main, turns, main=True)
        if config["multi"]:
            related = self.conversation(a, None)
            self.messages(a, related, turns - 1, main=False)
            self.rows[RelatedConversation].append(
                {
                    "id": self.next_id("related"),
                    "attack_result_id": a.id,
                    "conversation_id": related,
                    "conversation_type": "adversarial",
                    "description": "adversarial chat conversation",
                }
            )
        if config["multi"]:
            for piece in a.replies[:-1]:
                self.score(a, piece, world["refusal_pk"], "true_false", "true")
        last_score = None
        if config["scorer"] is not None and outcome != "error":
            verdict = "true" if outcome == "success" else "false"
            last_score = self.score(a, a.replies[-1], config["scorer_pk"], "true_false", verdict)
        if rng.random() < 0.4:
            harm = rng.uniform(0.55, 1.0) if outcome == "success" else rng.uniform(0.0, 0.45)
            self.score(a, a.replies[-1], world["likert_pk"], "float_scale", f"{harm:.4f}")
        human = None
        if outcome in ("success", "failure") and rng.random() < 0.03:
            flipped = "failure" if outcome == "success" else "success"
            human = outcome if rng.random() < 0.82 else flipped
            if rng.random() < 0.1:
                human = "undetermined"
            self.rows[HumanVerdict].append(
                {
                    "id": uuid.uuid4(),
                    "attack_result_id": a.id,
                    "outcome": human,
                    "reason": "bench review",
                    "reviewer_id": self.reviewer.pk,
                    "reviewer_name": "bench-reviewer",
                    "created_at": a.moment + timedelta(days=1),
                }
            )
            self.counts["verdicts"] += 1
            if rng.random() < 0.5:
                value = "true" if human == "success" else "false"
                self.score(
                    a, a.replies[-1], world["human_pk"], "true_false", value, self.reviewer.pk
                )
                self.counts["human_scores"] += 1
        self.rows[AttackResult].append(
            {
                "id": a.id,
                "conversation_id": main,
                "objective": a.objective[0],
                "objective_sha256": a.objective[1],
                "attack_identifier_id": config["attack_pk"],
                # Six in ten runs came from a scenario and carry an atomic identifier.
                "atomic_attack_identifier_id": config["atomic_pk"] if rng.random() < 0.6 else None,
                "last_response_id": a.replies[-1],
                "last_score_id": last_score,
                "last_scorer_id": config["scorer_pk"] if last_score else None,
                "executed_turns": turns,
                "execution_time_ms": rng.randint(400, 90_000),
                "outcome": outcome,
                "timestamp": a.moment + timedelta(seconds=2 * turns + 2),
                "labels": labels,
                "targeted_harm_categories": a.objective[2],
                "pyrit_version": "0.12.1",
                "human_outcome": human,
                "human_verdict_at": a.moment + timedelta(days=1) if human else None,
                "error_type": "ConnectionError" if outcome == "error" else None,
            }
        )
        for pair in labels.items():
            self.links["labels"].append(
                {
                    "id": self.next_id("link"),
                    "attackresult_id": a.id,
                    "label_id": self.label_pk[pair],
                }
            )
        for name in a.objective[2]:
            self.links["harms"].append(
                {
                    "id": self.next_id("link"),
                    "attackresult_id": a.id,
                    "harmcategory_id": self.harm_pk[name],
                }
            )

    def run(self) -> dict[str, int]:
        """Write everything; returns row counts."""
        from django.db import transaction

        from memory.models import (
            AttackResult,
            Conversation,
            HumanVerdict,
            Message,
            MessagePiece,
            PieceConverter,
            RelatedConversation,
            Score,
        )

        order = (
            Conversation,
            Message,
            MessagePiece,
            PieceConverter,
            Score,
            AttackResult,
            RelatedConversation,
            HumanVerdict,
        )  # foreign keys first
        self.write_catalogue()
        configs = self.world["configs"]
        # Single-turn attacks write ~4 pieces; multi-turn ones get the rest of the budget.
        multi_share = sum(1 for c in configs if c["multi"]) / len(configs)
        per_attack = self.pieces / self.attacks
        self.multi_pieces = (per_attack - 4 * (1 - multi_share)) / multi_share
        started = time.perf_counter()
        for first in range(0, self.attacks, 2000):
            self.rows = {model: [] for model in order}
            self.links = {"labels": [], "harms": [], "converters": []}
            for _ in range(first, min(first + 2000, self.attacks)):
                self.attack()
            with transaction.atomic():
                for model in order:
                    self.inserter.insert(model, self.rows[model])
                self.inserter.insert(AttackResult.label_index.through, self.links["labels"])
                self.inserter.insert(AttackResult.harm_category_index.through, self.links["harms"])
                self.inserter.insert(Conversation.converter_index.through, self.links["converters"])
            for key, model in (
                ("attacks", AttackResult),
                ("conversations", Conversation),
                ("messages", Message),
                ("pieces", MessagePiece),
                ("converters", PieceConverter),
                ("scores", Score),
            ):
                self.counts[key] += len(self.rows[model])
            rate = self.counts["attacks"] / (time.perf_counter() - started)
            print(
                f"\r  generated {self.counts['attacks']:,}/{self.attacks:,} attacks, "
                f"{self.counts['pieces']:,} pieces ({rate:,.0f} attacks/s)",
                end="",
                file=sys.stderr,
                flush=True,
            )
        print(file=sys.stderr)
        self.finish(order)
        return self.counts

    def finish(self, models) -> None:
        """Sequences past the explicit ids (PostgreSQL), then fresh planner statistics."""
        from django.core.management.color import no_style
        from django.db import connection

        from memory.models import AttackResult, HarmCategory, Label
        from seeds.models import SeedDataset

        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                extra = [
                    Label,
                    HarmCategory,
                    SeedDataset,
                    AttackResult.label_index.through,
                    AttackResult.harm_category_index.through,
                ]
                for sql in connection.ops.sequence_reset_sql(no_style(), [*models, *extra]):
                    cursor.execute(sql)
                # What autovacuum does soon after a bulk load: statistics and the visibility
                # map (index-only scans need it).
                cursor.execute("VACUUM ANALYZE")
            else:
                # SQLite keeps no statistics unless asked; without them its planner prefers a
                # primary-key index over a covering one (see docs/dashboards.md).
                cursor.execute("ANALYZE")


def generate(*, attacks: int, pieces: int, seed: int = 11) -> dict[str, int]:
    """Write the synthetic memory (100,000 attacks by default); returns row counts."""
    return Generator(attacks=attacks, pieces=pieces, seed=seed).run()


# --- timing ----------------------------------------------------------------------------------


class QueryCounter:
    """Counts SQL statements through ``execute_wrapper`` (a test client request resets
    ``connection.queries`` when it starts, so CaptureQueriesContext would see none)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def _time(fn: Callable[[], object], repeat: int) -> tuple[float, float, float, int]:
    """(first run ms, median ms of the next ``repeat`` runs, their median CPU ms, queries).

    CPU is this process's time: on SQLite that is the database's work too, and unlike the
    wall clock it does not grow when other processes share the machine.
    """
    from django.db import connection

    counter = QueryCounter()
    with connection.execute_wrapper(counter):
        started = time.perf_counter()
        fn()
        first = (time.perf_counter() - started) * 1000
    runs, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    if not runs:
        return first, first, float("nan"), counter.count
    return first, statistics.median(runs), statistics.median(cpu), counter.count


def measure(repeat: int) -> Iterator[tuple[str, str, float, float, float, int]]:
    """Yield (filter, widget, first ms, median ms, CPU ms, queries) per widget and the page."""
    from django.contrib.auth.models import User
    from django.http import QueryDict
    from django.test import Client

    from memory.dashboards.widgets import LATE_PARTS, WIDGETS, DashboardRequest

    user = User.objects.filter(is_superuser=True).first() or User.objects.create_superuser(
        "bench-admin", "bench@example.org", "bench-pw-123"
    )
    client = Client()
    client.force_login(user)
    for name, query in _page_filters().items():
        request = DashboardRequest.from_query(QueryDict(query))
        assert request.valid, request.errors
        for widget in WIDGETS:
            timing = _time(lambda w=widget, r=request: w.build(r), repeat)
            yield (name, widget.name, *timing)
        if name in ("none", "label"):
            timing = _time(lambda q=query: _get(client, "/dashboards/", q), max(1, repeat // 2))
            yield (name, "page (attack-level)", *timing)
            total = list(timing)
            for part in LATE_PARTS:
                url = f"/dashboards/part/{part}/"
                timing = _time(lambda u=url, q=query: _get(client, u, q), max(1, repeat // 2))
                yield (name, f"page part {part}", *timing)
                total = [a + b for a, b in zip(total, timing, strict=True)]
            yield (name, "page + parts, one by one", *total)


#: The whole page's budget per database, in milliseconds (issue 23): the page with its three
#: late parts, at 100,000 attacks.
PAGE_BUDGET_MS = {"sqlite": 1000.0, "postgresql": 300.0}
PAGE_FILTERS = ("none", "label")


def _database_cpu() -> Callable[[], float]:
    """Seconds of CPU this process's database connection has used so far.

    SQLite runs in this process, so its work is in ``time.process_time``. A PostgreSQL
    backend is a process of its own on this machine: its user and system time are read from
    ``/proc`` (connections persist between requests, ``DATABASE_CONN_MAX_AGE``).
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return lambda: 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    ticks = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # not on this machine, or the connection was closed
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / ticks

    return read


def measure_pages(repeat: int) -> Iterator[tuple[str, float, float, int]]:
    """Yield (filter, wall ms, CPU ms, queries) of the whole page: the page and its late parts
    requested one after another, cold (no cache of any figure; each request reads the
    database), median of ``repeat`` after a warm-up. CPU is this process's plus, on
    PostgreSQL, the server backend's. Each request's own figures follow as
    ``<filter>/<request>`` (``page``, or the part's name), from the same runs."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client

    from memory.dashboards.widgets import LATE_PARTS

    user = User.objects.filter(is_superuser=True).first() or User.objects.create_superuser(
        "bench-admin", "bench@example.org", "bench-pw-123"
    )
    client = Client()
    client.force_login(user)
    urls = ["/dashboards/"] + [f"/dashboards/part/{part}/" for part in LATE_PARTS]
    _get(client, urls[0], "")  # opens the connection the CPU reader follows
    database_cpu = _database_cpu()
    for name in PAGE_FILTERS:
        query = _page_filters()[name]

        each: dict[str, list[tuple[float, float]]] = {url: [] for url in urls}
        counts = {url: QueryCounter() for url in urls}

        def whole(
            q: str = query,
            each: dict[str, list[tuple[float, float]]] = each,
            counts: dict[str, QueryCounter] = counts,
        ) -> None:
            for url in urls:
                started, cpu, db = time.perf_counter(), time.process_time(), database_cpu()
                with connection.execute_wrapper(counts[url]):
                    _get(client, url, q)
                each[url].append(
                    (
                        (time.perf_counter() - started) * 1000,
                        (time.process_time() - cpu + database_cpu() - db) * 1000,
                    )
                )

        whole()  # the warm-up, counting queries
        queries = sum(counter.count for counter in counts.values())
        for figures in each.values():  # the warm-up's are left out
            figures.clear()
        walls, cpus = [], []
        for _ in range(repeat):
            started, cpu, db = time.perf_counter(), time.process_time(), database_cpu()
            whole()
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - cpu + database_cpu() - db) * 1000)
        yield name, statistics.median(walls), statistics.median(cpus), queries
        for url, figures in each.items():
            request = url.strip("/").split("/")[-1] if "part" in url else "page"
            wall = statistics.median(w for w, _ in figures)
            cpu_ms = statistics.median(c for _, c in figures)
            yield f"{name}/{request}", wall, cpu_ms, counts[url].count // (repeat + 1)


def _page_filters() -> dict[str, str]:
    return {
        "none": "",
        "label": "labels=operation:op_red_fox",
        "label+target": "labels=operator:alice&target_model=llama-3-70b",
        "30 days": f"timestamp_after={(datetime.now(UTC) - timedelta(days=30)).date().isoformat()}",
    }


def _get(client, url: str, query: str) -> None:
    response = client.get(f"{url}?{query}")
    assert response.status_code == 200, response.status_code


# --- driver ----------------------------------------------------------------------------------


def _child(args: argparse.Namespace) -> None:
    """Runs inside a process whose DATABASE_URL points at the benchmark database."""
    if args.code:
        # Another checkout's application (``--baseline``), measured by this script.
        sys.path.insert(0, args.code)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "redteam.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    import memory
    from memory.models import AttackResult

    call_command("migrate", verbosity=0)
    if not AttackResult.objects.exists():
        started = time.perf_counter()
        counts = generate(attacks=args.attacks, pieces=args.pieces)
        # On stderr: with --pages-only stdout carries only the RESULT lines.
        print(
            f"  generated in {time.perf_counter() - started:.0f} s: "
            + ", ".join(f"{v:,} {k}" for k, v in counts.items()),
            file=sys.stderr if args.pages_only else sys.stdout,
        )
    elif not args.pages_only:
        print(f"  reusing {AttackResult.objects.count():,} attack results")
    if args.pages_only:
        # Served as a production worker serves it: through the WSGI module, which loads the
        # URLconf and freezes the start-up objects out of the cyclic collector (each
        # checkout's own, so --baseline's too).
        import redteam.wsgi  # noqa: F401

        _override_storages()
        code = Path(memory.__file__).resolve().parents[1]
        for name, wall, cpu, queries in measure_pages(args.repeat):
            print(f"RESULT {code} {name} {wall:.1f} {cpu:.1f} {queries}", flush=True)
        return
    vendor = connection.vendor
    _override_storages()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(
        f"{'database':<10} {'filter':<13} {'widget':<24} {'first':>8} {'median':>8} "
        f"{'cpu':>8} {'queries':>7}"
    )
    for filter_name, widget, first, median, cpu, queries in measure(args.repeat):
        print(
            f"{vendor:<10} {filter_name:<13} {widget:<24} {first:>5.0f} ms {median:>5.0f} ms "
            f"{cpu:>5.0f} ms {queries:>7}",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


def _override_storages() -> None:
    """The page is rendered in process: no collectstatic manifest here."""
    from django.conf import settings
    from django.test.utils import override_settings

    storages = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    override_settings(STORAGES=storages).enable()


def calibration() -> str:
    """The machine's calibration loop (docs/performance.md), as ``timeit`` prints it."""
    out = subprocess.run(
        [sys.executable, "-m", "timeit", "sum(i*i for i in range(2_000_000))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def _child_command(args: argparse.Namespace, python: str, code: str | None) -> list[str]:
    command = [python, __file__, "--child", "--attacks", str(args.attacks)]
    command += ["--pieces", str(args.pieces), "--repeat", str(args.repeat)]
    if code:
        command += ["--code", code]
    if args.pages_only or args.baseline:
        command.append("--pages-only")
    return command


def _pages(args: argparse.Namespace, env: dict[str, str], database: str) -> None:
    """Alternate this checkout's whole page with ``--baseline``'s on the same database and
    print each against the budget and against the baseline measured in the same run."""
    budget = PAGE_BUDGET_MS["sqlite" if database == "sqlite" else "postgresql"]
    runs: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    print(f"calibration before: {calibration()}")
    for round_ in range(args.rounds):
        sides = [("new", sys.executable, None)]
        if args.baseline:
            baseline_python = str(Path(args.baseline) / ".venv" / "bin" / "python")
            sides.append(("baseline", baseline_python, args.baseline))
        if round_ % 2:
            sides.reverse()
        for side, python, code in sides:
            out = subprocess.run(
                _child_command(args, python, code),
                env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
                cwd=ROOT,
                check=True,
                # stderr passes through: generation progress and a failing child's traceback.
                stdout=subprocess.PIPE,
                text=True,
            ).stdout
            for line in out.splitlines():
                if line.startswith("RESULT "):
                    _, where, name, wall, cpu, queries = line.split()
                    runs.setdefault((side, name), []).append(
                        (float(wall), float(cpu), int(queries))
                    )
                    print(
                        f"  round {round_ + 1} {side:<8} ({where}) {name:<18} "
                        f"{float(wall):>7.0f} ms wall {float(cpu):>7.0f} ms CPU {queries} queries"
                    )
    print(f"calibration after: {calibration()}")
    print(
        f"{'database':<10} {'filter/request':<18} {'code':<9} {'wall':>9} {'CPU':>9} "
        f"{'queries':>7} {'CPU/budget':>10} {'wall/budget':>11} {'CPU new/old':>11}"
    )
    names = [n for _, n in runs if n in PAGE_FILTERS or n.split("/")[0] in PAGE_FILTERS]
    for name in dict.fromkeys(sorted(names, key=lambda n: (n.split("/")[0], "/" in n, n))):
        old_cpu = None
        if ("baseline", name) in runs:
            old_cpu = statistics.median(cpu for _, cpu, _ in runs[("baseline", name)])
        for side in ("baseline", "new"):
            if (side, name) not in runs:
                continue
            wall = statistics.median(w for w, _, _ in runs[(side, name)])
            cpu = statistics.median(c for _, c, _ in runs[(side, name)])
            queries = runs[(side, name)][0][2]
            ratio = f"{cpu / old_cpu:.2f}" if old_cpu and side == "new" else ""
            print(
                f"{database:<10} {name:<18} {side:<9} {wall:>6.0f} ms {cpu:>6.0f} ms {queries:>7} "
                f"{cpu / budget:>10.2f} {wall / budget:>11.2f} {ratio:>11}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--attacks", type=int, default=100_000)
    parser.add_argument("--pieces", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs after the first")
    parser.add_argument("--keep", action="store_true", help="keep (and reuse) the databases")
    parser.add_argument(
        "--pg-jit-off",
        action="store_true",
        help="connect to PostgreSQL with jit=off (its JIT compiles for ~300 ms per big query)",
    )
    parser.add_argument(
        "--pages-only",
        action="store_true",
        help="time only the whole page (page and late parts), against its budget",
    )
    parser.add_argument(
        "--baseline",
        metavar="CHECKOUT",
        help="another checkout (with its .venv) whose page is timed alternately on the same "
        "databases, e.g. the main branch's; implies --pages-only",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --baseline")
    parser.add_argument(
        "--pg-name",
        help="the PostgreSQL database to use (default redline_bench_dashboards_<attacks>), "
        "e.g. a copy made with CREATE DATABASE … TEMPLATE …",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    print(f"{args.attacks:,} attack results, ~{args.pieces:,} pieces; {os.cpu_count()} CPUs")
    for database in args.databases.split(","):
        env = {
            **os.environ,
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-" + "x" * 50,
            "ALLOWED_HOSTS": "testserver",
            "SECURE_SSL_REDIRECT": "0",
            "LOG_LEVEL": "WARNING",
        }
        pg_name = args.pg_name or f"redline_bench_dashboards_{args.attacks}"
        sqlite_path = ROOT / "var" / f"bench-dashboards-{args.attacks}.sqlite3"
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
            options = ["jit=off"] if args.pg_jit_off else []
            if args.pages_only or args.baseline:
                # The whole page's CPU is read from its backend's /proc entry: parallel
                # workers, processes of their own, would take part of it out of sight.
                options.append("max_parallel_workers_per_gather=0")
            if options:
                url += "?options=" + "%20".join(f"-c%20{o.replace('=', '%3D')}" for o in options)
            env["DATABASE_URL"] = url
        print(f"--- {database}")
        try:
            if args.pages_only or args.baseline:
                _pages(args, env, database)
            else:
                subprocess.run(
                    _child_command(args, sys.executable, None), env=env, cwd=ROOT, check=True
                )
        finally:
            if not args.keep:
                if database == "sqlite":
                    for suffix in ("", "-wal", "-shm"):
                        Path(f"{sqlite_path}{suffix}").unlink(missing_ok=True)
                else:
                    pg_database(pg_name, create=False)


if __name__ == "__main__":
    main()
