"""Media that arrives after the memory naming it: link it to every piece and seed (contract §13)."""

from __future__ import annotations

from django.db import transaction

from memory.models import MediaBlob
from memory.models.media_links import media_link_pieces
from seeds.services import seeds_link_media


def media_attach(*, blob: MediaBlob, location: str = "") -> dict[str, int]:
    """Record ``location`` for ``blob`` and link every piece and seed that names these bytes.

    A piece or seed matches when its media value has the blob's SHA-256 as its stored hash,
    or names the same file as ``location``. Only unlinked values are touched. Returns how many
    piece sides and seeds were linked.
    """
    with transaction.atomic():
        return {
            "message_pieces": media_link_pieces(blob=blob, location=location),
            "seeds": seeds_link_media(blob=blob, location=location),
        }
