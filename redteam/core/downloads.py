"""Files the app hands out: download headers, file-name stamps, spreadsheet-safe CSV cells."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, Protocol

from django.http import HttpResponseBase, StreamingHttpResponse
from django.utils import timezone

__all__ = [
    "SafeCsvWriter",
    "as_attachment",
    "csv_safe",
    "file_stamp",
    "streaming_download",
]

#: What a spreadsheet reads as the start of a formula (OWASP CSV injection).
FORMULA_LEADS = "=+-@\t\r"


def csv_safe(value: str) -> str:
    """Defuse spreadsheet formulas: text from clients (LLM output, labels, class names) that
    starts with =, +, -, @, tab or CR — also after leading blanks, which spreadsheets skip —
    gets a leading quote (OWASP CSV injection); numbers (``-1``, ``+0.5``) are left alone.

    The quote stays in the cell: a program reading the file (PyRIT's ``from_csv``) reads
    ``'=1+1`` back, never a formula.
    """
    if not value:
        return value
    if value[0] in FORMULA_LEADS or value.lstrip(" \t\r\n")[:1] in tuple(FORMULA_LEADS):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


class SafeCsvWriter:
    """The one CSV writer of every export: ``csv.writer`` whose text cells all go through
    :func:`csv_safe`, so no exported file hands a spreadsheet a formula. Other cells (numbers,
    ``None``) are written as ``csv.writer`` writes them."""

    def __init__(self, out: _Writable, **fmtparams: Any) -> None:
        self._writer = csv.writer(out, **fmtparams)

    def writerow(self, row: Iterable[object]) -> Any:
        """Write one row (header rows too); returns what ``out.write`` returned."""
        return self._writer.writerow([csv_safe(c) if isinstance(c, str) else c for c in row])


def file_stamp() -> str:
    """The current UTC time for a download's file name: ``20261126T131500Z``."""
    return timezone.now().strftime("%Y%m%dT%H%M%SZ")


def as_attachment[R: HttpResponseBase](response: R, filename: str) -> R:
    """Mark ``response`` as a file to save as ``filename``, never to render or sniff."""
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def streaming_download(
    chunks: Iterable[str | bytes], *, content_type: str, filename: str
) -> StreamingHttpResponse:
    """A download whose body is produced while it is sent (constant memory)."""
    return as_attachment(StreamingHttpResponse(chunks, content_type=content_type), filename)
