"""Validation errors shared by every write path (no Django model imports)."""

from __future__ import annotations

from dataclasses import dataclass


def printable(text: str) -> str:
    """``text`` with lone UTF-16 surrogates written as ``\\udXXX``: client text echoed in an
    error (a key in a path, an id) must encode, or the error itself fails."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Problem:
    """One reason an input was refused: where (``path``) and why (``message``).

    Both may quote what the client sent, so both are made :func:`printable`.
    """

    path: str
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", printable(self.path))
        object.__setattr__(self, "message", printable(self.message))


class InvalidMemory(ValueError):
    """Raised with every problem found in an input; nothing was written."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


def text_checked(
    value: str | None, *, path: str, problems: list[Problem], max_length: int, required: bool
) -> str:
    """``value`` stripped, as stored; a :class:`Problem` at ``path`` when it is empty but
    ``required`` or longer than ``max_length`` (people's free text: reasons, notes, titles)."""
    text = (value or "").strip()
    if required and not text:
        problems.append(Problem(path, "is required"))
    elif len(text) > max_length:
        problems.append(Problem(path, f"must be at most {max_length} characters"))
    return text
