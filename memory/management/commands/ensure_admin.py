"""Create the local administrator once and print its login."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    """Make sure an ``admin`` superuser exists and print how to log in.

    The password is generated on first use and kept in ``var/admin-password`` (mode 600) so
    that every ``./dev.sh up`` prints a login that works. If that file is gone, the password
    is reset to a fresh one.
    """

    help = "Create the local admin user if needed and print its login."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options) -> None:
        password_file = settings.VAR_DIR / "admin-password"
        user_model = get_user_model()
        user = user_model.objects.filter(username=username).first()
        password = password_file.read_text().strip() if password_file.exists() else ""
        if user is None or not password or not user.check_password(password):
            password = secrets.token_urlsafe(12)
            if user is None:
                user = user_model.objects.create_superuser(
                    username=username, email=f"{username}@localhost", password=password
                )
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            password_file.write_text(password + "\n")
            password_file.chmod(0o600)
        self.stdout.write(
            self.style.SUCCESS(
                f"Log in at http://127.0.0.1:8000/ as user '{username}' with password '{password}'"
            )
        )
