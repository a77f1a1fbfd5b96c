"""What an uploaded file is, judged from its first bytes (pure; no Django).

The file name is never trusted: a ``.db`` may be a PNG, a ``.zip`` may be a tarball. A file
that is neither a SQLite database nor a zip gets a message naming what it looks like and what
to upload instead.
"""

from __future__ import annotations

from typing import Literal

#: Bytes to read before deciding.
HEAD_BYTES = 64

SQLITE_HEADER = b"SQLite format 3\x00"
_ZIP_HEADERS = (b"PK\x03\x04", b"PK\x05\x06")

WHAT_TO_UPLOAD = (
    "Upload PyRIT's SQLite memory file (pyrit.db, in its dbdata folder) or a .zip of the "
    "whole dbdata folder."
)

_LOOKS_LIKE = (
    (b"\x1f\x8b", "a gzip archive (.gz / .tar.gz); zip the folder instead"),
    (b"BZh", "a bzip2 archive; zip the folder instead"),
    (b"\xfd7zXZ\x00", "an xz archive; zip the folder instead"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive; use a plain .zip"),
    (b"Rar!\x1a\x07", "a RAR archive; use a plain .zip"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\xd0\xcf\x11\xe0", "an Office document"),
)


class UploadRefused(Exception):
    """Not something this page imports; the message says what it is and what to upload."""


def sniff_upload(head: bytes) -> Literal["sqlite", "zip"]:
    """``"sqlite"`` or ``"zip"`` for the first bytes of an upload; UploadRefused otherwise."""
    if head.startswith(SQLITE_HEADER):
        return "sqlite"
    if head.startswith(_ZIP_HEADERS):
        return "zip"
    if not head:
        raise UploadRefused(f"The file is empty. {WHAT_TO_UPLOAD}")
    if head.startswith(b"SQLite format"):
        raise UploadRefused(f"This SQLite file's header is damaged. {WHAT_TO_UPLOAD}")
    for signature, what in _LOOKS_LIKE:
        if head.startswith(signature):
            raise UploadRefused(f"This is {what}, not a PyRIT database. {WHAT_TO_UPLOAD}")
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"{", b"["):
        raise UploadRefused(
            "This looks like JSON. JSON (a PyRIT export, or a Redline export) goes to "
            "POST /api/v1/ingest/ — see the API docs. This page takes PyRIT's SQLite "
            "database (pyrit.db) or a .zip of its dbdata folder."
        )
    raise UploadRefused(f"This is neither a SQLite database nor a zip file. {WHAT_TO_UPLOAD}")
