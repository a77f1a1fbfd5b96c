"""Fill an empty database with a realistic demo red-team memory."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory.demo import demo_load
from memory.models import AttackResult, Conversation


class Command(BaseCommand):
    """``manage.py demo``: write the demo memory through the project's services."""

    help = "Load demo red-team memory (attacks, conversations, media, scores, seeds)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Do nothing (and succeed) when the database already holds memory.",
        )
        parser.add_argument("--seed", type=int, default=7, help="Random seed (default 7).")

    def handle(self, *args, if_empty: bool, seed: int, **options) -> None:
        has_memory = AttackResult.objects.exists() or Conversation.objects.exists()
        if has_memory:
            if if_empty:
                self.stdout.write("The database already holds memory; demo data not loaded.")
                return
            raise CommandError(
                "The database already holds memory; the demo loads into an empty one only."
            )
        with transaction.atomic():
            counts = demo_load(rng_seed=seed)
        summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Demo memory loaded: {summary}."))
