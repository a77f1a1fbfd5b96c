"""Progress: a bar per table on a terminal (rich), plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO


class PlainProgress:
    """Log lines (not a terminal): per table every few seconds, and one per cycle."""

    def __init__(self, write: Callable[[str], None], every: float = 5.0) -> None:
        self.write = write
        self.every = every

    def start_cycle(self, totals: dict[str, int]) -> None:
        self.totals = {t: n for t, n in totals.items() if n}
        self.done = dict.fromkeys(self.totals, 0)
        self.started = self.last = time.monotonic()
        self.write(
            "sending "
            + ", ".join(f"{table} {count:,}" for table, count in self.totals.items())
            + " rows"
        )

    def advance(self, table: str, rows: int) -> None:
        self.done[table] = self.done.get(table, 0) + rows
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            self.write(self._line(table, now))

    def _line(self, table: str, now: float) -> str:
        rate = sum(self.done.values()) / max(now - self.started, 1e-9)
        return (
            f"{table}: {self.done[table]:,}/{self.totals.get(table, 0):,} rows, {rate:,.0f} rows/s"
        )

    def end_cycle(self) -> None:
        seconds = time.monotonic() - self.started
        rows = sum(self.done.values())
        self.write(
            f"sent {rows:,} rows in {seconds:.1f} s ({rows / max(seconds, 1e-9):,.0f} rows/s)"
        )

    def close(self) -> None:
        """Nothing to tear down."""


class BarProgress:
    """One bar per table with rows and rows/s (rich)."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(file=stream)
        self.bar = Progress(
            TextColumn("{task.description:<24}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("rows · {task.fields[rate]:,.0f} rows/s"),
            console=self.console,
        )
        self.tasks: dict[str, Any] = {}
        self.bar.start()

    def start_cycle(self, totals: dict[str, int]) -> None:
        self.started = time.monotonic()
        for table, count in totals.items():
            if not count:
                continue
            if table in self.tasks:
                task = self.tasks[table]
                done = self.bar.tasks[task].completed
                self.bar.update(task, total=done + count)
            else:
                self.tasks[table] = self.bar.add_task(table, total=count, rate=0.0)

    def advance(self, table: str, rows: int) -> None:
        task = self.tasks.get(table)
        if task is None:
            return
        self.bar.advance(task, rows)
        speed = self.bar.tasks[task].speed or 0.0
        self.bar.update(task, rate=speed)

    def end_cycle(self) -> None:
        """The bars stay; a watch adds to their totals."""

    def close(self) -> None:
        self.bar.stop()


def make_progress(stream: TextIO | None = None) -> PlainProgress | BarProgress:
    stream = stream or sys.stderr
    if stream.isatty():
        return BarProgress(stream)
    return PlainProgress(lambda line: print(line, file=stream, flush=True))
