"""A full disk while storing a browser upload: a 507 page saying so, no file, no job."""

from __future__ import annotations

import pytest

from memory.models import ImportJob
from tests.diskfull import fill_disk, stored_files
from tests.uploads.conftest import FIXTURE_110, dbdata_zip, upload

pytestmark = pytest.mark.django_db

LIST = "/imports/"


@pytest.fixture
def full_disk(monkeypatch):
    return fill_disk(monkeypatch)


@pytest.mark.parametrize(
    ("name", "data"),
    [("pyrit.db", (FIXTURE_110 / "memory.db").read_bytes()), ("d.zip", dbdata_zip(FIXTURE_110))],
)
def test_browser_upload_on_a_full_disk_is_507_and_leaves_nothing(
    ingest_client, settings, full_disk, name, data
):
    response = ingest_client.post(LIST, {"file": upload(name, data)})

    assert full_disk
    assert response.status_code == 507
    assert b"no storage space left" in response.content
    assert stored_files(settings.MEDIA_ROOT) == []
    assert ImportJob.objects.count() == 0
