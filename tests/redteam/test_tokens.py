"""API tokens: stored hashed, authenticate while active, created and revoked by commands."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from redteam.models import ApiToken, ApiTokenScope
from redteam.tokens import (
    LAST_USED_RESOLUTION,
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
    token_hash,
)

pytestmark = pytest.mark.django_db


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


# --- Services -----------------------------------------------------------------------------------


def test_create_returns_the_plain_token_and_stores_only_its_hash(reader):
    token, raw = api_token_create(user=reader, scope=ApiTokenScope.INGEST, name="ci")
    assert re.fullmatch(r"rl_[A-Za-z0-9_-]{43}", raw)
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert row["key_hash"] == token_hash(raw)
    assert row["key_prefix"] == raw[:8]
    assert row["scope"] == "ingest"
    assert row["name"] == "ci"
    assert not any(raw in str(value) for value in row.values())


def test_each_token_is_unique(reader):
    raws = {api_token_create(user=reader, scope="read")[1] for _ in range(5)}
    assert len(raws) == 5


def test_create_rejects_an_unknown_scope(reader):
    with pytest.raises(ValueError, match="unknown token scope"):
        api_token_create(user=reader, scope="admin")


def test_authenticate_returns_the_token_with_its_user(reader, django_assert_num_queries):
    token, raw = api_token_create(user=reader, scope="read")
    # 1. the token joined to its user, 2. last_used_at (first use)
    with django_assert_num_queries(2):
        found = api_token_authenticate(raw=raw)
        assert found.user.username == "reader"
    assert found == token
    assert found.last_used_at is not None


@pytest.mark.parametrize("raw", ["", "rl_unknown", "x" * 1000])
def test_authenticate_rejects_unknown_values(reader, raw):
    api_token_create(user=reader, scope="read")
    assert api_token_authenticate(raw=raw) is None


def test_authenticate_rejects_a_revoked_token(reader):
    token, raw = api_token_create(user=reader, scope="read")
    api_token_revoke(token=token)
    assert token.revoked_at is not None
    assert api_token_authenticate(raw=raw) is None


def test_revoking_twice_keeps_the_first_time(reader):
    token, _ = api_token_create(user=reader, scope="read")
    api_token_revoke(token=token)
    first = token.revoked_at
    api_token_revoke(token=token)
    assert token.revoked_at == first


def test_authenticate_rejects_an_expired_token(reader):
    _, raw = api_token_create(user=reader, scope="read", expires_at=timezone.now())
    assert api_token_authenticate(raw=raw) is None
    _, raw = api_token_create(
        user=reader, scope="read", expires_at=timezone.now() + timedelta(hours=1)
    )
    assert api_token_authenticate(raw=raw) is not None


def test_authenticate_rejects_the_token_of_an_inactive_user(reader):
    _, raw = api_token_create(user=reader, scope="read")
    reader.is_active = False
    reader.save(update_fields=["is_active"])
    assert api_token_authenticate(raw=raw) is None


def test_last_used_at_is_written_at_most_once_per_minute(reader, django_assert_num_queries):
    token, raw = api_token_create(user=reader, scope="read")
    api_token_authenticate(raw=raw)
    first_use = ApiToken.objects.get(pk=token.pk).last_used_at
    # Within the minute: the lookup only, no UPDATE.
    with django_assert_num_queries(1):
        api_token_authenticate(raw=raw)
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first_use

    earlier = timezone.now() - LAST_USED_RESOLUTION - timedelta(seconds=1)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=earlier)
    with django_assert_num_queries(2):
        api_token_authenticate(raw=raw)
    assert ApiToken.objects.get(pk=token.pk).last_used_at > earlier


def test_active_excludes_revoked_expired_and_inactive_users(reader, django_user_model):
    live, _ = api_token_create(user=reader, scope="read")
    revoked, _ = api_token_create(user=reader, scope="read")
    api_token_revoke(token=revoked)
    api_token_create(user=reader, scope="read", expires_at=timezone.now() - timedelta(days=1))
    idle = django_user_model.objects.create_user(username="idle", is_active=False)
    api_token_create(user=idle, scope="read")
    assert list(ApiToken.objects.active()) == [live]


# --- Commands -----------------------------------------------------------------------------------


def test_create_api_token_prints_only_the_token(reader, capsys):
    output = run("create_api_token", "reader")
    raw = output.removesuffix("\n")
    assert "\n" not in raw
    assert capsys.readouterr().out == ""
    token = api_token_authenticate(raw=raw)
    assert token.user == reader
    assert token.scope == ApiTokenScope.READ
    assert token.expires_at is None


def test_create_api_token_with_scope_name_and_expiry(reader):
    raw = run(
        "create_api_token", "reader", "--scope", "ingest", "--name", "bot", "--expires-days", "3"
    ).strip()
    token = api_token_authenticate(raw=raw)
    assert token.scope == ApiTokenScope.INGEST
    assert token.name == "bot"
    remaining = token.expires_at - timezone.now()
    assert timedelta(days=2, hours=23) < remaining <= timedelta(days=3)


def test_create_api_token_for_an_unknown_user_fails_clearly(db):
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        run("create_api_token", "ghost")
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize(
    "args", [("--scope", "admin"), ("--expires-days", "0"), ("--expires-days", "x")]
)
def test_create_api_token_rejects_bad_options(reader, args):
    with pytest.raises(CommandError):
        run("create_api_token", "reader", *args)
    assert not ApiToken.objects.exists()


def test_revoke_api_token_by_prefix(reader):
    token, raw = api_token_create(user=reader, scope="read")
    _, other = api_token_create(user=reader, scope="read")
    assert run("revoke_api_token", token.key_prefix) == "Revoked 1 token.\n"
    assert api_token_authenticate(raw=raw) is None
    assert api_token_authenticate(raw=other) is not None
    assert run("revoke_api_token", token.key_prefix) == "Revoked 0 tokens.\n"


def test_revoke_api_token_wants_the_whole_prefix(reader):
    api_token_create(user=reader, scope="read")
    with pytest.raises(CommandError, match="first 8 characters"):
        run("revoke_api_token", "rl_")
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()


# --- Admin --------------------------------------------------------------------------------------


def test_admin_add_creates_a_token_and_shows_it_once(admin_client, reader):
    response = admin_client.post(
        reverse("admin:redteam_apitoken_add"),
        {
            "user": reader.pk,
            "name": "laptop",
            "scope": "ingest",
            "expires_at_0": "",
            "expires_at_1": "",
        },
        follow=True,
    )
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    raw = next(re.search(r"rl_[A-Za-z0-9_-]{43}", m).group() for m in shown if "rl_" in m)
    assert raw in response.content.decode()
    token = api_token_authenticate(raw=raw)
    assert (token.user, token.name, token.scope) == (reader, "laptop", "ingest")

    page = admin_client.get(reverse("admin:redteam_apitoken_change", args=[token.pk]))
    assert page.status_code == 200
    content = page.content.decode()
    assert token.key_prefix in content
    assert raw not in content
    assert token.key_hash not in content


def test_admin_change_form_edits_only_the_name(admin_client, reader):
    token, _ = api_token_create(user=reader, scope="read", name="old")
    response = admin_client.post(
        reverse("admin:redteam_apitoken_change", args=[token.pk]),
        {"name": "new", "scope": "ingest", "key_hash": "0" * 64},
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert (token.name, token.scope) == ("new", "read")
    assert token.key_hash != "0" * 64


def test_admin_action_revokes_selected_tokens(admin_client, reader):
    token, raw = api_token_create(user=reader, scope="read")
    response = admin_client.post(
        reverse("admin:redteam_apitoken_changelist"),
        {"action": "revoke_selected", "_selected_action": [token.pk]},
    )
    assert response.status_code == 302
    assert api_token_authenticate(raw=raw) is None
