"""``manage.py pyrit_findings``: PyRIT 1.2's operations, findings and evidence (imported
verbatim by ``import_pyrit``) mapped onto Redline's, or Redline's written back as PyRIT rows.

    manage.py pyrit_findings                 # map what import_pyrit kept verbatim
    manage.py pyrit_findings --export out.json   # {table: [row, ...]} in PyRIT 1.2's columns
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from memory.findings.pyrit import pyrit_findings_map, pyrit_findings_rows


class Command(BaseCommand):
    help = (
        "Map PyRIT 1.2 operations and findings onto Redline's, or export Redline's as PyRIT rows."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--export", type=Path, help="Write PyRIT 1.2 rows to this JSON file.")

    def handle(self, *args, **options) -> None:
        if options["export"]:
            rows = pyrit_findings_rows()
            options["export"].write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
            counts = ", ".join(f"{len(v)} {k}" for k, v in rows.items())
            self.stdout.write(f"wrote {counts} to {options['export']}")
            return
        summary = pyrit_findings_map()
        self.stdout.write(
            f"{summary.operations} operations, {summary.findings} findings, "
            f"{summary.evidence} pieces of evidence mapped"
        )
        for line in summary.skipped:
            self.stderr.write(f"skipped {line}")
