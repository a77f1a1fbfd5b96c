"""Upload pages: the form and the list of jobs, one job's progress and summary.

For users who may add import jobs (the ``ingest`` group, superusers); everyone else gets 403.
htmx polls the ``status`` partial of a running job (and the ``jobs`` partial of the list while
one is running); without JavaScript the pages still work, reloaded by hand.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from memory.models import ImportJob, ImportStatus
from memory.transfer.uploads.forms import ImportUploadForm
from memory.transfer.uploads.limits import upload_limits
from memory.transfer.uploads.services import import_job_create, import_jobs_fail_stalled
from pyrit_memory_reader.source import KNOWN_VERSIONS
from redteam.core.htmx import wants_fragment
from redteam.core.storage import is_out_of_space

JOBS_PER_PAGE = 20
ACTIVE = (ImportStatus.QUEUED, ImportStatus.RUNNING)
OUT_OF_SPACE = (
    "The server has no storage space left for this upload; nothing was stored. "
    "Try again later or ask the operator to free space."
)


def _require_importer(request: HttpRequest) -> None:
    # The permission, not ``is_staff``: every member of a shipped group is staff (to read
    # memory in the admin), viewers included. Superusers have every permission.
    if not request.user.has_perm("memory.add_importjob"):
        raise PermissionDenied("Importing needs the permission to add import jobs (ingest group).")


@login_required
@require_http_methods(["GET", "POST"])
def import_list(request: HttpRequest) -> HttpResponse:
    """Upload form and the jobs, newest first."""
    _require_importer(request)
    import_jobs_fail_stalled()
    form = ImportUploadForm()
    status = 200
    if request.method == "POST":
        form = ImportUploadForm(request.POST, request.FILES)
        if form.is_valid():
            try:
                job = import_job_create(
                    upload=form.cleaned_data["file"],
                    kind=form.kind or "sqlite",
                    user=request.user,
                    dry_run=form.cleaned_data["dry_run"],
                )
            except OSError as exc:
                if not is_out_of_space(exc):
                    raise
                # The storage removed the partial file and no job was saved: say so, keep the form.
                form.add_error(None, OUT_OF_SPACE)
                status = 507
            else:
                return redirect("import-detail", job_id=job.pk)
        else:
            status = 400
    jobs = Paginator(
        ImportJob.objects.select_related("created_by").order_by("-created_at", "-id"),
        JOBS_PER_PAGE,
    ).get_page(request.GET.get("page"))
    context: dict[str, Any] = {
        "form": form,
        "jobs": jobs,
        "any_active": any(job.status in ACTIVE for job in jobs),
        "limits": upload_limits(),
        "known_versions": KNOWN_VERSIONS,
    }
    if wants_fragment(request) and request.method == "GET":
        return render(request, "uploads/import_list.html#jobs", context)
    return render(request, "uploads/import_list.html", context, status=status)


def _n(value: Any) -> str:
    """A count with thousands separators (the humanize app is not installed)."""
    try:
        return f"{round(float(value or 0)):,}"
    except (TypeError, ValueError):
        return str(value)


def _job_context(job: ImportJob) -> dict[str, Any]:
    """The summary as the ``import_pyrit`` command prints it, in table rows."""
    summary = job.summary or {}
    progress = job.progress or {}
    rows_read = summary.get("rows_read") or {}
    columns = ("created", "updated", "unchanged", "refused")
    counts = {column: summary.get(column) or {} for column in columns}
    kinds = sorted({kind for column in columns for kind in counts[column]})
    seconds = float(summary.get("seconds") or 0)
    rows_total = sum(int(n or 0) for n in rows_read.values())
    refused = sum(int(n or 0) for n in counts["refused"].values())
    return {
        "job": job,
        "active": job.status in ACTIVE,
        "rows_read": [(table, _n(n)) for table, n in sorted(rows_read.items())],
        "rows_total": _n(rows_total),
        "written": [
            (kind, *(_n(counts[column].get(kind)) for column in columns)) for kind in kinds
        ],
        "refused": _n(refused) if refused else "",
        "media_unused": _n(len(summary.get("media_unused") or [])),
        "import_rate": _n(rows_total / seconds) if seconds else "",
        "done": _n(progress.get("done")),
        "total": _n(progress.get("total")) if progress.get("total") else "",
        "rate": _n(progress.get("rate")) if progress.get("rate") else "",
        "percent": _percent(progress),
    }


def _percent(progress: dict[str, Any]) -> int | None:
    total, done = progress.get("total") or 0, progress.get("done") or 0
    if not total:
        return None
    return max(0, min(100, int(100 * done / total)))


@login_required
@require_GET
def import_detail(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """One job: its progress while it runs, then the summary (or the error)."""
    _require_importer(request)
    import_jobs_fail_stalled()
    job = get_object_or_404(ImportJob.objects.select_related("created_by"), pk=job_id)
    return render(request, "uploads/import_detail.html", _job_context(job))


@login_required
@require_GET
def import_status(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """The ``status`` partial of a job, polled by htmx while the job runs."""
    _require_importer(request)
    import_jobs_fail_stalled()
    job = get_object_or_404(ImportJob.objects.select_related("created_by"), pk=job_id)
    return render(request, "uploads/import_detail.html#status", _job_context(job))
