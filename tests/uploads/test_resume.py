"""A worker killed mid-import: the next worker to start queues the job again and the import
ends exactly as an uninterrupted one; a job another live worker is running is left alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from memory.models import AttackResult, ImportJob, ImportStatus, MessagePiece
from memory.storage import write
from memory.transfer.importers import direct
from memory.transfer.importers.runner import WRITE_PATHS
from memory.transfer.importers.service import import_pyrit_db
from memory.transfer.uploads.services import import_job_create
from tests.importers.conftest import fail_a_chunk_of_pieces
from tests.uploads.conftest import FIXTURE_110, dbdata_zip, upload

pytestmark = pytest.mark.django_db(transaction=True)


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs."""


def _job_left_by_a_killed_worker(
    user, monkeypatch, *, beat_minutes_ago: float, write_path: str = "direct"
):
    """A job whose task a worker claimed, that committed one chunk of pieces and died in the
    second."""
    job = import_job_create(
        upload=upload("dbdata.zip", dbdata_zip(FIXTURE_110)), kind="zip", user=user
    )
    job.refresh_from_db()
    task = DBTaskResult.objects.get(pk=job.task_id)
    task.claim("dead-worker")
    real, real_direct = write.insert_rows, direct.insert_columns
    fail_a_chunk_of_pieces(monkeypatch, Killed(), number=2)
    with pytest.raises(Killed):
        import_pyrit_db(path=FIXTURE_110 / "memory.db", chunk_rows=40, write_path=write_path)
    monkeypatch.setattr(write, "insert_rows", real)
    monkeypatch.setattr(direct, "insert_columns", real_direct)
    beat = timezone.now() - timedelta(minutes=beat_minutes_ago)
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportStatus.RUNNING, started_at=beat, heartbeat_at=beat
    )
    return job, task


@pytest.mark.parametrize("write_path", WRITE_PATHS)
def test_a_starting_worker_resumes_a_killed_import_and_it_ends_exact(
    ingester, monkeypatch, write_path
):
    job, task = _job_left_by_a_killed_worker(
        ingester, monkeypatch, beat_minutes_ago=10, write_path=write_path
    )
    assert MessagePiece.objects.count() == 40  # the first chunk; the second died with it

    call_command("import_worker", "--", "--batch", "--no-startup-delay")

    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED, job.error
    assert MessagePiece.objects.count() == 162
    assert AttackResult.objects.count() == 24
    assert job.summary["unchanged"]["message_pieces"] == 40
    assert job.summary["created"]["message_pieces"] == 122
    task.refresh_from_db()
    assert task.status == "FAILED" and "stopped" in task.traceback
    assert DBTaskResult.objects.get(pk=job.task_id).status == "SUCCESSFUL"


def test_a_job_with_a_live_heartbeat_is_left_to_its_worker(ingester, monkeypatch, settings):
    settings.REDLINE_IMPORT_ORPHANED_AFTER_SECONDS = 120
    job, task = _job_left_by_a_killed_worker(ingester, monkeypatch, beat_minutes_ago=0.5)

    call_command("import_worker", "--", "--batch", "--no-startup-delay")

    job.refresh_from_db()
    assert job.status == ImportStatus.RUNNING
    task.refresh_from_db()
    assert task.status == "RUNNING"
    assert MessagePiece.objects.count() == 40  # the first chunk; the second died with it
