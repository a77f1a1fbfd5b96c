"""Upload and zip limits, read from settings (``docs/upload.md`` lists them)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from memory.transfer.uploads.zipsafe import ZipLimits

MIB = 1024 * 1024


@dataclass(frozen=True)
class UploadLimits:
    """The largest upload, and what a zip may unpack to."""

    max_upload_bytes: int
    zip: ZipLimits


def upload_limits() -> UploadLimits:
    """The limits in force (settings, else the defaults documented in docs/upload.md)."""
    defaults = ZipLimits()
    return UploadLimits(
        max_upload_bytes=getattr(settings, "REDLINE_IMPORT_MAX_UPLOAD_BYTES", 2048 * MIB),
        zip=ZipLimits(
            max_members=getattr(settings, "REDLINE_IMPORT_ZIP_MAX_MEMBERS", defaults.max_members),
            max_total_bytes=getattr(
                settings, "REDLINE_IMPORT_ZIP_MAX_TOTAL_BYTES", defaults.max_total_bytes
            ),
            max_member_bytes=getattr(
                settings, "REDLINE_IMPORT_ZIP_MAX_MEMBER_BYTES", defaults.max_member_bytes
            ),
            max_ratio=getattr(settings, "REDLINE_IMPORT_ZIP_MAX_RATIO", defaults.max_ratio),
        ),
    )
