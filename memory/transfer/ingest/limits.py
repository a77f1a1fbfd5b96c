"""Size limits on untrusted JSON: body size, text length and nesting depth.

Checked before normalisation so an oversized or hostile payload costs one linear walk and no
database work. The limits come from settings (``REDLINE_INGEST_*``), see docs/api.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from redteam.core.errors import Problem


@dataclass(frozen=True)
class Limits:
    """The caps of one ingestion."""

    max_body_bytes: int
    max_text_chars: int
    max_depth: int
    max_problems: int = 1000

    @classmethod
    def from_settings(cls) -> Limits:
        """The limits configured for this deployment."""
        return cls(
            max_body_bytes=settings.REDLINE_INGEST_MAX_BODY_BYTES,
            max_text_chars=settings.REDLINE_INGEST_MAX_TEXT_CHARS,
            max_depth=settings.REDLINE_INGEST_MAX_DEPTH,
        )


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def limit_problems(payload: Any, limits: Limits) -> list[Problem]:
    """Strings longer than ``max_text_chars`` and containers nested deeper than ``max_depth``.

    Iterative (no recursion limit to hit); stops after ``max_problems`` findings.
    """
    if _within(payload, limits):
        return []
    problems: list[Problem] = []
    stack: list[tuple[Any, str, int]] = [(payload, "", 0)]
    while stack and len(problems) < limits.max_problems:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if len(value) > limits.max_text_chars:
                problems.append(
                    Problem(
                        path,
                        f"text of {len(value)} characters exceeds the limit of "
                        f"{limits.max_text_chars}",
                    )
                )
        elif isinstance(value, dict | list):
            if depth >= limits.max_depth:
                problems.append(
                    Problem(path, f"nested deeper than the limit of {limits.max_depth} levels")
                )
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(item, str | dict | list):
                    stack.append((item, _join(path, key), depth + 1))
    problems.sort(key=lambda p: p.path)
    return problems


def _within(payload: Any, limits: Limits) -> bool:
    """Whether ``payload`` keeps every limit: the common case, checked without building paths.

    Building a path string for each of a batch's ~100,000 values cost a third of the CPU of a
    1,000-piece ingestion; paths are only needed once something is over a limit. Exact type
    tests, because this runs for every value; anything unusual is left to the full walk.
    """
    max_text, max_depth = limits.max_text_chars, limits.max_depth
    if type(payload) not in (dict, list):
        return type(payload) in _SCALARS or (type(payload) is str and len(payload) <= max_text)
    stack: list[tuple[Any, int]] = [(payload, 0)]
    while stack:
        value, depth = stack.pop()
        if depth >= max_depth:
            return False
        for item in value.values() if type(value) is dict else value:
            kind = type(item)
            if kind is str:
                if len(item) > max_text:
                    return False
            elif kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif kind not in _SCALARS:
                return False
    return True


_SCALARS = frozenset({int, float, bool, type(None)})
