"""The export document, written as a stream of text in bounded memory.

The document is the ingestion envelope (``POST /api/v1/ingest/``) in PyRIT's shapes, made by
the read API's serializers: conversations as 1.1.0 ``{"conversation", "messages"}`` items whose
pieces are 0.12 ``MessagePiece.to_dict()`` (labels, targets, attack identifier and scores on
every piece: the fields PyRIT 1.x dropped; each score once, under the piece it names), loose
scored content (1.1.0 ``ScorableContentEntries``), the scores no exported piece carries,
scenario results with their attack
results embedded, attack results as 1.1.0 dumps with ``last_response`` and ``last_score``
embedded, seeds and seed groups, and last the rows of PyRIT tables Redline keeps verbatim
(``pyrit_records``: 1.2 operations, findings, evidence, observations). Ingesting it into an
empty database and exporting again gives the same document.

Rows are read in chunks of ``chunk_size``; each chunk is loaded with a fixed number of queries
(rows, then their pieces, converter chains, scores and identifier trees), serialised and
released before the next, so memory depends on the chunk size, not on the memory's size.
Every section is ordered by stable PyRIT values (conversation id; timestamp then id; …), never
by database keys, so two databases holding the same memory export the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import batched, groupby
from typing import Any

from django.db.models import Prefetch, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from memory.models import (
    AttackResult,
    MessagePiece,
    PyritRecord,
    RelatedConversation,
    ScorableContent,
    Score,
)
from memory.storage.selectors import identifier_dicts_for, piece_converters_prefetch
from memory.transfer.api.serializers import (
    AttackResultSerializer,
    ScorableContentSerializer,
    ScoreSerializer,
    piece_context,
)
from memory.transfer.exporters.profiles import REDLINE, Profile
from memory.transfer.exporters.selection import ExportSelection, with_piece_scores
from memory.transfer.exporters.serializers import (
    ExportConversationSerializer,
    ExportPieceSerializer,
    ScenarioResultSerializer,
)
from seeds.api.serializers import SeedDatasetSerializer, SeedGroupSerializer, SeedSerializer
from seeds.models import Seed

#: The ``export_format`` of the document (ingestion keeps it as meta and ignores it).
EXPORT_FORMAT = "redline-export/1"
#: Sections in document order: what an item refers to comes before it.
SECTIONS = (
    "conversations",
    "scorable_contents",
    "scores",
    "scenario_results",
    "attack_results",
    "seed_datasets",
    "seeds",
    "seed_groups",
    "pyrit_records",
)
#: Rows per chunk; conversations are loaded with all their pieces.
DEFAULT_CHUNK_SIZE = 200
#: Collection name for a scenario's attack results that do not name theirs.
DEFAULT_COLLECTION = "default"
#: Text is handed on in pieces of about this many characters.
FLUSH_CHARS = 64 * 1024

#: The read API's reference keys of an attack result, and the objects the export embeds.
_EMBEDDED = {
    "last_response_id": "last_response",
    "last_score_id": "last_score",
    "human_score_id": "human_score",
}
#: A JSON value as a stream of text fragments.
Fragments = Iterator[str]


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is (see :func:`encode`)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode(text: str) -> bytes:
    """UTF-8; a lone surrogate (possible in SQLite text) becomes its JSON escape ``\\udcxx``.

    Inside a JSON string that escape decodes back to the same character, so nothing is lost
    and the output is always valid UTF-8.
    """
    return text.encode("utf-8", errors="backslashreplace")


class MemoryExport:
    """One export: the sections of a selection, as streams of JSON items.

    ``profile`` cuts each item down to what one PyRIT version loads (``profiles.py``; the
    default keeps everything). ``media_blob_ids`` collects the stored media the written items
    show (for ``--with-media``); ``counts`` the items written per section, by the name the
    section is written under; ``on_item(section)`` is called after each item.
    """

    def __init__(
        self,
        *,
        selection: ExportSelection,
        request: Any = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        on_item: Callable[[str], None] | None = None,
        profile: Profile = REDLINE,
    ) -> None:
        # A profile that takes scores out of pieces writes all of them in ``scores``.
        self.selection = with_piece_scores(selection) if profile.scores_apart else selection
        self.request = request
        self.chunk_size = chunk_size
        self.on_item = on_item
        self.profile = profile
        self.media_blob_ids: set[int] = set()
        self.counts: dict[str, int] = {
            profile.sections[name]: 0 for name in SECTIONS if name in profile.sections
        }

    # --- the sections ----------------------------------------------------------------------

    def sections(self) -> Iterator[tuple[str, Iterator[Fragments]]]:
        """``(name, items)`` in document order, under the names the profile writes them;
        each item is a stream of fragments."""
        for name in SECTIONS:
            if name in self.profile.sections:
                written = self.profile.sections[name]
                yield written, self._counted(written, getattr(self, f"_{name}")())

    def _counted(self, name: str, items: Iterator[Fragments]) -> Iterator[Fragments]:
        for item in items:
            yield item
            self.counts[name] += 1
            if self.on_item is not None:
                self.on_item(name)

    def _chunks(self, queryset: Any) -> Iterator[tuple[Any, ...]]:
        return batched(queryset.iterator(chunk_size=self.chunk_size), self.chunk_size)

    def _conversations(self) -> Iterator[Fragments]:
        rows = self.selection.conversations.order_by("conversation_id")
        for chunk in self._chunks(rows):
            pieces = list(
                MessagePiece.objects.filter(message__conversation__in=[c.pk for c in chunk])
                .select_related("message__conversation", "original_media", "converted_media")
                .prefetch_related(piece_converters_prefetch())
                .order_by("message__conversation_id", "message__sequence", "position")
            )
            self._note_piece_media(pieces)
            context = {
                "request": self.request,
                "embed_scores": not self.profile.scores_apart,
                **piece_context(pieces, *(c.target_identifier_id for c in chunk)),
            }
            by_conversation = {
                key: list(group)
                for key, group in groupby(pieces, key=lambda p: p.message.conversation_id)
            }
            serializer = ExportConversationSerializer(context=context)
            for conversation in chunk:
                context["pieces"] = by_conversation.get(conversation.pk, [])
                data = serializer.to_representation(conversation)
                if self.profile.lossless and _target_implied(conversation, context["pieces"]):
                    data["conversation"]["target_identifier"] = None
                if self.profile.flat_pieces:
                    for message in data["messages"]:
                        for piece in message["message_pieces"]:
                            yield iter((dumps(self.profile.shape("piece", piece)),))
                    continue
                yield iter((dumps(self.profile.shape("conversation_item", data)),))

    def _scorable_contents(self) -> Iterator[Fragments]:
        rows = self.selection.scorable_contents.order_by("timestamp", "id")
        serializer = ScorableContentSerializer()
        for chunk in self._chunks(rows):
            for content in chunk:
                yield iter((dumps(serializer.to_representation(content)),))

    def _scores(self) -> Iterator[Fragments]:
        rows = self.selection.scores.order_by("timestamp", "id")
        for chunk in self._chunks(rows):
            identifiers = identifier_dicts_for(pks=[s.scorer_class_identifier_id for s in chunk])
            serializer = ScoreSerializer(context={"identifiers": identifiers})
            contents = self._scored_contents(chunk)
            for score in chunk:
                data = serializer.to_representation(score)
                scorable = data.get("scorable") or {}
                content = contents.get(str(scorable.get("content_id")))
                if content is not None and scorable.get("scorable_type") == "content_entry":
                    data["scorable"] = {
                        "scorable_type": "content",
                        "value": content.value,
                        "data_type": content.data_type,
                    }
                shaped = self.profile.shape("score", data)
                if shaped is not None:  # else a score the profile's PyRIT cannot build
                    yield iter((dumps(shaped),))

    def _scored_contents(self, scores: Iterable[Score]) -> dict[str, ScorableContent]:
        """The stored loose content of ``scores``, by id, when the profile inlines it (one
        query per chunk); else nothing."""
        if not self.profile.inline_scorable_content:
            return {}
        ids = [s.scorable_content_id for s in scores if s.scorable_content_id is not None]
        return {str(c.id): c for c in ScorableContent.objects.filter(pk__in=ids)} if ids else {}

    def _scenario_results(self) -> Iterator[Fragments]:
        """Scenarios with their attack results embedded, in two streams read side by side.

        The attack results of all exported scenarios come from one query sorted like the
        scenarios (creation time, id), then by collection, so each scenario's collections
        are contiguous: the number of queries does not grow with the number of scenarios.
        """
        rows = self.selection.scenario_results.order_by("creation_time", "id")
        collection = Coalesce(
            KT("attribution_data__parent_collection"),
            Value(DEFAULT_COLLECTION),
            output_field=TextField(),
        )
        attacks = (
            self._attack_queryset()
            .filter(attribution_parent__in=rows.values("pk"))
            .annotate(export_collection=collection)
            .order_by(
                "attribution_parent__creation_time",
                "attribution_parent_id",
                "export_collection",
                "timestamp",
                "id",
            )
        )
        embedded = _Peekable(
            (attack, item)
            for chunk in self._chunks(attacks)
            for attack, item in zip(chunk, self._attack_dicts(chunk), strict=True)
        )
        for chunk in self._chunks(rows):
            pks = [
                pk
                for s in chunk
                for pk in (
                    s.scenario_identifier_id,
                    s.objective_target_identifier_id,
                    s.objective_scorer_identifier_id,
                )
            ]
            serializer = ScenarioResultSerializer(
                context={"identifiers": identifier_dicts_for(pks=pks)}
            )
            for scenario in chunk:
                data = self.profile.shape("scenario_result", serializer.to_representation(scenario))
                yield self._scenario_item(scenario, data, embedded)

    def _scenario_item(self, scenario: Any, data: dict[str, Any], embedded: _Peekable) -> Fragments:
        """The scenario with ``attack_results: {collection: [...]}`` streamed in.

        The collection of an attack result is PyRIT's ``attribution_data.parent_collection``
        (how PyRIT 1.x rebuilds the map from its database); within one, attacks come in time
        order. Must be consumed whole before the next scenario's item.
        """
        yield dumps(data)[:-1] + ',"attack_results":{'
        current: str | None = None
        while (head := embedded.peek()) is not None and head[
            0
        ].attribution_parent_id == scenario.pk:
            attack, item = next(embedded)
            item = self.profile.shape("attack_result", item)
            name = attack.export_collection
            if name != current:
                opening = "" if current is None else "],"
                yield f"{opening}{dumps(name)}:[{dumps(item)}"
                current = name
            else:
                yield f",{dumps(item)}"
        yield "}}" if current is None else "]}}"

    def _attack_results(self) -> Iterator[Fragments]:
        rows = self._attack_queryset().filter(pk__in=self.selection.attack_results.values("pk"))
        for chunk in self._chunks(rows.order_by("timestamp", "id")):
            for item in self._attack_dicts(chunk):
                yield iter((dumps(self.profile.shape("attack_result", item)),))

    def _seed_datasets(self) -> Iterator[Fragments]:
        serializer = SeedDatasetSerializer()
        rows = self.selection.seed_datasets.order_by("name")
        for chunk in self._chunks(rows):
            for dataset in chunk:
                data = serializer.to_representation(dataset)
                data.pop("seed_count", None)
                yield iter((dumps(data),))

    def _seeds(self) -> Iterator[Fragments]:
        rows = self.selection.seeds.select_related("group", "media").order_by("date_added", "id")
        for chunk in self._chunks(rows):
            serializer = SeedSerializer(context={"request": self.request})
            for seed in chunk:
                self._note_media(seed.media_id)
                yield iter((dumps(self.profile.shape("seed", serializer.to_representation(seed))),))

    def _seed_groups(self) -> Iterator[Fragments]:
        rows = self.selection.seed_groups.prefetch_related(
            # A chunk's seeds in one query, in PyRIT's group order, with their media.
            Prefetch("seeds", queryset=Seed.objects.in_group_order().select_related("media"))
        ).order_by("id")
        serializer = SeedGroupSerializer(context={"request": self.request})
        for chunk in self._chunks(rows):
            for group in chunk:
                for seed in group.seeds.all():
                    self._note_media(seed.media_id)
                data = self.profile.shape("seed_group", serializer.to_representation(group))
                yield iter((dumps(data),))

    def _pyrit_records(self) -> Iterator[Fragments]:
        rows = self.selection.pyrit_records.order_by("table", "pk_text")
        for chunk in self._chunks(rows):
            for record in chunk:
                yield iter((dumps(pyrit_record_dict(record)),))

    # --- attack results ----------------------------------------------------------------------

    def _attack_queryset(self) -> Any:
        return AttackResult.objects.select_related("conversation").prefetch_related(
            # Related conversations with their PyRIT ids: one query per chunk.
            Prefetch(
                "related_conversations",
                queryset=RelatedConversation.objects.select_related("conversation"),
            )
        )

    def _attack_dicts(self, attacks: Iterable[AttackResult]) -> list[dict[str, Any]]:
        """1.1.0 dumps of ``attacks`` with ``last_response`` / ``last_score`` embedded.

        The read API gives those two by id; PyRIT's dump embeds the objects, and so does the
        export (ingestion accepts both). Fixed number of queries for the whole chunk.
        """
        attacks = list(attacks)
        pieces = {
            piece.pk: piece
            for piece in MessagePiece.objects.filter(
                pk__in=[a.last_response_id for a in attacks if a.last_response_id]
            )
            .select_related("message__conversation", "original_media", "converted_media")
            .prefetch_related(piece_converters_prefetch())
        }
        scores = {
            score.pk: score
            for score in Score.objects.filter(
                pk__in=[pk for a in attacks for pk in (a.last_score_id, a.human_score_id) if pk]
            )
        }
        extra_pks = [a.attack_identifier_id for a in attacks]
        extra_pks += [a.atomic_attack_identifier_id for a in attacks]
        extra_pks += [s.scorer_class_identifier_id for s in scores.values()]
        context = {"request": self.request, **piece_context(list(pieces.values()), *extra_pks)}
        attack_serializer = AttackResultSerializer(context=context)
        piece_serializer = ExportPieceSerializer(context=context)
        score_serializer = ScoreSerializer(context=context)
        result = []
        for attack in attacks:
            piece = pieces.get(attack.last_response_id)
            score = scores.get(attack.last_score_id)
            human = scores.get(attack.human_score_id)
            embedded = {
                "last_response": piece_serializer.to_representation(piece) if piece else None,
                "last_score": score_serializer.to_representation(score) if score else None,
                "human_score": score_serializer.to_representation(human) if human else None,
            }
            item = {}
            for key, value in attack_serializer.to_representation(attack).items():
                name = _EMBEDDED.get(key, key)
                item[name] = embedded.get(name, value)
            result.append(item)
        return result

    # --- media -------------------------------------------------------------------------------

    def _note_media(self, blob_id: int | None) -> None:
        if blob_id is not None:
            self.media_blob_ids.add(blob_id)

    def _note_piece_media(self, pieces: Iterable[MessagePiece]) -> None:
        for piece in pieces:
            self._note_media(piece.original_media_id)
            self._note_media(piece.converted_media_id)


class _Peekable:
    """An iterator that can show its next item without taking it."""

    _EMPTY = object()

    def __init__(self, items: Iterable[Any]) -> None:
        self._items = iter(items)
        self._next: Any = self._EMPTY

    def peek(self) -> Any:
        """The next item, or None at the end."""
        if self._next is self._EMPTY:
            self._next = next(self._items, None)
        return self._next

    def __iter__(self) -> _Peekable:
        return self

    def __next__(self) -> Any:
        item = self.peek()
        self._next = self._EMPTY
        if item is None:
            raise StopIteration
        return item


def pyrit_record_dict(record: PyritRecord) -> dict[str, Any]:
    """A verbatim PyRIT row as the export (and ingestion) writes it."""
    return {
        "table": record.table,
        "pk": record.pk_text,
        "row": record.row,
        "pyrit_version": record.pyrit_version,
        "alembic_revision": record.alembic_revision,
    }


def _target_implied(conversation: Any, pieces: list[MessagePiece]) -> bool:
    """Leave the conversation's target out when its pieces imply it (0.x data).

    Ingestion copies a conversation's target onto its pieces that have none (contract §9.2), and
    a conversation sent without one takes the target of its first piece that has one. For a
    0.x conversation whose pieces do not all name a target (system prompts often do not),
    sending the target would fill those pieces on the way back in; sending none gives the
    same conversation target through the pieces and keeps them as they are.
    """
    target = conversation.target_identifier_id
    if target is None or all(p.prompt_target_identifier_id is not None for p in pieces):
        return False
    first = next(
        (p.prompt_target_identifier_id for p in pieces if p.prompt_target_identifier_id), None
    )
    return first == target


def export_format(profile: Profile) -> str:
    """The ``export_format`` a document of ``profile`` states: ``redline-export/1``, or with
    ``+<profile>`` for a cut-down one (ingestion reads it as meta only)."""
    return EXPORT_FORMAT if profile.lossless else f"{EXPORT_FORMAT}+{profile.name}"


def document_header(profile: Profile) -> dict[str, str]:
    """The document's meta keys: ``export_format``, and the profile's ``note`` when it has one
    (what a reader must do to load it; ingestion reads both as meta)."""
    header = {"export_format": export_format(profile)}
    if profile.note:
        header["note"] = profile.note
    return header


def json_document(export: MemoryExport) -> Iterator[str]:
    """One JSON object: ``{"export_format": …, "conversations": [...], …}``, an item a line."""
    yield dumps(document_header(export.profile))[:-1]
    for name, items in export.sections():
        yield f',\n"{name}":['
        empty = True
        for item in items:
            yield "\n" if empty else ",\n"
            yield from item
            empty = False
        yield "]" if empty else "\n]"
    yield "}\n"


def jsonl_document(export: MemoryExport) -> Iterator[str]:
    """JSON Lines: a header line, then one single-item ingestion envelope per line.

    Every line can be posted to the ingestion API on its own, in file order.
    """
    yield dumps(document_header(export.profile)) + "\n"
    for name, items in export.sections():
        for item in items:
            yield f'{{"{name}":['
            yield from item
            yield "]}\n"


def document(export: MemoryExport, *, fmt: str) -> Iterator[str]:
    """The document in ``fmt`` (``json`` or ``jsonl``)."""
    if fmt == "jsonl":
        return jsonl_document(export)
    if fmt == "json":
        return json_document(export)
    raise ValueError(f"unknown export format {fmt!r}; use json or jsonl")


def encoded(fragments: Iterable[str]) -> Iterator[bytes]:
    """UTF-8 bytes in pieces of about ``FLUSH_CHARS``: few large writes, not many tiny ones."""
    buffer: list[str] = []
    size = 0
    for fragment in fragments:
        buffer.append(fragment)
        size += len(fragment)
        if size >= FLUSH_CHARS:
            yield encode("".join(buffer))
            buffer, size = [], 0
    if buffer:
        yield encode("".join(buffer))
