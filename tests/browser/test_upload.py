"""Browser upload, end to end: a member of ``ingest`` uploads PyRIT's dbdata as a zip, the
worker imports it with the real importer, the page follows along and shows the summary."""

from __future__ import annotations

import re
import zipfile

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from memory.models import AttackResult, ImportJob, ImportStatus, MessagePiece
from tests.conftest import FIXTURES_DIR

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURE_110 = FIXTURES_DIR / "pyrit-1.1.0-small"


def _dbdata_zip(path):
    """PyRIT's layout: dbdata/pyrit.db beside dbdata/prompt-memory-entries/… and seeds."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(FIXTURE_110 / "memory.db", "dbdata/pyrit.db")
        for file in sorted((FIXTURE_110 / "dbdata").rglob("*")):
            if file.is_file():
                archive.write(file, f"dbdata/{file.relative_to(FIXTURE_110 / 'dbdata')}")
    return path


def test_ingest_member_uploads_a_dbdata_zip_and_sees_the_summary(
    login_page, live_server, ingester, shot, tmp_path
):
    page = login_page(ingester)
    page.goto(f"{live_server.url}/imports/")
    assert page.locator("h1").inner_text() == "Imports"
    shot(page, "upload-empty")

    page.set_input_files("#id_file", str(_dbdata_zip(tmp_path / "dbdata.zip")))
    page.click(".upload-form button[type=submit]")
    page.wait_for_url(re.compile(r"/imports/[0-9a-f-]{36}/$"))
    assert page.locator(".badge-job-queued").inner_text() == "Queued"
    assert "db_worker" in page.locator(".status-line").inner_text()
    shot(page, "upload-queued")

    # The worker: exactly what `manage.py db_worker` runs, once, in this process.
    assert DBTaskResult.objects.count() == 1
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)

    # The page polls its status partial and swaps in the summary by itself.
    page.wait_for_selector(".badge-job-succeeded", timeout=20_000)
    status = page.locator("#job-status").inner_text()
    assert "Imported in" in status
    assert "PromptMemoryEntries" in status
    rows = page.locator(".summary-table").nth(0).inner_text()
    assert re.search(r"PromptMemoryEntries\s+162", rows)
    written = page.locator(".summary-table").nth(1).inner_text()
    assert re.search(r"message_pieces\s+162", written)
    assert page.locator(".media-stats dd").nth(1).inner_text() == "0"  # no media missing
    shot(page, "upload-summary")

    job = ImportJob.objects.get()
    assert job.status == ImportStatus.SUCCEEDED
    assert MessagePiece.objects.count() == 162
    assert AttackResult.objects.count() == 24
    assert not MessagePiece.objects.filter(
        original_value_data_type="image_path", original_media__isnull=True
    ).exists()

    page.goto(f"{live_server.url}/imports/")
    row = page.locator(".jobs-table tbody tr").first
    assert "dbdata.zip" in row.inner_text()
    assert row.locator(".badge-job-succeeded").count() == 1
    shot(page, "upload-list")


def test_a_wrong_file_is_refused_in_place(login_page, live_server, ingester, shot, tmp_path):
    not_a_db = tmp_path / "pyrit.db"
    not_a_db.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    page = login_page(ingester)
    page.goto(f"{live_server.url}/imports/")

    page.set_input_files("#id_file", str(not_a_db))
    page.click(".upload-form button[type=submit]")

    error = page.locator("#file-error")
    error.wait_for()
    assert "This is a PNG image, not a PyRIT database" in error.inner_text()
    assert page.url == f"{live_server.url}/imports/"
    assert not ImportJob.objects.exists()
    shot(page, "upload-wrong-file")


def test_a_running_import_shows_its_progress(login_page, live_server, ingester, shot):
    job = ImportJob.objects.create(
        source_name="pyrit.db",
        size=48_000_000,
        created_by=ingester,
        status=ImportStatus.RUNNING,
        progress={"phase": "message pieces", "done": 61_250, "total": 160_000, "rate": 24_310.4},
    )
    page = login_page(ingester, width=390, height=844)
    page.goto(f"{live_server.url}/imports/{job.pk}/")

    assert "61,250 of 160,000 rows" in page.locator(".status-line").inner_text()
    assert "24,310 rows/s" in page.locator(".status-line").inner_text()
    assert page.locator("progress.job-progress-bar").get_attribute("value") == "38"
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    shot(page, "upload-running-390")

    # It finishes (a worker elsewhere); the next poll shows the summary without a reload.
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportStatus.FAILED, error="not a PyRIT memory database: no PromptMemoryEntries"
    )
    page.wait_for_selector(".badge-job-failed", timeout=10_000)
    assert "no PromptMemoryEntries" in page.locator(".job-error").inner_text()


def test_a_viewer_is_refused(login_page, live_server, viewer):
    page = login_page(viewer)
    response = page.goto(f"{live_server.url}/imports/")
    assert response.status == 403
