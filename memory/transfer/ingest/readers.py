"""Readers for untrusted JSON input: typed field access that records problems, never raises.

Shared by the normalisers of memory and seed objects (``memory.transfer.ingest.normalize``,
``memory.transfer.ingest.normalize_seeds``).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from redteam.core.constraints import INT_MAX
from redteam.core.errors import Problem
from redteam.core.identifiers import ComponentIdentifier
from redteam.core.lengths import too_many_items
from redteam.core.uuids import UUID_RE, parse_uuid

MISSING = object()


class Reader:
    """Reads keys of one input dict, recording problems and which keys were read.

    ``known``: the keys the caller reads, when it has a fixed set (pieces and scores, read by
    the hundred thousand): then nothing is tracked per read, and :meth:`extra` is every other
    key. Without it the keys read are tracked as they are read.
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        path: str,
        problems: list[Problem],
        *,
        known: frozenset[str] | None = None,
    ) -> None:
        self.data = data
        self.path = path
        self.problems = problems
        self.known = known
        self.used: set[str] = set()
        self.kept: set[str] = set()
        if known is not None:
            # Reading is then the dict's own ``get``: no Python frame per key.
            self.raw = data.get  # type: ignore[method-assign]

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def problem(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.at(key), message))

    def raw(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` (``default`` when absent), noted as read."""
        self.used.add(key)
        return self.data.get(key, default)

    def first(self, *keys: str) -> tuple[str, Any]:
        """The first of ``keys`` whose value is not None/``{}`` (aliases); marks all used."""
        found: tuple[str, Any] = (keys[0], None)
        for key in keys:
            value = self.raw(key)
            if value is not None and value != {} and found[1] is None:
                found = (key, value)
        return found

    def keep(self, key: str) -> None:
        """Keep ``key`` in :meth:`extra` although it was read (a legacy alias that differs)."""
        self.kept.add(key)

    def extra(self) -> dict[str, Any]:
        """The input's keys that were not read (plus the kept ones), to store verbatim."""
        read = self.known if self.known is not None else self.used
        return {k: v for k, v in self.data.items() if k not in read or k in self.kept}

    # typed readers: each returns the default (and records a problem) on a wrong value

    def text(self, key: str, *, required: bool = False, default: str | None = None) -> str | None:
        value = self.raw(key)
        if type(value) is str:
            return value
        if value is None:
            if required:
                self.problem(key, "is required")
            return default
        if not isinstance(value, str):
            self.problem(key, f"must be a string, not {type(value).__name__}")
            return default
        return value

    def nonblank(self, key: str) -> str | None:
        """A required string that is not only whitespace (an id); None, with a problem, else."""
        value = self.text(key, required=True)
        if value is not None and not value.strip():
            self.problem(key, "must not be blank")
            return None
        return value

    def integer(
        self,
        key: str,
        *,
        default: int | None = 0,
        minimum: int | None = 0,
        maximum: int = INT_MAX,
    ) -> int | None:
        """An integer in ``minimum``..``maximum`` (by default what an integer column holds)."""
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(key, f"must be an integer, not {value!r}")
            return default
        if minimum is not None and value < minimum:
            self.problem(key, f"must be >= {minimum}, not {value}")
            return default
        if value > maximum:
            self.problem(key, f"must be <= {maximum:,}, not {value:,}")
            return default
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.raw(key)
        if value is None:
            return {}
        if type(value) is dict:
            return dict(value)
        if not isinstance(value, Mapping):
            self.problem(key, f"must be an object, not {type(value).__name__}")
            return {}
        return dict(value)

    def labels(self, key: str) -> dict[str, Any]:
        """PyRIT labels: an object of ``name: text``; a nested object or list is a problem
        (each label is one row of Redline's label index, a name and a text)."""
        labels = self.mapping(key)
        for name, value in labels.items():
            if isinstance(value, dict | list):
                self.problem(
                    key, f"the value of label {name!r} must be text, not {type(value).__name__}"
                )
                return {}
        return labels

    def strings(self, key: str, value: Any = MISSING, *, max_items: int | None = None) -> list[str]:
        """A list of strings; a problem when it is not one, or holds more than ``max_items``."""
        if value is MISSING:
            value = self.raw(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(key, "must be a list of strings")
            return []
        if max_items is not None and len(value) > max_items:
            self.problem(key, too_many_items(len(value), max_items))
            return []
        if not all(isinstance(x, str) for x in value):
            self.problem(key, "must be a list of strings")
            return []
        return list(value)

    def choice(self, key: str, allowed: Any, value: Any, *, default: str | None) -> Any:
        """``value`` if it is one of ``allowed`` (a TextChoices class or a list of values)."""
        if value is None:
            return default
        if isinstance(allowed, type):
            if value in choice_set(allowed):
                return value
            allowed = choice_values(allowed)
        elif value in allowed:
            return value
        self.problem(key, f"unknown value {value!r}; expected one of {', '.join(allowed)}")
        return default

    # The readers below accept the usual well-formed value before building the key's path:
    # the path is only needed to word a problem, and most values have none.

    def uuid(self, key: str, value: Any = MISSING, *, required: bool = False) -> uuid.UUID | None:
        if value is MISSING:
            value = self.raw(key)
        if type(value) is str and UUID_RE.match(value):
            return uuid.UUID(value)
        return read_uuid(value, self.at(key), self.problems, required=required)

    def timestamp(self, key: str) -> datetime | None:
        value = self.raw(key)
        if type(value) is str:
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                pass
            else:
                return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
        return parse_timestamp(value, self.at(key), self.problems)

    def identifier(self, key: str, value: Any = MISSING) -> ComponentIdentifier | None:
        if value is MISSING:
            value = self.raw(key)
        if value is None:
            return None
        return parse_identifier(value, self.at(key), self.problems)

    def identifiers(self, key: str) -> list[ComponentIdentifier]:
        value = self.raw(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(key, "must be a list of identifiers")
            return []
        result = []
        for index, item in enumerate(value):
            identifier = parse_identifier(item, f"{self.at(key)}[{index}]", self.problems)
            if identifier is not None:
                result.append(identifier)
        return result


def read_uuid(
    value: Any, path: str, problems: list[Problem], *, required: bool = False
) -> uuid.UUID | None:
    """A UUID from a UUID, a 36-char or a 32-hex string; None (and a problem) otherwise."""
    if value is None:
        if required:
            problems.append(Problem(path, "is required"))
        return None
    parsed = parse_uuid(value, strict=True)
    if parsed is None:
        problems.append(Problem(path, f"not a UUID: {value!r}"))
    return parsed


def parse_timestamp(value: Any, path: str, problems: list[Problem]) -> datetime | None:
    """An aware datetime from ISO-8601 (``Z`` accepted); naive values are UTC (contract §2.1)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            problems.append(Problem(path, f"not an ISO-8601 timestamp: {value!r}"))
            return None
    else:
        problems.append(Problem(path, f"not an ISO-8601 timestamp: {value!r}"))
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


@functools.cache
def choice_values(choices: type) -> tuple[str, ...]:
    """The values of a TextChoices class in order, computed once (``.values`` builds a list)."""
    return tuple(choices.values)  # type: ignore[attr-defined]


@functools.cache
def choice_set(choices: type) -> frozenset[str]:
    """The values of a TextChoices class as a set, for membership tests."""
    return frozenset(choice_values(choices))


# Identifier dicts repeat across the pieces of a batch (one target, a few converters); parsing
# one is costly (hashing), so parsed identifiers are memoised by their repr. Identifiers are
# immutable, so sharing them is safe; the cache is bounded.
_IDENTIFIER_CACHE: dict[str, ComponentIdentifier] = {}
_IDENTIFIER_CACHE_SIZE = 4096


def parse_identifier(value: Any, path: str, problems: list[Problem]) -> ComponentIdentifier | None:
    """``ComponentIdentifier.from_dict`` of a dict; ``None`` and ``{}`` mean no identifier."""
    if value is None:
        return None
    if type(value) is not dict:  # the usual case first: ABC checks are slow
        if isinstance(value, ComponentIdentifier):
            return value
        if not isinstance(value, Mapping):
            problems.append(
                Problem(path, f"must be an identifier object, not {type(value).__name__}")
            )
            return None
    if not value:
        return None
    key = repr(value)
    cached = _IDENTIFIER_CACHE.get(key)
    if cached is not None:
        return cached
    try:
        identifier = ComponentIdentifier.from_dict(value)
    except (TypeError, ValueError) as exc:
        problems.append(Problem(path, f"invalid identifier: {exc}"))
        return None
    if len(_IDENTIFIER_CACHE) >= _IDENTIFIER_CACHE_SIZE:
        _IDENTIFIER_CACHE.clear()
    _IDENTIFIER_CACHE[key] = identifier
    return identifier


def not_object(data: Any, path: str) -> list[Problem]:
    return [Problem(path, f"must be an object, not {type(data).__name__}")]
