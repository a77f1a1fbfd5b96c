"""The body of ``/api/v1/conversations/<id>/``, built from the database's rows.

The same JSON as :class:`~memory.transfer.api.serializers.ConversationDetailSerializer` (which
stays the schema and the generic definition; ``tests/api/test_conversation_json.py`` compares
the two), in the same number of queries, for about half its CPU time. Measured with cProfile
on a conversation of 1,000 pieces and 2,000 scores (``bench/pages.py``): most of the generic
path was loading, not serialising — 5,000 model instances (each with its init signals) and
every column's converter on every row: the JSON decoder on ≈ 14,000 JSON values, most of them
the same few texts (``{}``, a conversation's labels, its harm categories), and a UUID object
made and printed again for every id.

So the pieces, converter links and scores are read as plain rows of exactly the columns the
body shows (the ORM writes the SQL; the rows skip Django's per-value converters), and each
value becomes its JSON form here once: JSON texts, time stamps and ids through a per-request
memo keyed by the raw value, computed on a miss by Django's own converter and DRF's own field,
so the output cannot drift from the generic path's; text through the NUL unescape every text
column uses (:mod:`redteam.core.nul`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.db.models.sql.constants import MULTI
from rest_framework.fields import DateTimeField, UUIDField

from memory.models import Conversation, MessagePiece, PieceConverter, Score
from memory.storage.selectors import identifier_dicts_for
from redteam.core.api import OUTPUT_ONLY_KEYS, media_url
from redteam.core.choices import ScoreStatus
from redteam.core.nul import unescape_nul

#: The piece columns the body shows, in the order :func:`_piece` reads them.
PIECE_COLUMNS = (
    "id",
    "message_id",
    "message__role",
    "message__sequence",
    "timestamp",
    "labels",
    "targeted_harm_categories",
    "prompt_metadata",
    "prompt_target_identifier_id",
    "attack_identifier_id",
    "scorer_identifier_id",
    "original_value_data_type",
    "original_value",
    "original_value_sha256",
    "converted_value_data_type",
    "converted_value",
    "converted_value_sha256",
    "response_error",
    "originator",
    "original_prompt_id",
    "pyrit_version",
    "extra",
    "original_media__sha256",
    "converted_media__sha256",
)

#: The score columns the body shows, in the order :func:`_score` reads them.
SCORE_COLUMNS = (
    "id",
    "score_value",
    "score_value_description",
    "score_type",
    "score_category",
    "score_rationale",
    "score_metadata",
    "scorer_class_identifier_id",
    "message_piece_id",
    "timestamp",
    "objective",
    "status",
    "scorable",
    "pyrit_version",
    "scored_expectation",
    "extra",
)

#: Stands for a blob's SHA-256 in the media link made once per request.
_SHA_SLOT = "0" * 64
_HEX32 = re.compile("[0-9a-f]{32}").fullmatch


def conversation_json(*, conversation: Conversation, request: Any) -> dict[str, Any]:
    """``{"conversation": …, "messages": [{"message_pieces": […]}]}`` for ``conversation``.

    Five queries whatever its size: pieces (message and media joined), converter links,
    scores, identifier rows, then one per level of their child trees.
    """
    pieces = list(
        _rows(
            MessagePiece.objects.filter(message__conversation=conversation)
            .order_by("message__sequence", "position")
            .values_list(*PIECE_COLUMNS)
        )
    )
    chains: dict[Any, list[int]] = defaultdict(list)
    links = (
        PieceConverter.objects.filter(piece__message__conversation=conversation)
        .order_by("piece_id", "position")
        .values_list("piece_id", "identifier_id")
    )
    for piece_id, identifier_id in _rows(links):
        chains[piece_id].append(identifier_id)
    scored = MessagePiece.objects.filter(message__conversation=conversation).values(
        "original_prompt_id"
    )
    scores: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
    for row in _rows(
        Score.objects.filter(message_piece_id__in=scored)
        .order_by("timestamp", "id")
        .values_list(*SCORE_COLUMNS)
    ):
        # Keyed by the raw id: the database matched it to pieces' original_prompt_id.
        scores[row[8]].append(row)

    pks = {conversation.target_identifier_id}
    pks.update(pk for chain in chains.values() for pk in chain)
    pks.update(row[7] for found in scores.values() for row in found)
    for row in pieces:
        pks.update(row[8:11])
    identifiers = identifier_dicts_for(pks=pks)

    build = _Builder(identifiers=identifiers, request=request)
    conversation_id = conversation.conversation_id
    messages = [
        {
            "message_pieces": [
                build.piece(row, conversation_id, chains.get(row[0], ()), scores.get(row[19], ()))
                for row in group
            ]
        }
        for _, group in groupby(pieces, key=lambda row: row[1])
    ]
    return {"conversation": _conversation(conversation, identifiers), "messages": messages}


def _rows(queryset: QuerySet) -> Iterator[tuple[Any, ...]]:
    """The rows of a ``values_list`` queryset as the database driver gives them.

    Skips the per-value converters (``from_db_value``) that ``values_list`` applies; the
    builder converts what it shows, once per distinct value.
    """
    compiler = queryset.query.get_compiler(using=queryset.db)
    for chunk in compiler.execute_sql(MULTI):
        yield from chunk


def _conversation(conversation: Conversation, identifiers: dict[int, Any]) -> dict[str, Any]:
    """The ``conversation`` entry: PyRIT 1.1.0's fields, the PyRIT version when known."""
    target = conversation.target_identifier_id
    data = {
        "conversation_id": conversation.conversation_id,
        "target_identifier": None if target is None else identifiers.get(target),
        "retries": conversation.retries,
    }
    if conversation.pyrit_version:
        data["pyrit_version"] = conversation.pyrit_version
    return _merge_extra(data, conversation.extra)


def _merge_extra(data: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`redteam.core.api.merge_extra`, without the call for the usual empty ``extra``."""
    if extra:
        for key, value in extra.items():
            if key not in OUTPUT_ONLY_KEYS:
                data.setdefault(key, value)
    return data


class _Memo(dict):
    """Raw value → its JSON form, computed by ``convert`` the first time it is seen."""

    def __init__(self, convert: Callable[[Any], Any]) -> None:
        super().__init__()
        self.convert = convert

    def __missing__(self, raw: Any) -> Any:
        value = self[raw] = self.convert(raw)
        return value


def _text(raw: str | None) -> str | None:
    return None if raw is None else unescape_nul(raw)


class _Builder:
    """Turns raw rows into the body's dicts; one per request (its memos and time zone)."""

    def __init__(self, *, identifiers: dict[int, Any], request: Any) -> None:
        self.identifiers = identifiers
        self.json = _Memo(_converter(MessagePiece._meta.get_field("labels")))
        self.time = _Memo(_time_text())
        self.uuid = _Memo(_uuid_text())
        link = media_url(request, _SHA_SLOT)
        self.media = None if link is None else link.rsplit(_SHA_SLOT, 1)

    def piece(
        self,
        row: tuple[Any, ...],
        conversation_id: str,
        chain: Iterable[int],
        scores: Iterable[tuple[Any, ...]],
    ) -> dict[str, Any]:
        """One piece in PyRIT 0.12 ``MessagePiece.to_dict()`` order, scores embedded."""
        json, uuid, identifiers = self.json, self.uuid, self.identifiers
        target, attack, scorer = row[8], row[9], row[10]
        data = {
            "id": uuid[row[0]],
            "role": unescape_nul(row[2]),
            "conversation_id": conversation_id,
            "sequence": row[3],
            "timestamp": self.time[row[4]],
            "labels": json[row[5]],
            "targeted_harm_categories": json[row[6]],
            "prompt_metadata": json[row[7]],
            "converter_identifiers": [identifiers.get(pk) for pk in chain],
            "prompt_target_identifier": None if target is None else identifiers.get(target),
            "attack_identifier": None if attack is None else identifiers.get(attack),
            "scorer_identifier": None if scorer is None else identifiers.get(scorer),
            "original_value_data_type": unescape_nul(row[11]),
            "original_value": unescape_nul(row[12]),
            "original_value_sha256": _text(row[13]),
            "converted_value_data_type": unescape_nul(row[14]),
            "converted_value": unescape_nul(row[15]),
            "converted_value_sha256": _text(row[16]),
            "response_error": unescape_nul(row[17]),
            "originator": unescape_nul(row[18]),
            "original_prompt_id": uuid[row[19]],
            "pyrit_version": unescape_nul(row[20]),
            "scores": [self.score(score) for score in scores],
        }
        if (row[22] is not None or row[23] is not None) and self.media is not None:
            # Links only to stored bytes; a side without bytes is null (contract §13).
            before, after = self.media
            data["media"] = {
                "original": None if row[22] is None else f"{before}{row[22]}{after}",
                "converted": None if row[23] is None else f"{before}{row[23]}{after}",
            }
        return _merge_extra(data, json[row[21]])

    def score(self, row: tuple[Any, ...]) -> dict[str, Any]:
        """One score: PyRIT 0.12 ``Score.to_dict()``; ``status``, ``scorable`` and
        ``scored_expectation`` only when they say more than their default."""
        json = self.json
        category, piece_id = row[4], row[8]
        data = {
            "id": self.uuid[row[0]],
            "score_value": _text(row[1]),
            "score_value_description": _text(row[2]),
            "score_type": unescape_nul(row[3]),
            "score_category": None if category is None else json[category],
            "score_rationale": _text(row[5]),
            "score_metadata": json[row[6]],
            "scorer_class_identifier": self.identifiers.get(row[7]),
            "message_piece_id": None if piece_id is None else self.uuid[piece_id],
            "timestamp": self.time[row[9]],
            "objective": _text(row[10]),
        }
        if row[11] != ScoreStatus.COMPLETE:
            data["status"] = unescape_nul(row[11])
        if row[12] is not None and (scorable := json[row[12]]) is not None:
            data["scorable"] = scorable
        data["pyrit_version"] = unescape_nul(row[13])
        if row[14] is not None and (expectation := json[row[14]]) is not None:
            data["scored_expectation"] = expectation
        return _merge_extra(data, json[row[15]])


def _converter(field: Any) -> Callable[[Any], Any]:
    """What ``values_list`` would make of a raw value of ``field``: its backend's converters,
    then the field's own (every JSON column is a :class:`redteam.core.nul.JSONField`)."""
    converters = connection.ops.get_db_converters(field.get_col(field.model._meta.db_table))
    if hasattr(field, "from_db_value"):
        converters = [*converters, field.from_db_value]

    def convert(raw: Any) -> Any:
        for step in converters:
            raw = step(raw, None, connection)
        return raw

    return convert


def _time_text() -> Callable[[Any], str | None]:
    """A raw time stamp as DRF shows it in the active time zone (``…Z`` for UTC)."""
    field = DateTimeField()
    # Resolved once, as :class:`redteam.core.api.FieldPlanMixin` does.
    field.timezone = field.default_timezone()
    convert = _converter(MessagePiece._meta.get_field("timestamp"))

    def text(raw: Any) -> str | None:
        return None if raw is None else field.to_representation(convert(raw))

    return text


def _uuid_text() -> Callable[[Any], str | None]:
    """A raw UUID as DRF shows it: PostgreSQL gives a ``UUID``, SQLite 32 hex digits."""
    field = UUIDField()
    convert = _converter(MessagePiece._meta.get_field("id"))

    def text(raw: Any) -> str | None:
        if raw is None:
            return None
        if isinstance(raw, str) and _HEX32(raw):
            # str(UUID(raw)) without building the object: a third of the time.
            return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"
        return field.to_representation(convert(raw))

    return text


__all__ = ["PIECE_COLUMNS", "SCORE_COLUMNS", "conversation_json"]
