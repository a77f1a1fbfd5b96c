"""NUL characters in stored text, the same on every database (contract §2: any text is valid).

LLM output and red-team payloads contain NUL (``\\x00``). SQLite stores it, PostgreSQL refuses
it in ``text`` and in ``jsonb`` (a ``DataError`` that used to lose the whole batch). So every
text and JSON column of Redline's models is one of the fields below: on the way in, a NUL is
written as a two-character escape, on the way out the escape is read back as NUL, on both
databases alike, so a value comes back byte for byte as it was sent.

The escape uses U+FFFE, a Unicode noncharacter that well-formed text interchange never
carries: NUL becomes ``U+FFFE "0"`` and U+FFFE itself ``U+FFFE U+FFFE``, so the escape is
reversible for any string, including one that holds U+FFFE. Hashes (``*_sha256``, identifier
hashes) are computed before storage, from the real text.

Lookups that compare whole values (``exact``, ``in``) escape their argument the same way.
Substring searches (``icontains``) do not; a NUL cannot be typed into a page or a URL anyway
(``redteam.middleware.RejectNulMiddleware``).
"""

from __future__ import annotations

import re
from typing import Any

from django.db import models

ESCAPE = "\ufffe"
_ESCAPED = re.compile("\ufffe(.)", re.DOTALL)
#: What a JSON text holds when some string in it needs the escape: NUL (always written as
#: ``\\u0000`` by ``json.dumps``) or U+FFFE (escaped or raw, depending on ``ensure_ascii``).
_JSON_MARKERS = ("\\u0000", "\\ufffe", ESCAPE)


def escape_nul(text: str) -> str:
    """``text`` with NUL and U+FFFE escaped (itself when it holds neither, the usual case)."""
    if "\x00" not in text and ESCAPE not in text:
        return text
    return text.replace(ESCAPE, ESCAPE + ESCAPE).replace("\x00", ESCAPE + "0")


def unescape_nul(text: str) -> str:
    """The inverse of :func:`escape_nul`."""
    if ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "0" else m.group(1), text)


def _walk(value: Any, convert: Any) -> Any:
    """``value`` with every string in it (dict keys too) passed through ``convert``."""
    if isinstance(value, str):
        return convert(value)
    if isinstance(value, dict):
        return {_walk(k, convert): _walk(v, convert) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, convert) for item in value]
    return value


def escape_json(value: Any) -> Any:
    """A JSON value with :func:`escape_nul` applied to every string in it."""
    return _walk(value, escape_nul)


def needs_json_escape(dumped: str) -> bool:
    """Whether the JSON text ``dumped`` holds a string that :func:`escape_json` would change."""
    return any(marker in dumped for marker in _JSON_MARKERS)


class NulSafeMixin:
    """Escape NUL on the way to the database, read it back on the way out."""

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)  # type: ignore[misc]
        return escape_nul(value) if isinstance(value, str) else value

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return unescape_nul(value) if isinstance(value, str) else value

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        # Migrations see Django's own field: the column is the same, only values are escaped.
        name, _path, args, kwargs = super().deconstruct()  # type: ignore[misc]
        return name, f"django.db.models.{type(self).__mro__[2].__name__}", args, kwargs


class TextField(NulSafeMixin, models.TextField):
    """A ``TextField`` that stores any string, NUL included (see the module docstring)."""


class CharField(NulSafeMixin, models.CharField):
    """A ``CharField`` that stores any string, NUL included (see the module docstring)."""


class JSONField(models.JSONField):
    """A ``JSONField`` whose strings (and keys) may hold NUL (see the module docstring)."""

    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(escape_json(value))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        # Most metadata, extra keys and categories are empty: a new empty container without
        # the JSON decoder (a tenth of a 1,000-piece conversation's JSON was json.loads).
        if value == "{}" and self.decoder is None:
            return {}
        if value == "[]" and self.decoder is None:
            return []
        if isinstance(value, str) and ESCAPE not in value and "\\ufffe" not in value:
            return super().from_db_value(value, expression, connection)
        loaded = super().from_db_value(value, expression, connection)
        return _walk(loaded, unescape_nul)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs


__all__ = [
    "ESCAPE",
    "CharField",
    "JSONField",
    "TextField",
    "escape_json",
    "escape_nul",
    "needs_json_escape",
    "unescape_nul",
]
