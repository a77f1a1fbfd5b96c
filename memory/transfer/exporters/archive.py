"""``--with-media``: the export document and the media bytes it shows, as one streamed zip.

Layout::

    export.json | export.jsonl       the document (deflated)
    media/<sha256><.ext>             each stored blob once, by content hash (stored as is)
    manifest.json                    {"export_format", "document", "media": [{"sha256", "file",
                                      "content_type", "size", "locations": [...]}]}

``locations`` are the location strings PyRIT wrote for the file (those it was uploaded under
and the values of the pieces and seeds showing it; what ``PUT /api/v1/media/`` takes as
``path``), so re-uploading each file with each of its locations links it to the same pieces
and seeds again. The zip is written to an unseekable pipe (data descriptors, zip64 where
needed) and handed on as it grows: memory holds one read buffer, not the archive.
"""

from __future__ import annotations

import mimetypes
import time
import zipfile
from collections.abc import Iterator
from itertools import batched
from typing import Any

from memory.models import MediaBlob, MediaLocation, MessagePiece
from memory.transfer.exporters.document import (
    MemoryExport,
    document,
    dumps,
    encoded,
    export_format,
)
from seeds.models import Seed

#: Bytes read from a stored blob at a time.
READ_SIZE = 1024 * 1024
#: Blobs looked up per query (well under SQLite's bound-parameter limit).
BLOB_BATCH = 500


class _Pipe:
    """A write-only, unseekable file: what the zip writer writes, collected for the stream."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        """Nothing buffered here; the stream drains the chunks."""

    def drain(self) -> Iterator[bytes]:
        """Hand on what was written since the last call."""
        if self._chunks:
            data = b"".join(self._chunks)
            self._chunks = []
            yield data


def _extension(content_type: str) -> str:
    if content_type == "application/octet-stream":
        return ".bin"
    return mimetypes.guess_extension(content_type) or ".bin"


def _member(name: str, *, deflate: bool, size: int | None = None) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.gmtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    # Regular file, rw-r--r--: extractors must not see an executable or a link.
    info.external_attr = 0o100644 << 16
    if size is not None:
        info.file_size = size
    return info


def _locations(blob_ids: tuple[int, ...]) -> dict[int, set[str]]:
    """Every location string the blobs are known by: those they were uploaded under, and
    the media values of the pieces and seeds linked to them. Four queries per batch."""
    found: dict[int, set[str]] = {}
    sources = [
        MediaLocation.objects.filter(blob_id__in=blob_ids).values_list("blob_id", "location"),
        MessagePiece.objects.filter(original_media_id__in=blob_ids).values_list(
            "original_media_id", "original_value"
        ),
        MessagePiece.objects.filter(converted_media_id__in=blob_ids).values_list(
            "converted_media_id", "converted_value"
        ),
        Seed.objects.filter(media_id__in=blob_ids).values_list("media_id", "value"),
    ]
    for rows in sources:
        for blob_id, location in rows.distinct():
            found.setdefault(blob_id, set()).add(location)
    return found


def zip_stream(export: MemoryExport, *, fmt: str) -> Iterator[bytes]:
    """The zip (see the module docstring), as a stream of bytes."""
    pipe = _Pipe()
    document_name = f"export.{fmt}"
    with zipfile.ZipFile(pipe, "w", allowZip64=True) as archive:  # type: ignore[arg-type]
        with archive.open(_member(document_name, deflate=True), "w", force_zip64=True) as out:
            for chunk in encoded(document(export, fmt=fmt)):
                out.write(chunk)
                yield from pipe.drain()
        manifest: list[dict[str, Any]] = []
        for ids in batched(sorted(export.media_blob_ids), BLOB_BATCH):
            locations = _locations(ids)
            for blob in MediaBlob.objects.filter(pk__in=ids).order_by("sha256"):
                entry: dict[str, Any] = {
                    "sha256": blob.sha256,
                    "file": f"media/{blob.sha256}{_extension(blob.content_type)}",
                    "content_type": blob.content_type,
                    "size": blob.size,
                    "locations": sorted(locations.get(blob.pk, ())),
                }
                try:
                    source = blob.file.open("rb")
                except OSError:
                    # The row outlived its file: say so rather than fail the whole export.
                    entry["missing"] = True
                    entry["file"] = None
                    manifest.append(entry)
                    continue
                with (
                    source,
                    archive.open(_member(entry["file"], deflate=False, size=blob.size), "w") as out,
                ):
                    while data := source.read(READ_SIZE):
                        out.write(data)
                        yield from pipe.drain()
                manifest.append(entry)
        body = {
            "export_format": export_format(export.profile),
            "document": document_name,
            "media": manifest,
        }
        archive.writestr(_member("manifest.json", deflate=True), dumps(body) + "\n")
    yield from pipe.drain()
