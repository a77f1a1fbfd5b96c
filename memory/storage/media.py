"""Media and the memory naming it: link late bytes to every piece and seed (contract §13), and
check the media store against the database."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q

from memory.models import MediaBlob, MessagePiece
from memory.models.media_links import media_differing_pieces, media_link_pieces
from seeds.models import Seed
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


def media_differs(*, blob: MediaBlob, location: str, limit: int = 100) -> tuple[int, list[str]]:
    """Pieces that name ``location`` but recorded other bytes than ``blob``'s, left without
    media: how many, and the first ``limit`` as one warning each (piece, conversation, file,
    expected SHA-256; :func:`pyrit_memory_reader.media.media_differs_message`)."""
    return media_differing_pieces(blob=blob, location=location, limit=limit)


@dataclass
class MediaReport:
    """What ``media_check`` found: blobs whose bytes are gone or damaged, files no blob names,
    and media values still waiting for their bytes."""

    blobs: int = 0
    missing: list[str] = field(default_factory=list)
    wrong_size: list[str] = field(default_factory=list)
    wrong_hash: list[str] = field(default_factory=list)
    orphan_files: list[str] = field(default_factory=list)
    pieces_waiting: int = 0
    seeds_waiting: int = 0

    @property
    def ok(self) -> bool:
        """Every blob has its bytes (files no blob names are reported, not an error)."""
        return not (self.missing or self.wrong_size or self.wrong_hash)


def media_check(*, verify: bool = False) -> MediaReport:
    """Compare the media store with the database, both ways.

    Every ``MediaBlob`` must have its file, of its size (``verify``: and of its SHA-256, which
    reads every byte); every file under ``blobs/`` must belong to a blob. Pieces and seeds that
    name media whose bytes never arrived are counted (they link when the bytes are sent).
    """
    report = MediaReport()
    known: set[str] = set()
    for sha, name, size in MediaBlob.objects.values_list("sha256", "file", "size").iterator():
        report.blobs += 1
        known.add(name)
        if not default_storage.exists(name):
            report.missing.append(sha)
            continue
        if default_storage.size(name) != size:
            report.wrong_size.append(sha)
        elif verify:
            digest = hashlib.sha256()
            with default_storage.open(name, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() != sha:
                report.wrong_hash.append(sha)
    report.orphan_files = sorted(set(_stored_blob_files()) - known)
    report.pieces_waiting = MessagePiece.objects.filter(
        Q(original_media__isnull=True) & ~Q(original_media_key="")
        | Q(converted_media__isnull=True) & ~Q(converted_media_key="")
    ).count()
    report.seeds_waiting = Seed.objects.filter(media__isnull=True).exclude(media_key="").count()
    return report


def media_keys_waiting(*, keys: set[str]) -> set[str]:
    """Which of the media ``keys`` (:func:`memory.models.media.media_key`) a piece side or a
    seed names without having its bytes linked yet."""
    waiting: set[str] = set()
    for side in ("original", "converted"):
        waiting |= set(
            MessagePiece.objects.filter(
                **{f"{side}_media__isnull": True, f"{side}_media_key__in": keys}
            )
            # the partial index's own condition, so SQLite uses it (constraints.partial_index)
            .exclude(**{f"{side}_media_key": ""})
            .values_list(f"{side}_media_key", flat=True)
        )
    waiting |= set(
        Seed.objects.filter(media__isnull=True, media_key__in=keys).values_list(
            "media_key", flat=True
        )
    )
    return waiting


def _stored_blob_files(folder: str = "blobs") -> Iterator[str]:
    """Every file under ``folder`` of the media store, as storage names."""
    directories, files = (
        default_storage.listdir(folder) if default_storage.exists(folder) else ([], [])
    )
    for name in files:
        yield f"{folder}/{name}"
    for directory in directories:
        yield from _stored_blob_files(f"{folder}/{directory}")
