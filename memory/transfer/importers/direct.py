"""The importer's own write path: a chunk of new pieces, conversations and scores straight to
column tuples and ``executemany``.

The ingestion service (:func:`memory.storage.write.ingest_batch`) serves every client: it
reads what a batch touches, decides per item whether it is new, unchanged, updated or in
conflict, and writes model instances and dicts through the generic bulk helpers. A PyRIT file
imported into Redline is mostly rows Redline has never seen, in the order references need, so
this path writes exactly what the service would write for such a chunk and nothing else:

- it takes a chunk only when every piece and score of it is new, and the chunk holds nothing
  but pieces, messages, conversations and scores, with no problem found by the normaliser or
  the service's value checks (``memory.storage.lengths``, run beside the reader); new pieces
  may continue a conversation an earlier chunk stored (merged as the service merges them);
- every other chunk (a re-import, a 1.x conversation row already stored, a message whose
  stored role differs, attack results, scenario results, seeds, scorable content, verbatim
  rows, a refused row) goes to the service, which merges, reports conflicts and refuses as it
  does for every client.

The values are the service's: the same spec objects, the same fallbacks (a piece's converted
value and hash, its conversation's labels, harm categories, start and target), the same
per-column adapters (``redteam.core.bulk``) and the same insertion order, so surrogate keys
come out equal too. ``tests/transfer/test_import_write_path.py`` imports the fixture databases
through both paths and compares every table.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.db.models import NOT_PROVIDED, Max, Model
from django.utils import timezone

from memory.models import (
    Conversation,
    Message,
    MessagePiece,
    PieceConverter,
    ScorableContent,
    Score,
)
from memory.models.media import media_key
from memory.models.media_links import MediaIndex
from memory.storage.batch import NormalizedBatch
from memory.storage.identifiers import identifiers_store
from memory.storage.write import (
    CREATED,
    IngestReport,
    _content_id,
    _converted,
    _harm_rows,
    _label_rows,
    _media_values,
    _now,
    _pair,
    _report,
    _serialise_writers,
    _sha,
    score_homes,
)
from redteam.core import identifiers as ids
from redteam.core.bulk import _adapters, _columns, existing_values, insert_rows, update_rows
from redteam.core.choices import is_media_value
from redteam.core.scoring import score_numeric_value

__all__ = ["DirectWriter", "direct_eligible"]


def direct_eligible(batch: NormalizedBatch) -> bool:
    """Whether the chunk is of the kinds this path writes (the database decides the rest)."""
    if (
        batch.attack_results
        or batch.scenario_results
        or batch.seeds
        or batch.seed_groups
        or batch.seed_datasets
        or batch.scorable_contents
        or batch.pyrit_records
        or "push_source" in batch.meta
    ):
        return False
    return all(
        p.spec.original_media is None and p.spec.converted_media is None for p in batch.pieces
    )


@dataclass
class _Outcome:
    """What ``_report`` reads of a plan: each item's status, conversations made implicitly."""

    status: dict[str, str] = field(default_factory=dict)
    implicit_conversations: int = 0


class _Table:
    """Rows of one model as tuples of the columns ``names`` (attnames), inserted with
    ``INSERT … ON CONFLICT DO NOTHING``: on SQLite one ``executemany`` (the reader is in
    another process, so nothing waits for the GIL between rows); on PostgreSQL through
    ``insert_rows``, the multi-row helper every writer shares."""

    def __init__(self, model: type[Model], names: Sequence[str]) -> None:
        self.model = model
        self.names = tuple(names)

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        model = self.model
        connection = connections[router.db_for_write(model)]
        if connection.vendor != "sqlite":
            insert_rows(model, [dict(zip(self.names, row, strict=True)) for row in rows])
            return
        fields = _columns(model)
        adapt = _adapters(model, fields, connection)
        index = {name: i for i, name in enumerate(self.names)}
        now = timezone.now()
        # per column: (position in the tuple, adapter), or (None, constant default), or
        # (-1, adapter of a default that must be made per row, e.g. ``uuid4``)
        plan: list[tuple[int | None, Any, Any]] = []
        for f, prep in zip(fields, adapt, strict=True):
            if f.attname in index:
                plan.append((index[f.attname], prep, None))
            elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
                plan.append((None, prep(now), None))
            elif callable(f.default) and f.get_internal_type() != "JSONField":
                plan.append((-1, prep, f.get_default))
            elif f.default is not NOT_PROVIDED or f.null:
                plan.append((None, prep(f.get_default()), None))
            else:
                raise ValueError(f"{model.__name__}.{f.attname}: no value and no default")
        if all(i is not None and i >= 0 for i, _, _ in plan):
            order = [i for i, _, _ in plan]
            adapters = [prep for _, prep, _ in plan]
            values = [
                [prep(row[i]) for i, prep in zip(order, adapters, strict=True)] for row in rows
            ]
        else:
            values = [
                [
                    const if i is None else const(make()) if i < 0 else const(row[i])
                    for i, const, make in plan
                ]
                for row in rows
            ]
        quote = connection.ops.quote_name
        sql = (
            f"INSERT INTO {quote(model._meta.db_table)} "
            f"({', '.join(quote(f.column) for f in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))}) ON CONFLICT DO NOTHING"
        )
        with connection.cursor() as cursor:
            cursor.executemany(sql, values)


_CONVERSATIONS = _Table(
    Conversation,
    (
        "conversation_id",
        "labels",
        "targeted_harm_categories",
        "started_at",
        "target_identifier_id",
        "retries",
        "extra",
        "pyrit_version",
        "piece_count",
        "push_source_id",
    ),
)
_MESSAGES = _Table(Message, ("conversation_id", "sequence", "role"))
_PIECES = _Table(
    MessagePiece,
    (
        "id",
        "message_id",
        "position",
        "timestamp",
        "labels",
        "prompt_metadata",
        "targeted_harm_categories",
        "prompt_target_identifier_id",
        "attack_identifier_id",
        "scorer_identifier_id",
        "original_value",
        "original_value_data_type",
        "original_value_sha256",
        "original_media_id",
        "original_media_key",
        "converted_value",
        "converted_value_data_type",
        "converted_value_sha256",
        "converted_media_id",
        "converted_media_key",
        "response_error",
        "originator",
        "original_prompt_id",
        "pyrit_version",
        "extra",
    ),
)
_CONVERTERS = _Table(PieceConverter, ("piece_id", "position", "identifier_id"))
_CONVERTER_INDEX = _Table(
    Conversation.converter_index.through, ("conversation_id", "componentidentifier_id")
)
_SCORES = _Table(
    Score,
    (
        "id",
        "score_value",
        "numeric_value",
        "score_value_description",
        "score_type",
        "score_category",
        "score_rationale",
        "score_metadata",
        "scorer_class_identifier_id",
        "message_piece_id",
        "conversation_id",
        "timestamp",
        "objective",
        "scored_expectation",
        "status",
        "scorable",
        "scorable_content_id",
        "pyrit_version",
        "extra",
    ),
)
_CONVERSATION_LABELS = _Table(Conversation.label_index.through, ("conversation_id", "label_id"))
_CONVERSATION_HARMS = _Table(
    Conversation.harm_category_index.through, ("conversation_id", "harmcategory_id")
)


class DirectWriter:
    """Writes eligible chunks of one import; keeps identifier hashes it has stored → pks."""

    def __init__(self) -> None:
        self.identifier_pks: dict[str, int] = {}
        #: Chunks written here and chunks handed to the service (the tests read both).
        self.written = 0
        self.handed_over = 0

    def write(self, batch: NormalizedBatch) -> IngestReport | None:
        """Write ``batch`` in one transaction and report it as the service would; None (and
        nothing written) when the database holds any of its pieces, scores or conversations:
        then the service takes the chunk."""
        if not direct_eligible(batch):
            self.handed_over += 1
            return None
        started = time.perf_counter()
        outcome = _Outcome()
        with transaction.atomic():
            _serialise_writers()
            stored = self._stored_conversations(batch)
            if stored is None:
                self.handed_over += 1
                return None
            if not self._write(batch, outcome, stored):
                self.handed_over += 1
                return None
        self.written += 1
        return _report(batch, [], outcome, started, True, True, False)  # type: ignore[arg-type]

    # --- checks -----------------------------------------------------------------------------

    @staticmethod
    def _conversation_ids(batch: NormalizedBatch) -> set[str]:
        found = {m.conversation_id for m in batch.messages}
        found.update(c.conversation_id for c in batch.conversations)
        return found

    def _stored_conversations(self, batch: NormalizedBatch) -> dict[str, Conversation] | None:
        """The stored conversations the chunk's pieces continue, or None when the service
        must take the chunk: a piece or score is stored already (a re-import: merged or
        reported there), or a conversation row of the file is (merged there)."""
        if existing_values(MessagePiece, "id", [p.spec.id for p in batch.pieces]) or (
            existing_values(Score, "id", [s.id for s in batch.scores])
        ):
            return None
        found = existing_values(Conversation, "conversation_id", self._conversation_ids(batch))
        if not found:
            return {}
        if any(c.conversation_id in found for c in batch.conversations):
            return None
        return {
            c.conversation_id: c for c in Conversation.objects.filter(conversation_id__in=found)
        }

    @staticmethod
    def _stored_messages(
        batch: NormalizedBatch, stored: dict[str, Conversation]
    ) -> dict[tuple[str, int], tuple[int, str]] | None:
        """(conversation id, sequence) → (pk, role) of the stored messages the chunk's pieces
        join; None when one has another role (a conflict the service reports)."""
        touched = {m.conversation_id for m in batch.messages} & set(stored)
        if not touched:
            return {}
        found = {
            (cid, sequence): (pk, role)
            for pk, cid, sequence, role in Message.objects.filter(
                conversation__conversation_id__in=touched
            ).values_list("id", "conversation__conversation_id", "sequence", "role")
        }
        for message in batch.messages:
            known = found.get((message.conversation_id, message.sequence))
            if known is not None and known[1] != message.role:
                return None
        return found

    # --- writes -----------------------------------------------------------------------------

    def _identifiers(self, found: Iterable[ids.ComponentIdentifier | None]) -> None:
        """Store the identifiers not stored yet by this import, in the service's order."""
        wanted = [i for i in found if i is not None and i.hash not in self.identifier_pks]
        if wanted:
            rows = identifiers_store(identifiers=wanted)
            self.identifier_pks.update((h, row.pk) for h, row in rows.items())

    def _pk(self, identifier: ids.ComponentIdentifier | None) -> int | None:
        return None if identifier is None else self.identifier_pks[identifier.hash]

    def _write(
        self, batch: NormalizedBatch, outcome: _Outcome, stored: dict[str, Conversation]
    ) -> bool:
        """Write the chunk; False (nothing written) when the service must take it."""
        messages_stored = self._stored_messages(batch, stored)
        if messages_stored is None:
            return False
        now = _now()
        status = outcome.status
        self._identifiers(_batch_identifiers(batch))

        # what the service's _collect_tags gathers per conversation
        piece_times: dict[uuid.UUID, datetime] = {}
        started: dict[str, datetime] = {}
        tags: dict[str, tuple[dict[str, Any], list[str]]] = {}
        targets: dict[str, ids.ComponentIdentifier] = {}
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
            if spec.prompt_target_identifier is not None:
                targets.setdefault(cid, spec.prompt_target_identifier)
            counts[cid] += 1

        conversation_ids = self._conversation_ids(batch)
        entities = {c.conversation_id: c for c in batch.conversations}
        meta_version = batch.meta.get("pyrit_version")
        meta_version = meta_version if isinstance(meta_version, str) else ""
        new = conversation_ids - set(stored)
        rows = []
        for cid in sorted(new):
            entity = entities.get(cid)
            target = entity.target_identifier if entity else None
            labels, harms = tags.get(cid, ({}, []))
            rows.append(
                (
                    cid,
                    labels,
                    harms,
                    started.get(cid),
                    self._pk(target or targets.get(cid)),
                    entity.retries if entity else [],
                    entity.extra if entity else {},
                    (entity.pyrit_version if entity else "") or meta_version,
                    counts[cid],
                    None,
                )
            )
        _CONVERSATIONS.insert(rows)
        conversation_pks = _conversation_pks(conversation_ids)
        outcome.implicit_conversations = len(new - set(entities))
        for entity in batch.conversations:
            status[batch.path_of(entity)] = CREATED

        new_messages = [
            m for m in batch.messages if (m.conversation_id, m.sequence) not in messages_stored
        ]
        _MESSAGES.insert(
            [(conversation_pks[m.conversation_id], m.sequence, m.role) for m in new_messages]
        )
        message_pks = {key: pk for key, (pk, _) in messages_stored.items()}
        if new_messages:
            message_pks.update(
                _message_pks(
                    {m.conversation_id: conversation_pks[m.conversation_id] for m in new_messages}
                )
            )
        # pieces joining a stored message continue its positions (as the service's do)
        next_position = _next_positions(
            {
                message_pks[(m.conversation_id, m.sequence)]
                for m in batch.messages
                if (m.conversation_id, m.sequence) in messages_stored
            }
        )

        media = MediaIndex.for_values(
            (value, data_type, sha)
            for p in batch.pieces
            for value, data_type, sha in _media_values(p.spec)
        )
        pieces, links = [], []
        converted: set[tuple[int, int]] = set()
        for message in batch.messages:
            message_pk = message_pks[(message.conversation_id, message.sequence)]
            conversation_pk = conversation_pks[message.conversation_id]
            for position, piece in enumerate(message.pieces, next_position.get(message_pk, 0)):
                spec = piece.spec
                pieces.append(self._piece(spec, message_pk, position, piece_times[spec.id], media))
                for i, conv in enumerate(spec.converter_identifiers):
                    identifier_pk = self.identifier_pks[conv.hash]
                    links.append((spec.id, i, identifier_pk))
                    converted.add((conversation_pk, identifier_pk))
                status[piece.path] = CREATED
        _PIECES.insert(pieces)
        _CONVERTERS.insert(links)
        _CONVERTER_INDEX.insert(sorted(converted))
        if pieces and Score.objects.filter(conversation__isnull=True).exists():
            # scores stored before their piece (the service does the same)
            Score.objects.adopt_homes([row[0] for row in pieces])

        self._write_scores(batch, conversation_pks, status)
        self._write_tags(tags, conversation_pks, stored, started, targets, counts)
        return True

    def _piece(
        self,
        spec: Any,
        message_pk: int,
        position: int,
        timestamp: datetime,
        media: MediaIndex,
    ) -> tuple[Any, ...]:
        """The service's row of a new piece (``_Plan._piece``) for a piece without bytes."""
        converted, converted_type = _converted(spec)
        original_sha = _sha(
            spec.original_value, spec.original_value_data_type, spec.original_value_sha256, None
        )
        converted_sha = _sha(converted, converted_type, spec.converted_value_sha256, None)
        original_is_media = is_media_value(spec.original_value_data_type, spec.original_value)
        converted_is_media = is_media_value(converted_type, converted)
        original_blob = media.find(spec.original_value, original_sha) if original_is_media else None
        converted_blob = media.find(converted, converted_sha) if converted_is_media else None
        return (
            spec.id,
            message_pk,
            position,
            timestamp,
            spec.labels,
            spec.prompt_metadata,
            spec.targeted_harm_categories,
            self._pk(spec.prompt_target_identifier),
            self._pk(spec.attack_identifier),
            self._pk(spec.scorer_identifier),
            spec.original_value,
            spec.original_value_data_type,
            original_sha,
            original_blob.pk if original_blob else None,
            media_key(spec.original_value) if original_is_media else "",
            converted,
            converted_type,
            converted_sha,
            converted_blob.pk if converted_blob else None,
            media_key(converted) if converted_is_media else "",
            spec.response_error,
            spec.originator,
            spec.original_prompt_id or spec.id,
            spec.pyrit_version,
            spec.extra,
        )

    def _write_scores(
        self, batch: NormalizedBatch, conversation_pks: dict[str, int], status: dict[str, str]
    ) -> None:
        scores = batch.scores
        if not scores:
            return
        homes = score_homes(
            batch_homes={p.spec.id: conversation_pks[p.conversation_id] for p in batch.pieces},
            scores=scores,
        )
        contents = existing_values(
            ScorableContent, "id", {c for s in scores if (c := _content_id(s.scorable))}
        )
        rows = []
        for spec in scores:
            content_id = _content_id(spec.scorable)
            rows.append(
                (
                    spec.id,
                    spec.score_value,
                    score_numeric_value(spec.score_type, spec.score_value),
                    spec.score_value_description,
                    spec.score_type,
                    spec.score_category,
                    spec.score_rationale,
                    spec.score_metadata,
                    self.identifier_pks[spec.scorer_class_identifier.hash],
                    spec.message_piece_id,
                    homes.get(spec.message_piece_id),
                    spec.timestamp or _now(),
                    spec.objective,
                    spec.scored_expectation,
                    spec.status,
                    spec.scorable,
                    content_id if content_id in contents else None,
                    spec.pyrit_version,
                    spec.extra,
                )
            )
            status[batch.path_of(spec)] = CREATED
        _SCORES.insert(rows)

    def _write_tags(
        self,
        tags: dict[str, tuple[dict[str, Any], list[str]]],
        conversation_pks: dict[str, int],
        stored: dict[str, Conversation],
        started: dict[str, datetime],
        targets: dict[str, ids.ComponentIdentifier],
        counts: Counter[str],
    ) -> None:
        """The label and harm-category indexes of the conversations, and what the chunk's
        pieces change in the stored ones (the service's ``_write_conversations`` and
        ``_write_tags``): a missing target, the piece count, labels, harms, the start."""
        dirty: dict[str, set[str]] = {}
        for cid, target in targets.items():
            row = stored.get(cid)
            if row is not None and row.target_identifier_id is None:
                row.target_identifier_id = self._pk(target)
                dirty.setdefault(cid, set()).add("target_identifier")
        for cid, count in counts.items():
            if cid in stored:
                stored[cid].piece_count += count
                dirty.setdefault(cid, set()).add("piece_count")
        conv_labels: dict[int, dict[str, Any]] = {}
        conv_harms: dict[int, list[str]] = {}
        for cid, (labels, harms) in tags.items():
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
        for cid, timestamp in started.items():
            row = stored.get(cid)
            if row is not None and (row.started_at is None or timestamp < row.started_at):
                row.started_at = timestamp
                dirty.setdefault(cid, set()).add("started_at")
        if dirty:
            names = set().union(*dirty.values()) | {"updated_at"}
            update_rows(Conversation, sorted(names), [stored[cid] for cid in dirty])
        pairs = {_pair(k, v) for labels in conv_labels.values() for k, v in labels.items()}
        names = {h for harms in conv_harms.values() for h in harms}
        label_ids = _label_rows(pairs)
        harm_ids = _harm_rows(names)
        _CONVERSATION_LABELS.insert(
            [
                (pk, target)
                for pk, labels in conv_labels.items()
                for target in {label_ids[_pair(k, v)] for k, v in labels.items()}
            ]
        )
        _CONVERSATION_HARMS.insert(
            [
                (pk, target)
                for pk, harms in conv_harms.items()
                for target in {harm_ids[h] for h in harms}
            ]
        )


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
