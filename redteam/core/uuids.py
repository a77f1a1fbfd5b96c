"""UUIDs from text: the one parser of every UUID a user or a file hands us."""

from __future__ import annotations

import re
import uuid
from typing import Any

#: A UUID as PyRIT writes one: 36 characters with dashes, or 32 hex digits.
UUID_RE = re.compile(
    r"^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[0-9a-fA-F]{32})$"
)


def parse_uuid(value: Any, *, strict: bool = False) -> uuid.UUID | None:
    """``value`` as a UUID, or None when it is not one.

    A UUID passes through. ``strict`` accepts only PyRIT's spellings (``UUID_RE``), as in the
    JSON and databases it writes; otherwise the spellings people paste are accepted too:
    surrounding whitespace, braces, a ``urn:uuid:`` prefix.
    """
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str):
        return None
    if not strict:
        value = value.strip().strip("{}")
        if value[:9].lower() == "urn:uuid:":
            value = value[9:]
    return uuid.UUID(value) if UUID_RE.match(value) else None
