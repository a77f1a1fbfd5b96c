"""Create an API token and print it (only it), for ``TOKEN=$(manage.py create_api_token bot)``."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from redteam.models import ApiTokenScope
from redteam.tokens import api_token_create


def positive_int(value: str) -> int:
    """argparse type: an integer of at least 1."""
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    """Create a token for a user and print the plain token on stdout, nothing else.

    The token is stored hashed and cannot be shown again; revoke it with ``revoke_api_token``
    and its prefix (the first 8 characters) or in the admin.
    """

    help = "Create an API token for USERNAME and print it (shown only this once)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--scope",
            choices=ApiTokenScope.values,
            default=ApiTokenScope.READ,
            help="read (default) or ingest (ingest and read)",
        )
        parser.add_argument("--name", default="", help="a label for the token")
        parser.add_argument(
            "--expires-days", type=positive_int, default=None, help="expire after N days"
        )

    def handle(
        self,
        *args,
        username: str,
        scope: str,
        name: str,
        expires_days: int | None,
        **options,
    ) -> None:
        user_model = get_user_model()
        try:
            user = user_model.objects.get_by_natural_key(username)
        except user_model.DoesNotExist:
            raise CommandError(f"No user named {username!r}.") from None
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive; its tokens would not work.")
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        _, raw = api_token_create(user=user, scope=scope, name=name, expires_at=expires_at)
        self.stdout.write(raw)
