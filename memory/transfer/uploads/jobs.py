"""Import jobs, worker side: run a queued job to its end (by ``manage.py db_worker``).

The worker unpacks (zips, into a private temporary folder removed afterwards), runs the one
PyRIT database importer (``memory.transfer.importers.service.import_pyrit_db``) and records
progress, the summary or the error on the ``ImportJob``. The uploaded file is deleted once the
job has finished, whatever the outcome: the imported rows and media live in the database and the
media store.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.models import ImportJob, ImportStatus
from memory.transfer.importers import service as importer
from memory.transfer.uploads.filetypes import HEAD_BYTES, UploadRefused, sniff_upload
from memory.transfer.uploads.limits import upload_limits
from memory.transfer.uploads.zipsafe import ZipRefused, extract_zip

logger = logging.getLogger(__name__)

#: Progress is written to the job at most this often (seconds).
PROGRESS_INTERVAL = 0.5


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
        database, media_root, kind = _prepare(job, workdir, progress)
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
        # what was uploaded decides the page's hint for missing media (a zip held them or not)
        _finish(
            job,
            status=ImportStatus.SUCCEEDED,
            progress=progress.latest,
            summary={**summary.as_dict(), "upload_kind": kind},
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return job


def _prepare(job: ImportJob, workdir: Path, progress: _ProgressWriter) -> tuple[Path, Path, str]:
    """The database file to import, the folder to match media in, and what was uploaded
    (``sqlite`` or ``zip``)."""
    upload = _local_copy(job, workdir)
    with upload.open("rb") as handle:
        kind = sniff_upload(handle.read(HEAD_BYTES))
    if kind == "sqlite":
        # A bare database brings no media. Never let the importer look beside the stored
        # upload: that folder holds other people's uploads.
        no_media = workdir / "no-media"
        no_media.mkdir(mode=0o700)
        return upload, no_media, kind
    target = workdir / "dbdata"
    target.mkdir(mode=0o700)
    progress({"phase": "unpacking"}, force=True)
    database, media_root = extract_zip(
        upload,
        target,
        upload_limits().zip,
        lambda done, total: progress({"phase": "unpacking", "done": done, "total": total}),
    )
    return database, media_root, kind


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
