"""What WeasyPrint may load while it lays out a report PDF: ``data:`` URLs and Redline's own
static files, nothing else.

The report carries red-team memory, and every target response is attacker-shaped text: were it
ever to reach the layout as markup, WeasyPrint's default fetcher would follow
``<img src="http://…">`` (a request from the server: SSRF, a tracking beacon) or
``file:///etc/passwd`` (a local file drawn into the PDF). This fetcher refuses both.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.contrib.staticfiles import finders

__all__ = ["RefusedURL", "report_url_fetcher", "static_file", "static_resource"]


class RefusedURL(ValueError):
    """A URL the report PDF may not load (WeasyPrint logs it and leaves the resource out)."""


def static_file(url: str) -> Path | None:
    """The file under Redline's static files that ``url`` names (its path starts with
    ``STATIC_URL``), or ``None``: no ``..``, no encoded separators, no way out of the
    static roots."""
    prefix = "/" + settings.STATIC_URL.strip("/") + "/"
    path = urlsplit(url).path
    if not path.startswith(prefix):
        return None
    relative = unquote(path[len(prefix) :])
    parts = relative.split("/")
    if not relative or "\\" in relative or "\x00" in relative or ".." in parts or "" in parts:
        return None
    root = Path(settings.STATIC_ROOT).resolve()
    collected = (root / relative).resolve()
    if collected.is_relative_to(root) and collected.is_file():
        return collected
    # Before collectstatic: the finders, which join under their own roots (safe_join).
    found = finders.find(relative)
    return Path(found).resolve() if isinstance(found, str) and Path(found).is_file() else None


def static_resource(url: str) -> tuple[bytes, str]:
    """The bytes and content type of the static file ``url`` names; any URL that is not one
    (http, https, file, ftp…, a path out of the static roots) raises :class:`RefusedURL`."""
    path = static_file(url)
    if path is None:
        raise RefusedURL(f"the report PDF loads no outside resource: {url[:200]}")
    mime_type, _ = mimetypes.guess_type(path.name)
    return path.read_bytes(), mime_type or "application/octet-stream"


def report_url_fetcher() -> Any:
    """A WeasyPrint ``url_fetcher`` for report PDFs: ``data:`` URLs are decoded (no network),
    static files read from disk, anything else refused (WeasyPrint leaves it out)."""
    from weasyprint.urls import URLFetcher, URLFetcherResponse  # loads Pango: PDFs only

    class ReportURLFetcher(URLFetcher):
        def fetch(self, url: str, headers: Any = None) -> URLFetcherResponse:
            if url[:5].lower() == "data:":
                return super().fetch(url, headers)
            body, mime_type = static_resource(url)
            return URLFetcherResponse(url, body, {"Content-Type": mime_type})

    return ReportURLFetcher(allowed_protocols=("data",), allow_redirects=False)
