"""Evidence seals: a canonical JSON document of attached memory and its keyed HMAC-SHA256.

What is sealed, per kind (PyRIT's values, never Redline's own annotations):

- **piece**: its id, role, sequence, position, both values with their data types and PyRIT's
  SHA-256 of them, the response error, and PyRIT's scores of it (scores visible on the piece
  through ``original_prompt_id``, contract §6.4);
- **conversation**: every piece of it, as above, and every PyRIT score whose home it is;
- **attack**: the attack's objective, outcome, outcome reason, last (automated) score id, and
  its main conversation as above;
- **score**: the score's value, type, categories, rationale, scorer hash and the piece it names.

A score is given as id, type, value, categories, rationale and scorer hash. Human scores
recorded in Redline (``Score.reviewer`` set) are left out: reviewers keep scoring evidence
after it is attached, and their work is not a change of what the red team found. The reviewers'
verdicts are left out for the same reason (``AttackResult.human_outcome``).

:func:`seal_documents` builds the documents of many pieces of evidence in a fixed number of
queries (one per kind of row), so a finding page verifies all its evidence at once.

A seal is an HMAC-SHA256 under a key that lives outside the database (``REDLINE_SEAL_KEY``; when
unset, one derived from ``SECRET_KEY``), stored with the key's id: whoever can write the
database but does not hold the key cannot change memory and reseal it to look intact. Keys
retired by a rotation stay verifiable while listed in ``REDLINE_SEAL_KEYS_OLD``. Seals made
before keys existed are plain SHA-256 with no key id: :func:`seal_state` reports them as
``legacy`` (unkeyed), never as intact, since anyone could have recomputed them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Q

from memory.models import (
    AttackResult,
    Conversation,
    EvidenceKind,
    MessagePiece,
    Score,
)

#: Bumped when the document's shape changes; a seal names the version it was made with.
SEAL_VERSION = 1


@dataclass(frozen=True)
class Target:
    """What one piece of evidence points at, by kind and primary key."""

    kind: str
    pk: Any


def canonical(document: Any) -> str:
    """The one JSON text of ``document``: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def seal_of(document: Any) -> str:
    """The plain (unkeyed) SHA-256 of ``document``'s canonical JSON: a fingerprint, not proof;
    evidence is sealed with :func:`keyed_seal`."""
    return hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SealKey:
    """A seal key and its id (the id is stored with each seal; the key never is)."""

    key_id: str
    secret: bytes = field(repr=False)


def _key(secret: bytes) -> SealKey:
    # The id names the key without revealing it: a hash of it, under a label of its own.
    key_id = hashlib.sha256(b"redline seal key id\x00" + secret).hexdigest()[:16]
    return SealKey(key_id, secret)


def _derived(secret_key: str) -> bytes:
    return hmac.new(secret_key.encode("utf-8"), b"redline.findings.seal", "sha256").digest()


def seal_keys() -> tuple[SealKey, dict[str, SealKey]]:
    """The key new seals are made with, and every key a seal can be verified with, by id.

    The current key is ``REDLINE_SEAL_KEY``, else one derived from ``SECRET_KEY`` (the check
    ``redline.W001`` warns of that). Verification also knows ``REDLINE_SEAL_KEYS_OLD`` and
    the keys derived from ``SECRET_KEY_FALLBACKS``, so a rotated key's seals stay verifiable.
    """
    configured = settings.REDLINE_SEAL_KEY
    current = _key(configured.encode("utf-8") if configured else _derived(settings.SECRET_KEY))
    known = [current, _key(_derived(settings.SECRET_KEY))]
    known += [_key(old.encode("utf-8")) for old in settings.REDLINE_SEAL_KEYS_OLD]
    known += [_key(_derived(old)) for old in settings.SECRET_KEY_FALLBACKS]
    return current, {key.key_id: key for key in reversed(known)}


def _mac(document: Any, key: SealKey) -> str:
    return hmac.new(key.secret, canonical(document).encode("utf-8"), "sha256").hexdigest()


def keyed_seal(document: Any) -> tuple[str, str]:
    """(key id, seal) of ``document`` under the current seal key."""
    current, _ = seal_keys()
    return current.key_id, _mac(document, current)


#: What :func:`seal_state` answers, and what each means.
SEAL_STATES = {
    "intact": "the memory is as it was sealed, under a configured key",
    "broken": "the memory changed since it was sealed",
    "missing": "the memory was deleted",
    "legacy": "an unkeyed SHA-256 seal (made before seals were keyed) that matches; anyone "
    "who can write the database could have recomputed it, so it proves nothing",
    "unknown_key": "sealed under a key that is not configured (REDLINE_SEAL_KEYS_OLD)",
}


def seal_under(document: Any, *, key_id: str) -> str | None:
    """``document``'s seal as a seal of key ``key_id`` would be made (plain SHA-256 for a
    legacy seal's empty id); None when that key is not configured."""
    if not key_id:
        return seal_of(document)
    key = seal_keys()[1].get(key_id)
    return _mac(document, key) if key is not None else None


def seal_state(document: Any, *, seal: str, key_id: str) -> str:
    """Whether ``document`` (the memory as it is now) matches a stored seal: ``intact``,
    ``broken``, ``legacy`` or ``unknown_key`` (:data:`SEAL_STATES`)."""
    current = seal_under(document, key_id=key_id)
    if current is None:
        return "unknown_key"
    if not hmac.compare_digest(current, seal):
        return "broken"
    return "intact" if key_id else "legacy"


def _score(score: Score) -> dict[str, Any]:
    return {
        "id": str(score.id),
        "message_piece_id": str(score.message_piece_id) if score.message_piece_id else None,
        "score_type": score.score_type,
        "score_value": score.score_value,
        "score_category": score.score_category,
        "score_rationale": score.score_rationale,
        "scorer": score.scorer_class_identifier.hash,
    }


def _piece(piece: MessagePiece, scores: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": str(piece.id),
        "role": piece.message.role,
        "sequence": piece.message.sequence,
        "position": piece.position,
        "original_value": piece.original_value,
        "original_value_data_type": piece.original_value_data_type,
        "original_value_sha256": piece.original_value_sha256,
        "converted_value": piece.converted_value,
        "converted_value_data_type": piece.converted_value_data_type,
        "converted_value_sha256": piece.converted_value_sha256,
        "response_error": piece.response_error,
        "scores": scores,
    }


def _pyrit_scores() -> Any:
    return Score.objects.filter(reviewer__isnull=True).select_related("scorer_class_identifier")


def _order(scores: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(scores, key=lambda s: s["id"])


def seal_documents(targets: Sequence[Target]) -> dict[Target, dict[str, Any] | None]:
    """The sealed document of each target (None: the memory no longer exists).

    Six queries whatever the number of targets: attacks, scores, conversations, the pieces
    of single-piece targets, the pieces of whole conversations, and the scores of both.
    """
    wanted: dict[str, set[Any]] = defaultdict(set)
    for target in targets:
        wanted[target.kind].add(target.pk)

    attacks = {
        a.pk: a
        for a in AttackResult.objects.filter(pk__in=wanted[EvidenceKind.ATTACK]).only(
            "id", "objective", "outcome", "outcome_reason", "last_score_id", "conversation_id"
        )
    }
    conversation_ids = set(wanted[EvidenceKind.CONVERSATION]) | {
        a.conversation_id for a in attacks.values()
    }
    scores = {s.pk: s for s in _pyrit_scores().filter(pk__in=wanted[EvidenceKind.SCORE])}
    pieces = {
        p.pk: p
        for p in MessagePiece.objects.filter(pk__in=wanted[EvidenceKind.PIECE]).select_related(
            "message"
        )
    }
    conversation_ids = set(
        Conversation.objects.filter(pk__in=conversation_ids).values_list("pk", flat=True)
    )
    conversation_pieces: dict[int, list[MessagePiece]] = defaultdict(list)
    for piece in (
        MessagePiece.objects.filter(message__conversation_id__in=conversation_ids)
        .select_related("message")
        .order_by("message__conversation_id", "message__sequence", "position", "id")
    ):
        conversation_pieces[piece.message.conversation_id].append(piece)
    # Scores of single pieces (by original_prompt_id) and of whole conversations (by home).
    prompt_ids = {p.original_prompt_id for p in pieces.values()}
    by_prompt: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    by_home: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if prompt_ids or conversation_ids:
        for score in _pyrit_scores().filter(
            Q(message_piece_id__in=prompt_ids) | Q(conversation_id__in=conversation_ids)
        ):
            if score.message_piece_id in prompt_ids:
                by_prompt[score.message_piece_id].append(_score(score))
            if score.conversation_id in conversation_ids:
                by_home[score.conversation_id].append(_score(score))

    def conversation_document(pk: int) -> dict[str, Any] | None:
        if pk not in conversation_ids:
            return None
        by_piece: dict[str, list[dict[str, Any]]] = defaultdict(list)
        loose = []
        prompt_of = {str(p.original_prompt_id) for p in conversation_pieces[pk]}
        for score in by_home[pk]:
            if score["message_piece_id"] in prompt_of:
                by_piece[score["message_piece_id"]].append(score)
            else:
                loose.append(score)
        return {
            "pieces": [
                _piece(p, _order(by_piece[str(p.original_prompt_id)]))
                for p in conversation_pieces[pk]
            ],
            "other_scores": _order(loose),
        }

    documents: dict[Target, dict[str, Any] | None] = {}
    for target in targets:
        document: dict[str, Any] | None = None
        if target.kind == EvidenceKind.ATTACK and target.pk in attacks:
            attack = attacks[target.pk]
            document = {
                "attack_result_id": str(attack.pk),
                "objective": attack.objective,
                "outcome": attack.outcome,
                "outcome_reason": attack.outcome_reason,
                "last_score_id": str(attack.last_score_id) if attack.last_score_id else None,
                "conversation": conversation_document(attack.conversation_id),
            }
        elif target.kind == EvidenceKind.CONVERSATION:
            document = conversation_document(target.pk)
        elif target.kind == EvidenceKind.PIECE and target.pk in pieces:
            piece = pieces[target.pk]
            document = _piece(piece, _order(by_prompt[piece.original_prompt_id]))
        elif target.kind == EvidenceKind.SCORE and target.pk in scores:
            document = _score(scores[target.pk])
        if document is not None:
            document = {"seal_version": SEAL_VERSION, "kind": target.kind, **document}
        documents[target] = document
    return documents


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """Where two sealed documents differ, as JSON paths (``pieces[1].converted_value``)."""
    if isinstance(before, dict) and isinstance(after, dict):
        paths = []
        for key in sorted(before.keys() | after.keys()):
            where = f"{path}.{key}" if path else key
            paths += changed_paths(before.get(key), after.get(key), where)
        return paths
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        paths = []
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            paths += changed_paths(old, new, f"{path}[{index}]")
        return paths
    return [] if before == after else [path or "(document)"]
