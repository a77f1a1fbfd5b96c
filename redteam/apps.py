from django.apps import AppConfig
from django.db.models.signals import m2m_changed, post_migrate


class RedteamConfig(AppConfig):
    """Access control: API tokens, the DRF authentication and permission classes, shipped groups."""

    name = "redteam"
    verbose_name = "Access"

    def ready(self) -> None:
        # Registers the bearer scheme with drf-spectacular (an import-time side effect).
        from django.contrib.auth import get_user_model

        from redteam import schema  # noqa: F401
        from redteam.groups import ensure_groups_after_migrate, grant_staff_to_members
        from redteam.security import connect_axes

        connect_axes()  # the login-failure receiver connects when the module is imported

        # Sent once per app in INSTALLED_APPS order; ``redteam`` comes after ``memory`` and
        # ``seeds``, so their permissions exist by the time this app's signal is handled.
        post_migrate.connect(
            ensure_groups_after_migrate,
            sender=self,
            dispatch_uid="redteam.groups.ensure_groups_after_migrate",
        )
        m2m_changed.connect(
            grant_staff_to_members,
            sender=get_user_model().groups.through,
            dispatch_uid="redteam.groups.grant_staff_to_members",
        )
