"""Load the shipped framework crosswalk (or another crosswalk file) into the database."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memory.storage.crosswalk import crosswalk_load, parse_crosswalk, shipped_crosswalk


class Command(BaseCommand):
    """Bring the crosswalk tables up to the shipped data file (after an upgrade) or ``--file``.

    Rows nobody edited follow the file; rows edited, switched off or added in the admin are
    kept, unless ``--reset`` discards every admin edit (docs/findings.md, "Framework
    crosswalk"). ``--check`` only reads and validates the file.
    """

    help = "Load the framework crosswalk (OWASP LLM 2025, MITRE ATLAS, NIST AI 600-1)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--file", type=Path, help="A crosswalk YAML file (default: shipped).")
        parser.add_argument(
            "--reset", action="store_true", help="Discard admin edits and admin-added rows."
        )
        parser.add_argument("--check", action="store_true", help="Validate the file only.")

    def handle(self, *args, file: Path | None, reset: bool, check: bool, **options) -> None:
        try:
            data = (
                parse_crosswalk(file.read_text(encoding="utf-8")) if file else shipped_crosswalk()
            )
        except (OSError, ValueError) as error:
            raise CommandError(f"crosswalk file: {error}") from error
        if check:
            self.stdout.write(f"crosswalk {data.version}: {len(data.rows)} mapping rows, valid")
            return
        result = crosswalk_load(data=data, reset=reset)
        self.stdout.write(
            f"crosswalk {result.version}: {result.added} added, {result.updated} updated, "
            f"{result.removed} removed, {result.kept_edited} edited rows kept"
        )
