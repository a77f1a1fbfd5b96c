"""Create or refresh the shipped groups (``migrate`` does this too)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS

from redteam.groups import ensure_groups, shipped_group_permissions


class Command(BaseCommand):
    """Bring ``viewer``, ``reviewer``, ``curator`` and ``ingest`` to their shipped permissions."""

    help = "Create the shipped groups, or reset them to their shipped permissions."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS)

    def handle(self, *args, database: str, **options) -> None:
        ensure_groups(using=database)
        for name, perms in shipped_group_permissions().items():
            self.stdout.write(f"{name}: {len(perms)} permissions")
