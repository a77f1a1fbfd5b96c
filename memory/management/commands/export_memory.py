"""``manage.py export_memory``: the stored memory in PyRIT's shapes, to a file or stdout."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memory.transfer.exporters.document import DEFAULT_CHUNK_SIZE, SECTIONS
from memory.transfer.exporters.profiles import DEFAULT_PROFILE, PROFILES, export_profile
from memory.transfer.exporters.selection import (
    ExportFilterError,
    export_filters,
    export_selection,
    with_piece_scores,
)
from memory.transfer.exporters.stream import ExportStream, memory_export_stream

#: Seconds between progress lines when stderr is not a terminal.
LOG_EVERY = 5.0


class _Progress:
    """Items written per section: a bar on a terminal, a log line every few seconds otherwise."""

    def __init__(self, stream: Any, totals: dict[str, int] | None) -> None:
        self.stream = stream
        self.totals = totals
        self.done: dict[str, int] = {}
        self.started = self.last_log = time.monotonic()
        self.bar: Progress | None = None
        self.tasks: dict[str, Any] = {}
        if totals is not None:
            self.bar = Progress(
                TextColumn("{task.description:<17}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=stream),
                transient=False,
            )
            self.tasks = {
                name: self.bar.add_task(name, total=total) for name, total in totals.items()
            }
            self.bar.start()

    def __call__(self, section: str) -> None:
        self.done[section] = self.done.get(section, 0) + 1
        if self.bar is not None:
            # A profile may write a section under another name (pieces for conversations):
            # those items have no bar.
            if section in self.tasks:
                self.bar.advance(self.tasks[section])
            return
        now = time.monotonic()
        if now - self.last_log >= LOG_EVERY:
            self.last_log = now
            total = sum(self.done.values())
            rate = total / max(now - self.started, 1e-9)
            self.stream.write(f"export: {section} {self.done[section]:,} ({rate:,.0f} items/s)\n")
            self.stream.flush()

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


class Command(BaseCommand):
    """Write an export document (JSON, JSON Lines, or a zip with media)."""

    help = (
        "Export stored memory as PyRIT-shaped JSON that POST /api/v1/ingest/ accepts "
        "(see docs/export.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--out",
            metavar="FILE",
            help="Write here (default: stdout). Written to a temporary file, then renamed.",
        )
        parser.add_argument("--format", choices=["json", "jsonl"], default="json", dest="fmt")
        parser.add_argument("--conversation", metavar="ID", help="One conversation id.")
        parser.add_argument(
            "--label",
            metavar="KEY:VALUE",
            action="append",
            default=[],
            help="Repeatable; all must match.",
        )
        parser.add_argument("--attack-class", metavar="NAME", help="Attack strategy class.")
        parser.add_argument(
            "--since", metavar="DATE", help="YYYY-MM-DD or an ISO date-time (UTC if naive)."
        )
        parser.add_argument(
            "--with-media",
            action="store_true",
            help="Write a zip: the document plus the media files it shows (needs --out).",
        )
        parser.add_argument(
            "--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, help="Rows read per query."
        )
        parser.add_argument(
            "--profile",
            choices=list(PROFILES),
            default=DEFAULT_PROFILE,
            help="redline: everything (default); pyrit-1.1, pyrit-0.12: only what that PyRIT "
            "version loads as it is (docs/export.md lists what each drops).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        out = options["out"]
        if options["with_media"] and not out:
            raise CommandError("--with-media writes a zip; name the file with --out FILE.zip")
        if options["chunk_size"] < 1:
            raise CommandError("--chunk-size must be at least 1")
        try:
            filters = export_filters(
                conversation_id=options["conversation"],
                labels=options["label"],
                attack_class=options["attack_class"],
                since=options["since"],
            )
            profile = export_profile(name=options["profile"])
            totals = None
            if sys.stderr.isatty():
                selection = export_selection(filters=filters)
                if profile.scores_apart:
                    selection = with_piece_scores(selection)
                # Items per written section; flat pieces are not counted ahead (no bar).
                totals = {
                    profile.sections[name]: getattr(selection, name).count()
                    for name in SECTIONS
                    if name in profile.sections
                    and not (name == "conversations" and profile.flat_pieces)
                }
            progress = _Progress(sys.stderr, totals)
            stream = memory_export_stream(
                filters=filters,
                fmt=options["fmt"],
                with_media=options["with_media"],
                chunk_size=options["chunk_size"],
                on_item=progress,
                profile=profile,
            )
        except ExportFilterError as exc:
            raise CommandError(str(exc)) from exc
        started = time.monotonic()
        try:
            size = self._write(stream, out)
        finally:
            progress.stop()
        counts = ", ".join(f"{n:,} {name}" for name, n in stream.export.counts.items())
        media = len(stream.export.media_blob_ids)
        where = out or "stdout"
        sys.stderr.write(
            f"Exported {counts}"
            + (f", {media:,} media files" if options["with_media"] else "")
            + f" to {where} ({size:,} bytes) in {time.monotonic() - started:.1f} s\n"
        )

    def _write(self, stream: ExportStream, out: str | None) -> int:
        if not out or out == "-":
            return self._copy(stream, sys.stdout.buffer)
        target = Path(out)
        if target.parent and not target.parent.is_dir():
            raise CommandError(f"{target.parent} is not a folder")
        # A temporary file beside the target: an interrupted export leaves no half file.
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        try:
            with os.fdopen(fd, "wb") as handle:
                size = self._copy(stream, handle)
            os.replace(temp_name, target)
        except BaseException:
            Path(temp_name).unlink(missing_ok=True)
            raise
        return size

    @staticmethod
    def _copy(stream: ExportStream, handle: BinaryIO) -> int:
        size = 0
        for chunk in stream.chunks:
            handle.write(chunk)
            size += len(chunk)
        handle.flush()
        return size
