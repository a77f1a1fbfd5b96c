"""Admin pages of the seeds app beyond add/change: YAML import (upload → preview → commit),
YAML export, template preview, and the intermediate pages of bulk actions.

Every page runs inside ``admin_site.admin_view`` (staff login) and checks the model
permission it needs; every write goes through ``seeds.services`` / ``seeds.importing``.
"""

from __future__ import annotations

import base64
import secrets
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from redteam.core.downloads import as_attachment
from seeds import templating
from seeds.admin_forms import SeedImportForm, TemplatePreviewForm
from seeds.exporting import export_dataset, export_filename, export_seeds
from seeds.importing import STATUSES, import_commit, import_plan
from seeds.models import Seed, SeedDataset

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin
    from django.db.models import QuerySet

#: Session key prefix of uploads waiting for confirmation.
_SESSION_PREFIX = "seed-import:"
YAML_TYPE = "application/yaml; charset=utf-8"


def yaml_download(text: str, filename: str) -> HttpResponse:
    """A YAML file as a download (never rendered by the browser)."""
    return as_attachment(HttpResponse(text, content_type=YAML_TYPE), filename)


# --- export -------------------------------------------------------------------------------------


def dataset_export_view(model_admin: ModelAdmin, request: HttpRequest, object_id: str):
    """``…/seeddataset/<pk>/export/``: the dataset as a PyRIT ``.prompt`` file."""
    dataset = get_object_or_404(SeedDataset, pk=object_id)
    if not model_admin.has_view_permission(request, dataset):
        raise PermissionDenied
    return yaml_download(export_dataset(dataset), export_filename(dataset.name))


def seeds_export_response(queryset: QuerySet[Seed]) -> HttpResponse:
    """The selected seeds as one PyRIT dataset file."""
    names = set(queryset.order_by().values_list("dataset_name", flat=True).distinct()[:2])
    stem = names.pop() if len(names) == 1 and None not in names else "seeds"
    return yaml_download(export_seeds(queryset), export_filename(f"{stem}-selection"))


# --- import -------------------------------------------------------------------------------------


def _context(model_admin: ModelAdmin, request: HttpRequest, **extra: Any) -> dict[str, Any]:
    return {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": "Import PyRIT seed YAML",
        **extra,
    }


def import_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    """Upload (GET form, POST files) → preview → commit (POST ``confirm``) or cancel."""
    if not (request.user.has_perm("seeds.add_seed") and model_admin.has_add_permission(request)):
        raise PermissionDenied
    if request.method == "POST" and "token" in request.POST:
        return _confirm(model_admin, request)
    form = SeedImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        files = [(upload.name, upload.read()) for upload in form.cleaned_data["files"]]
        default_dataset = form.cleaned_data["default_dataset"] or None
        token = secrets.token_urlsafe(16)
        request.session[_SESSION_PREFIX + token] = {
            "files": [(name, base64.b64encode(data).decode("ascii")) for name, data in files],
            "default_dataset": default_dataset,
        }
        plan = import_plan(
            files=files, default_dataset=default_dataset, added_by=request.user.get_username()
        )
        return _preview(model_admin, request, plan, token)
    return TemplateResponse(
        request, "admin/seeds/import_upload.html", _context(model_admin, request, form=form)
    )


def _preview(model_admin: ModelAdmin, request: HttpRequest, plan: Any, token: str):
    request.session[_SESSION_PREFIX + token]["fingerprint"] = plan.fingerprint()
    request.session.modified = True
    return TemplateResponse(
        request,
        "admin/seeds/import_preview.html",
        _context(
            model_admin,
            request,
            title="Import preview",
            plan=plan,
            token=token,
            statuses=STATUSES,
        ),
    )


def _confirm(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    key = _SESSION_PREFIX + request.POST["token"]
    stored = request.session.get(key)
    changelist = reverse("admin:seeds_seeddataset_changelist")
    if stored is None:
        messages.error(request, "This import preview has expired; upload the files again.")
        return HttpResponseRedirect(reverse("admin:seeds_seeddataset_import"))
    if "cancel" in request.POST:
        del request.session[key]
        messages.info(request, "Import cancelled; nothing was written.")
        return HttpResponseRedirect(changelist)
    files = [(name, base64.b64decode(data)) for name, data in stored["files"]]
    user = request.user
    plan = import_plan(
        files=files, default_dataset=stored["default_dataset"], added_by=user.get_username()
    )
    if [list(item) for item in plan.fingerprint()] != [list(i) for i in stored["fingerprint"]]:
        messages.warning(
            request, "The stored seeds changed since the preview: check this new preview."
        )
        return _preview(model_admin, request, plan, request.POST["token"])
    plan, result = import_commit(
        files=files,
        default_dataset=stored["default_dataset"],
        added_by=user.get_username(),
        actor=user,
    )
    del request.session[key]
    messages.success(
        request,
        f"Imported {result.created} new seeds ({result.groups} groups), updated {result.updated}, "
        f"skipped {result.skipped} identical and {result.invalid} invalid.",
    )
    if len(result.datasets) == 1:
        dataset = SeedDataset.objects.filter(name=result.datasets[0]).first()
        if dataset is not None:
            return HttpResponseRedirect(
                reverse("admin:seeds_seeddataset_change", args=[dataset.pk])
            )
    return HttpResponseRedirect(changelist)


# --- template preview ---------------------------------------------------------------------------


def template_preview_view(model_admin: ModelAdmin, request: HttpRequest, object_id: str):
    """``…/seed/<pk>/preview/``: fill in the parameters, see the rendered text (sandboxed)."""
    seed = get_object_or_404(Seed, pk=object_id)
    if not model_admin.has_view_permission(request, seed):
        raise PermissionDenied
    report = templating.analyse(seed.value, seed.parameters)
    declared = list(dict.fromkeys(seed.parameters))
    form = TemplatePreviewForm(
        request.POST or None, declared=declared, undeclared=list(report.undeclared)
    )
    result = None
    if request.method == "POST" and form.is_valid():
        values = {k: v for k, v in form.cleaned_data.items() if v or k in declared}
        result = templating.render(seed.value, parameters=declared, values=values)
    return TemplateResponse(
        request,
        "admin/seeds/template_preview.html",
        _context(
            model_admin,
            request,
            title=f"Template preview: {seed.name or str(seed.pk)[:8]}",
            seed=seed,
            report=report,
            form=form,
            result=result,
            original=seed,
            limits={
                "seconds": templating.TIMEOUT,
                "chars": templating.MAX_OUTPUT,
                "cpu": templating.CPU_SECONDS,
            },
        ),
    )


# --- bulk action pages --------------------------------------------------------------------------


def action_page(
    model_admin: ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    *,
    action: str,
    title: str,
    form: Any,
    button: str,
) -> TemplateResponse:
    """The intermediate page of a bulk action: the form, and the selection it applies to."""
    return TemplateResponse(
        request,
        "admin/seeds/bulk_action.html",
        _context(
            model_admin,
            request,
            title=title,
            action=action,
            form=form,
            button=button,
            queryset=queryset[:50],
            count=queryset.count(),
            selected=request.POST.getlist("_selected_action"),
            select_across=request.POST.get("select_across", "0"),
        ),
    )
