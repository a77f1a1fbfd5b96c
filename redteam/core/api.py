"""Pieces every REST endpoint shares: PyRIT shapes with the client's extra keys, media links."""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse

#: A UUID in a URL path, with or without dashes (``lookup_value_regex`` of the viewsets).
UUID_PATTERN = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"


#: Keys Redline adds to PyRIT's shapes; a stale copy kept in ``extra`` never comes back.
OUTPUT_ONLY_KEYS = frozenset({"media"})


def merge_extra(data: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """Add the client's unknown keys back; a key the serializer already wrote wins."""
    for key, value in (extra or {}).items():
        if key not in OUTPUT_ONLY_KEYS:
            data.setdefault(key, value)
    return data


def media_url(request: Any, sha256: str) -> str | None:
    """The API URL of a stored blob, or None while the media endpoint is not routed."""
    try:
        path = reverse("api-media-detail", kwargs={"sha256": sha256})
    except NoReverseMatch:
        return None
    return request.build_absolute_uri(path) if request is not None else path
