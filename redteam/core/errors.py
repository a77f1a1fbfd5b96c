"""Validation errors shared by every write path (no Django model imports)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One reason an input was refused: where (``path``) and why (``message``)."""

    path: str
    message: str


class InvalidMemory(ValueError):
    """Raised with every problem found in an input; nothing was written."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))
