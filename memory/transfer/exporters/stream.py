"""The one entry point of exports, shared by ``manage.py export_memory`` and the API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memory.transfer.exporters.archive import zip_stream
from memory.transfer.exporters.document import DEFAULT_CHUNK_SIZE, MemoryExport, document, encoded
from memory.transfer.exporters.profiles import REDLINE, Profile
from memory.transfer.exporters.selection import ExportFilters, export_selection

#: Document formats: name -> (content type, file suffix).
FORMATS = {
    "json": ("application/json", "json"),
    "jsonl": ("application/x-ndjson", "jsonl"),
}
ZIP_CONTENT_TYPE = "application/zip"


@dataclass
class ExportStream:
    """An export being written: its bytes (consume once), what it counted, how to label it."""

    export: MemoryExport
    chunks: Iterator[bytes]
    content_type: str
    suffix: str


def memory_export_stream(
    *,
    filters: ExportFilters,
    fmt: str = "json",
    with_media: bool = False,
    request: Any = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    on_item: Callable[[str], None] | None = None,
    profile: Profile = REDLINE,
) -> ExportStream:
    """Start an export of the memory ``filters`` select, as a lazy stream of bytes.

    Filters are checked here (``ExportFilterError``), before a byte is produced; the rows are
    read while the stream is consumed. ``request`` makes media links absolute; ``profile``
    cuts the document down to what one PyRIT version loads (``profiles.py``).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use json or jsonl")
    selection = export_selection(filters=filters)
    export = MemoryExport(
        selection=selection,
        request=request,
        chunk_size=chunk_size,
        on_item=on_item,
        profile=profile,
    )
    if with_media:
        return ExportStream(export, zip_stream(export, fmt=fmt), ZIP_CONTENT_TYPE, "zip")
    content_type, suffix = FORMATS[fmt]
    return ExportStream(export, encoded(document(export, fmt=fmt)), content_type, suffix)
