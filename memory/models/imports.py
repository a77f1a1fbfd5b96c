"""Import jobs: PyRIT memory databases uploaded in the browser and imported in the background."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from redteam.core import nul
from redteam.core.constraints import choice_check


class ImportStatus(models.TextChoices):
    """Where an import job is in its life."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class ImportJob(models.Model):
    """One upload of a PyRIT ``.db`` file or ``dbdata`` zip, imported by a background task.

    ``progress`` holds what the worker last reported (phase, rows done and total, rate) and
    ``summary`` the final report of the import, as the ``import_pyrit`` command prints it.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source_name = nul.CharField(max_length=255)
    upload = models.FileField(upload_to="imports/", max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    dry_run = models.BooleanField(default=False)
    status = nul.CharField(max_length=16, choices=ImportStatus.choices, default=ImportStatus.QUEUED)
    progress = nul.JSONField(default=dict, blank=True)
    summary = nul.JSONField(default=dict, blank=True)
    error = nul.TextField(blank=True, default="")
    task_id = nul.CharField(max_length=64, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="import_jobs",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # When the worker last reported (with each progress write): a running job whose worker
    # was stopped or crashed stops beating and is failed as stalled (``docs/upload.md``).
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            choice_check("status", ImportStatus, "%(app_label)s_%(class)s_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.source_name} ({self.status})"
