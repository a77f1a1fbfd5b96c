"""The importer's public interface, shared by ``manage.py import_pyrit`` and browser uploads.

The implementation lives in this package; callers use only ``import_pyrit_db``,
``ImportSummary`` and ``ImportFailed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ImportFailed(Exception):
    """Bad input (not SQLite, not PyRIT memory, corrupt, unknown schema): one clear line."""


@dataclass
class ImportSummary:
    """What an import read, wrote and warned about (printed as a table at the end)."""

    schema: str = ""
    rows_read: dict[str, int] = field(default_factory=dict)
    created: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    media_matched: int = 0
    media_missing: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form, stored on ``ImportJob.summary``."""
        return {
            "schema": self.schema,
            "rows_read": self.rows_read,
            "created": self.created,
            "unchanged": self.unchanged,
            "media_matched": self.media_matched,
            "media_missing": self.media_missing,
            "warnings": self.warnings,
            "seconds": self.seconds,
            "dry_run": self.dry_run,
        }


#: ``progress({"phase": str, "done": int, "total": int, "rate": float})``, called now and then.
ProgressCallback = Callable[[dict[str, Any]], None]


def import_pyrit_db(
    *,
    path: Path,
    media_root: Path | None = None,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> ImportSummary:
    """Import a PyRIT SQLite memory file (read-only) through the ingestion service.

    Raises ``ImportFailed`` with one line for bad input, with nothing written.
    """
    raise ImportFailed("the PyRIT database importer is not built yet")
