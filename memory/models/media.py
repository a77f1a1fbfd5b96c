"""Media bytes, stored content-addressed, and the locations PyRIT knew them by (contract §13)."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.db import IntegrityError, models, transaction

# The matching rules live with PyRIT's reader, which the push client shares.
from pyrit_memory_reader.media import (  # noqa: F401
    MARKERS,
    locations_match,
    media_key,
    media_suffix,
)
from redteam.core import nul
from redteam.core.constraints import is_sha256
from redteam.core.media import sniff_content_type


def media_upload_to(instance: MediaBlob, filename: str) -> str:
    """Store a blob under its SHA-256 only: the client's file name never reaches the disk."""
    digest = instance.sha256
    return f"blobs/{digest[:2]}/{digest[2:4]}/{digest}"


class MediaBlob(models.Model):
    """The bytes of one media file, addressed by their SHA-256.

    Pieces and seeds keep PyRIT's location string verbatim and point here once the bytes are
    known; the same blob can back many pieces (duplicated conversations share files).
    """

    sha256 = nul.CharField(max_length=64, unique=True)
    file = models.FileField(upload_to=media_upload_to, max_length=255)
    size = models.PositiveBigIntegerField()
    content_type = nul.CharField(max_length=127)
    # The location string the bytes arrived under first, for provenance only; never opened.
    original_name = nul.CharField(max_length=1024, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=is_sha256("sha256"),
                name="%(app_label)s_%(class)s_sha256_hex",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.content_type} {self.sha256[:12]} ({self.size} bytes)"


class MediaLocation(models.Model):
    """A location string (a path on the user's machine, a blob URL) the bytes were sent for.

    Pieces and seeds that arrive later with the same location are linked to the blob through
    it (contract §13 rules (a) and (b)); ``key`` is the file name, indexed for that lookup.
    """

    blob = models.ForeignKey(MediaBlob, on_delete=models.CASCADE, related_name="locations")
    location = nul.TextField()
    key = nul.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # Linking arriving pieces and seeds by file name.
            models.Index(fields=["key"], name="memory_medialoc_key_idx"),
        ]

    def __str__(self) -> str:
        return self.location


def media_store(*, data: bytes, original_name: str = "") -> MediaBlob:
    """Store bytes content-addressed and return their blob (the same bytes are stored once).

    The type is sniffed from the content; ``original_name`` is kept for provenance only.
    """
    digest = hashlib.sha256(data).hexdigest()
    blob = MediaBlob.objects.filter(sha256=digest).first()
    if blob is not None:
        return blob
    blob = MediaBlob(
        sha256=digest,
        size=len(data),
        content_type=sniff_content_type(data),
        original_name=original_name[:1024],
    )
    blob.file.save(digest, ContentFile(data), save=False)
    try:
        with transaction.atomic():
            blob.save()
    except IntegrityError:
        # Another writer stored the same bytes first; theirs is the blob.
        blob.file.delete(save=False)
        return MediaBlob.objects.get(sha256=digest)
    return blob
