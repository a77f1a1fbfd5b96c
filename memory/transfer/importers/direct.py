"""The importer's own write path: a chunk of new pieces, conversations and scores as finished
columns, straight into the tables.

The ingestion service (:func:`memory.storage.write.ingest_batch`) serves every client: it
reads what a batch touches, decides per item whether it is new, unchanged, updated or in
conflict, and writes model instances and dicts through the generic bulk helpers. A PyRIT file
imported into Redline is mostly rows Redline has never seen, in the order references need, so
this path writes exactly what the service would write for such a chunk and nothing else:

- it takes a chunk only when every piece and score of it is new, and the chunk holds nothing
  but pieces, messages, conversations and scores, with no problem found by the normaliser or
  the service's value checks (``memory.storage.lengths``, run beside the reader); new pieces
  may continue a conversation an earlier chunk stored (merged as the service merges them);
- it takes a chunk of attack results alone when none is stored, every row they name is, and
  each has its own time (``attacks_eligible``, ``DirectWriter._write_attacks``);
- every other chunk (a re-import, a 1.x conversation row already stored, a message whose
  stored role differs, other attack results, scenario results, seeds, scorable content,
  verbatim rows, a refused row) goes to the service, which merges, reports conflicts and
  refuses as it does for every client.

The work is split in two. :func:`prepare` runs where the file is read (the importer's reader
process): from the normalised chunk it makes every column that does not depend on what the
database holds, each value adapted as the service's bulk writer adapts it
(``redteam.core.bulk.column_values``), and the chunk's report. :class:`DirectWriter` runs in
the writing process: it checks that nothing of the chunk is stored, fills in the surrogate
keys (messages, conversations, identifiers, media blobs, a score's home) and inserts the
columns (``redteam.core.bulk.insert_columns``). The values are the service's: the same
fallbacks (a piece's converted value and hash, its conversation's labels, harm categories,
start and target), the same adapters and the same insertion order, so surrogate keys come out
equal too. ``tests/importers/test_write_path.py`` imports the fixture databases through both
paths and compares every table.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Max

from memory.models import (
    AttackResult,
    Conversation,
    Message,
    MessagePiece,
    PieceConverter,
    RelatedConversation,
    ScenarioResult,
    ScorableContent,
    Score,
    rollup_sql,
)
from memory.models.media import media_key
from memory.models.media_links import MediaIndex
from memory.storage import events
from memory.storage.batch import NormalizedBatch
from memory.storage.identifiers import identifiers_store
from memory.storage.write import (
    CREATED,
    KINDS,
    IngestReport,
    attack_own_values,
    attack_strategy,
    converted_value,
    given_sha256,
    harm_category_rows,
    indexed_labels,
    ingest_report,
    label_pair,
    label_rows,
    link_tags,
    scored_content_id,
    serialise_writers,
    write_time,
)
from redteam.core import identifiers as ids
from redteam.core.bulk import (
    chunked,
    column_names,
    column_values,
    existing_keys,
    existing_values,
    insert_columns,
    insert_rows,
    stored_column,
    update_rows,
)
from redteam.core.choices import AttackOutcome, TimestampSource, is_media_value
from redteam.core.scoring import score_numeric_value

__all__ = ["DirectAttacks", "DirectRows", "DirectWriter", "direct_eligible", "prepare"]


#: What a chunk of each kind the direct path writes may hold (everything else: the service).
_PIECE_KINDS = frozenset({"pieces", "conversations", "scores"})
_ATTACK_KINDS = frozenset({"attack_results"})
#: The batch's lists, one per ingestion kind (``write.KINDS``; pieces are ``batch.pieces``).
_KINDS = tuple("pieces" if kind == "message_pieces" else kind for kind in KINDS)


def _holds_only(batch: NormalizedBatch, kinds: frozenset[str]) -> bool:
    """Whether the batch holds nothing but ``kinds`` and is no push (its source is recorded
    by the service)."""
    return "push_source" not in batch.meta and not any(
        getattr(batch, kind) for kind in _KINDS if kind not in kinds
    )


def direct_eligible(batch: NormalizedBatch) -> bool:
    """Whether the chunk is of the kinds this path writes (the database decides the rest):
    pieces, conversations and scores without media bytes, or attack results alone
    (:func:`attacks_eligible`)."""
    if batch.attack_results:
        return attacks_eligible(batch)
    return _holds_only(batch, _PIECE_KINDS) and all(
        p.spec.original_media is None and p.spec.converted_media is None for p in batch.pieces
    )


def attacks_eligible(batch: NormalizedBatch) -> bool:
    """A chunk of attack results alone, each with its own time (PyRIT 1.x; a 0.12 result
    takes its conversation's last piece's, which the service looks up), none twice."""
    attacks = batch.attack_results
    return (
        bool(attacks)
        and _holds_only(batch, _ATTACK_KINDS)
        and all(a.timestamp is not None for a in attacks)
        and len({a.id for a in attacks}) == len(attacks)
    )


@dataclass
class _Outcome:
    """What ``ingest_report`` reads of a plan: each item's status, conversations made
    implicitly."""

    status: dict[str, str] = field(default_factory=dict)
    implicit_conversations: int = 0
    #: the direct path writes no seeds: no dataset is created by it
    implicit_datasets: int = 0


# The columns only the writer can fill (surrogate keys), per table.
_CONVERSATION_KEYS = ("target_identifier_id",)
_PIECE_KEYS = (
    "message_id",
    "position",
    "prompt_target_identifier_id",
    "attack_identifier_id",
    "scorer_identifier_id",
    "original_media_id",
    "converted_media_id",
)
_SCORE_KEYS = ("scorer_class_identifier_id", "conversation_id", "scorable_content_id")

_CONVERSATION_NAMES = (
    "conversation_id",
    "labels",
    "targeted_harm_categories",
    "started_at",
    "retries",
    "extra",
    "pyrit_version",
    "piece_count",
    "push_source_id",
)
_PIECE_NAMES = (
    "id",
    "timestamp",
    "labels",
    "prompt_metadata",
    "targeted_harm_categories",
    "original_value",
    "original_value_data_type",
    "original_value_sha256",
    "original_media_key",
    "converted_value",
    "converted_value_data_type",
    "converted_value_sha256",
    "converted_media_key",
    "response_error",
    "originator",
    "original_prompt_id",
    "pyrit_version",
    "extra",
)
_SCORE_NAMES = (
    "id",
    "score_value",
    "numeric_value",
    "score_value_description",
    "score_type",
    "score_category",
    "score_rationale",
    "score_metadata",
    "message_piece_id",
    "timestamp",
    "objective",
    "scored_expectation",
    "status",
    "scorable",
    "pyrit_version",
    "extra",
)

Media = tuple[str, str, str | None] | None  # (value, data type, given SHA-256) of a media value


@dataclass
class DirectRows:
    """One chunk as :func:`prepare` makes it: plain lists and tuples, so it pickles compactly
    for the trip from the reader process. Columns are in ``column_names`` order; the key
    columns are None until the writer fills them."""

    report: IngestReport
    identifiers: list[ids.ComponentIdentifier]
    #: Every conversation the chunk touches, sorted, with its Conversation columns (new rows)
    conversation_ids: list[str]
    conversations: list[list[Any] | None]
    conversation_targets: list[str | None]
    #: Conversations that are rows of the file (not made implicitly by a piece)
    entity_ids: set[str]
    #: What the chunk's pieces add to a stored conversation: labels, harms, start, target, count
    tags: dict[str, tuple[dict[str, Any], list[str]]]
    started: dict[str, datetime]
    targets: dict[str, str]
    counts: dict[str, int]
    #: (conversation id, sequence, role) of each message, in the chunk's order
    messages: list[tuple[str, int, str]]
    pieces: list[list[Any] | None]
    piece_messages: list[tuple[str, int]]
    piece_offsets: list[int]
    piece_identifiers: tuple[list[str | None], list[str | None], list[str | None]]
    piece_media: tuple[list[Media], list[Media]]
    #: (piece id, position, identifier hash, conversation id) of each converter link
    links: list[tuple[str, int, str, str]]
    scores: list[list[Any] | None]
    score_identifiers: list[str]
    score_contents: list[str | None]

    @property
    def rows(self) -> int:
        """Pieces and scores of the chunk."""
        return len(self.piece_messages) + len(self.score_identifiers)


_ATTACK_KEYS = (
    "conversation_id",
    "attack_identifier_id",
    "atomic_attack_identifier_id",
    "last_scorer_id",
)


@dataclass
class DirectAttacks:
    """A chunk of new attack results as :func:`prepare` makes it (the service's
    ``_write_attacks`` and ``_write_tags`` for such a chunk). Columns are in ``column_names``
    order; the key columns are None until the writer fills them."""

    report: IngestReport
    identifiers: list[ids.ComponentIdentifier]
    attacks: list[list[Any] | None]
    #: Per attack: its conversation, strategy and atomic-attack identifier hashes, last score
    conversations: list[str]
    strategies: list[str | None]
    atomics: list[str | None]
    last_scores: list[uuid.UUID | None]
    #: What the attacks name that must be stored already (else the service takes the chunk)
    pieces: set[uuid.UUID]
    scores: set[uuid.UUID]
    scenarios: set[uuid.UUID]
    #: (attack id, conversation id, type, description) of each related conversation, once
    related: list[tuple[uuid.UUID, str, str, str | None]]
    #: Per attack: the labels it is found by and its harm categories; per conversation: what
    #: its attacks add to it (§9.2), in the service's order
    attack_tags: dict[uuid.UUID, tuple[dict[str, Any], list[str]]]
    conversation_tags: dict[str, tuple[dict[str, Any], list[str]]]
    succeeded: list[uuid.UUID]

    @property
    def rows(self) -> int:
        """Attack results of the chunk."""
        return len(self.conversations)


def prepare(batch: NormalizedBatch) -> DirectRows | DirectAttacks | None:
    """Reader side: the chunk's columns and report, or None when it is not of the kinds this
    path writes. Touches no database (the adapters need only the connection's settings)."""
    if not direct_eligible(batch):
        return None
    if batch.attack_results:
        return _prepare_attacks(batch)
    now = write_time()
    status: dict[str, str] = {}
    alias = router.db_for_write(MessagePiece)

    # what the service's _collect_tags gathers per conversation
    piece_times: dict[uuid.UUID, datetime] = {}
    started: dict[str, datetime] = {}
    tags: dict[str, tuple[dict[str, Any], list[str]]] = {}
    targets: dict[str, str] = {}
    target_objects: dict[str, ids.ComponentIdentifier] = {}
    counts: Counter[str] = Counter()
    for piece in batch.pieces:
        spec = piece.spec
        timestamp = piece_times[spec.id] = spec.timestamp or now
        cid = piece.conversation_id
        if cid not in started or timestamp < started[cid]:
            started[cid] = timestamp
        labels, harms = tags.setdefault(cid, ({}, []))
        labels.update(spec.labels)
        harms.extend(h for h in spec.targeted_harm_categories if h not in harms)
        if spec.prompt_target_identifier is not None and cid not in targets:
            targets[cid] = spec.prompt_target_identifier.hash
            target_objects[cid] = spec.prompt_target_identifier

    conversation_ids = sorted(_conversation_ids(batch))
    entities = {c.conversation_id: c for c in batch.conversations}
    meta_version = batch.meta.get("pyrit_version")
    meta_version = meta_version if isinstance(meta_version, str) else ""
    for piece in batch.pieces:
        counts[piece.conversation_id] += 1
    rows, conversation_targets = [], []
    for cid in conversation_ids:
        entity = entities.get(cid)
        target = entity.target_identifier if entity else None
        labels, harms = tags.get(cid, ({}, []))
        rows.append(
            (
                cid,
                labels,
                harms,
                started.get(cid),
                entity.retries if entity else [],
                entity.extra if entity else {},
                (entity.pyrit_version if entity else "") or meta_version,
                counts[cid],
                None,
            )
        )
        chosen = target or target_objects.get(cid)
        conversation_targets.append(None if chosen is None else chosen.hash)
    for entity in batch.conversations:
        status[batch.path_of(entity)] = CREATED

    pieces, piece_messages, offsets, links = [], [], [], []
    prompt_targets, attacks, scorers = [], [], []
    original_media: list[Media] = []
    converted_media: list[Media] = []
    for message in batch.messages:
        key = (message.conversation_id, message.sequence)
        for offset, piece in enumerate(message.pieces):
            spec = piece.spec
            converted, converted_type = converted_value(spec)
            original_sha = given_sha256(
                spec.original_value,
                spec.original_value_data_type,
                spec.original_value_sha256,
                None,
            )
            converted_sha = given_sha256(
                converted, converted_type, spec.converted_value_sha256, None
            )
            original_is_media = is_media_value(spec.original_value_data_type, spec.original_value)
            converted_is_media = is_media_value(converted_type, converted)
            pieces.append(
                (
                    spec.id,
                    piece_times[spec.id],
                    spec.labels,
                    spec.prompt_metadata,
                    spec.targeted_harm_categories,
                    spec.original_value,
                    spec.original_value_data_type,
                    original_sha,
                    media_key(spec.original_value) if original_is_media else "",
                    converted,
                    converted_type,
                    converted_sha,
                    media_key(converted) if converted_is_media else "",
                    spec.response_error,
                    spec.originator,
                    spec.original_prompt_id or spec.id,
                    spec.pyrit_version,
                    spec.extra,
                )
            )
            piece_messages.append(key)
            offsets.append(offset)
            prompt_targets.append(_hash(spec.prompt_target_identifier))
            attacks.append(_hash(spec.attack_identifier))
            scorers.append(_hash(spec.scorer_identifier))
            original_media.append(
                (spec.original_value, spec.original_value_data_type, original_sha)
                if original_is_media
                else None
            )
            converted_media.append(
                (converted, converted_type, converted_sha) if converted_is_media else None
            )
            hex_id = spec.id.hex
            for i, conv in enumerate(spec.converter_identifiers):
                links.append((hex_id, i, conv.hash, message.conversation_id))
            status[piece.path] = CREATED

    score_rows, score_identifiers, score_contents = [], [], []
    for spec in batch.scores:
        content_id = scored_content_id(spec.scorable)
        score_rows.append(
            (
                spec.id,
                spec.score_value,
                score_numeric_value(spec.score_type, spec.score_value),
                spec.score_value_description,
                spec.score_type,
                spec.score_category,
                spec.score_rationale,
                spec.score_metadata,
                spec.message_piece_id,
                spec.timestamp or write_time(),
                spec.objective,
                spec.scored_expectation,
                spec.status,
                spec.scorable,
                spec.pyrit_version,
                spec.extra,
            )
        )
        score_identifiers.append(spec.scorer_class_identifier.hash)
        score_contents.append(None if content_id is None else content_id.hex)
        status[batch.path_of(spec)] = CREATED

    report = ingest_report(batch, [], _Outcome(status), time.perf_counter(), True, True, False)  # type: ignore[arg-type]
    return DirectRows(
        report=report,
        identifiers=_distinct_trees(_batch_identifiers(batch)),
        conversation_ids=conversation_ids,
        conversations=column_values(
            Conversation, _CONVERSATION_NAMES, rows, alias=alias, later=_CONVERSATION_KEYS
        ),
        conversation_targets=conversation_targets,
        entity_ids=set(entities),
        tags=tags,
        started=started,
        targets=targets,
        counts=dict(counts),
        messages=[(m.conversation_id, m.sequence, m.role) for m in batch.messages],
        pieces=column_values(MessagePiece, _PIECE_NAMES, pieces, alias=alias, later=_PIECE_KEYS),
        piece_messages=piece_messages,
        piece_offsets=offsets,
        piece_identifiers=(prompt_targets, attacks, scorers),
        piece_media=(original_media, converted_media),
        links=links,
        scores=column_values(Score, _SCORE_NAMES, score_rows, alias=alias, later=_SCORE_KEYS),
        score_identifiers=score_identifiers,
        score_contents=score_contents,
    )


def _prepare_attacks(batch: NormalizedBatch) -> DirectAttacks:
    """Reader side: a chunk of attack results only (``attacks_eligible``)."""
    alias = router.db_for_write(AttackResult)
    status: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    related: list[tuple[uuid.UUID, str, str, str | None]] = []
    seen_related: set[tuple[uuid.UUID, str]] = set()
    attack_tags: dict[uuid.UUID, tuple[dict[str, Any], list[str]]] = {}
    conversation_tags: dict[str, tuple[dict[str, Any], list[str]]] = {}
    trees: list[ids.ComponentIdentifier | None] = []
    strategies, atomics = [], []
    for spec in batch.attack_results:
        values = attack_own_values(spec)
        values["id"] = spec.id
        values["timestamp"] = spec.timestamp
        values["timestamp_source"] = spec.timestamp_source or TimestampSource.PYRIT
        rows.append(values)
        strategy = attack_strategy(spec)
        trees += (strategy, spec.atomic_attack_identifier)
        strategies.append(_hash(strategy))
        atomics.append(_hash(spec.atomic_attack_identifier))
        labels = indexed_labels(spec)
        attack_tags[spec.id] = (labels, spec.targeted_harm_categories)
        # §9.2: the attack's labels also tag its conversations (the service's _collect_tags)
        for cid in [spec.conversation_id, *(r.conversation_id for r in spec.related_conversations)]:
            merged_labels, merged_harms = conversation_tags.setdefault(cid, ({}, []))
            merged_labels.update(labels)
            merged_harms.extend(h for h in spec.targeted_harm_categories if h not in merged_harms)
        for ref in spec.related_conversations:
            if (spec.id, ref.conversation_id) not in seen_related:
                seen_related.add((spec.id, ref.conversation_id))
                related.append(
                    (spec.id, ref.conversation_id, ref.conversation_type, ref.description)
                )
        status[batch.path_of(spec)] = CREATED
    attacks = batch.attack_results
    names = list(rows[0])
    report = ingest_report(batch, [], _Outcome(status), time.perf_counter(), True, True, False)  # type: ignore[arg-type]
    return DirectAttacks(
        report=report,
        identifiers=_distinct_trees(trees),
        attacks=column_values(
            AttackResult,
            names,
            [tuple(row[name] for name in names) for row in rows],
            alias=alias,
            later=_ATTACK_KEYS,
        ),
        conversations=[a.conversation_id for a in attacks],
        strategies=strategies,
        atomics=atomics,
        last_scores=[a.last_score_id for a in attacks],
        pieces={a.last_response_id for a in attacks} - {None},
        scores={s for a in attacks for s in (a.last_score_id, a.human_score_id)} - {None},
        scenarios={a.attribution_parent_id for a in attacks} - {None},
        related=related,
        attack_tags=attack_tags,
        conversation_tags=conversation_tags,
        succeeded=[a.id for a in attacks if a.outcome == AttackOutcome.SUCCESS],
    )


def _distinct_trees(
    identifiers: Iterable[ids.ComponentIdentifier | None],
) -> list[ids.ComponentIdentifier]:
    """Each identifier object once, in the order first seen: what ``identifiers_store`` must
    walk to store what the service stores when it walks every one.

    By identity, not by hash: the reader shares one parsed object per distinct identifier
    (``parse_identifier``), so this is a handful per chunk, while a file may hold different
    trees under one stored hash (the importer warns), whose children the service stores too.
    """
    seen: set[int] = set()
    out = []
    for identifier in identifiers:
        if identifier is not None and id(identifier) not in seen:
            seen.add(id(identifier))
            out.append(identifier)
    return out


def _hash(identifier: ids.ComponentIdentifier | None) -> str | None:
    return None if identifier is None else identifier.hash


def _conversation_ids(batch: NormalizedBatch) -> set[str]:
    found = {m.conversation_id for m in batch.messages}
    found.update(c.conversation_id for c in batch.conversations)
    return found


def _column(model: Any, name: str) -> int:
    return _NAMES[model].index(name)


_NAMES = {model: column_names(model) for model in (AttackResult, Conversation, MessagePiece, Score)}


class DirectWriter:
    """Writes prepared chunks of one import; keeps identifier hashes it has stored → pks."""

    def __init__(self) -> None:
        self.identifier_pks: dict[str, int] = {}
        #: Chunks written here and chunks handed to the service (the tests read both).
        self.written = 0
        self.handed_over = 0

    def write(self, rows: DirectRows | DirectAttacks) -> IngestReport | None:
        """Write the chunk in one transaction and report it as the service would; None (and
        nothing written) when the database holds any of its pieces, scores or conversations,
        or any of its attack results, or lacks a row they name: then the service takes the
        chunk."""
        if isinstance(rows, DirectAttacks):
            return self._write_attack_chunk(rows)
        started = time.perf_counter()
        with transaction.atomic():
            serialise_writers()
            stored = self._stored_conversations(rows)
            if stored is None or not self._write(rows, stored):
                self.handed_over += 1
                return None
        self.written += 1
        report = rows.report
        report.counts["conversations"][CREATED] += len(
            set(rows.conversation_ids) - set(stored) - rows.entity_ids
        )
        report.seconds = time.perf_counter() - started
        return report

    def _write_attack_chunk(self, rows: DirectAttacks) -> IngestReport | None:
        started = time.perf_counter()
        with transaction.atomic():
            serialise_writers()
            if not self._write_attacks(rows):
                self.handed_over += 1
                return None
            events.attacks_succeeded_announce(rows.succeeded)
        self.written += 1
        rows.report.seconds = time.perf_counter() - started
        return rows.report

    # --- checks -----------------------------------------------------------------------------

    @staticmethod
    def _stored_conversations(rows: DirectRows) -> dict[str, Conversation] | None:
        """The stored conversations the chunk's pieces continue, or None when the service
        must take the chunk: a piece or score is stored already (a re-import: merged or
        reported there), or a conversation row of the file is (merged there)."""
        if existing_keys(
            MessagePiece, "id", rows.pieces[_column(MessagePiece, "id")] or []
        ) or existing_keys(Score, "id", rows.scores[_column(Score, "id")] or []):
            return None
        found = existing_values(Conversation, "conversation_id", rows.conversation_ids)
        if not found:
            return {}
        if found & rows.entity_ids:
            return None
        return {
            c.conversation_id: c for c in Conversation.objects.filter(conversation_id__in=found)
        }

    @staticmethod
    def _stored_messages(
        rows: DirectRows, stored: dict[str, Conversation]
    ) -> dict[tuple[str, int], tuple[int, str]] | None:
        """(conversation id, sequence) → (pk, role) of the stored messages the chunk's pieces
        join; None when one has another role (a conflict the service reports)."""
        touched = {cid for cid, _, _ in rows.messages} & set(stored)
        if not touched:
            return {}
        found = {
            (cid, sequence): (pk, role)
            for pk, cid, sequence, role in Message.objects.filter(
                conversation__conversation_id__in=touched
            ).values_list("id", "conversation__conversation_id", "sequence", "role")
        }
        for cid, sequence, role in rows.messages:
            known = found.get((cid, sequence))
            if known is not None and known[1] != role:
                return None
        return found

    # --- writes -----------------------------------------------------------------------------

    def _identifiers(self, found: Iterable[ids.ComponentIdentifier]) -> None:
        """Store the identifiers not stored yet by this import, in the service's order."""
        wanted = [i for i in found if i.hash not in self.identifier_pks]
        if wanted:
            stored = identifiers_store(identifiers=wanted)
            self.identifier_pks.update((h, row.pk) for h, row in stored.items())

    def _pks(self, hashes: list[str | None]) -> list[int | None]:
        pks = self.identifier_pks
        return [None if h is None else pks[h] for h in hashes]

    def _write(self, rows: DirectRows, stored: dict[str, Conversation]) -> bool:
        """Write the chunk; False (nothing written) when the service must take it."""
        messages_stored = self._stored_messages(rows, stored)
        if messages_stored is None:
            return False
        self._identifiers(rows.identifiers)

        conversations = list(rows.conversations)
        conversations[_column(Conversation, "target_identifier_id")] = self._pks(
            rows.conversation_targets
        )
        if stored:
            keep = [i for i, cid in enumerate(rows.conversation_ids) if cid not in stored]
            conversations = [[column[i] for i in keep] for column in conversations]  # type: ignore[index]
        _insert_columns(Conversation, conversations)  # type: ignore[arg-type]
        conversation_pks = _conversation_pks(rows.conversation_ids)

        new_messages = [m for m in rows.messages if (m[0], m[1]) not in messages_stored]
        _insert(Message, [(conversation_pks[cid], seq, role) for cid, seq, role in new_messages])
        message_pks = {key: pk for key, (pk, _) in messages_stored.items()}
        if new_messages:
            message_pks.update(
                _message_pks({cid: conversation_pks[cid] for cid, _, _ in new_messages})
            )
        # pieces joining a stored message continue its positions (as the service's do)
        next_position = _next_positions(
            {
                message_pks[key]
                for key in {(m[0], m[1]) for m in rows.messages} & set(messages_stored)
            }
        )

        pieces = list(rows.pieces)
        piece_message_pks = [message_pks[key] for key in rows.piece_messages]
        pieces[_column(MessagePiece, "message_id")] = piece_message_pks
        if next_position:
            pieces[_column(MessagePiece, "position")] = [
                next_position.get(pk, 0) + offset
                for pk, offset in zip(piece_message_pks, rows.piece_offsets, strict=True)
            ]
        else:
            pieces[_column(MessagePiece, "position")] = rows.piece_offsets
        for name, hashes in zip(
            ("prompt_target_identifier_id", "attack_identifier_id", "scorer_identifier_id"),
            rows.piece_identifiers,
            strict=True,
        ):
            pieces[_column(MessagePiece, name)] = self._pks(hashes)
        original_media, converted_media = rows.piece_media
        wanted = [m for m in (*original_media, *converted_media) if m is not None]
        media = MediaIndex.for_values(wanted) if wanted else None
        for name, values in (
            ("original_media_id", original_media),
            ("converted_media_id", converted_media),
        ):
            pieces[_column(MessagePiece, name)] = [
                None if m is None or media is None else _blob_pk(media, m) for m in values
            ]
        _insert_columns(MessagePiece, pieces)  # type: ignore[arg-type]

        pks = self.identifier_pks
        _insert(PieceConverter, [(piece, i, pks[h]) for piece, i, h, _ in rows.links])
        _insert(
            Conversation.converter_index.through,
            sorted({(conversation_pks[cid], pks[h]) for _, _, h, cid in rows.links}),
        )
        piece_ids = pieces[_column(MessagePiece, "id")] or []
        if piece_ids and Score.objects.filter(conversation__isnull=True).exists():
            # scores stored before their piece (the service does the same)
            Score.objects.adopt_homes([uuid.UUID(hex=h) for h in piece_ids])

        self._write_scores(rows, conversation_pks, piece_ids)
        self._write_tags(rows, conversation_pks, stored)
        return True

    def _write_attacks(self, rows: DirectAttacks) -> bool:
        """Write a chunk of new attack results as the service writes them; False (nothing
        written) when one is stored, or a conversation, piece, score or scenario result they
        name is not: the service then merges, makes the conversation or refuses the result
        (and the importer drops a reference to a row it refused before)."""
        if existing_keys(AttackResult, "id", rows.attacks[_column(AttackResult, "id")] or []):
            return False
        conversation_ids = set(rows.conversations) | {cid for _, cid, _, _ in rows.related}
        conversations = {
            cid: (pk, labels, harms)
            for cid, pk, labels, harms in Conversation.objects.filter(
                conversation_id__in=conversation_ids
            ).values_list("conversation_id", "id", "labels", "targeted_harm_categories")
        }
        if len(conversations) != len(conversation_ids):
            return False
        scorers = stored_column(Score, "id", rows.scores, column="scorer_class_identifier_id")
        if len(scorers) != len(rows.scores):
            return False
        if not _all_stored(MessagePiece, rows.pieces) or not _all_stored(
            ScenarioResult, rows.scenarios
        ):
            return False
        self._identifiers(rows.identifiers)

        attacks = list(rows.attacks)
        attacks[_column(AttackResult, "conversation_id")] = [
            conversations[cid][0] for cid in rows.conversations
        ]
        attacks[_column(AttackResult, "attack_identifier_id")] = self._pks(rows.strategies)
        attacks[_column(AttackResult, "atomic_attack_identifier_id")] = self._pks(rows.atomics)
        attacks[_column(AttackResult, "last_scorer_id")] = [
            None if score is None else scorers[score] for score in rows.last_scores
        ]
        _insert_columns(AttackResult, attacks)
        insert_rows(
            RelatedConversation,
            [
                {
                    "attack_result_id": attack,
                    "conversation_id": conversations[cid][0],
                    "conversation_type": kind,
                    "description": description,
                }
                for attack, cid, kind, description in rows.related
            ],
        )

        # the service's _write_tags: what the attacks add to their stored conversations
        updates: list[Conversation] = []
        conv_labels: dict[int, dict[str, Any]] = {}
        conv_harms: dict[int, list[str]] = {}
        for cid, (labels, harms) in rows.conversation_tags.items():
            pk, stored_labels, stored_harms = conversations[cid]
            merged_labels = {**stored_labels, **labels}
            merged_harms = stored_harms + [h for h in harms if h not in stored_harms]
            if merged_labels != stored_labels or merged_harms != stored_harms:
                updates.append(
                    Conversation(
                        id=pk,
                        labels=merged_labels,
                        targeted_harm_categories=merged_harms,
                        updated_at=write_time(),
                    )
                )
                conv_labels[pk], conv_harms[pk] = labels, harms
        if updates:
            update_rows(Conversation, ["labels", "targeted_harm_categories", "updated_at"], updates)
        link_tags(
            conversation_labels=conv_labels,
            conversation_harms=conv_harms,
            attack_labels={pk: labels for pk, (labels, _) in rows.attack_tags.items()},
            attack_harms={pk: harms for pk, (_, harms) in rows.attack_tags.items()},
        )
        return True

    def _write_scores(
        self, rows: DirectRows, conversation_pks: dict[str, int], piece_ids: list[str]
    ) -> None:
        if not rows.score_identifiers:
            return
        scores = list(rows.scores)
        scored = scores[_column(Score, "message_piece_id")] or []
        # each scored piece's conversation (the score's home, ``write.score_homes``): the
        # chunk's own pieces, one look-up for pieces stored earlier
        homes = dict(
            zip(
                piece_ids,
                [conversation_pks[cid] for cid, _ in rows.piece_messages],
                strict=True,
            )
        )
        elsewhere = {h for h in scored if h is not None and h not in homes}
        if elsewhere:
            homes.update(_piece_conversations(elsewhere))
        scores[_column(Score, "conversation_id")] = [homes.get(h) for h in scored]
        scores[_column(Score, "scorer_class_identifier_id")] = self._pks(
            rows.score_identifiers  # type: ignore[arg-type]
        )
        wanted = {c for c in rows.score_contents if c is not None}
        contents = (
            {
                c.hex
                for c in existing_values(ScorableContent, "id", {uuid.UUID(hex=c) for c in wanted})
            }
            if wanted
            else set()
        )
        scores[_column(Score, "scorable_content_id")] = [
            c if c in contents else None for c in rows.score_contents
        ]
        _insert_columns(Score, scores)  # type: ignore[arg-type]

    def _write_tags(
        self, rows: DirectRows, conversation_pks: dict[str, int], stored: dict[str, Conversation]
    ) -> None:
        """The label and harm-category indexes of the conversations, and what the chunk's
        pieces change in the stored ones (the service's ``_write_conversations`` and
        ``_write_tags``): a missing target, the piece count, labels, harms, the start."""
        dirty: dict[str, set[str]] = {}
        for cid, target in rows.targets.items():
            row = stored.get(cid)
            if row is not None and row.target_identifier_id is None:
                row.target_identifier_id = self.identifier_pks[target]
                dirty.setdefault(cid, set()).add("target_identifier")
        for cid, count in rows.counts.items():
            if cid in stored:
                stored[cid].piece_count += count
                dirty.setdefault(cid, set()).add("piece_count")
        conv_labels: dict[int, dict[str, Any]] = {}
        conv_harms: dict[int, list[str]] = {}
        for cid, (labels, harms) in rows.tags.items():
            row = stored.get(cid)
            if row is None:
                conv_labels[conversation_pks[cid]], conv_harms[conversation_pks[cid]] = (
                    labels,
                    harms,
                )
                continue
            merged_labels = {**row.labels, **labels}
            merged_harms = row.targeted_harm_categories + [
                h for h in harms if h not in row.targeted_harm_categories
            ]
            if merged_labels != row.labels or merged_harms != row.targeted_harm_categories:
                row.labels, row.targeted_harm_categories = merged_labels, merged_harms
                dirty.setdefault(cid, set()).update({"labels", "targeted_harm_categories"})
                conv_labels[row.pk], conv_harms[row.pk] = labels, harms
        for cid, timestamp in rows.started.items():
            row = stored.get(cid)
            if row is not None and (row.started_at is None or timestamp < row.started_at):
                row.started_at = timestamp
                dirty.setdefault(cid, set()).add("started_at")
        if dirty:
            names = set().union(*dirty.values()) | {"updated_at"}
            update_rows(Conversation, sorted(names), [stored[cid] for cid in dirty])
        pairs = {label_pair(k, v) for labels in conv_labels.values() for k, v in labels.items()}
        names = {h for harms in conv_harms.values() for h in harms}
        label_ids = label_rows(pairs)
        harm_ids = harm_category_rows(names)
        _insert(
            Conversation.label_index.through,
            [
                (pk, target)
                for pk, labels in conv_labels.items()
                for target in {label_ids[label_pair(k, v)] for k, v in labels.items()}
            ],
        )
        _insert(
            Conversation.harm_category_index.through,
            [
                (pk, target)
                for pk, harms in conv_harms.items()
                for target in {harm_ids[h] for h in harms}
            ],
        )


def _all_stored(model: Any, wanted: set[uuid.UUID]) -> bool:
    return not wanted or len(existing_values(model, "id", wanted)) == len(wanted)


def _blob_pk(media: MediaIndex, value: tuple[str, str, str | None]) -> int | None:
    blob = media.find(value[0], value[2])
    return blob.pk if blob else None


def _insert(model: Any, rows: list[tuple[Any, ...]]) -> None:
    """Rows of integer (and, for converter links, hex UUID) columns, all of ``model``'s
    columns in order: nothing to adapt."""
    if rows:
        _insert_columns(model, [list(column) for column in zip(*rows, strict=True)])


#: Tables with the dashboards' rollup triggers (their rows go in multi-row statements).
_TRIGGERED = frozenset(
    {
        rollup_sql.ATTACK,
        rollup_sql.CONVERSATION,
        rollup_sql.SCORE,
        rollup_sql.LABEL_LINK,
        rollup_sql.HARM_LINK,
        rollup_sql.IDENTIFIER,
        rollup_sql.CONVERTER_LINK,
        rollup_sql.RELATED,
    }
)


def _insert_columns(model: Any, columns: list[Any]) -> None:
    insert_columns(model, columns, triggered=model._meta.db_table in _TRIGGERED)


def _batch_identifiers(batch: NormalizedBatch) -> Iterable[ids.ComponentIdentifier | None]:
    """The service's order (``_Plan._identifiers``) for the kinds this path writes."""
    for piece in batch.pieces:
        spec = piece.spec
        yield spec.prompt_target_identifier
        yield spec.attack_identifier
        yield spec.scorer_identifier
        yield from spec.converter_identifiers
    for score in batch.scores:
        yield score.scorer_class_identifier
    for conversation in batch.conversations:
        yield conversation.target_identifier


def _piece_conversations(piece_ids: set[str]) -> dict[str, int]:
    """``{piece id: conversation pk}`` of the stored pieces among ``piece_ids`` (hex text):
    one raw statement (``MessagePiece.objects.conversation_pks`` without a UUID object or a
    compiled ORM query per chunk of scores)."""
    connection = connections[router.db_for_read(MessagePiece)]
    quote = connection.ops.quote_name
    piece = quote(MessagePiece._meta.db_table)
    message = quote(Message._meta.db_table)
    select = (
        f"SELECT p.{quote('id')}, m.{quote('conversation_id')} FROM {piece} p "
        f"JOIN {message} m ON m.{quote('id')} = p.{quote('message_id')} WHERE p.{quote('id')} "
    )
    found: dict[str, int] = {}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(select + "= ANY(%s::uuid[])", ["{" + ",".join(piece_ids) + "}"])
            found.update((key.hex, pk) for key, pk in cursor.fetchall())
            return found
        for part in chunked(piece_ids):
            cursor.execute(select + f"IN ({', '.join(['%s'] * len(part))})", part)
            found.update(cursor.fetchall())
    return found


def _conversation_pks(conversation_ids: set[str]) -> dict[str, int]:
    return dict(
        Conversation.objects.filter(conversation_id__in=conversation_ids).values_list(
            "conversation_id", "id"
        )
    )


def _next_positions(message_pks: set[int]) -> dict[int, int]:
    """The next free position in each of these stored messages."""
    if not message_pks:
        return {}
    return {
        pk: highest + 1
        for pk, highest in MessagePiece.objects.filter(message_id__in=message_pks)
        .values("message_id")
        .annotate(highest=Max("position"))
        .values_list("message_id", "highest")
    }


def _message_pks(conversation_pks: dict[str, int]) -> dict[tuple[str, int], int]:
    names = {pk: cid for cid, pk in conversation_pks.items()}
    return {
        (names[conversation_pk], sequence): pk
        for pk, conversation_pk, sequence in Message.objects.filter(
            conversation_id__in=list(names)
        ).values_list("id", "conversation_id", "sequence")
    }
