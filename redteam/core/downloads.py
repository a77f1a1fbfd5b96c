"""Files the app hands out: download headers, file-name stamps, spreadsheet-safe CSV cells."""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpResponseBase, StreamingHttpResponse
from django.utils import timezone

__all__ = ["as_attachment", "csv_safe", "file_stamp", "streaming_download"]


def csv_safe(value: str) -> str:
    """Defuse spreadsheet formulas: text from clients (LLM output, labels, class names) that
    starts with =, +, -, @, tab or CR gets a leading quote (OWASP CSV injection); numbers
    are left alone."""
    if value and value[0] in "=+-@\t\r":
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


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
