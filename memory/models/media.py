"""Media bytes, stored content-addressed (spec §13)."""

from __future__ import annotations

from django.db import models

from memory.constraints import SHA256_REGEX


def media_upload_to(instance: MediaBlob, filename: str) -> str:
    """Store a blob under its SHA-256 only: the client's file name never reaches the disk."""
    digest = instance.sha256
    return f"blobs/{digest[:2]}/{digest[2:4]}/{digest}"


class MediaBlob(models.Model):
    """The bytes of one media file, addressed by their SHA-256.

    Pieces and seeds keep PyRIT's location string verbatim and point here once the bytes are
    known; the same blob can back many pieces (duplicated conversations share files).
    """

    sha256 = models.CharField(max_length=64, unique=True)
    file = models.FileField(upload_to=media_upload_to, max_length=255)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=127)
    # The location string the bytes arrived under first, for provenance only; never opened.
    original_name = models.CharField(max_length=1024, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(sha256__regex=SHA256_REGEX),
                name="%(app_label)s_%(class)s_sha256_hex",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.content_type} {self.sha256[:12]} ({self.size} bytes)"
