"""Write a normalised batch: check it against the database, then bulk-write it atomically.

The one write path for memory objects: the API, the importers and the demo data all end up in
:func:`ingest_batch`. It reads what the batch touches in a fixed number of queries, decides per
item whether it is new, unchanged, updated or in conflict, and writes only the differences with
bulk statements, so the number of queries does not grow with the batch.

Rules (issue 3, contract §3, §6, §7): pieces and scores are immutable (the same id with other
content is a conflict); attack results, conversations, scenario results and seeds are
upserted (the later version replaces the stored one); references must resolve within the
batch or the database (an attack's last response / last score / owning scenario). Rows of
PyRIT tables Redline does not model are upserted verbatim by (table, primary key).

After the batch commits, the attacks it stored as successes or turned into one are announced
in one signal (``memory.storage.events``; the webhooks' ``attack.succeeded``); a re-sent batch
changes nothing and announces nothing.
"""

from __future__ import annotations

import copy
import hashlib
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    HarmCategory,
    Label,
    Message,
    MessagePiece,
    PieceConverter,
    PyritRecord,
    RelatedConversation,
    ScenarioResult,
    ScorableContent,
    Score,
    rollup_sql,
)
from memory.models.media import media_key, media_store
from memory.models.media_links import MediaIndex
from memory.models.push import PushSource, push_source_key
from memory.storage import events
from memory.storage.batch import NormalizedBatch, NormalizedMessage
from memory.storage.identifiers import identifiers_store
from memory.storage.lengths import batch_problems
from memory.storage.seeds_write import SeedPlan
from memory.storage.specs import (
    AttackResultSpec,
    PieceSpec,
    PushSourceSpec,
    ScenarioResultSpec,
    ScoreSpec,
)
from redteam.core import identifiers as ids
from redteam.core.bulk import (
    existing_values,
    insert_ignore,
    insert_rows,
    stored_column,
    update_rows,
)
from redteam.core.choices import AttackOutcome, TimestampSource, is_media_value
from redteam.core.collector import fewer_collections
from redteam.core.errors import Problem
from redteam.core.hashing import sha256_text
from redteam.core.scoring import score_numeric_value

__all__ = [
    "CREATED",
    "KINDS",
    "IngestReport",
    "converted_value",
    "given_sha256",
    "harm_category_rows",
    "ingest_batch",
    "ingest_report",
    "label_pair",
    "label_rows",
    "score_homes",
    "scored_content_id",
    "serialise_writers",
    "unlinked_media_values",
    "write_time",
]

KINDS = (
    "conversations",
    "message_pieces",
    "scores",
    "attack_results",
    "scenario_results",
    "seeds",
    "seed_groups",
    "seed_datasets",
    "scorable_contents",
    "pyrit_records",
)
_KIND_OF_ITEM = {
    "conversation": "conversations",
    "message_piece": "message_pieces",
    "score": "scores",
    "attack_result": "attack_results",
    "scenario_result": "scenario_results",
    "seed": "seeds",
    "seed_group": "seed_groups",
    "seed_dataset": "seed_datasets",
    "scorable_content": "scorable_contents",
    "pyrit_record": "pyrit_records",
}
CREATED, UPDATED, UNCHANGED, ERROR = "created", "updated", "unchanged", "error"


@dataclass
class IngestReport:
    """What an ingestion did: counts per kind, every error, and (partial ingestions, whose
    response lists them) each item's fate."""

    counts: dict[str, dict[str, int]]
    errors: list[dict[str, Any]]
    items: list[dict[str, Any]]
    seconds: float
    written: bool
    partial: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing was refused."""
        return not self.errors

    def as_dict(self, *, with_items: bool = False) -> dict[str, Any]:
        """The JSON body of an API response."""
        body: dict[str, Any] = {
            "written": self.written,
            "counts": self.counts,
            "errors": self.errors,
            "seconds": round(self.seconds, 4),
        }
        if with_items:
            body["items"] = self.items
        return body


def write_time() -> datetime:
    """The time a row written now gets where PyRIT gave none (UTC, aware)."""
    return datetime.now(UTC)


def ingest_batch(
    *,
    batch: NormalizedBatch,
    problems: Iterable[Problem] = (),
    partial: bool = False,
    started: float | None = None,
    list_items: bool = False,
    actor: AbstractBaseUser | None = None,
    checked: bool = False,
) -> IngestReport:
    """Ingest a normalised batch in one transaction.

    Atomic by default: if any item has a problem nothing is written and every problem is
    reported. With ``partial`` the items with problems (and items that depended on them) are
    left out and the rest is written. ``list_items`` fills the report's per-item list (a
    partial API call's response shows it). ``actor`` is the user the history of curated rows
    (seeds, groups, datasets) names. ``checked`` says that the caller ran the value checks
    (``memory.storage.lengths.batch_problems``) on ``batch`` and that ``problems`` holds
    theirs: they are not run again.
    """
    started = time.perf_counter() if started is None else started
    problems = list(problems)
    with fewer_collections(), transaction.atomic():
        serialise_writers()
        # Items the caller already refused (text no database can hold) are never looked up:
        # their values would fail the query itself.
        work = _without(batch, _failed_paths(batch, problems)) if problems else batch
        while True:
            if partial:
                work = _without(work, _failed_paths(batch, problems))
            plan = _Plan(work, actor=actor, checked=checked)
            plan.check()
            problems.extend(plan.problems)
            if not plan.problems or not partial:
                break
        written = partial or not problems
        if written:
            plan.write()
            events.attacks_succeeded_announce(plan.succeeded)
    return ingest_report(
        batch, problems, plan if written else None, started, written, partial, list_items
    )


# One writer at a time. SQLite's IMMEDIATE transactions already take the database's write lock
# at BEGIN; on PostgreSQL the writers' lock (rollup_sql.WRITERS_LOCK, a transaction-scoped
# advisory lock) does the same, so the checks read what earlier writers committed (e.g. the
# pieces already in a message, whose positions a new piece continues), merged fields are never
# overwritten by a concurrent writer, and the dashboards' rollups count what other writers
# committed. The rollup triggers take the same lock, so a writer that forgets this still waits
# at its first counted write; taking it first thing, before any row is locked, keeps two
# writers from each holding what the other waits for (a deadlock). Readers are not blocked.


def serialise_writers(*, using: str | None = None) -> None:
    """Take the writers' lock for the current transaction (see above); every writer of memory
    rows calls it first thing inside its ``atomic`` block."""
    connection = transaction.get_connection(using)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [rollup_sql.WRITERS_LOCK])


# --- reporting --------------------------------------------------------------------------------


def _failed_paths(batch: NormalizedBatch, problems: list[Problem]) -> set[str]:
    failed = set()
    for problem in problems:
        item = batch.item_at(problem.path)
        if item is not None:
            failed.add(item.path)
    return failed


def ingest_report(
    batch: NormalizedBatch,
    problems: list[Problem],
    plan: _Plan | None,
    started: float,
    written: bool,
    partial: bool,
    list_items: bool,
) -> IngestReport:
    """The report of one batch: counts per kind (each item's status in ``plan``, anything it
    does not name unchanged), every problem as an error, and each item when ``list_items``.
    ``plan`` is anything with ``status`` (path → status), ``implicit_conversations`` and
    ``implicit_datasets``; None
    when nothing was written."""
    counts = {kind: {CREATED: 0, UPDATED: 0, UNCHANGED: 0, ERROR: 0} for kind in KINDS}
    errors = []
    by_item: dict[str, list[str]] = defaultdict(list)
    for problem in problems:
        item = batch.item_at(problem.path)
        errors.append(
            {"path": problem.path, "id": item.id if item else None, "message": problem.message}
        )
        if item is not None:
            by_item[item.path].append(problem.message)
    items = []
    for path, item in batch.items.items():
        kind = _KIND_OF_ITEM[item.kind]
        if path in by_item:
            status = ERROR
        elif plan is not None:
            status = plan.status.get(path, UNCHANGED)
        else:
            status = "not written"
        if status in counts[kind]:
            counts[kind][status] += 1
        if not list_items:
            # Only a partial ingestion's response lists items: an entry for each of a batch's
            # ~2,000 items cost ~3 % of an atomic ingestion's CPU, for nothing.
            continue
        entry: dict[str, Any] = {"path": path, "type": kind, "id": item.id, "status": status}
        if path in by_item:
            entry["errors"] = by_item[path]
        items.append(entry)
    if plan is not None:
        # conversations created implicitly (by a piece or an attack) have no item of their own
        counts["conversations"][CREATED] += plan.implicit_conversations
        # likewise datasets created for the dataset names seeds carry (all of PyRIT's)
        counts["seed_datasets"][CREATED] += plan.implicit_datasets
    return IngestReport(
        counts=counts,
        errors=errors,
        items=items,
        seconds=time.perf_counter() - started,
        written=written and plan is not None,
        partial=partial,
    )


def _without(batch: NormalizedBatch, failed: set[str]) -> NormalizedBatch:
    """A copy of ``batch`` without the items at ``failed`` paths (messages regrouped)."""
    if not failed:
        return batch
    keep = lambda spec: batch.path_of(spec) not in failed  # noqa: E731
    pieces = [p for p in batch.pieces if p.path not in failed]
    kept_ids = {id(p) for p in pieces}
    messages = []
    for message in batch.messages:
        kept = [p for p in message.pieces if id(p) in kept_ids]
        if kept:
            messages.append(
                NormalizedMessage(
                    conversation_id=message.conversation_id,
                    sequence=message.sequence,
                    role=kept[0].role,
                    pieces=kept,
                )
            )
    groups = [g for g in batch.seed_groups if g.path not in failed]
    group_seed_ids = {s.id for g in batch.seed_groups if g.path in failed for s in g.seeds}
    return NormalizedBatch(
        pieces=pieces,
        messages=messages,
        conversations=[c for c in batch.conversations if keep(c)],
        scores=[s for s in batch.scores if keep(s)],
        attack_results=[a for a in batch.attack_results if keep(a)],
        seeds=[s for s in batch.seeds if keep(s) and s.id not in group_seed_ids],
        seed_groups=groups,
        scenario_results=[s for s in batch.scenario_results if keep(s)],
        scorable_contents=[c for c in batch.scorable_contents if keep(c)],
        pyrit_records=[r for r in batch.pyrit_records if keep(r)],
        items=batch.items,
        meta=batch.meta,
        _paths=batch._paths,
    )


# --- the plan ---------------------------------------------------------------------------------


def converted_value(spec: PieceSpec) -> tuple[str, str]:
    """PyRIT 0.12: only a missing converted value falls back to the original (and its type)."""
    value = spec.original_value if spec.converted_value is None else spec.converted_value
    return value, spec.converted_value_data_type or spec.original_value_data_type


def given_sha256(value: str, data_type: str, given: str | None, media: bytes | None) -> str | None:
    """The ``*_sha256`` PyRIT wrote, as it wrote it: none stays none (PyRIT hashes no system
    piece, for one). Only media bytes sent along are hashed, which is how they are linked."""
    if given is not None:
        return given
    if media is not None and is_media_value(data_type, value):
        return hashlib.sha256(media).hexdigest()
    return None


def _same_time(stored: datetime, given: datetime | None) -> bool:
    return given is None or stored == given


@dataclass
class _PieceRow:
    spec: PieceSpec
    path: str
    conversation_id: str
    sequence: int
    role: str


@dataclass
class _Plan:
    """Reads and decisions for one batch; ``write`` then performs them."""

    batch: NormalizedBatch
    actor: AbstractBaseUser | None = None
    #: The value checks ran before (``ingest_batch``'s ``checked``).
    checked: bool = False
    problems: list[Problem] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    implicit_conversations: int = 0
    implicit_datasets: int = 0

    # --- checks (database reads only) ---------------------------------------------------------

    def check(self) -> None:
        batch = self.batch
        if not self.checked:
            self.problems.extend(batch_problems(batch))
        self.conversation_ids = self._conversation_ids()
        stored = existing_values(Conversation, "conversation_id", self.conversation_ids)
        self.existing_conversations = (
            {c.conversation_id: c for c in Conversation.objects.filter(conversation_id__in=stored)}
            if stored
            else {}
        )
        self._check_pieces()
        self._check_scorable_contents()
        self._check_scores()
        self._check_scenarios()
        self._check_attacks()
        self._check_records()
        self.seeds = SeedPlan(
            seeds=batch.seeds,
            groups=batch.seed_groups,
            datasets=batch.seed_datasets,
            path_of=batch.path_of,
            actor=self.actor,
        )
        self.seeds.check()
        self.problems.extend(self.seeds.problems)
        self.status.update(self.seeds.status)

    def _conversation_ids(self) -> set[str]:
        batch = self.batch
        found = {m.conversation_id for m in batch.messages}
        found.update(c.conversation_id for c in batch.conversations)
        for attack in batch.attack_results:
            found.add(attack.conversation_id)
            found.update(ref.conversation_id for ref in attack.related_conversations)
        return found

    def _check_pieces(self) -> None:
        batch = self.batch
        self.messages_existing: dict[tuple[str, int], tuple[int, str]] = {}
        touched = {m.conversation_id for m in batch.messages} & set(self.existing_conversations)
        if touched:
            rows = Message.objects.filter(conversation__conversation_id__in=touched).values_list(
                "id", "conversation__conversation_id", "sequence", "role"
            )
            for pk, conversation_id, sequence, role in rows:
                self.messages_existing[(conversation_id, sequence)] = (pk, role)
        for message in batch.messages:
            existing = self.messages_existing.get((message.conversation_id, message.sequence))
            if existing is not None and existing[1] != message.role:
                for piece in message.pieces:
                    self.problems.append(
                        Problem(
                            f"{piece.path}.role",
                            f"role {message.role!r} differs from the stored message's role "
                            f"{existing[1]!r} (conversation {message.conversation_id!r}, "
                            f"sequence {message.sequence}); a message has one role",
                        )
                    )
        piece_ids = [p.spec.id for p in batch.pieces]
        self.pieces_existing: set[uuid.UUID] = set()
        if not piece_ids:
            return
        fields = (
            "id",
            "message__conversation__conversation_id",
            "message__sequence",
            "message__role",
            "original_value",
            "original_value_data_type",
            "converted_value",
            "converted_value_data_type",
            "response_error",
            "original_prompt_id",
            "timestamp",
            "original_value_sha256",
        )
        stored_ids = existing_values(MessagePiece, "id", piece_ids)
        stored = (
            {
                row[0]: row
                for row in MessagePiece.objects.filter(id__in=stored_ids).values_list(*fields)
            }
            if stored_ids
            else {}
        )
        for piece in batch.pieces:
            row = stored.get(piece.spec.id)
            if row is None:
                continue
            self.pieces_existing.add(piece.spec.id)
            spec = piece.spec
            converted, converted_type = converted_value(spec)
            differences = [
                name
                for name, ours, theirs in (
                    ("conversation_id", piece.conversation_id, row[1]),
                    ("sequence", piece.sequence, row[2]),
                    ("role", piece.role, row[3]),
                    ("original_value", spec.original_value, row[4]),
                    ("original_value_data_type", spec.original_value_data_type, row[5]),
                    ("converted_value", converted, row[6]),
                    ("converted_value_data_type", converted_type, row[7]),
                    ("response_error", spec.response_error, row[8]),
                    ("original_prompt_id", spec.original_prompt_id or row[9], row[9]),
                    ("timestamp", spec.timestamp or row[10], row[10]),
                    ("original_value_sha256", spec.original_value_sha256 or row[11], row[11]),
                )
                if ours != theirs
            ]
            if differences:
                self.problems.append(
                    Problem(
                        piece.path,
                        f"conflict: piece {spec.id} is stored with a different "
                        f"{', '.join(differences)}; pieces are immutable",
                    )
                )
            else:
                self.status[piece.path] = UNCHANGED

    def _check_scorable_contents(self) -> None:
        """Loose content is immutable like pieces: a stored id is left as it is."""
        contents = self.batch.scorable_contents
        wanted = {c.id for c in contents}
        for score in self.batch.scores:
            content_id = scored_content_id(score.scorable)
            if content_id is not None:
                wanted.add(content_id)
        self.contents_stored: set[uuid.UUID] = existing_values(ScorableContent, "id", wanted)
        for content in contents:
            if content.id in self.contents_stored:
                self.status[self.batch.path_of(content)] = UNCHANGED

    def _check_scores(self) -> None:
        scores = self.batch.scores
        self.scores_existing: set[uuid.UUID] = set()
        # Stored scores' scorers (identifier pks), by score id: an attack's last scorer.
        self.stored_scorers: dict[uuid.UUID, int] = {}
        if not scores:
            return
        fields = (
            "id",
            "score_value",
            "score_type",
            "message_piece_id",
            "status",
            "score_value_description",
            "score_rationale",
            "score_category",
            "objective",
            "scorer_class_identifier__hash",
            "timestamp",
            "scored_expectation",
            "scorer_class_identifier_id",
        )
        stored_ids = existing_values(Score, "id", [s.id for s in scores])
        stored = (
            {row[0]: row for row in Score.objects.filter(id__in=stored_ids).values_list(*fields)}
            if stored_ids
            else {}
        )
        for spec in scores:
            row = stored.get(spec.id)
            if row is None:
                continue
            self.scores_existing.add(spec.id)
            self.stored_scorers[spec.id] = row[12]
            differences = [
                name
                for name, ours, theirs in (
                    ("score_value", spec.score_value, row[1]),
                    ("score_type", spec.score_type, row[2]),
                    ("message_piece_id", spec.message_piece_id, row[3]),
                    ("status", spec.status, row[4]),
                    ("score_value_description", spec.score_value_description, row[5]),
                    ("score_rationale", spec.score_rationale, row[6]),
                    ("score_category", spec.score_category, row[7]),
                    ("objective", spec.objective, row[8]),
                    ("scorer_class_identifier", spec.scorer_class_identifier.hash, row[9]),
                    ("timestamp", spec.timestamp or row[10], row[10]),
                    ("scored_expectation", spec.scored_expectation, row[11]),
                )
                if ours != theirs
            ]
            path = self.batch.path_of(spec)
            if differences:
                self.problems.append(
                    Problem(
                        path,
                        f"conflict: score {spec.id} is stored with a different "
                        f"{', '.join(differences)}; scores are immutable",
                    )
                )
            else:
                self.status[path] = UNCHANGED

    def _check_scenarios(self) -> None:
        specs = self.batch.scenario_results
        self.scenarios_existing = (
            {s.id: s for s in ScenarioResult.objects.filter(id__in=[s.id for s in specs])}
            if specs
            else {}
        )

    def _check_attacks(self) -> None:
        batch = self.batch
        attacks = batch.attack_results
        self.attacks_existing: dict[uuid.UUID, AttackResult] = {}
        self.related_existing: set[tuple[uuid.UUID, str]] = set()
        if not attacks:
            return
        batch_pieces = {p.spec.id for p in batch.pieces}
        batch_scores = {s.id for s in batch.scores}
        batch_scenarios = {s.id for s in batch.scenario_results}
        wanted_pieces = {a.last_response_id for a in attacks} - batch_pieces - {None}
        wanted_scores = {
            score for a in attacks for score in (a.last_score_id, a.human_score_id)
        } - (batch_scores | {None})
        wanted_scenarios = {a.attribution_parent_id for a in attacks} - batch_scenarios - {None}
        known_pieces = existing_values(MessagePiece, "id", wanted_pieces)
        # Stored scores with their scorer: a last score's scorer is copied onto the attack.
        stored_scorers = stored_column(
            Score, "id", wanted_scores, column="scorer_class_identifier_id"
        )
        self.stored_scorers.update(stored_scorers)
        known_scores = set(stored_scorers)
        known_scenarios = existing_values(ScenarioResult, "id", wanted_scenarios)
        known_pieces |= batch_pieces
        known_scores |= batch_scores
        known_scenarios |= batch_scenarios
        for spec in attacks:
            path = batch.path_of(spec)
            for key, value, known in (
                ("last_response", spec.last_response_id, known_pieces),
                ("last_score", spec.last_score_id, known_scores),
                ("human_score", spec.human_score_id, known_scores),
                ("attribution_parent_id", spec.attribution_parent_id, known_scenarios),
            ):
                if value is not None and value not in known:
                    what = {
                        "last_response": "piece",
                        "last_score": "score",
                        "human_score": "score",
                    }.get(key, "scenario result")
                    self.problems.append(
                        Problem(
                            f"{path}.{key}",
                            f"refers to {what} {value}, which is neither in this batch nor stored",
                        )
                    )
        stored_attacks = existing_values(AttackResult, "id", [a.id for a in attacks])
        self.attacks_existing = (
            {
                a.id: a
                for a in AttackResult.objects.filter(id__in=stored_attacks).select_related(
                    "conversation", "attack_identifier", "atomic_attack_identifier"
                )
            }
            if stored_attacks
            else {}
        )
        if self.attacks_existing:
            self.related_existing = set(
                RelatedConversation.objects.filter(
                    attack_result_id__in=self.attacks_existing
                ).values_list("attack_result_id", "conversation__conversation_id")
            )

    def _check_records(self) -> None:
        """The stored verbatim rows the batch names, by (table, primary key); a row sent twice
        in one batch is a problem (which of the two is PyRIT's?)."""
        records = self.batch.pyrit_records
        self.records_existing: dict[tuple[str, str], PyritRecord] = {}
        if not records:
            return
        seen: dict[tuple[str, str], str] = {}
        for spec in records:
            key = (spec.table, spec.pk)
            path = self.batch.path_of(spec)
            if key in seen:
                self.problems.append(
                    Problem(path, f"{spec.table} row {spec.pk} appears twice (also at {seen[key]})")
                )
            seen[key] = path
        tables = {spec.table for spec in records}
        pks = {spec.pk for spec in records}
        # (table, pk) pairs of one batch share few tables: one query over both columns
        self.records_existing = {
            (r.table, r.pk_text): r
            for r in PyritRecord.objects.filter(table__in=tables, pk_text__in=pks)
            if (r.table, r.pk_text) in seen
        }

    # --- writes -------------------------------------------------------------------------------

    def write(self) -> None:
        self.push_source = self._push_source()
        self.rows = identifiers_store(identifiers=self._identifiers())
        self._collect_tags()
        self._write_scenarios()
        self._write_conversations()
        self._write_pieces()
        self._write_scorable_contents()
        self._write_scores()
        self._write_attacks()
        self._write_records()
        self._write_tags()
        self.seeds.write()
        # the seed plan decides created / updated / unchanged only while writing
        self.status.update(self.seeds.status)
        self.implicit_datasets = self.seeds.implicit_datasets

    def _push_source(self) -> PushSource | None:
        """The batch's push source (``redline-push``), recorded once and touched per push."""
        spec = self.batch.meta.get("push_source")
        if not isinstance(spec, PushSourceSpec):
            return None
        now = write_time()
        source, _ = PushSource.objects.update_or_create(
            key=push_source_key(spec.host, spec.database),
            defaults={"last_push_at": now},
            create_defaults={"host": spec.host, "database": spec.database, "last_push_at": now},
        )
        return source

    def _collect_tags(self) -> None:
        """Per conversation: the labels, harm categories and earliest time the batch adds.

        New conversations are created with them; stored ones are merged in ``_write_tags``.
        """
        self.piece_times: dict[uuid.UUID, datetime] = {}
        self.started: dict[str, datetime] = {}
        self.conversation_tags: dict[str, tuple[dict[str, Any], list[str]]] = {}

        def tag(cid: str, labels: dict[str, Any], harms: list[str]) -> None:
            merged_labels, merged_harms = self.conversation_tags.setdefault(cid, ({}, []))
            merged_labels.update(labels)
            merged_harms.extend(h for h in harms if h not in merged_harms)

        now = write_time()
        for piece in self.batch.pieces:
            spec = piece.spec
            if spec.id in self.pieces_existing:
                continue
            timestamp = self.piece_times[spec.id] = spec.timestamp or now
            cid = piece.conversation_id
            if cid not in self.started or timestamp < self.started[cid]:
                self.started[cid] = timestamp
            tag(cid, spec.labels, spec.targeted_harm_categories)
        for spec in self.batch.attack_results:
            # §9.2: the attack's labels also tag its conversations
            related = [r.conversation_id for r in spec.related_conversations]
            for cid in [spec.conversation_id, *related]:
                tag(cid, indexed_labels(spec), spec.targeted_harm_categories)

    def _identifiers(self) -> Iterable[ids.ComponentIdentifier | None]:
        batch = self.batch
        for piece in batch.pieces:
            if piece.spec.id in self.pieces_existing:
                continue
            spec = piece.spec
            yield spec.prompt_target_identifier
            yield spec.attack_identifier
            yield spec.scorer_identifier
            yield from spec.converter_identifiers
        for score in batch.scores:
            if score.id not in self.scores_existing:
                yield score.scorer_class_identifier
        for attack in batch.attack_results:
            yield attack_strategy(attack)
            yield attack.atomic_attack_identifier
        for conversation in batch.conversations:
            yield conversation.target_identifier
        for scenario in batch.scenario_results:
            yield scenario.scenario_identifier
            yield scenario.objective_target_identifier
            yield scenario.objective_scorer_identifier

    def _pk(self, identifier: ids.ComponentIdentifier | None) -> int | None:
        return None if identifier is None else self.rows[identifier.hash].pk

    def _row(self, identifier: ids.ComponentIdentifier | None) -> ComponentIdentifier | None:
        return None if identifier is None else self.rows[identifier.hash]

    def _write_scenarios(self) -> None:
        creates, updates = [], []
        fields = [
            "scenario_name",
            "scenario_description",
            "scenario_version",
            "scenario_identifier",
            "objective_target_identifier",
            "objective_scorer_identifier",
            "scenario_run_state",
            "labels",
            "number_tries",
            "creation_time",
            "completion_time",
            "display_group_map",
            "error_message",
            "error_type",
            "error_attack_result_ids",
            "metadata",
            "pyrit_version",
            "extra",
        ]
        for spec in self.batch.scenario_results:
            path = self.batch.path_of(spec)
            existing = self.scenarios_existing.get(spec.id)
            values = self._scenario_values(spec, existing)
            if existing is None:
                creates.append(ScenarioResult(id=spec.id, **values))
                self.status[path] = CREATED
            elif _changed(existing, values):
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.updated_at = write_time()
                updates.append(existing)
                self.status[path] = UPDATED
            else:
                self.status[path] = UNCHANGED
        insert_ignore(creates)
        update_rows(ScenarioResult, [*fields, "updated_at"], updates)

    def _scenario_values(
        self, spec: ScenarioResultSpec, existing: ScenarioResult | None
    ) -> dict[str, Any]:
        return {
            "scenario_name": spec.scenario_name,
            "scenario_description": spec.scenario_description,
            "scenario_version": spec.scenario_version,
            "scenario_identifier": self._row(spec.scenario_identifier),
            "objective_target_identifier": self._row(spec.objective_target_identifier),
            "objective_scorer_identifier": self._row(spec.objective_scorer_identifier),
            "scenario_run_state": spec.scenario_run_state,
            "labels": spec.labels,
            "number_tries": spec.number_tries,
            "creation_time": spec.creation_time
            or (existing.creation_time if existing else write_time()),
            "completion_time": spec.completion_time,
            "display_group_map": spec.display_group_map,
            "error_message": spec.error_message,
            "error_type": spec.error_type,
            "error_attack_result_ids": spec.error_attack_result_ids,
            "metadata": spec.metadata,
            "pyrit_version": spec.pyrit_version,
            "extra": spec.extra,
        }

    def _write_conversations(self) -> None:
        batch = self.batch
        entities = {c.conversation_id: c for c in batch.conversations}
        # 0.x has no conversation entity: its pieces' target stands in for the conversation's
        piece_targets: dict[str, ids.ComponentIdentifier] = {}
        for piece in batch.pieces:
            target = piece.spec.prompt_target_identifier
            if target is not None and piece.spec.id not in self.pieces_existing:
                piece_targets.setdefault(piece.conversation_id, target)
        new = [cid for cid in self.conversation_ids if cid not in self.existing_conversations]
        new_pieces = Counter(
            p.conversation_id for p in batch.pieces if p.spec.id not in self.pieces_existing
        )
        meta_version = batch.meta.get("pyrit_version")
        meta_version = meta_version if isinstance(meta_version, str) else ""
        creates = []
        for cid in sorted(new):
            entity = entities.get(cid)
            target = entity.target_identifier if entity else None
            labels, harms = self.conversation_tags.get(cid, ({}, []))
            creates.append(
                Conversation(
                    conversation_id=cid,
                    labels=labels,
                    targeted_harm_categories=harms,
                    started_at=self.started.get(cid),
                    target_identifier=self._row(target or piece_targets.get(cid)),
                    retries=entity.retries if entity else [],
                    extra=entity.extra if entity else {},
                    pyrit_version=(entity.pyrit_version if entity else "") or meta_version,
                    piece_count=new_pieces[cid],
                    push_source=self.push_source,
                )
            )
        # Another writer may create the same conversation concurrently: theirs is kept.
        insert_ignore(creates)
        if creates:
            self.existing_conversations.update(
                {c.conversation_id: c for c in Conversation.objects.filter(conversation_id__in=new)}
            )
        created = self.created_conversations = set(new)
        self.implicit_conversations = len(created - set(entities))
        self.dirty_conversations: dict[str, set[str]] = defaultdict(set)
        for cid, target in piece_targets.items():
            row = self.existing_conversations[cid]
            if cid not in created and row.target_identifier_id is None:
                row.target_identifier = self._row(target)
                self.dirty_conversations[cid].add("target_identifier")
        for entity in batch.conversations:
            path = batch.path_of(entity)
            if entity.conversation_id in created:
                self.status[path] = CREATED
                continue
            row = self.existing_conversations[entity.conversation_id]
            target = self._row(entity.target_identifier)
            if target is not None and row.target_identifier_id != target.pk:
                row.target_identifier = target
                self.dirty_conversations[row.conversation_id].add("target_identifier")
            if entity.retries and row.retries != entity.retries:
                row.retries = entity.retries
                self.dirty_conversations[row.conversation_id].add("retries")
            if entity.extra and row.extra != {**row.extra, **entity.extra}:
                row.extra = {**row.extra, **entity.extra}
                self.dirty_conversations[row.conversation_id].add("extra")
            self.status[path] = (
                UPDATED if row.conversation_id in self.dirty_conversations else UNCHANGED
            )
        # Counted after the statuses: new messages alone do not make the entity "updated".
        for cid, count in new_pieces.items():
            if cid not in created:
                self.existing_conversations[cid].piece_count += count
                self.dirty_conversations[cid].add("piece_count")

    def _write_pieces(self) -> None:
        batch = self.batch
        new_messages = [
            m
            for m in batch.messages
            if (m.conversation_id, m.sequence) not in self.messages_existing
        ]
        new_keys = {(m.conversation_id, m.sequence) for m in new_messages}
        insert_rows(
            Message,
            [
                {
                    "conversation_id": self.existing_conversations[m.conversation_id].pk,
                    "sequence": m.sequence,
                    "role": m.role,
                }
                for m in new_messages
            ],
        )
        if new_messages:
            conversation_pks = {
                self.existing_conversations[m.conversation_id].pk: m.conversation_id
                for m in new_messages
            }
            for pk, conversation_pk, sequence, role in Message.objects.filter(
                conversation_id__in=conversation_pks
            ).values_list("id", "conversation_id", "sequence", "role"):
                key = (conversation_pks[conversation_pk], sequence)
                self.messages_existing.setdefault(key, (pk, role))

        # new pieces joining a message that already had pieces continue its positions
        reused = {
            self.messages_existing[(m.conversation_id, m.sequence)][0]
            for m in batch.messages
            if (m.conversation_id, m.sequence) not in new_keys
            and any(p.spec.id not in self.pieces_existing for p in m.pieces)
        }
        next_position: dict[int, int] = defaultdict(int)
        if reused:
            for message_id, highest in (
                MessagePiece.objects.filter(message_id__in=reused)
                .values("message_id")
                .annotate(highest=Max("position"))
                .values_list("message_id", "highest")
            ):
                next_position[message_id] = highest + 1

        media = MediaIndex.for_values(
            (value, data_type, sha)
            for p in batch.pieces
            if p.spec.id not in self.pieces_existing
            for value, data_type, sha in unlinked_media_values(p.spec)
        )
        pieces, links = [], []
        converted: set[tuple[int, int]] = set()
        for message in batch.messages:
            message_id = self.messages_existing[(message.conversation_id, message.sequence)][0]
            conversation_pk = self.existing_conversations[message.conversation_id].pk
            for piece in message.pieces:
                spec = piece.spec
                if spec.id in self.pieces_existing:
                    continue
                position = next_position[message_id]
                next_position[message_id] += 1
                pieces.append(self._piece(spec, message_id, position, media))
                for i, conv in enumerate(spec.converter_identifiers):
                    identifier_pk = self.rows[conv.hash].pk
                    links.append(
                        {"piece_id": spec.id, "position": i, "identifier_id": identifier_pk}
                    )
                    converted.add((conversation_pk, identifier_pk))
                self.status[piece.path] = CREATED
        # A concurrent writer may insert the same piece: the first one is kept (immutable).
        insert_rows(MessagePiece, pieces)
        insert_rows(PieceConverter, links)
        insert_rows(
            Conversation.converter_index.through,
            [{"conversation_id": c, "componentidentifier_id": i} for c, i in sorted(converted)],
        )
        # Scores stored before their piece: the new piece's conversation becomes their home.
        Score.objects.adopt_homes([row["id"] for row in pieces])

    def _piece(
        self, spec: PieceSpec, message_id: int, position: int, media: MediaIndex
    ) -> dict[str, Any]:
        """The row of a new piece (a dict of column values, for ``insert_rows``)."""
        converted, converted_type = converted_value(spec)
        original_blob = converted_blob = None
        if spec.original_media is not None:
            original_blob = media_store(data=spec.original_media, original_name=spec.original_value)
        converted_media = spec.converted_media
        if converted_media is None and converted == spec.original_value:
            converted_media = spec.original_media
        if converted_media is not None:
            converted_blob = media_store(data=converted_media, original_name=converted)
        original_sha = given_sha256(
            spec.original_value,
            spec.original_value_data_type,
            spec.original_value_sha256,
            spec.original_media,
        )
        converted_sha = given_sha256(
            converted, converted_type, spec.converted_value_sha256, converted_media
        )
        original_is_media = is_media_value(spec.original_value_data_type, spec.original_value)
        converted_is_media = is_media_value(converted_type, converted)
        if original_is_media and original_blob is None:
            original_blob = media.find(spec.original_value, original_sha)
        if converted_is_media and converted_blob is None:
            converted_blob = media.find(converted, converted_sha)
        return dict(
            id=spec.id,
            message_id=message_id,
            position=position,
            timestamp=self.piece_times[spec.id],
            labels=spec.labels,
            prompt_metadata=spec.prompt_metadata,
            targeted_harm_categories=spec.targeted_harm_categories,
            prompt_target_identifier_id=self._pk(spec.prompt_target_identifier),
            attack_identifier_id=self._pk(spec.attack_identifier),
            scorer_identifier_id=self._pk(spec.scorer_identifier),
            original_value=spec.original_value,
            original_value_data_type=spec.original_value_data_type,
            original_value_sha256=original_sha,
            original_media_id=original_blob.pk if original_blob else None,
            original_media_key=media_key(spec.original_value) if original_is_media else "",
            converted_value=converted,
            converted_value_data_type=converted_type,
            converted_value_sha256=converted_sha,
            converted_media_id=converted_blob.pk if converted_blob else None,
            converted_media_key=media_key(converted) if converted_is_media else "",
            response_error=spec.response_error,
            originator=spec.originator,
            original_prompt_id=spec.original_prompt_id or spec.id,
            pyrit_version=spec.pyrit_version,
            extra=spec.extra,
        )

    def _write_scorable_contents(self) -> None:
        creates = []
        for content in self.batch.scorable_contents:
            if content.id in self.contents_stored:
                continue
            self.contents_stored.add(content.id)
            creates.append(
                dict(
                    id=content.id,
                    value=content.value,
                    value_sha256=content.value_sha256,
                    data_type=content.data_type,
                    timestamp=content.timestamp or write_time(),
                    extra=content.extra,
                )
            )
            self.status[self.batch.path_of(content)] = CREATED
        insert_rows(ScorableContent, creates)

    def _write_scores(self) -> None:
        new = [spec for spec in self.batch.scores if spec.id not in self.scores_existing]
        homes = self._score_homes(new)
        creates = []
        for spec in new:
            creates.append(
                dict(
                    id=spec.id,
                    score_value=spec.score_value,
                    numeric_value=score_numeric_value(spec.score_type, spec.score_value),
                    score_value_description=spec.score_value_description,
                    score_type=spec.score_type,
                    score_category=spec.score_category,
                    score_rationale=spec.score_rationale,
                    score_metadata=spec.score_metadata,
                    scorer_class_identifier_id=self.rows[spec.scorer_class_identifier.hash].pk,
                    message_piece_id=spec.message_piece_id,
                    conversation_id=homes.get(spec.message_piece_id),
                    timestamp=spec.timestamp or write_time(),
                    objective=spec.objective,
                    scored_expectation=spec.scored_expectation,
                    status=spec.status,
                    scorable=spec.scorable,
                    scorable_content_id=content_id
                    if (content_id := scored_content_id(spec.scorable)) in self.contents_stored
                    else None,
                    pyrit_version=spec.pyrit_version,
                    extra=spec.extra,
                )
            )
            self.status[self.batch.path_of(spec)] = CREATED
        insert_rows(Score, creates)

    def _score_homes(self, scores: list[ScoreSpec]) -> dict[uuid.UUID, int]:
        """Each scored piece id's conversation pk: from the batch, else one look-up."""
        return score_homes(
            batch_homes={
                p.spec.id: self.existing_conversations[p.conversation_id].pk
                for p in self.batch.pieces
            },
            scores=scores,
        )

    _ATTACK_FIELDS = (
        "conversation",
        "objective",
        "objective_sha256",
        "attack_identifier",
        "atomic_attack_identifier",
        "last_response_id",
        "last_score_id",
        "last_scorer_id",
        "human_score_id",
        "executed_turns",
        "execution_time_ms",
        "outcome",
        "outcome_reason",
        "metadata",
        "timestamp",
        "timestamp_source",
        "labels",
        "targeted_harm_categories",
        "error_message",
        "error_type",
        "error_traceback",
        "retry_events",
        "total_retries",
        "attribution_parent_id",
        "attribution_data",
        "operator",
        "operation",
        "pyrit_version",
        "extra",
    )

    def _attack_time(self, spec: AttackResultSpec, existing: AttackResult | None) -> dict:
        """``timestamp`` and ``timestamp_source``: PyRIT's time when it sent one; else the time
        already stored; else (0.12 results carry none) the conversation's last piece, or the
        time of receipt for a conversation without pieces."""
        if spec.timestamp is not None:
            source = spec.timestamp_source or TimestampSource.PYRIT
            return {"timestamp": spec.timestamp, "timestamp_source": source}
        if existing is not None:
            return {"timestamp": existing.timestamp, "timestamp_source": existing.timestamp_source}
        last = self.last_piece_times.get(spec.conversation_id)
        if last is not None:
            return {"timestamp": last, "timestamp_source": TimestampSource.LAST_PIECE}
        return {"timestamp": write_time(), "timestamp_source": TimestampSource.RECEIVED}

    def _last_piece_times(self) -> dict[str, datetime]:
        """The last piece's time of each conversation whose new attack result has no time
        of its own: one query, and only when a batch holds such results (PyRIT 0.12)."""
        wanted = {
            spec.conversation_id
            for spec in self.batch.attack_results
            if spec.timestamp is None and spec.id not in self.attacks_existing
        }
        if not wanted:
            return {}
        rows = (
            MessagePiece.objects.filter(message__conversation__conversation_id__in=wanted)
            .values_list("message__conversation__conversation_id")
            .annotate(last=Max("timestamp"))
        )
        return dict(rows)

    def _attack_values(self, spec: AttackResultSpec, existing: AttackResult | None) -> dict:
        return {
            "conversation": self.existing_conversations[spec.conversation_id],
            "attack_identifier": self._row(attack_strategy(spec)),
            "atomic_attack_identifier": self._row(spec.atomic_attack_identifier),
            "last_scorer_id": self._last_scorer(spec.last_score_id),
            **attack_own_values(spec),
            **self._attack_time(spec, existing),
        }

    def _last_scorer(self, score_id: uuid.UUID | None) -> int | None:
        """The scorer (identifier pk) of an attack's last score: the stored score's (read while
        checking; a batch's copy of a stored score has the same scorer, or the batch is
        refused), else the new score's in the batch."""
        if score_id is None:
            return None
        if (scorer := self.stored_scorers.get(score_id)) is not None:
            return scorer
        return self.rows[self.batch_scores[score_id].scorer_class_identifier.hash].pk

    def _write_attacks(self) -> None:
        creates, updates, related = [], [], []
        # Attacks this batch stored as successes or turned into one (``attack.succeeded``); a
        # re-sent success is unchanged and announces nothing again.
        self.succeeded: list[uuid.UUID] = []
        before: list[AttackResult] = []
        self.attack_tags: dict[uuid.UUID, tuple[dict[str, Any], list[str], bool]] = {}
        self.last_piece_times = self._last_piece_times()
        self.batch_scores = {spec.id: spec for spec in self.batch.scores}
        for spec in self.batch.attack_results:
            path = self.batch.path_of(spec)
            existing = self.attacks_existing.get(spec.id)
            values = self._attack_values(spec, existing)
            if existing is None:
                creates.append(_attack_row(spec.id, self.push_source, values))
                self.status[path] = CREATED
                if spec.outcome == AttackOutcome.SUCCESS:
                    self.succeeded.append(spec.id)
                self.attack_tags[spec.id] = (
                    indexed_labels(spec),
                    spec.targeted_harm_categories,
                    False,
                )
            elif _changed(existing, values):
                if (
                    spec.outcome == AttackOutcome.SUCCESS
                    and existing.outcome != AttackOutcome.SUCCESS
                ):
                    self.succeeded.append(spec.id)
                before.append(copy.copy(existing))
                relabel = (
                    existing.labels != spec.labels
                    or (existing.operator, existing.operation) != (spec.operator, spec.operation)
                    or existing.targeted_harm_categories != spec.targeted_harm_categories
                )
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.updated_at = write_time()
                updates.append(existing)
                self.status[path] = UPDATED
                if relabel:
                    self.attack_tags[spec.id] = (
                        indexed_labels(spec),
                        spec.targeted_harm_categories,
                        True,
                    )
            else:
                self.status[path] = UNCHANGED
            for ref in spec.related_conversations:
                if (spec.id, ref.conversation_id) in self.related_existing:
                    continue
                self.related_existing.add((spec.id, ref.conversation_id))
                related.append(
                    RelatedConversation(
                        attack_result_id=spec.id,
                        conversation=self.existing_conversations[ref.conversation_id],
                        conversation_type=ref.conversation_type,
                        description=ref.description,
                    )
                )
                if existing is not None and self.status[path] == UNCHANGED:
                    self.status[path] = UPDATED
        insert_rows(AttackResult, creates)
        update_rows(
            AttackResult,
            [name.removesuffix("_id") for name in self._ATTACK_FIELDS] + ["updated_at"],
            updates,
        )
        self._record_attack_changes(before, updates)
        insert_ignore(related)

    def _write_records(self) -> None:
        """Verbatim rows: new ones inserted, changed ones replaced, the same left alone."""
        creates, updates = [], []
        for spec in self.batch.pyrit_records:
            path = self.batch.path_of(spec)
            existing = self.records_existing.get((spec.table, spec.pk))
            values = {
                "row": spec.row,
                "pyrit_version": spec.pyrit_version,
                "alembic_revision": spec.alembic_revision,
            }
            if existing is None:
                creates.append(dict(table=spec.table, pk_text=spec.pk, **values))
                self.status[path] = CREATED
            elif _changed(existing, values):
                for name, value in values.items():
                    setattr(existing, name, value)
                updates.append(existing)
                self.status[path] = UPDATED
            else:
                self.status[path] = UNCHANGED
        insert_rows(PyritRecord, creates)
        names = ["row", "pyrit_version", "alembic_revision", "updated_at"]
        update_rows(PyritRecord, names, updates)

    def _record_attack_changes(self, before: list[AttackResult], after: list[AttackResult]) -> None:
        """History of attack results a re-send changed: the state before (once, for those with
        no history yet) and the new one, with the sender as the user. Creations are not
        recorded (a row's ``created_at`` and the security log say who sent it)."""
        if not after:
            return
        recorded = set(
            AttackResult.history.filter(id__in=[a.id for a in after])
            .values_list("id", flat=True)
            .distinct()
        )
        first = [old for old in before if old.id not in recorded]
        for old in first:
            old._history_date = old.updated_at or old.created_at
        AttackResult.history.bulk_history_create(first, default_user=self.actor)
        AttackResult.history.bulk_history_create(
            after, update=True, default_user=self.actor, default_change_reason="re-sent"
        )

    def _write_tags(self) -> None:
        """Merge labels / harm categories into conversations and keep both indexes in step."""
        conversation_updates = []
        conv_labels: dict[int, dict[str, Any]] = {}
        conv_harms: dict[int, list[str]] = {}
        for cid, (labels, harms) in self.conversation_tags.items():
            row = self.existing_conversations[cid]
            if cid in self.created_conversations:
                conv_labels[row.pk], conv_harms[row.pk] = labels, harms
                continue
            merged_labels = {**row.labels, **labels}
            merged_harms = row.targeted_harm_categories + [
                h for h in harms if h not in row.targeted_harm_categories
            ]
            if merged_labels != row.labels or merged_harms != row.targeted_harm_categories:
                row.labels, row.targeted_harm_categories = merged_labels, merged_harms
                self.dirty_conversations[cid].update({"labels", "targeted_harm_categories"})
                conv_labels[row.pk] = labels
                conv_harms[row.pk] = harms
        for cid, timestamp in self.started.items():
            row = self.existing_conversations[cid]
            if cid in self.created_conversations:
                continue
            if row.started_at is None or timestamp < row.started_at:
                row.started_at = timestamp
                self.dirty_conversations[cid].add("started_at")
        changed_fields: set[str] = set()
        for cid, names in self.dirty_conversations.items():
            row = self.existing_conversations[cid]
            row.updated_at = write_time()
            conversation_updates.append(row)
            changed_fields |= names
        update_rows(Conversation, sorted(changed_fields | {"updated_at"}), conversation_updates)

        attack_labels = {pk: labels for pk, (labels, _, _) in self.attack_tags.items()}
        attack_harms = {pk: harms for pk, (_, harms, _) in self.attack_tags.items()}
        relabel = [pk for pk, (_, _, again) in self.attack_tags.items() if again]
        if relabel:
            AttackResult.label_index.through.objects.filter(attackresult_id__in=relabel).delete()
            AttackResult.harm_category_index.through.objects.filter(
                attackresult_id__in=relabel
            ).delete()
        link_tags(
            conversation_labels=conv_labels,
            conversation_harms=conv_harms,
            attack_labels=attack_labels,
            attack_harms=attack_harms,
        )


def link_tags(
    *,
    conversation_labels: dict[int, dict[str, Any]],
    conversation_harms: dict[int, list[str]],
    attack_labels: dict[uuid.UUID, dict[str, Any]],
    attack_harms: dict[uuid.UUID, list[str]],
) -> None:
    """Index conversations (by pk) and attack results (by id) under their labels and harm
    categories, inserting the label and harm-category rows they need, in this order: the
    conversations' labels, the attacks' labels, the conversations' harms, the attacks'."""
    conv_labels, conv_harms = conversation_labels, conversation_harms
    pairs = {
        label_pair(k, v)
        for labels in [*conv_labels.values(), *attack_labels.values()]
        for k, v in labels.items()
    }
    names = {h for harms in [*conv_harms.values(), *attack_harms.values()] for h in harms}
    label_ids = label_rows(pairs)
    harm_ids = harm_category_rows(names)

    def labelled(labels: dict[str, Any]) -> list[int]:
        return [label_ids[label_pair(k, v)] for k, v in labels.items()]

    def harmed(harms: list[str]) -> list[int]:
        return [harm_ids[h] for h in harms]

    link_rows(
        Conversation.label_index.through, "conversation_id", "label_id", conv_labels, labelled
    )
    link_rows(
        AttackResult.label_index.through, "attackresult_id", "label_id", attack_labels, labelled
    )
    link_rows(
        Conversation.harm_category_index.through,
        "conversation_id",
        "harmcategory_id",
        conv_harms,
        harmed,
    )
    link_rows(
        AttackResult.harm_category_index.through,
        "attackresult_id",
        "harmcategory_id",
        attack_harms,
        harmed,
    )


# The attack result's fields ``_Plan._attack_values`` gives as rows (or None), not keys.
_ATTACK_RELATIONS = frozenset({"conversation", "attack_identifier", "atomic_attack_identifier"})


def _attack_row(
    attack_id: uuid.UUID, push_source: PushSource | None, values: dict[str, Any]
) -> dict[str, Any]:
    """A new attack result as ``insert_rows`` takes it (columns by ``attname``): thousands
    per imported chunk, where a model instance each cost more than inserting them."""
    row = {"id": attack_id, "push_source_id": None if push_source is None else push_source.pk}
    for name, value in values.items():
        if name in _ATTACK_RELATIONS:
            row[f"{name}_id"] = None if value is None else value.pk
        else:
            row[name] = value
    return row


def attack_own_values(spec: AttackResultSpec) -> dict[str, Any]:
    """The columns of a new or re-sent attack result that come from the spec alone, by field
    name (the conversation, identifiers, last scorer and time depend on stored rows)."""
    return {
        "objective": spec.objective,
        "objective_sha256": spec.objective_sha256 or sha256_text(spec.objective),
        "last_response_id": spec.last_response_id,
        "last_score_id": spec.last_score_id,
        "human_score_id": spec.human_score_id,
        "executed_turns": spec.executed_turns,
        "execution_time_ms": spec.execution_time_ms,
        "outcome": spec.outcome,
        "outcome_reason": spec.outcome_reason,
        "metadata": spec.metadata,
        "labels": spec.labels,
        "targeted_harm_categories": spec.targeted_harm_categories,
        "error_message": spec.error_message,
        "error_type": spec.error_type,
        "error_traceback": spec.error_traceback,
        "retry_events": spec.retry_events,
        "total_retries": spec.total_retries,
        "attribution_parent_id": spec.attribution_parent_id,
        "attribution_data": spec.attribution_data,
        "operator": spec.operator,
        "operation": spec.operation,
        "pyrit_version": spec.pyrit_version,
        "extra": spec.extra,
    }


def indexed_labels(spec: AttackResultSpec) -> dict[str, Any]:
    """The labels an attack result is found by: its labels plus PyRIT 1.2's ``operator`` and
    ``operation`` columns, which were the labels of those names before 1.2 (the stored labels
    stay as PyRIT wrote them)."""
    labels = dict(spec.labels)
    for key in ("operator", "operation"):
        value = getattr(spec, key)
        if value is not None:
            labels.setdefault(key, value)
    return labels


def label_pair(key: Any, value: Any) -> tuple[str, str]:
    """A label as stored in the index: key and value as strings."""
    return str(key), value if isinstance(value, str) else str(value)


def unlinked_media_values(spec: PieceSpec) -> list[tuple[str, str, str | None]]:
    """The piece's media values that came without bytes: (value, data type, given SHA-256)."""
    converted, converted_type = converted_value(spec)
    found = []
    if spec.original_media is None:
        found.append(
            (spec.original_value, spec.original_value_data_type, spec.original_value_sha256)
        )
    if spec.converted_media is None:
        found.append((converted, converted_type, spec.converted_value_sha256))
    return [v for v in found if is_media_value(v[1], v[0])]


def scored_content_id(scorable: dict[str, Any] | None) -> uuid.UUID | None:
    """The stored loose content a 1.1.0 score judged (``scorable_type`` ``content_entry``)."""
    if not scorable or scorable.get("scorable_type") != "content_entry":
        return None
    try:
        return uuid.UUID(str(scorable.get("content_id")))
    except ValueError:
        return None


def attack_strategy(spec: AttackResultSpec) -> ids.ComponentIdentifier | None:
    from redteam.core.identifiers import attack_strategy_identifier

    return attack_strategy_identifier(
        attack_identifier=spec.attack_identifier,
        atomic_attack_identifier=spec.atomic_attack_identifier,
    )


def _changed(row: Any, values: dict[str, Any]) -> bool:
    for name, value in values.items():
        current = getattr(row, name)
        if hasattr(value, "pk") and hasattr(current, "pk"):
            if value.pk != current.pk:
                return True
        elif current != value:
            return True
    return False


def label_rows(pairs: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Ids of the label rows for ``pairs``, inserting new ones (two statements, or none)."""
    if not pairs:
        return {}
    labels = [Label.of(k, v) for k, v in pairs]
    insert_ignore(labels)
    # found by the pair index: (key, hash) of each pair, the value compared as well
    wanted = {(label.key, label.value_sha256) for label in labels}
    keys = {k for k, _ in pairs}
    hashes = {h for _, h in wanted}
    return {
        (k, v): pk
        for pk, k, v, h in Label.objects.filter(key__in=keys, value_sha256__in=hashes).values_list(
            "id", "key", "value", "value_sha256"
        )
        if (k, h) in wanted and (k, v) in pairs
    }


def harm_category_rows(names: set[str]) -> dict[str, int]:
    """Ids of the harm category rows named ``names``, inserting new ones."""
    if not names:
        return {}
    insert_ignore([HarmCategory(name=n) for n in names])
    return dict(HarmCategory.objects.filter(name__in=names).values_list("name", "id"))


def link_rows(through: Any, owner: str, target: str, owners: dict[Any, Any], targets: Any) -> None:
    insert_rows(
        through,
        [
            {owner: pk, target: target_pk}
            for pk, values in owners.items()
            for target_pk in set(targets(values))
        ],
    )


def score_homes(
    *, batch_homes: dict[uuid.UUID, int], scores: Iterable[ScoreSpec]
) -> dict[uuid.UUID, int]:
    """Each scored piece id's conversation pk (the score's home): ``batch_homes`` for the pieces
    written with the scores, one look-up for pieces stored earlier."""
    homes = dict(batch_homes)
    elsewhere = {
        s.message_piece_id
        for s in scores
        if s.message_piece_id is not None and s.message_piece_id not in homes
    }
    if elsewhere:
        homes.update(MessagePiece.objects.conversation_pks(elsewhere))
    return homes
