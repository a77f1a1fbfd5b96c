"""Import jobs: create one from an upload (in the request), run it (in the worker).

The request only stores the file and enqueues the task; the worker unpacks (zips, into a
private temporary folder removed afterwards), runs the one PyRIT database importer
(``memory.importers.api.import_pyrit_db``) and records progress, the summary or the error on
the ``ImportJob``. The uploaded file is deleted once the job has finished, whatever the
outcome: the imported rows and media live in the database and the media store.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory.importers import api as importer
from memory.models import ImportJob, ImportStatus
from memory.uploads.filetypes import HEAD_BYTES, UploadRefused, sniff_upload
from memory.uploads.limits import upload_limits
from memory.uploads.zipsafe import ZipRefused, extract_zip

logger = logging.getLogger(__name__)

#: Progress is written to the job at most this often (seconds).
PROGRESS_INTERVAL = 0.5


def import_job_create(
    *, upload: UploadedFile, kind: str, user: Any, dry_run: bool = False
) -> ImportJob:
    """Store ``upload`` (``kind``: ``"sqlite"`` or ``"zip"``) and enqueue its import.

    The stored name is the job id, never the client's file name (kept as ``source_name``
    for display only). The task is enqueued once the job is committed, so a worker never
    sees a job that is not there yet.
    """
    from memory.uploads.tasks import run_import_job

    job = ImportJob(
        source_name=(upload.name or "upload")[:255],
        size=upload.size or 0,
        dry_run=dry_run,
        created_by=user,
        progress={"phase": "queued"},
    )
    job.upload.save(f"{job.id}{'.zip' if kind == 'zip' else '.db'}", upload, save=False)
    job.save()

    def enqueue() -> None:
        result = run_import_job.enqueue(str(job.id))
        ImportJob.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])

    transaction.on_commit(enqueue)
    return job


class _ProgressWriter:
    """The importer's progress callback: keeps the latest report, writes it now and then.

    Writes happen only outside a transaction the importer opened: inside one they would not
    be visible until its commit (and on SQLite would wait for its write lock).
    """

    def __init__(self, job_id: uuid.UUID) -> None:
        self.job_id = job_id
        self.depth = len(connection.atomic_blocks)
        self.written_at = 0.0
        self.latest: dict[str, Any] = {}

    def __call__(self, report: dict[str, Any], *, force: bool = False) -> None:
        self.latest = {
            "phase": str(report.get("phase", "")),
            "done": int(report.get("done") or 0),
            "total": int(report.get("total") or 0),
            "rate": float(report.get("rate") or 0.0),
        }
        now = time.monotonic()
        if not force and now - self.written_at < PROGRESS_INTERVAL:
            return
        if len(connection.atomic_blocks) > self.depth:
            return
        self.written_at = now
        ImportJob.objects.filter(pk=self.job_id).update(
            progress=self.latest, heartbeat_at=timezone.now()
        )


def import_job_run(*, job_id: uuid.UUID) -> ImportJob | None:
    """Run a queued job to its end (succeeded or failed); None if it is not queued.

    Expected failures (not a PyRIT database, an unsafe zip) end the job with their one-line
    message. An unexpected error ends it with a short message, is logged with its
    traceback, and is raised again so the task's result records it too.
    """
    now = timezone.now()
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportStatus.QUEUED).update(
        status=ImportStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        progress={"phase": "starting", "done": 0, "total": 0, "rate": 0.0},
    )
    if not claimed:
        return None
    job = ImportJob.objects.get(pk=job_id)
    progress = _ProgressWriter(job.pk)
    workdir = Path(tempfile.mkdtemp(prefix="redline-import-"))
    try:
        database, media_root = _prepare(job, workdir, progress)
        progress({"phase": "importing"}, force=True)
        summary = importer.import_pyrit_db(
            path=database,
            media_root=media_root,
            dry_run=job.dry_run,
            progress=progress,
            actor=job.created_by,
        )
    except (importer.ImportFailed, ZipRefused, UploadRefused) as exc:
        _finish(job, status=ImportStatus.FAILED, progress=progress.latest, error=str(exc))
    except Exception as exc:
        logger.exception("import job %s failed", job.pk)
        _finish(
            job,
            status=ImportStatus.FAILED,
            progress=progress.latest,
            error=(
                f"The import stopped on an unexpected error ({type(exc).__name__}). "
                "Nothing of the chunk being written was kept; the server log has the details."
            ),
        )
        raise
    else:
        _finish(
            job, status=ImportStatus.SUCCEEDED, progress=progress.latest, summary=summary.as_dict()
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return job


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


def _prepare(job: ImportJob, workdir: Path, progress: _ProgressWriter) -> tuple[Path, Path]:
    """The database file to import and the folder to match media in."""
    upload = _local_copy(job, workdir)
    with upload.open("rb") as handle:
        kind = sniff_upload(handle.read(HEAD_BYTES))
    if kind == "sqlite":
        # A bare database brings no media. Never let the importer look beside the stored
        # upload: that folder holds other people's uploads.
        no_media = workdir / "no-media"
        no_media.mkdir(mode=0o700)
        return upload, no_media
    target = workdir / "dbdata"
    target.mkdir(mode=0o700)
    progress({"phase": "unpacking"}, force=True)
    return extract_zip(
        upload,
        target,
        upload_limits().zip,
        lambda done, total: progress({"phase": "unpacking", "done": done, "total": total}),
    )


def _local_copy(job: ImportJob, workdir: Path) -> Path:
    """A local path of the upload: the stored file itself, or a copy from remote storage."""
    try:
        return Path(job.upload.path)
    except NotImplementedError:
        copy = workdir / f"upload{Path(job.upload.name).suffix}"
        with job.upload.open("rb") as source, copy.open("wb") as target:
            shutil.copyfileobj(source, target, 1024 * 1024)
        return copy


def _finish(
    job: ImportJob,
    *,
    status: str,
    progress: dict[str, Any],
    summary: dict[str, Any] | None = None,
    error: str = "",
) -> None:
    if job.upload:
        job.upload.delete(save=False)
    job.status = status
    job.progress = {**progress, "phase": "done" if status == ImportStatus.SUCCEEDED else "failed"}
    job.summary = summary or {}
    job.error = error
    job.finished_at = timezone.now()
    job.save(update_fields=["upload", "status", "progress", "summary", "error", "finished_at"])
