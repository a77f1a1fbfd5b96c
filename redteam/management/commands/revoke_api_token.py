"""Revoke API tokens by their prefix (the first 8 characters, shown in the admin)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from redteam.models import ApiToken
from redteam.tokens import KEY_PREFIX_LENGTH, api_tokens_revoke


class Command(BaseCommand):
    """Revoke every not yet revoked token whose key prefix is PREFIX; print how many."""

    help = "Revoke the API tokens whose prefix (first 8 characters) is PREFIX."

    def add_arguments(self, parser) -> None:
        parser.add_argument("prefix")

    def handle(self, *args, prefix: str, **options) -> None:
        if len(prefix) != KEY_PREFIX_LENGTH:
            raise CommandError(
                f"PREFIX is the first {KEY_PREFIX_LENGTH} characters of a token, "
                f"as shown in the admin; got {prefix!r}."
            )
        count = api_tokens_revoke(tokens=ApiToken.objects.filter(key_prefix=prefix))
        self.stdout.write(f"Revoked {count} token{'' if count == 1 else 's'}.")
