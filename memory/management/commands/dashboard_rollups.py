"""``manage.py dashboard_rollups``: check the dashboards' rollup counts against the raw tables
(``--check``, the default) or recount them and re-create their triggers (``--rebuild``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.storage.rollups import rollups_check, rollups_rebuild


class Command(BaseCommand):
    help = (
        "Check the dashboard rollups against a recount of the raw tables (exit status 1 on "
        "any difference or missing trigger), or --rebuild them."
    )

    def add_arguments(self, parser: Any) -> None:
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--check", action="store_true", help="compare (the default)")
        mode.add_argument(
            "--rebuild", action="store_true", help="re-create the triggers and recount"
        )
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, rebuild: bool, database: str, **options: Any) -> None:
        if rebuild:
            written = rollups_rebuild(using=database)
            for table, rows in written.items():
                self.stdout.write(f"{table}: {rows:,} rows")
            self.stdout.write("rollups rebuilt")
            return
        problems = rollups_check(using=database)
        for problem in problems[:200]:
            self.stdout.write(f"  {problem}")
        if problems:
            raise CommandError(f"{len(problems):,} difference(s) between rollups and raw tables")
        self.stdout.write("rollups exact")
