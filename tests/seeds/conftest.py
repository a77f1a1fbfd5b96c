"""Users of the shipped groups for the seed admin (staff, as the admin requires)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client


def _staff_member(django_user_model, username: str, group: str):
    from redteam.groups import ensure_groups

    ensure_groups()
    user = django_user_model.objects.create_user(
        username=username, password=f"pw-{username}-123", is_staff=True
    )
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def curator(django_user_model):
    """A staff user in the ``curator`` group (adds, changes and deletes seeds)."""
    return _staff_member(django_user_model, "cora", "curator")


@pytest.fixture
def viewer(django_user_model):
    """A staff user in the ``viewer`` group (reads seeds, changes nothing)."""
    return _staff_member(django_user_model, "vera", "viewer")


@pytest.fixture
def curator_client(curator):
    client = Client()
    client.force_login(curator)
    return client


@pytest.fixture
def viewer_client(viewer):
    client = Client()
    client.force_login(viewer)
    return client
