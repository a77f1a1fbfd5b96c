"""``manage.py media_check``: does every stored media reference have its bytes, and every file
its blob? Run it after restoring a backup (docs/deployment.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.storage.media import media_check


class Command(BaseCommand):
    help = (
        "Check the media store against the database: blobs without their file (or of the "
        "wrong size), files no blob names. Exit status 1 when a blob's bytes are missing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--verify", action="store_true", help="also re-hash every file (reads every byte)"
        )

    def handle(self, *args: Any, verify: bool, **options: Any) -> None:
        report = media_check(verify=verify)
        self.stdout.write(f"{report.blobs:,} media blobs in the database")
        for label, shas in (
            ("missing file", report.missing),
            ("file of the wrong size", report.wrong_size),
            ("file whose bytes do not hash to its name", report.wrong_hash),
        ):
            for sha in shas:
                self.stdout.write(f"  {label}: {sha}")
        for name in report.orphan_files:
            self.stdout.write(f"  file no blob names (safe to delete): {name}")
        self.stdout.write(
            f"{report.pieces_waiting:,} piece(s) and {report.seeds_waiting:,} seed(s) name media "
            "whose bytes were never sent (they link when sent)"
        )
        if not report.ok:
            broken = len(report.missing) + len(report.wrong_size) + len(report.wrong_hash)
            raise CommandError(f"{broken} blob(s) without their bytes: restore the media folder")
        self.stdout.write("media store and database agree")
