"""The background task behind browser uploads (run by ``manage.py db_worker``)."""

from __future__ import annotations

import uuid

from django.tasks import task

from memory.transfer.uploads.jobs import import_job_run


@task
def run_import_job(job_id: str) -> dict[str, str]:
    """Import the upload of ``ImportJob`` ``job_id``; progress and outcome go on the job."""
    job = import_job_run(job_id=uuid.UUID(job_id))
    return {"job": job_id, "status": job.status if job is not None else "not queued"}
