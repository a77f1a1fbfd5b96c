"""Limits on untrusted JSON: body size, item count, text and key length, nesting depth, and text
that no database can store.

Checked before normalisation so an oversized or hostile payload costs one linear walk and no
database work. Over a limit, the whole request is refused (413 for the body and the item count,
400 otherwise). A string that cannot be stored — a lone UTF-16 surrogate (``"\\ud800"``), which
JSON allows and UTF-8 cannot encode — is a problem of the item holding it only: with
``partial=true`` the other items are written. The limits come from settings
(``REDLINE_INGEST_*``), see docs/api.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from redteam.core.errors import Problem

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_MESSAGE = (
    "holds a lone UTF-16 surrogate (e.g. \\ud800): not a character, so no database can store "
    "it; send the text as valid Unicode"
)


@dataclass(frozen=True)
class Limits:
    """The caps of one ingestion."""

    max_body_bytes: int
    max_text_chars: int
    max_depth: int
    max_key_chars: int = 1024
    max_items: int = 50_000
    max_problems: int = 1000

    @classmethod
    def from_settings(cls) -> Limits:
        """The limits configured for this deployment."""
        return cls(
            max_body_bytes=settings.REDLINE_INGEST_MAX_BODY_BYTES,
            max_text_chars=settings.REDLINE_INGEST_MAX_TEXT_CHARS,
            max_depth=settings.REDLINE_INGEST_MAX_DEPTH,
            max_key_chars=settings.REDLINE_INGEST_MAX_KEY_CHARS,
            max_items=settings.REDLINE_INGEST_MAX_ITEMS,
        )


@dataclass
class PayloadCheck:
    """What the walk found: limits broken (the request is refused) and values no database can
    store (their items are refused)."""

    refused: list[Problem] = field(default_factory=list)
    unstorable: list[Problem] = field(default_factory=list)


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _unstorable(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def check_payload(payload: Any, limits: Limits) -> PayloadCheck:
    """Strings longer than ``max_text_chars``, keys longer than ``max_key_chars``, containers
    nested deeper than ``max_depth``, and strings or keys holding a lone surrogate.

    Iterative (no recursion limit to hit); stops after ``max_problems`` findings.
    """
    check = PayloadCheck()
    if _within(payload, limits):
        return check
    stack: list[tuple[Any, str, int]] = [(payload, "", 0)]
    while stack and len(check.refused) + len(check.unstorable) < limits.max_problems:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if len(value) > limits.max_text_chars:
                check.refused.append(
                    Problem(
                        path,
                        f"text of {len(value)} characters exceeds the limit of "
                        f"{limits.max_text_chars}",
                    )
                )
            elif _unstorable(value):
                check.unstorable.append(Problem(path, _SURROGATE_MESSAGE))
        elif isinstance(value, dict | list):
            if depth >= limits.max_depth:
                check.refused.append(
                    Problem(path, f"nested deeper than the limit of {limits.max_depth} levels")
                )
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    if len(key) > limits.max_key_chars:
                        check.refused.append(
                            Problem(
                                _join(path, key[:40] + "…"),
                                f"key of {len(key)} characters exceeds the limit of "
                                f"{limits.max_key_chars}",
                            )
                        )
                        continue
                    if _unstorable(key):
                        check.unstorable.append(
                            Problem(_join(path, key), f"key {_SURROGATE_MESSAGE}")
                        )
                        continue
                if isinstance(item, str | dict | list):
                    stack.append((item, _join(path, key), depth + 1))
    check.refused.sort(key=lambda p: p.path)
    check.unstorable.sort(key=lambda p: p.path)
    return check


def _within(payload: Any, limits: Limits) -> bool:
    """Whether ``payload`` keeps every limit and holds only storable text: the common case,
    checked without building paths.

    Building a path string for each of a batch's ~100,000 values cost a third of the CPU of a
    1,000-piece ingestion; paths are only needed once something is wrong. Exact type tests,
    because this runs for every value; anything unusual is left to the full walk. An ASCII
    string (``isascii`` reads a flag) cannot hold a surrogate, so only other strings are
    searched.
    """
    max_text, max_depth, max_key = limits.max_text_chars, limits.max_depth, limits.max_key_chars
    if type(payload) not in (dict, list):
        if type(payload) is str:
            return len(payload) <= max_text and not _unstorable(payload)
        return type(payload) in _SCALARS
    search = _SURROGATE.search
    stack: list[tuple[Any, int]] = [(payload, 0)]
    while stack:
        value, depth = stack.pop()
        if depth >= max_depth:
            return False
        if type(value) is dict:
            for key in value:
                if type(key) is not str or len(key) > max_key:
                    return False
                if not key.isascii() and search(key):
                    return False
            items = value.values()
        else:
            items = value
        for item in items:
            kind = type(item)
            if kind is str:
                if len(item) > max_text:
                    return False
                if not item.isascii() and search(item):
                    return False
            elif kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif kind not in _SCALARS:
                return False
    return True


_SCALARS = frozenset({int, float, bool, type(None)})

#: The lists of a payload whose elements are items (a piece, a score, …), by key.
_ITEM_LISTS = (
    "message_pieces",
    "scores",
    "attack_results",
    "scenario_results",
    "seeds",
    "seed_groups",
    "scorable_contents",
)


def _item_lists(payload: Any) -> Iterator[list[Any]]:
    if isinstance(payload, list):  # a bare 0.x export: a list of pieces
        yield payload
        return
    if not isinstance(payload, dict):
        return
    for key in _ITEM_LISTS:
        if isinstance(payload.get(key), list):
            yield payload[key]
    for container in ("conversations", "messages"):
        entries = payload.get(container)
        if not isinstance(entries, list):
            continue
        yield entries
        for entry in entries:
            if isinstance(entry, dict):
                yield from _item_lists({k: v for k, v in entry.items() if k != "conversation"})


def count_items(payload: Any) -> int:
    """How many items (conversations, messages, pieces, scores, attack results, seeds, …) the
    payload holds, nested ones included."""
    return sum(len(items) for items in _item_lists(payload))
