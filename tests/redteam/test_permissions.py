"""Who may call the API: session or bearer token, token scopes, model permissions, groups."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from redteam.groups import CURATOR, INGEST, LEAD, REVIEWER, VIEWER, shipped_group_permissions
from redteam.permissions import RequiredPermissions
from redteam.tokens import api_token_create, api_token_revoke

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.redteam.token_test_urls")]

LIST = "/conversations/"
PROBE = "/probe/"


def bearer(raw: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


# --- Authentication -----------------------------------------------------------------------------


def test_anonymous_request_gets_401_with_a_bearer_challenge(client):
    for url in (LIST, PROBE, "/schema/"):
        response = client.get(url)
        assert response.status_code == 401, url
        assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Bearer", "no bearer token given"),
        ("Bearer a b", "must not contain spaces"),
        ("Bearer rl_not-a-token", "Invalid, expired or revoked API token"),
    ],
)
def test_a_bad_bearer_header_gets_401_with_a_clear_message(client, header, message):
    response = client.get(LIST, HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert message in response.json()["detail"]
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_a_revoked_token_gets_401(client, bot):
    token, raw = api_token_create(user=bot, scope="ingest")
    assert client.get(LIST, **bearer(raw)).status_code == 200
    api_token_revoke(token=token)
    assert client.get(LIST, **bearer(raw)).status_code == 401


def test_other_authorization_schemes_are_left_to_other_classes(client):
    response = client.get(LIST, HTTP_AUTHORIZATION="Basic dXNlcjpwYXNz")
    assert response.status_code == 401
    assert response.json()["detail"] == "Authentication credentials were not provided."


# --- Token scopes -------------------------------------------------------------------------------


def test_a_read_token_can_get_but_not_post(client, bot):
    _, raw = api_token_create(user=bot, scope="read")
    assert client.get(LIST, **bearer(raw)).status_code == 200
    assert client.get(PROBE, **bearer(raw)).json() == {"user": "bot"}
    response = client.post(PROBE, **bearer(raw))
    assert response.status_code == 403
    assert "scope 'ingest'" in response.json()["detail"]


def test_an_ingest_token_can_post_and_read(client, bot):
    _, raw = api_token_create(user=bot, scope="ingest")
    response = client.post(PROBE, **bearer(raw))
    assert response.status_code == 201
    assert response.json() == {"user": "bot"}
    assert client.get(LIST, **bearer(raw)).status_code == 200


def test_an_ingest_token_still_needs_its_users_permissions(client, viewer):
    _, raw = api_token_create(user=viewer, scope="ingest")
    assert client.get(PROBE, **bearer(raw)).status_code == 200
    assert client.post(PROBE, **bearer(raw)).status_code == 403


def test_a_token_of_a_user_without_view_permission_gets_403(client, reader):
    _, raw = api_token_create(user=reader, scope="read")
    assert client.get(LIST, **bearer(raw)).status_code == 403
    assert client.get(PROBE, **bearer(raw)).status_code == 403


def test_the_schema_accepts_a_token_and_documents_the_bearer_scheme(client, viewer):
    _, raw = api_token_create(user=viewer, scope="read")
    response = client.get("/schema/", {"format": "json"}, **bearer(raw))
    assert response.status_code == 200
    schema = response.json()
    assert schema["components"]["securitySchemes"]["bearerAuth"]["type"] == "http"
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert {"bearerAuth": []} in schema["paths"][LIST]["get"]["security"]


# --- Sessions and model permissions -------------------------------------------------------------


def test_a_session_user_needs_the_view_permission(reader, viewer):
    session = Client()
    session.force_login(reader)
    assert session.get(LIST).status_code == 403
    assert session.get(PROBE).status_code == 403
    session.force_login(viewer)
    assert session.get(LIST).status_code == 200
    assert session.get(PROBE).status_code == 200


def test_a_session_user_needs_the_add_permissions_to_post(viewer, bot):
    session = Client()
    session.force_login(viewer)
    assert session.post(PROBE).status_code == 403
    session.force_login(bot)
    assert session.post(PROBE).status_code == 201


def test_required_permissions_refuse_methods_the_view_does_not_name(bot):
    session = Client()
    session.force_login(bot)
    assert session.head(PROBE).status_code == 200  # HEAD follows GET
    assert session.delete(PROBE).status_code == 403


def test_required_permissions_as_a_list_apply_to_every_method(bot, viewer):
    class ListRequired(APIView):
        permission_classes = [RequiredPermissions]
        required_permissions = ["memory.add_conversation"]

        def get(self, request):
            return None

    factory = APIRequestFactory()
    permission = RequiredPermissions()
    for method, user, allowed in [("get", bot, True), ("get", viewer, False)]:
        request = getattr(factory, method)("/")
        request.user = user
        assert permission.has_permission(request, ListRequired()) is allowed


def test_required_permissions_without_a_declaration_is_a_configuration_error(bot):
    request = APIRequestFactory().get("/")
    request.user = bot
    with pytest.raises(ImproperlyConfigured, match="required_permissions"):
        RequiredPermissions().has_permission(request, APIView())


# --- Shipped groups -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "granted", "refused"),
    [
        (
            VIEWER,
            ["memory.view_conversation", "memory.view_score", "seeds.view_seedprompt"],
            ["memory.change_conversation", "seeds.add_seed", "memory.add_messagepiece"],
        ),
        (
            REVIEWER,
            ["memory.view_score", "memory.change_attackresult", "memory.change_conversation"],
            ["memory.change_score", "memory.add_conversation", "memory.add_reviewqueue"],
        ),
        (
            LEAD,
            [
                "memory.add_humanverdict",
                "memory.add_reviewqueue",
                "memory.change_reviewqueue",
                "memory.add_queueresolution",
            ],
            ["memory.change_score", "memory.change_humanverdict", "seeds.change_seed"],
        ),
        (
            CURATOR,
            ["memory.view_messagepiece", "seeds.add_seedprompt", "seeds.delete_seeddataset"],
            ["memory.change_conversation", "memory.add_score", "memory.delete_attackresult"],
        ),
        (
            INGEST,
            ["memory.add_messagepiece", "memory.change_score", "seeds.add_seed", "seeds.view_seed"],
            [
                "memory.delete_conversation",
                "seeds.delete_seed",
                "redteam.add_apitoken",
                "memory.add_reviewqueue",
                "memory.add_queueresolution",
            ],
        ),
    ],
)
def test_groups_exist_after_migrate_with_their_permissions(
    django_user_model, group, granted, refused
):
    # Not the ``member`` fixture: it runs ensure_groups, and the groups must come from migrate.
    user = django_user_model.objects.create_user(username=f"in-{group}", password="pw-x-12345")
    user.groups.set(Group.objects.filter(name=group))
    assert user.has_perms(granted)
    assert not any(user.has_perm(perm) for perm in refused)


def test_groups_hold_exactly_the_shipped_permissions():
    for name, wanted in shipped_group_permissions().items():
        stored = Group.objects.get(name=name).permissions.select_related("content_type")
        assert {f"{p.content_type.app_label}.{p.codename}" for p in stored} == wanted


def test_ensure_groups_restores_the_shipped_permissions():
    viewer = Group.objects.get(name=VIEWER)
    viewer.permissions.add(Permission.objects.get(codename="delete_seed"))
    viewer.permissions.remove(Permission.objects.get(codename="view_score"))
    Group.objects.filter(name=CURATOR).delete()
    out = StringIO()
    call_command("ensure_groups", stdout=out)
    assert "curator: " in out.getvalue()
    test_groups_hold_exactly_the_shipped_permissions()
