"""Import jobs, request side: store an upload and enqueue its import; fail stalled jobs.

The worker side (``memory.transfer.uploads.jobs``) unpacks the upload, runs the one PyRIT
database importer and records progress, the summary or the error on the ``ImportJob``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.models import ImportJob, ImportStatus
from memory.transfer.uploads.tasks import run_import_job

logger = logging.getLogger(__name__)


def import_job_create(
    *, upload: UploadedFile, kind: str, user: Any, dry_run: bool = False
) -> ImportJob:
    """Store ``upload`` (``kind``: ``"sqlite"`` or ``"zip"``) and enqueue its import.

    The stored name is the job id, never the client's file name (kept as ``source_name``
    for display only). The task is enqueued once the job is committed, so a worker never
    sees a job that is not there yet.
    """
    job = ImportJob(
        source_name=(upload.name or "upload")[:255],
        size=upload.size or 0,
        dry_run=dry_run,
        created_by=user,
        progress={"phase": "queued"},
    )
    job.upload.save(f"{job.id}{'.zip' if kind == 'zip' else '.db'}", upload, save=False)
    job.save()

    _enqueue(job)
    return job


def _enqueue(job: ImportJob) -> None:
    """Enqueue ``job``'s task once the current transaction commits (a worker must never see a
    job that is not there yet) and record the task's id on the job."""

    def enqueue() -> None:
        result = run_import_job.enqueue(str(job.id))
        ImportJob.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])

    transaction.on_commit(enqueue)


STALLED_ERROR = (
    "The worker stopped reporting progress (it was stopped or crashed) and the import was "
    "given up. Chunks written before that are kept; upload the file again to import the "
    "rest: rows already imported are left unchanged."
)


def import_jobs_fail_stalled(*, now: datetime | None = None) -> int:
    """Fail running jobs whose worker has not reported for
    ``REDLINE_IMPORT_STALLED_AFTER_SECONDS``; returns how many. Their uploads are deleted like
    those of any finished job. A worker reports at least after every chunk it writes, so a
    live import never goes that long without a heartbeat."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.REDLINE_IMPORT_STALLED_AFTER_SECONDS)
    stalled = ImportJob.objects.filter(status=ImportStatus.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    failed = 0
    for job in stalled:
        # Re-checked in the UPDATE: the worker may have finished the job meanwhile.
        if ImportJob.objects.filter(pk=job.pk, status=ImportStatus.RUNNING).update(
            status=ImportStatus.FAILED,
            progress={**(job.progress or {}), "phase": "failed"},
            error=STALLED_ERROR,
            finished_at=now,
        ):
            failed += 1
            logger.warning("import job %s stalled (last heartbeat %s)", job.pk, job.heartbeat_at)
            if job.upload:
                job.upload.delete(save=False)
                ImportJob.objects.filter(pk=job.pk).update(upload="")
    return failed


class WorkerStopped(RuntimeError):
    """The worker running a task stopped before the task ended (killed, crashed, restarted)."""


def import_jobs_resume(*, now: datetime | None = None) -> list[ImportJob]:
    """Queue again the jobs a stopped worker left running; returns them.

    A job counts as left behind when its heartbeat is older than
    ``REDLINE_IMPORT_ORPHANED_AFTER_SECONDS`` (a live worker reports at least after every
    chunk, a few seconds apart). The import is run again from the start: rows committed before
    the stop are found unchanged and the rest is written, so it ends exactly as an
    uninterrupted run. The stopped worker's task record is marked failed. A job whose upload
    is gone is failed instead. Called by ``manage.py import_worker`` when a worker starts.
    """
    from django_tasks_db.models import DBTaskResult

    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.REDLINE_IMPORT_ORPHANED_AFTER_SECONDS)
    left = ImportJob.objects.filter(status=ImportStatus.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    resumed = []
    for job in left:
        if not job.upload:
            ImportJob.objects.filter(pk=job.pk, status=ImportStatus.RUNNING).update(
                status=ImportStatus.FAILED,
                error="The worker stopped during the import and the upload is gone; upload "
                "the file again.",
                finished_at=now,
            )
            continue
        # Re-checked in the UPDATE: another worker may have resumed it meanwhile.
        claimed = ImportJob.objects.filter(
            pk=job.pk, status=ImportStatus.RUNNING, heartbeat_at=job.heartbeat_at
        ).update(
            status=ImportStatus.QUEUED,
            started_at=None,
            heartbeat_at=None,
            progress={"phase": "queued", "resumed": True},
        )
        if not claimed:
            continue
        stopped = WorkerStopped(f"the worker stopped while importing job {job.pk}; re-queued")
        for task in DBTaskResult.objects.filter(pk=job.task_id or None).running():
            task.set_failed(stopped)
        logger.warning("import job %s resumed (last heartbeat %s)", job.pk, job.heartbeat_at)
        _enqueue(job)
        resumed.append(job)
    return resumed
