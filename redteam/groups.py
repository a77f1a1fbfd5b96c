"""The shipped groups ``viewer``, ``reviewer``, ``lead``, ``curator`` and ``ingest``.

They are created and brought back to exactly these permissions after every ``migrate`` (and by
``manage.py ensure_groups``). Shipped groups are managed here: permissions added to them by
hand are removed again, so give extra rights through a group of your own.
"""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.db import DEFAULT_DB_ALIAS, router, transaction

VIEWER = "viewer"
REVIEWER = "reviewer"
LEAD = "lead"
CURATOR = "curator"
INGEST = "ingest"

#: The apps whose models the groups grant rights on.
GROUP_APPS = ("memory", "seeds")
#: Models reviewers annotate.
REVIEWED_MODELS = ("memory.attackresult", "memory.conversation")
#: What reviewers record: verdicts on attacks and human scores on pieces.
REVIEW_RECORDS = ("memory.add_humanverdict", "memory.add_score")
#: What leads run on top of reviewing: review queues, and resolutions of disagreements.
LEAD_MODELS = ("memory.reviewqueue", "memory.queueresolution")
LEAD_RECORDS = (
    "memory.add_reviewqueue",
    "memory.change_reviewqueue",
    "memory.delete_reviewqueue",
    "memory.add_queueresolution",
)
#: What reviewers write about findings: operations, findings and their comments, evidence and
#: retests, and reports (viewers read them all through the memory app's view permissions).
FINDING_RECORDS = tuple(
    f"memory.{action}_{model}"
    for model in ("operation", "finding", "findingcomment", "evidence", "retest", "report")
    for action in ("add", "change")
)

#: The framework crosswalk, which leads keep (edited in the admin).
CROSSWALK_RECORDS = tuple(
    f"memory.{action}_{model}"
    for model in ("framework", "frameworkentry", "crosswalkmapping")
    for action in ("add", "change")
)


#: Webhooks (docs/webhooks.md) are the leads' alone: an endpoint's URL may itself be a secret
#: (chat webhooks), and one that posts elsewhere would carry findings out of Redline.
WEBHOOK_MODELS = ("webhookendpoint", "webhookdelivery")
WEBHOOK_RECORDS = (
    *(f"memory.{action}_webhookendpoint" for action in ("view", "add", "change", "delete")),
    "memory.view_webhookdelivery",
    # "retry now" in the delivery log (the log itself is read-only)
    "memory.change_webhookdelivery",
)


def _codenames(app_label: str, actions: tuple[str, ...]) -> set[str]:
    """``"app_label.<action>_<model>"`` for every model of the app, proxies included, except
    the webhooks' (granted only through :data:`WEBHOOK_RECORDS`)."""
    models = global_apps.get_app_config(app_label).get_models()
    return {
        f"{app_label}.{action}_{m._meta.model_name}"
        for m in models
        for action in actions
        if not (app_label == "memory" and m._meta.model_name in WEBHOOK_MODELS)
    }


def shipped_group_permissions() -> dict[str, set[str]]:
    """Each shipped group's permissions, as ``"app_label.codename"``."""
    view = _codenames("memory", ("view",)) | _codenames("seeds", ("view",))
    reviewed = {
        f"{app_label}.change_{model}"
        for app_label, model in (name.split(".") for name in REVIEWED_MODELS)
    }
    reviewer = view | reviewed | set(REVIEW_RECORDS) | set(FINDING_RECORDS)
    # Ingestion writes memory, not the review work that is organised on top of it.
    lead_writes = {
        f"{app_label}.{action}_{model}"
        for app_label, model in (name.split(".") for name in LEAD_MODELS)
        for action in ("add", "change")
    }
    crosswalk_loads = {"memory.add_crosswalkload", "memory.change_crosswalkload"}
    ingest = set().union(*(_codenames(app, ("view", "add", "change")) for app in GROUP_APPS))
    return {
        VIEWER: view,
        REVIEWER: reviewer,
        LEAD: reviewer | set(LEAD_RECORDS) | set(WEBHOOK_RECORDS) | set(CROSSWALK_RECORDS),
        CURATOR: view | _codenames("seeds", ("add", "change", "delete")),
        # Nor the crosswalk, which leads keep and loads record.
        INGEST: ingest - lead_writes - set(CROSSWALK_RECORDS) - crosswalk_loads,
    }


def ensure_groups(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Create the shipped groups, or reset them, to exactly their intended permissions.

    Permission rows are created first for the apps involved (Django's own post-migrate step,
    idempotent), so this works whatever order the post-migrate handlers ran in.
    """
    for app_label in GROUP_APPS:
        create_permissions(global_apps.get_app_config(app_label), verbosity=0, using=using)
    wanted = shipped_group_permissions()
    needed = set().union(*wanted.values())
    by_name = {
        f"{perm.content_type.app_label}.{perm.codename}": perm
        for perm in Permission.objects.using(using)
        .select_related("content_type")
        .filter(content_type__app_label__in=GROUP_APPS)
    }
    missing = needed - by_name.keys()
    if missing:
        raise LookupError(f"permissions missing from the database: {sorted(missing)}")
    with transaction.atomic(using=using):
        for group_name, perm_names in wanted.items():
            group, _ = Group.objects.using(using).get_or_create(name=group_name)
            group.permissions.set([by_name[name] for name in perm_names])


SHIPPED_GROUPS = (VIEWER, REVIEWER, LEAD, CURATOR, INGEST)


def grant_staff_to_members(
    sender: Any,
    *,
    instance: Any,
    action: str,
    reverse: bool,
    model: Any,
    pk_set: set[int] | None,
    **kwargs: Any,
) -> None:
    """``m2m_changed`` receiver: members of a shipped group may enter the admin (``is_staff``).

    Curators edit seeds there and every group reads memory there; without ``is_staff`` Django's
    admin turns them away whatever their permissions. Their permissions still decide what they
    see and change. Leaving a group does not take ``is_staff`` away (other groups may need it).
    """
    if action != "post_add" or not pk_set:
        return
    if reverse:  # group.user_set.add(users): ``instance`` is the group, ``model`` the user model
        if instance.name in SHIPPED_GROUPS:
            model.objects.filter(pk__in=pk_set, is_staff=False).update(is_staff=True)
        return
    # user.groups.add(groups): ``instance`` is the user, ``model`` is Group.
    if (
        not instance.is_staff
        and model.objects.filter(pk__in=pk_set, name__in=SHIPPED_GROUPS).exists()
    ):
        type(instance).objects.filter(pk=instance.pk).update(is_staff=True)
        instance.is_staff = True


def ensure_groups_after_migrate(
    sender: AppConfig, *, using: str = DEFAULT_DB_ALIAS, apps: Any = global_apps, **kwargs: Any
) -> None:
    """``post_migrate`` receiver (for the ``redteam`` app): refresh the shipped groups."""
    try:
        # Absent from the migration state when auth's tables are not (yet, or any more) there.
        apps.get_model("auth", "Group")
        apps.get_model("auth", "Permission")
    except LookupError:
        return
    if not router.allow_migrate_model(using, Group):
        return
    ensure_groups(using=using)
