"""Clients, upload files and helpers for the upload tests (users: tests/conftest.py)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.conftest import FIXTURES_DIR, logged_in

FIXTURE_110 = FIXTURES_DIR / "pyrit-1.1.0-small"
FIXTURE_012 = FIXTURES_DIR / "pyrit-0.12.1-legacy"


@pytest.fixture
def ingest_client(ingester):
    """The ingester's session: may import."""
    return logged_in(ingester)


@pytest.fixture
def staff_client(member):
    """Staff without any group or permission."""
    return logged_in(member(username="stan", is_staff=True))


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
