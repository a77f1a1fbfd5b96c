"""Find the stored blob for a media value: by the SHA-256 of its bytes or by its location.

Contract §13: media arrives separately from the pieces and seeds naming it. A value with a stored
``*_sha256`` matches only the blob of those bytes; a value without one matches a blob uploaded
under a location with the same path after PyRIT's results folder (else the same file name).
PyRIT names media files by timestamp, so two values can name one file whose bytes only the
last writer kept: a location never links a value to bytes other than the ones PyRIT recorded
for it. Location strings are only compared, never opened.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from memory.models import MediaBlob, MediaLocation
from memory.models.media import locations_match, media_key
from pyrit_memory_reader.media import media_differs_message, piece_owner


class MediaIndex:
    """The blobs a set of media values could link to, loaded in at most two queries."""

    def __init__(
        self, by_sha: dict[str, MediaBlob], by_key: dict[str, list[MediaLocation]]
    ) -> None:
        self.by_sha = by_sha
        self.by_key = by_key

    @classmethod
    def for_values(cls, values: Iterable[tuple[str, str, str | None]]) -> MediaIndex:
        """Load candidates for ``(value, data_type, sha256)`` triples of media values."""
        shas, keys = set(), set()
        for value, _data_type, sha in values:
            keys.add(media_key(value))
            if sha:
                shas.add(sha)
        by_sha = {b.sha256: b for b in MediaBlob.objects.filter(sha256__in=shas)} if shas else {}
        by_key: dict[str, list[MediaLocation]] = defaultdict(list)
        if keys:
            for location in MediaLocation.objects.filter(key__in=keys).select_related("blob"):
                by_key[location.key].append(location)
        return cls(by_sha, by_key)

    def find(self, value: str, sha: str | None) -> MediaBlob | None:
        """The blob for ``value`` (with its stored ``sha``), or None when nothing matches."""
        if sha:
            # A recorded hash decides alone: the file under this name may hold other bytes.
            return self.by_sha.get(sha)
        for location in self.by_key.get(media_key(value), []):
            if locations_match(location.location, value):
                return location.blob
        return None


def media_values_differing(values: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which ``(value, recorded SHA-256)`` pairs of values without media name a file that
    arrived with other bytes (a location of a blob of another hash): the file was overwritten
    or differs. One query, none for no values."""
    wanted = {(value, sha) for value, sha in values if sha}
    if not wanted:
        return set()
    stored = list(
        MediaLocation.objects.filter(key__in={media_key(v) for v, _ in wanted}).values_list(
            "key", "location", "blob__sha256"
        )
    )
    return {
        (value, sha)
        for value, sha in wanted
        if any(
            key == media_key(value) and blob_sha != sha and locations_match(location, value)
            for key, location, blob_sha in stored
        )
    }


def media_link_pieces(*, blob: MediaBlob, location: str = "") -> int:
    """Record ``location`` for ``blob`` and link every piece that names these bytes.

    A piece matches when its media value has the blob's SHA-256 as its stored hash, or, having
    no stored hash, names the same file as ``location`` (contract §13). Only unlinked sides are
    touched. Returns how many piece sides were linked. Seeds link the same way in
    ``seeds.services.seeds_link_media``.
    """
    from django.db import transaction

    from memory.models import MessagePiece

    linked = 0
    with transaction.atomic():
        if location:
            MediaLocation.objects.get_or_create(
                blob=blob, location=location, defaults={"key": media_key(location)}
            )
        for side in ("original", "converted"):
            unlinked = MessagePiece.objects.filter(**{f"{side}_media__isnull": True}).exclude(
                **{f"{side}_media_key": ""}
            )
            linked += unlinked.filter(**{f"{side}_value_sha256": blob.sha256}).update(
                **{f"{side}_media": blob}
            )
            if location:
                ids = [
                    pk
                    for pk, value in unlinked.filter(
                        **{f"{side}_media_key": media_key(location), f"{side}_value_sha256": None}
                    ).values_list("id", f"{side}_value")
                    if locations_match(value, location)
                ]
                if ids:
                    linked += MessagePiece.objects.filter(id__in=ids).update(
                        **{f"{side}_media": blob}
                    )
    return linked


def media_differing_pieces(*, blob: MediaBlob, location: str, limit: int) -> tuple[int, list[str]]:
    """Pieces naming ``location`` whose stored hash is not ``blob``'s: how many, and the first
    ``limit`` as :data:`~pyrit_memory_reader.media.MEDIA_DIFFERS` messages (one per piece).

    They stay without media (contract §13): the file under this name holds other bytes than
    PyRIT recorded for them, typically because a later value overwrote it.
    """
    from memory.models import MessagePiece

    if not location:
        return 0, []
    differing: dict[tuple[str, str], list[str]] = {}
    for side in ("original", "converted"):
        rows = (
            MessagePiece.objects.filter(
                **{f"{side}_media__isnull": True, f"{side}_media_key": media_key(location)}
            )
            .exclude(**{f"{side}_value_sha256": None})
            .exclude(**{f"{side}_value_sha256": blob.sha256})
            .order_by("id")
            .values_list(
                "id",
                "message__conversation__conversation_id",
                f"{side}_value",
                f"{side}_value_sha256",
            )
        )
        for pk, conversation_id, value, sha in rows:
            if locations_match(value, location):
                expected = differing.setdefault((str(pk), conversation_id), [])
                if sha not in expected:
                    expected.append(sha)
    messages = [
        media_differs_message(
            owner=piece_owner(pk, conversation_id), file=location, expected=expected
        )
        for (pk, conversation_id), expected in sorted(differing.items())[:limit]
    ]
    return len(differing), messages
