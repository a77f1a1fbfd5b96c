"""Import a PyRIT SQLite memory file (any version the reader knows, ``KNOWN_VERSIONS``) with
its media."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memory.transfer.importers.runner import DEFAULT_CHUNK_ROWS, WRITE_PATHS
from memory.transfer.importers.service import ImportFailed, ImportSummary, import_pyrit_db
from pyrit_memory_reader.source import KNOWN_VERSIONS


class _PlainProgress:
    """Progress as log lines (not a terminal): one line every few seconds."""

    def __init__(self, write: Any, every: float = 5.0) -> None:
        self.write = write
        self.every = every
        self.last = 0.0

    def __call__(self, state: dict[str, Any]) -> None:
        now = time.monotonic()
        if state["phase"] not in ("prepared", "done") and now - self.last < self.every:
            return
        self.last = now
        total = state["total"] or 1
        self.write(
            f"{state['phase']}: {state['done']:,}/{state['total']:,} rows "
            f"({100 * state['done'] / total:.0f} %), {state['rate']:,.0f} rows/s"
        )

    def close(self) -> None:
        """Nothing to tear down."""


class _BarProgress:
    """A progress bar with rows and rate on a terminal (rich)."""

    def __init__(self, stream: Any) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("{task.description:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("rows · {task.fields[rate]:,.0f} rows/s"),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=False,
            # redrawn on each report (at most twice a second) rather than by a thread of its
            # own: the importer forks its reader, which is only safe without other threads
            auto_refresh=False,
        )
        self.task = self.bar.add_task("reading", total=None, rate=0.0)
        self.bar.start()

    def __call__(self, state: dict[str, Any]) -> None:
        self.bar.update(
            self.task,
            description=state["phase"],
            completed=state["done"],
            total=state["total"] or None,
            rate=state["rate"],
        )
        self.bar.refresh()

    def close(self) -> None:
        """Stop redrawing the bar."""
        self.bar.stop()


def summary_lines(summary: ImportSummary) -> list[str]:
    """The end-of-import report as aligned text lines (also used by tests)."""
    lines = [f"Schema: {summary.schema}" + ("   (dry run: nothing written)" * summary.dry_run)]
    lines.append("")
    lines.append(f"{'source table':<26}{'rows read':>12}")
    for table, count in summary.rows_read.items():
        lines.append(f"{table:<26}{count:>12,}")
    lines.append(f"{'total':<26}{summary.rows_total:>12,}")
    lines.append("")
    created = "would create" if summary.dry_run else "created"
    lines.append(f"{'object':<20}{created:>13}{'updated':>10}{'unchanged':>11}{'refused':>10}")
    for kind in summary.created:
        lines.append(
            f"{kind:<20}{summary.created[kind]:>13,}{summary.updated.get(kind, 0):>10,}"
            f"{summary.unchanged.get(kind, 0):>11,}{summary.refused.get(kind, 0):>10,}"
        )
    lines.append("")
    lines.append(
        f"Media: {summary.media_matched:,} matched, {summary.media_missing:,} missing, "
        f"{summary.media_unused_count:,} file(s) under the media root named by nothing"
    )
    rate = summary.rows_total / summary.seconds if summary.seconds else 0.0
    lines.append(f"Time: {summary.seconds:.1f} s ({rate:,.0f} rows/s)")
    if summary.warnings:
        lines.append("")
        lines.append(f"Warnings ({len(summary.warnings)}):")
        lines.extend(f"  - {warning}" for warning in summary.warnings)
    return lines


class Command(BaseCommand):
    """``manage.py import_pyrit PATH``: read a PyRIT memory file into Redline (read-only)."""

    help = (
        f"Import a PyRIT SQLite memory file (PyRIT {KNOWN_VERSIONS}, and a newer one as far as "
        "it is understood) and its media; it stores what the ingestion service stores. The file "
        "is opened read-only. Safe to run again: nothing is duplicated."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path, help="PyRIT memory file (e.g. dbdata/pyrit.db)")
        parser.add_argument(
            "--media-root",
            type=Path,
            default=None,
            help="Folder holding the media files (default: the database's folder, PyRIT's dbdata).",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Read, check and match everything, write nothing.",
        )
        parser.add_argument(
            "--chunk-rows",
            type=int,
            default=None,
            help=f"Source rows per transaction (default {DEFAULT_CHUNK_ROWS}).",
        )
        parser.add_argument(
            "--write-path",
            choices=WRITE_PATHS,
            default=WRITE_PATHS[0],
            help="direct (default): reading and normalising in two more processes, new rows "
            "written straight to the tables; service: every chunk through the ingestion "
            "service. Both store the same rows.",
        )
        parser.add_argument(
            "--user",
            default=None,
            help="Username the history of imported seeds, groups and datasets names.",
        )

    def handle(
        self,
        *args,
        path: Path,
        media_root: Path | None,
        dry_run: bool,
        chunk_rows: int | None,
        user: str | None,
        write_path: str = WRITE_PATHS[0],
        **options,
    ) -> None:
        if chunk_rows is not None and chunk_rows < 1:
            raise CommandError("--chunk-rows must be at least 1")
        actor = None
        if user is not None:
            actor = get_user_model().objects.filter(username=user).first()
            if actor is None:
                raise CommandError(f"no user {user!r}")
        stream = self.stdout._out if hasattr(self.stdout, "_out") else sys.stdout
        progress: Any
        if hasattr(stream, "isatty") and stream.isatty():
            progress = _BarProgress(stream)
        else:
            progress = _PlainProgress(self.stdout.write)
        try:
            summary = import_pyrit_db(
                path=path,
                media_root=media_root,
                dry_run=dry_run,
                progress=progress,
                chunk_rows=chunk_rows,
                actor=actor,
                write_path=write_path,
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        finally:
            progress.close()
        for line in summary_lines(summary):
            self.stdout.write(line)
        if not summary.ok:
            refused = sum(summary.refused.values())
            raise CommandError(
                f"{refused} row(s) could not be imported (see the warnings above); "
                "everything else was imported."
            )
