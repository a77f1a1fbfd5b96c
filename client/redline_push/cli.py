"""``redline-push [--url URL] [--token TOKEN] [--watch] [--media-root DIR] [--label k=v …] [DB]``.

Exit status: 0 when everything was sent and taken; 1 when Redline refused some rows (the
summary lists them; the rest was sent); 2 for anything that stopped the push (a bad token,
a server too old, a file that is not PyRIT memory, a network that stayed down).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from pyrit_memory_reader.errors import SourceError
from redline_push import __version__
from redline_push.api import Api, Fatal, Interrupted
from redline_push.progress import make_progress
from redline_push.push import Pusher, Report
from redline_push.state import State, default_state_path


def default_database() -> Path:
    """PyRIT's own default: ``dbdata/pyrit.db`` under its ``DB_DATA_PATH`` — the checkout's
    ``dbdata`` when run from a PyRIT checkout, else the user data folder."""
    local = Path.cwd() / "dbdata" / "pyrit.db"
    if local.exists():
        return local
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "pyrit"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "dbdata" / "pyrit.db"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="redline-push",
        description="Ship a local PyRIT memory (SQLite, any version Redline imports) to "
        "Redline. Only what Redline does not have yet is sent; running it again, after any "
        "interruption, converges to exactly the source.",
    )
    parser.add_argument(
        "database",
        nargs="?",
        type=Path,
        help=f"PyRIT memory file (default: PyRIT's own, {default_database()})",
    )
    parser.add_argument(
        "--url", default=os.environ.get("REDLINE_URL"), help="Redline's URL (default: $REDLINE_URL)"
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("REDLINE_TOKEN"),
        help="API token with the ingest scope (default: $REDLINE_TOKEN)",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="Keep following the database and "
        "push new rows within seconds; Ctrl-C stops after the current batch.",
    )
    parser.add_argument(
        "--media-root",
        type=Path,
        default=None,
        help="Folder holding the media files (default: the database's folder, PyRIT's dbdata).",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Label added to every pushed piece and attack result lacking it (repeatable).",
    )
    parser.add_argument(
        "--batch-rows",
        type=int,
        default=2000,
        help="Source rows per batch "
        "(default 2000; batches are split further to fit the server's limits).",
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=None,
        help="State file (default: one per URL and database in your cache folder).",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=1.0,
        help="--watch: seconds between two looks at the database (default 1).",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=8,
        help="Retries of a failing request (backoff up to 30 s; default 8).",
    )
    parser.add_argument("--version", action="version", version=f"redline-push {__version__}")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no Redline URL: pass --url or set REDLINE_URL")
    if not args.token:
        parser.error("no token: pass --token or set REDLINE_TOKEN")
    if args.batch_rows < 1:
        parser.error("--batch-rows must be at least 1")
    for label in args.label:
        if "=" not in label or not label.split("=", 1)[0]:
            parser.error(f"--label {label!r}: expected KEY=VALUE")
    return args


def summary_lines(report: Report) -> list[str]:
    """The end-of-push report, shaped like ``manage.py import_pyrit``'s."""
    lines = [f"Schema: {report.schema}", ""]
    lines.append(f"{'source table':<26}{'rows read':>12}")
    for table, count in report.rows_read.items():
        if count:
            lines.append(f"{table:<26}{count:>12,}")
    lines.append(f"{'total':<26}{sum(report.rows_read.values()):>12,}")
    lines.append("")
    lines.append(f"{'object':<20}{'created':>13}{'updated':>10}{'unchanged':>11}{'refused':>10}")
    kinds = sorted(set(report.created) | set(report.unchanged) | set(report.refused))
    for kind in kinds:
        if not (
            report.created[kind]
            or report.updated[kind]
            or report.unchanged[kind]
            or report.refused[kind]
        ):
            continue
        lines.append(
            f"{kind:<20}{report.created[kind]:>13,}{report.updated[kind]:>10,}"
            f"{report.unchanged[kind]:>11,}{report.refused[kind]:>10,}"
        )
    lines.append("")
    lines.append(
        f"Media: {report.media_sent:,} uploaded, {report.media_known:,} already on the server, "
        f"{report.media_missing:,} missing"
    )
    seconds = report.seconds
    rate = sum(report.rows_read.values()) / seconds if seconds else 0.0
    lines.append(f"Time: {seconds:.1f} s ({rate:,.0f} rows/s), {report.batches:,} batches")
    warnings = report.warnings.lines()
    if warnings:
        lines.append("")
        lines.append(f"Warnings ({len(warnings)}):")
        lines.extend(f"  - {warning}" for warning in warnings)
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    database = (args.database or default_database()).expanduser()
    if not database.is_file():
        print(f"redline-push: {database}: no such file", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_interrupt(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print(
            "redline-push: stopping after the current batch (Ctrl-C again to quit now)",
            file=sys.stderr,
            flush=True,
        )

    previous = signal.signal(signal.SIGINT, on_interrupt)
    log = lambda line: print(f"redline-push: {line}", file=sys.stderr, flush=True)  # noqa: E731
    api = Api(args.url, args.token, retries=args.retries, stop=stop, log=log)
    state = State(args.state or default_state_path(args.url, database))
    progress = make_progress()
    pusher = Pusher(
        api=api,
        database=database,
        state=state,
        media_root=args.media_root,
        labels=dict(label.split("=", 1) for label in args.label),
        batch_rows=args.batch_rows,
        stop=stop,
        progress=progress,
        log=log,
    )
    status = 0
    try:
        report = pusher.run(watch=args.watch, interval=args.interval)
    except (Fatal, SourceError) as exc:
        print(f"redline-push: {exc}", file=sys.stderr)
        return 2
    except Interrupted:
        report = pusher.report
    finally:
        progress.close()
        state.close()
        api.close()
        signal.signal(signal.SIGINT, previous)
    for line in summary_lines(report):
        print(line)
    if any(report.refused.values()):
        status = 1
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
