"""Members of the shipped groups may enter the admin; their permissions decide the rest."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from redteam.groups import CURATOR, INGEST, LEAD, REVIEWER, VIEWER


@pytest.mark.django_db
@pytest.mark.parametrize("group_name", [VIEWER, REVIEWER, LEAD, CURATOR, INGEST])
def test_joining_a_shipped_group_lets_the_user_into_the_admin(django_user_model, group_name):
    call_command("ensure_groups")
    user = django_user_model.objects.create_user(username="newcomer", password="pw-new-12345")
    assert not user.is_staff
    user.groups.add(Group.objects.get(name=group_name))
    user.refresh_from_db()
    assert user.is_staff
    client = Client()
    client.force_login(user)
    assert client.get("/admin/").status_code == 200


@pytest.mark.django_db
def test_adding_users_from_the_group_side_grants_staff_too(django_user_model):
    call_command("ensure_groups")
    user = django_user_model.objects.create_user(username="other", password="pw-other-12345")
    Group.objects.get(name=CURATOR).user_set.add(user)
    user.refresh_from_db()
    assert user.is_staff


@pytest.mark.django_db
def test_a_group_of_ones_own_does_not_grant_staff(django_user_model):
    user = django_user_model.objects.create_user(username="plain", password="pw-plain-12345")
    user.groups.add(Group.objects.create(name="book-club"))
    user.refresh_from_db()
    assert not user.is_staff
