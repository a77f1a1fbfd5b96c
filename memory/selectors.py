"""Reads on PyRIT memory that need more than one QuerySet."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.db.models import Prefetch

from memory import identifiers as ids
from memory.models import ComponentIdentifier, Conversation, MessagePiece, PieceConverter, Score


def identifiers_load(*, hashes: Iterable[str]) -> dict[str, ids.ComponentIdentifier]:
    """Rebuild PyRIT identifiers (with their whole child trees) for the given hashes.

    One query per tree level: children are fetched by the hashes in their parents'
    ``children`` JSON. Hashes that are not stored are left out of the result.
    """
    rows: dict[str, ComponentIdentifier] = {}
    wanted = set(hashes)
    while wanted:
        found = ComponentIdentifier.objects.by_hash(list(wanted))
        rows.update(found)
        wanted = set()
        for row in found.values():
            for value in row.children.values():
                for child_hash in value if isinstance(value, list) else [value]:
                    if child_hash not in rows:
                        wanted.add(child_hash)

    built: dict[str, ids.ComponentIdentifier] = {}

    def build(digest: str) -> ids.ComponentIdentifier:
        if digest not in built:
            row = rows[digest]
            built[digest] = ids.ComponentIdentifier(
                class_name=row.class_name,
                class_module=row.class_module,
                params=row.params,
                children={
                    name: [build(h) for h in value] if isinstance(value, list) else build(value)
                    for name, value in row.children.items()
                },
                attributes=row.attributes,
                pyrit_version=row.pyrit_version,
                eval_hash=row.eval_hash,
                hash=row.hash,
            )
        return built[digest]

    return {digest: build(digest) for digest in rows}


def identifier_dicts_for(*, pks: Iterable[int | None]) -> dict[int, dict[str, Any]]:
    """PyRIT's flat ``to_dict()`` of the identifier rows ``pks``, with whole child trees.

    For a page of API rows: one query for the rows themselves, then one per tree level
    below them (:func:`identifiers_load`), however many rows the page has. ``None`` and
    unknown keys are skipped. The dicts may be shared between rows; treat them as read-only.
    """
    wanted = {pk for pk in pks if pk is not None}
    if not wanted:
        return {}
    return identifier_dicts_of(rows=ComponentIdentifier.objects.filter(pk__in=wanted))


def identifier_dicts_of(*, rows: Iterable[ComponentIdentifier]) -> dict[int, dict[str, Any]]:
    """:func:`identifier_dicts_for` of rows already loaded: one query per tree level below."""
    roots = list(rows)
    child_hashes = {
        child_hash
        for row in roots
        for value in row.children.values()
        for child_hash in (value if isinstance(value, list) else [value])
    }
    children = identifiers_load(hashes=child_hashes) if child_hashes else {}

    def child(digest: str) -> ids.ComponentIdentifier | None:
        return children.get(digest)

    result: dict[int, dict[str, Any]] = {}
    for row in roots:
        tree: dict[str, ids.ComponentIdentifier | list[ids.ComponentIdentifier]] = {}
        for name, value in row.children.items():
            if isinstance(value, list):
                tree[name] = [node for node in map(child, value) if node is not None]
            elif (node := child(value)) is not None:
                tree[name] = node
        result[row.pk] = ids.ComponentIdentifier(
            class_name=row.class_name,
            class_module=row.class_module,
            params=row.params,
            children=tree,
            attributes=row.attributes,
            pyrit_version=row.pyrit_version,
            eval_hash=row.eval_hash,
            hash=row.hash,
        ).to_dict()
    return result


def scores_for_pieces(*, pieces: Iterable[MessagePiece]) -> dict[uuid.UUID, list[Score]]:
    """The scores visible on ``pieces``, keyed by ``original_prompt_id`` (spec §6.4).

    One query for any number of pieces; each list is in time order.
    """
    keys = {piece.original_prompt_id for piece in pieces}
    if not keys:
        return {}
    found: dict[uuid.UUID, list[Score]] = {}
    for score in Score.objects.filter(message_piece_id__in=keys).order_by("timestamp", "id"):
        found.setdefault(score.message_piece_id, []).append(score)
    return found


def conversation_pieces(*, conversation: Conversation) -> list[MessagePiece]:
    """Every piece of ``conversation`` in PyRIT order, with its converter chain.

    Two queries: the ordered pieces (with message and media joined) and the converter links.
    """
    return list(
        MessagePiece.objects.of_conversation(conversation.conversation_id)
        .select_related("message__conversation", "original_media", "converted_media")
        .prefetch_related(piece_converters_prefetch())
    )


def piece_converters_prefetch() -> Prefetch:
    """The converter links of pieces, in applied order (``converter_identifiers``)."""
    return Prefetch("converters", queryset=PieceConverter.objects.order_by("position"))
