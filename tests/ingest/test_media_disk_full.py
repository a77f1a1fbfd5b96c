"""A full disk while storing media over the API: a JSON 507, no file left behind, nothing
linked (the browser upload: tests/uploads/test_disk_full.py)."""

from __future__ import annotations

import errno
import os

import pytest

from memory.models import MediaBlob, MessagePiece
from redteam.core import storage
from tests.diskfull import fill_disk, stored_files
from tests.ingest.conftest import post_json
from tests.ingest.test_media import LOCATION, _image_piece, _upload
from tests.samples import PNG_BYTES

pytestmark = pytest.mark.django_db


@pytest.fixture
def full_disk(monkeypatch):
    return fill_disk(monkeypatch)


def _files(settings) -> list:
    return stored_files(settings.MEDIA_ROOT)


def test_media_upload_on_a_full_disk_is_507_and_leaves_nothing(ingest_client, settings, full_disk):
    post_json(ingest_client, [_image_piece()])

    response = _upload(ingest_client, path=LOCATION)

    assert full_disk, "the storage's write was not reached"
    assert response.status_code == 507
    assert response["Content-Type"] == "application/json"
    assert "no storage space left" in response.json()["detail"]
    assert _files(settings) == []
    assert MediaBlob.objects.count() == 0
    assert MessagePiece.objects.get().original_media is None


def test_the_same_upload_succeeds_once_space_is_back(ingest_client, settings, monkeypatch):
    real_write = os.write
    monkeypatch.setattr(
        storage.os, "write", lambda fd, data: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))
    )
    assert _upload(ingest_client).status_code == 507
    monkeypatch.setattr(storage.os, "write", real_write)

    response = _upload(ingest_client)

    assert response.status_code == 201
    blob = MediaBlob.objects.get()
    assert blob.file.read() == PNG_BYTES
    assert [path.name for path in _files(settings)] == [blob.sha256]


def test_other_os_errors_are_not_called_a_full_disk(ingest_client, settings, monkeypatch):
    monkeypatch.setattr(
        storage.os, "write", lambda fd, data: (_ for _ in ()).throw(OSError(errno.EIO, "io"))
    )
    ingest_client.raise_request_exception = False

    response = _upload(ingest_client)

    assert response.status_code == 500
    assert _files(settings) == []
