"""``manage.py export_human_labels``: reviewers' judgements as a PyRIT human-label CSV file."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import QueryDict

from memory.models import AttackResult
from memory.storage.filters import AttackResultFilter
from memory.storage.human_labels import (
    HumanLabelError,
    harm_labels,
    human_labels_csv,
    objective_labels,
)


class Command(BaseCommand):
    help = (
        "Write reviewers' verdicts (objective) or human harm scores (harm) as a PyRIT "
        "HumanLabeledDataset CSV file, which PyRIT's HumanLabeledDataset.from_csv reads to "
        "evaluate a scorer. --filter takes the attack list's query string."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=["objective", "harm"])
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")
        parser.add_argument(
            "--dataset-version", default="1.0", help="the file's dataset_version (default 1.0)"
        )
        parser.add_argument(
            "--raters",
            type=int,
            default=1,
            help="label columns: the newest verdicts of this many distinct reviewers; items "
            "with fewer are left out (default 1)",
        )
        parser.add_argument("--harm-category", default="", help="harm files: the category")
        parser.add_argument("--harm-definition", default="", help="harm files: definition path")
        parser.add_argument(
            "--harm-definition-version", default="", help="harm files: definition version"
        )
        parser.add_argument(
            "--filter",
            default="",
            help="attack-list filters as a query string, e.g. 'labels=operation:op1'",
        )

    def handle(self, *args, **options) -> None:
        filterset = AttackResultFilter(
            QueryDict(options["filter"]), queryset=AttackResult.objects.all()
        )
        if not filterset.is_valid():
            raise CommandError(f"--filter: {dict(filterset.errors)}")
        try:
            if options["kind"] == "objective":
                labels = objective_labels(attacks=filterset.qs, raters=options["raters"])
            else:
                labels = harm_labels(
                    attacks=filterset.qs,
                    harm_category=options["harm_category"],
                    raters=options["raters"],
                )
            lines = list(
                human_labels_csv(
                    labels,
                    dataset_version=options["dataset_version"],
                    harm_definition=options["harm_definition"],
                    harm_definition_version=options["harm_definition_version"],
                )
            )
        except HumanLabelError as exc:
            raise CommandError(str(exc)) from None
        text = "".join(lines)
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        self.stderr.write(
            f"{len(labels.rows):,} {labels.kind} rows; left out: {labels.skipped_raters:,} with "
            f"fewer than {labels.raters} rater(s), {labels.skipped_media:,} whose response is "
            f"not text; {labels.error_rows:,} of the rows are error responses (data_type error: "
            "PyRIT reads them as error pieces, blocked or failed alike)"
        )
