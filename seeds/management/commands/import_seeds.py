"""``manage.py import_seeds FILE_OR_DIR…``: import PyRIT seed YAML files (contract §12).

Directories are searched recursively for ``*.prompt``, ``*.yaml`` and ``*.yml``. Prints, per
file, how many seeds are new, identical (skipped), changed (updated) or invalid, with every
problem as ``file:line: key: message``. ``--dry-run`` stops after that preview. Exits 1 when a
file or seed was invalid (the valid ones are still imported unless ``--dry-run``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from seeds.importing import INVALID, import_commit, import_plan
from seeds.yaml_io import MAX_FILE_BYTES

SUFFIXES = (".prompt", ".yaml", ".yml")


def _collect(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise CommandError(f"{raw}: no such file or directory")
    return found


class Command(BaseCommand):
    help = "Import PyRIT seed YAML files (.prompt dataset files, .yaml template files)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
        parser.add_argument(
            "--dataset", help="dataset for files that name none (template files usually)"
        )
        parser.add_argument(
            "--added-by",
            default="import_seeds",
            help="added_by for seeds the files do not credit (default: import_seeds)",
        )
        parser.add_argument("--user", help="username recorded in the history as the importer")
        parser.add_argument("--dry-run", action="store_true", help="preview only; write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        paths = _collect(options["paths"])
        if not paths:
            raise CommandError("no .prompt/.yaml/.yml files found")
        files = []
        for path in paths:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                # Refused before reading; reported like any other problem.
                files.append((str(path), b"x" * (MAX_FILE_BYTES + 1)))
            else:
                files.append((str(path), path.read_bytes()))
        actor = None
        if options["user"]:
            actor = get_user_model().objects.filter(username=options["user"]).first()
            if actor is None:
                raise CommandError(f"no user {options['user']!r}")
        kwargs = {
            "files": files,
            "default_dataset": options["dataset"],
            "added_by": options["added_by"],
        }
        if options["dry_run"]:
            plan = import_plan(**kwargs)
            result = None
        else:
            plan, result = import_commit(**kwargs, actor=actor)
        self._report(plan)
        if result is not None:
            self.stdout.write(
                f"written: {result.created} created ({result.groups} groups), "
                f"{result.updated} updated, {result.skipped} identical skipped, "
                f"{result.invalid} invalid; datasets: {', '.join(result.datasets) or '-'}"
            )
        if plan.has_problems:
            raise CommandError("some files or seeds were invalid (see above)", returncode=1)

    def _report(self, plan: Any) -> None:
        for planned in plan.files:
            counts = ", ".join(f"{n} {status}" for status, n in planned.counts.items() if n)
            dataset = planned.parsed.dataset_name or "(no dataset)"
            self.stdout.write(f"{planned.name} → {dataset}: {counts or 'nothing'}")
            for problem in planned.problems:
                self.stderr.write(f"  error: {problem}")
            for seed in planned.seeds:
                if seed.status == INVALID:
                    for problem in seed.problems:
                        self.stderr.write(f"  error: {problem}")
            for warning in planned.warnings:
                self.stdout.write(f"  warning: {warning}")
