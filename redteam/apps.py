from django.apps import AppConfig
from django.db.models.signals import post_migrate


class RedteamConfig(AppConfig):
    """Access control: API tokens, the DRF authentication and permission classes, shipped groups."""

    name = "redteam"
    verbose_name = "Access"

    def ready(self) -> None:
        # Registers the bearer scheme with drf-spectacular (an import-time side effect).
        from redteam import schema  # noqa: F401
        from redteam.groups import ensure_groups_after_migrate

        # Sent once per app in INSTALLED_APPS order; ``redteam`` comes after ``memory`` and
        # ``seeds``, so their permissions exist by the time this app's signal is handled.
        post_migrate.connect(
            ensure_groups_after_migrate,
            sender=self,
            dispatch_uid="redteam.groups.ensure_groups_after_migrate",
        )
