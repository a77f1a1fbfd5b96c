"""The importer's public interface, shared by ``manage.py import_pyrit`` and browser uploads.

The implementation lives in this package; callers use only ``import_pyrit_db``,
``ImportSummary`` and ``ImportFailed``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from memory.transfer.importers.errors import ImportFailed

__all__ = ["ImportFailed", "ImportSummary", "ProgressCallback", "import_pyrit_db"]


@dataclass
class ImportSummary:
    """What an import read, wrote and warned about (printed as a table at the end).

    ``created`` / ``updated`` / ``unchanged`` / ``refused`` count objects per kind
    (``message_pieces``, ``scores``, …); ``refused`` items were left out with a warning.
    ``media_unused_count`` counts files under the media root that nothing named and
    ``media_unused`` lists the first 50 of them.
    """

    schema: str = ""
    rows_read: dict[str, int] = field(default_factory=dict)
    created: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    media_matched: int = 0
    media_missing: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    dry_run: bool = False
    updated: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    media_unused: list[str] = field(default_factory=list)
    media_unused_count: int = 0

    @property
    def rows_total(self) -> int:
        """Rows read over every source table."""
        return sum(self.rows_read.values())

    @property
    def ok(self) -> bool:
        """True when no row was refused."""
        return not any(self.refused.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form, stored on ``ImportJob.summary``."""
        return {
            "schema": self.schema,
            "rows_read": self.rows_read,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "refused": self.refused,
            "media_matched": self.media_matched,
            "media_missing": self.media_missing,
            "media_unused": self.media_unused,
            "media_unused_count": self.media_unused_count,
            "warnings": self.warnings,
            "seconds": self.seconds,
            "dry_run": self.dry_run,
        }


#: ``progress({"phase": str, "done": int, "total": int, "rate": float})``, called now and then
#: (at most twice a second, plus once when reading starts and once at the end); ``done`` and
#: ``total`` count source rows, ``rate`` is rows per second since the start.
ProgressCallback = Callable[[dict[str, Any]], None]


def import_pyrit_db(
    *,
    path: Path,
    media_root: Path | None = None,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
    chunk_rows: int | None = None,
    actor: AbstractBaseUser | None = None,
    write_path: str = "direct",
) -> ImportSummary:
    """Import a PyRIT SQLite memory file (read-only) through the ingestion service.

    ``media_root`` is where media files are looked for (default: the folder holding the
    database, PyRIT's ``dbdata``); ``dry_run`` reads, checks and matches everything and writes
    nothing. Each chunk of ``chunk_rows`` source rows is written in its own transaction.
    ``actor`` is the user the history of imported seeds, groups and datasets names.
    ``write_path`` ``direct`` reads and normalises in two more processes and writes chunks of
    new pieces, conversations and scores straight to the tables (everything else through the
    service);
    ``service`` sends every chunk through the ingestion service. Both store the same rows.

    Raises ``ImportFailed`` with one line for bad input, with nothing written.
    """
    from memory.transfer.importers.runner import DEFAULT_CHUNK_ROWS, Importer

    started = time.perf_counter()
    importer = Importer(
        path=Path(path),
        media_root=Path(media_root) if media_root is not None else None,
        dry_run=dry_run,
        progress=progress,
        chunk_rows=chunk_rows or DEFAULT_CHUNK_ROWS,
        actor=actor,
        write_path=write_path,
    )
    schema, tally = importer.run()
    kinds = sorted(set(tally.created) | set(tally.unchanged) | set(tally.refused))
    return ImportSummary(
        schema=schema.label,
        rows_read=dict(tally.rows_read),
        created={k: tally.created[k] for k in kinds},
        updated={k: tally.updated[k] for k in kinds},
        unchanged={k: tally.unchanged[k] for k in kinds},
        refused={k: tally.refused[k] for k in kinds},
        media_matched=tally.media_matched,
        media_missing=tally.media_missing,
        media_unused=tally.media_unused,
        media_unused_count=tally.media_unused_count,
        warnings=tally.warnings.lines(),
        seconds=time.perf_counter() - started,
        dry_run=dry_run,
    )
