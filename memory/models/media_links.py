"""Find the stored blob for a media value: by the SHA-256 of its bytes or by its location.

Contract §13: media arrives separately from the pieces and seeds naming it. A value matches a blob
whose bytes have the value's stored ``*_sha256``, or that was uploaded under a location with
the same path after PyRIT's results folder (else the same file name). Location strings are
only compared, never opened.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from memory.models import MediaBlob, MediaLocation
from memory.models.media import locations_match, media_key


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
        if sha and sha in self.by_sha:
            return self.by_sha[sha]
        for location in self.by_key.get(media_key(value), []):
            if locations_match(location.location, value):
                return location.blob
        return None


def media_link_pieces(*, blob: MediaBlob, location: str = "") -> int:
    """Record ``location`` for ``blob`` and link every piece that names these bytes.

    A piece matches when its media value has the blob's SHA-256 as its stored hash, or names
    the same file as ``location`` (contract §13). Only unlinked sides are touched. Returns how many
    piece sides were linked. Seeds link the same way in ``seeds.services.seeds_link_media``.
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
                        **{f"{side}_media_key": media_key(location)}
                    ).values_list("id", f"{side}_value")
                    if locations_match(value, location)
                ]
                if ids:
                    linked += MessagePiece.objects.filter(id__in=ids).update(
                        **{f"{side}_media": blob}
                    )
    return linked
