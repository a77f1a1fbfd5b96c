"""Users, upload files and helpers for the upload tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from redteam.groups import ensure_groups
from tests.conftest import FIXTURES_DIR

FIXTURE_110 = FIXTURES_DIR / "pyrit-1.1.0-small"
FIXTURE_012 = FIXTURES_DIR / "pyrit-0.12.1-legacy"


def _user(django_user_model, username: str, group: str | None = None, **extra):
    ensure_groups()
    user = django_user_model.objects.create_user(
        username=username, password=f"pw-{username}-123", **extra
    )
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def ingester(django_user_model):
    """A user in the ``ingest`` group: may import."""
    return _user(django_user_model, "ingrid", "ingest")


@pytest.fixture
def ingest_client(ingester):
    return _client(ingester)


@pytest.fixture
def viewer_client(django_user_model):
    """A user in the ``viewer`` group: reads everything, imports nothing."""
    return _client(_user(django_user_model, "vera", "viewer"))


@pytest.fixture
def staff_client(django_user_model):
    """Staff without any group or permission."""
    return _client(_user(django_user_model, "stan", is_staff=True))


def dbdata_zip(source: Path, *, database: str = "dbdata/pyrit.db") -> bytes:
    """A zip as a user makes it: the fixture's memory.db and its media under ``dbdata/``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(source / "memory.db", database)
        for path in sorted((source / "dbdata").rglob("*")):
            if path.is_file():
                archive.write(path, f"dbdata/{path.relative_to(source / 'dbdata')}")
    return buffer.getvalue()


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()
