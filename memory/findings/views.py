"""Pages of operations, findings and reports.

Views stay thin: forms parse, the services (``services.py``) validate and write, the selectors
read. Writing needs ``memory.add_finding`` (reviewers); reading ``memory.view_finding``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Prefetch
from django.db.models.fields.json import KT
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from memory.findings import issues, lifecycle, reports
from memory.findings.filtersets import FindingFilter
from memory.findings.forms import (
    FINDING_PERMISSION,
    OPERATION_PERMISSION,
    REPORT_PERMISSION,
    CommentForm,
    EvidenceForm,
    FindingForm,
    OperationForm,
    ReportForm,
    StatusForm,
)
from memory.findings.selectors import (
    finding_queryset,
    findings_by,
    operation_attacks,
    operation_params,
    params_query,
    retest_suggestions,
    seal_checks,
    tag_suggestions,
)
from memory.findings.services import (
    EvidenceSpec,
    evidence_attach,
    finding_comment_add,
    finding_create,
    finding_status_set,
    finding_tags_add,
    finding_update,
    operation_save,
    report_create,
    retest_record,
)
from memory.models import (
    AttackResult,
    Evidence,
    EvidenceKind,
    Finding,
    FindingStatus,
    Operation,
    Report,
    Retest,
    Severity,
)
from memory.storage import aggregates as ag
from memory.storage.crosswalk import crosswalk_current, crosswalk_version
from redteam.core.downloads import as_attachment
from redteam.core.errors import InvalidMemory

VIEW_FINDINGS = "memory.view_finding"
VIEW_OPERATIONS = "memory.view_operation"
VIEW_REPORTS = "memory.view_report"
CHANGE_FINDING_PERMISSION = "memory.change_finding"


def _need(request: HttpRequest, permission: str) -> None:
    if not request.user.has_perm(permission):
        raise PermissionDenied("This needs the reviewer role.")


def _show_problems(form: Any, error: InvalidMemory) -> None:
    for problem in error.problems:
        field = problem.path.split(".", 1)[0].split("[", 1)[0]
        form.add_error(field if field in form.fields else None, problem.message)


def _evidence_specs(values: list[str]) -> list[EvidenceSpec]:
    """``kind:ref`` strings (``attack:<uuid>``) as evidence specs."""
    specs = []
    for value in values:
        kind, _, ref = value.partition(":")
        if kind and ref:
            specs.append(EvidenceSpec(kind=kind, ref=ref))
    return specs


# --- operations ----------------------------------------------------------------------------------


@login_required
@permission_required(VIEW_OPERATIONS, raise_exception=True)
def operation_list(request: HttpRequest) -> HttpResponse:
    operations = Operation.objects.annotate(finding_count=Count("findings")).order_by("-created_at")
    return render(
        request,
        "findings/operation_list.html",
        {"operations": operations, "can_add": request.user.has_perm(OPERATION_PERMISSION)},
    )


def _operation_initial(operation: Operation) -> dict[str, Any]:
    return {
        "name": operation.name,
        "description": operation.description,
        "scope": operation.scope,
        "target_systems": "\n".join(operation.target_systems),
        "starts_on": operation.starts_on,
        "ends_on": operation.ends_on,
        "members": list(operation.members.all()),
        "pyrit_operation": operation.pyrit_operation,
        "attack_filter": operation.attack_filter,
    }


@login_required
def operation_edit(request: HttpRequest, operation_id: Any = None) -> HttpResponse:
    """Create an operation (no id) or change one."""
    _need(request, OPERATION_PERMISSION if operation_id is None else "memory.change_operation")
    operation = get_object_or_404(Operation, pk=operation_id) if operation_id else None
    initial = _operation_initial(operation) if operation else {}
    form = OperationForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            saved = operation_save(actor=request.user, operation=operation, **form.cleaned_data)
        except InvalidMemory as error:
            _show_problems(form, error)
        else:
            return redirect(saved)
    return render(request, "findings/operation_form.html", {"form": form, "operation": operation})


@login_required
@permission_required(VIEW_OPERATIONS, raise_exception=True)
def operation_detail(request: HttpRequest, operation_id: Any) -> HttpResponse:
    """An operation: its rule, its attacks, success rates (the dashboards scoped to it),
    findings and reports."""
    operation = get_object_or_404(Operation.objects.prefetch_related("members"), pk=operation_id)
    params = operation_params(operation)
    attacks = operation_attacks(operation)
    scope = ag.Scope(attacks, ag.Source.AUTOMATED, params)
    query = params_query(params)
    context: dict[str, Any] = {
        "operation": operation,
        "query": query,
        "has_rule": bool(params),
        "findings": finding_queryset().filter(operation=operation),
        "reports": operation.reports.order_by("-created_at")[:20],
        "can_edit": request.user.has_perm("memory.change_operation"),
        "can_report": request.user.has_perm(REPORT_PERMISSION),
        "can_add_finding": request.user.has_perm(FINDING_PERMISSION),
        "source_label": ag.SOURCE_LABELS[scope.source],
    }
    if params:
        context.update(
            total=ag.outcome_totals(scope),
            by_harm=ag.breakdown(scope, "harm_category").groups,
            by_technique=ag.breakdown(scope, "attack_class").groups,
            recent=attacks.with_identifiers().order_by("-timestamp")[:10],
        )
    return render(request, "findings/operation_detail.html", context)


# --- findings ------------------------------------------------------------------------------------


@login_required
@permission_required(VIEW_FINDINGS, raise_exception=True)
def finding_list(request: HttpRequest) -> HttpResponse:
    query = request.GET.copy()
    for name in ("status", "severity"):
        query.setlist(name, [v for v in query.getlist(name) if v])
    filterset = FindingFilter(query, queryset=finding_queryset())
    findings = filterset.qs if filterset.is_valid() else finding_queryset().none()
    by_status = findings_by(Finding.objects.all(), "status")
    return render(
        request,
        "findings/finding_list.html",
        {
            "findings": findings[:200],
            "status_options": [
                (v, label, by_status.get(v, 0)) for v, label in FindingStatus.choices
            ],
            "severities": Severity.choices,
            "selected_status": query.getlist("status"),
            "selected_severity": query.getlist("severity"),
            "can_add": request.user.has_perm(FINDING_PERMISSION),
        },
    )


def _evidence_preview(specs: list[EvidenceSpec]) -> list[dict[str, Any]]:
    attacks = {
        str(a.pk): a
        for a in AttackResult.objects.filter(
            pk__in=[s.ref for s in specs if s.kind == EvidenceKind.ATTACK]
        )
    }
    return [{"spec": s, "attack": attacks.get(s.ref)} for s in specs]


@login_required
def finding_create_view(request: HttpRequest) -> HttpResponse:
    """New finding, with evidence named in the address (``?evidence=attack:<id>``, from the
    attack page) or posted as ``attack`` ids (a selection in the attack list)."""
    _need(request, FINDING_PERMISSION)
    source = request.POST if request.method == "POST" else request.GET
    specs = _evidence_specs(source.getlist("evidence"))
    specs += [EvidenceSpec(EvidenceKind.ATTACK, ref) for ref in source.getlist("attack")]
    initial: dict[str, Any] = {}
    if "operation" in request.GET:
        initial["operation"] = request.GET["operation"]
    attacks = [
        a
        for a in AttackResult.objects.filter(
            pk__in=[s.ref for s in specs if s.kind == EvidenceKind.ATTACK]
        )
    ]
    if attacks:
        harms = sorted({h for a in attacks for h in a.targeted_harm_categories})
        initial.setdefault("harm_categories", ", ".join(harms))
        operations = {a.operation or a.labels.get("operation") for a in attacks} - {None}
        if len(operations) == 1:
            match = Operation.objects.filter(pyrit_operation=operations.pop()).first()
            if match:
                initial.setdefault("operation", match.pk)
    bound = request.method == "POST" and "title" in request.POST
    form = FindingForm(request.POST if bound else None, initial=initial)
    if bound and form.is_valid():
        try:
            finding = finding_create(actor=request.user, evidence=specs, **form.cleaned_data)
        except InvalidMemory as error:
            _show_problems(form, error)
            for problem in error.problems:
                if problem.path.startswith("evidence"):
                    form.add_error(None, f"{problem.path}: {problem.message}")
        else:
            messages.success(request, "Finding created; its evidence is sealed.")
            return redirect(finding)
    return render(
        request,
        "findings/finding_form.html",
        {"form": form, "evidence": _evidence_preview(specs), "finding": None},
    )


@login_required
def finding_edit(request: HttpRequest, finding_id: Any) -> HttpResponse:
    _need(request, CHANGE_FINDING_PERMISSION)
    finding = get_object_or_404(Finding, pk=finding_id)
    initial = {
        "title": finding.title,
        "severity": finding.severity,
        "operation": finding.operation_id,
        "owner": finding.owner_id,
        "description": finding.description,
        "harm_categories": ", ".join(finding.harm_categories),
        "framework_tags": ", ".join(finding.framework_tags),
        "reproduction_steps": finding.reproduction_steps,
        "remediation": finding.remediation,
    }
    added = request.POST.get("add_tag", "").strip() if request.method == "POST" else ""
    if added:
        # "Add" beside a suggested tag: the form comes back with the tag appended and every
        # other field as typed, nothing saved yet.
        initial = {name: request.POST.get(name, "") for name in FindingForm.base_fields}
        tags = [t.strip() for t in initial["framework_tags"].split(",") if t.strip()]
        initial["framework_tags"] = ", ".join([*tags, added] if added not in tags else tags)
        form = FindingForm(initial=initial)
    else:
        form = FindingForm(request.POST or None, initial=initial)
    if request.method == "POST" and not added and form.is_valid():
        try:
            finding_update(finding=finding, actor=request.user, **form.cleaned_data)
        except InvalidMemory as error:
            _show_problems(form, error)
        else:
            return redirect(finding)
    typed = [t.strip() for t in str(form["framework_tags"].value() or "").split(",")]
    suggested = [s for s in tag_suggestions([finding])[finding.pk] if s.tag not in typed]
    return render(
        request,
        "findings/finding_form.html",
        {"form": form, "finding": finding, "evidence": [], "tag_suggestions": suggested},
    )


@login_required
@require_POST
def finding_tag_add(request: HttpRequest, finding_id: Any) -> HttpResponse:
    """Add one framework tag (a suggestion's "Add" button on the finding page)."""
    _need(request, CHANGE_FINDING_PERMISSION)
    finding = get_object_or_404(Finding, pk=finding_id)
    tag = request.POST.get("tag", "")
    if tag not in finding.framework_tags:
        try:
            finding_tags_add(finding=finding, actor=request.user, tags=[tag])
        except InvalidMemory as error:
            messages.error(request, f"Not added: {error}")
        else:
            messages.success(request, f"Tag {tag} added.")
    return redirect(finding)


def _readable(field: str, value: Any) -> str:
    """A history value as people read it: status and severity labels, lists joined."""
    if value is None or value == "":
        return ""
    if field == "status":
        return lifecycle.label(value)
    if field == "severity":
        return str(dict(Severity.choices).get(value, value))
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def _history(finding: Finding) -> list[dict[str, Any]]:
    """The finding's history, newest first: who, when, what changed (one query)."""
    records = list(finding.history.select_related("history_user").order_by("history_date"))
    rows = []
    previous = None
    for record in records:
        changes = []
        if previous is not None:
            delta = record.diff_against(previous)
            changes = [
                {
                    "field": Finding._meta.get_field(c.field).verbose_name,
                    "old": _readable(c.field, c.old),
                    "new": _readable(c.field, c.new),
                }
                for c in delta.changes
                if c.field != "updated_at"
            ]
        rows.append(
            {
                "when": record.history_date,
                "who": record.history_user.get_username() if record.history_user else "—",
                "type": {"+": "created", "~": "changed", "-": "deleted"}[record.history_type],
                "changes": changes,
                "reason": record.history_change_reason,
            }
        )
        previous = record
    return list(reversed(rows))


def _retest_options(finding: Finding, attacks: list[AttackResult]) -> list[dict[str, Any]]:
    """Each suggested attack with the status recording it would set, and whether that move
    skips the lifecycle (then the form asks to confirm the jump)."""
    options = []
    for attack in attacks:
        after = lifecycle.after_retest(attack.human_outcome or attack.outcome)
        options.append(
            {
                "attack": attack,
                "after": lifecycle.label(after) if after else None,
                "jump": after is not None and lifecycle.needs_confirmation(finding.status, after),
                "move": lifecycle.move_text(finding.status, after) if after else "",
            }
        )
    return options


@login_required
@permission_required(VIEW_FINDINGS, raise_exception=True)
def finding_detail(request: HttpRequest, finding_id: Any) -> HttpResponse:
    """A finding: fields, sealed evidence and whether it still matches, lifecycle, retest
    suggestions, comments and history."""
    finding = get_object_or_404(
        # Comments and retests are shown whole: one query each.
        Finding.objects.select_related("operation", "owner", "created_by").prefetch_related(
            "comments", Prefetch("retests", queryset=Retest.objects.select_related("attack_result"))
        ),
        pk=finding_id,
    )
    evidence = list(
        Evidence.objects.filter(finding=finding).select_related(
            "attack_result", "conversation", "attached_by"
        )
    )
    can_write = request.user.has_perm(FINDING_PERMISSION)
    walk = crosswalk_current()
    context = {
        "finding": finding,
        # Each tag with its crosswalk entry (None: a free tag the crosswalk does not know).
        "framework_tags": [(tag, walk.entries.get(tag)) for tag in finding.framework_tags],
        "tag_suggestions": tag_suggestions([finding], walk=walk)[finding.pk],
        "crosswalk_version": crosswalk_version(),
        "checks": seal_checks(evidence),
        "status_form": StatusForm(current=finding.status),
        "next_statuses": lifecycle.next_statuses(finding.status),
        "comment_form": CommentForm(),
        # Its own ids: the status form has a "note" too.
        "evidence_form": EvidenceForm(auto_id="evidence_%s"),
        "history": _history(finding),
        "suggestions": _retest_options(finding, list(retest_suggestions(finding)))
        if can_write
        else [],
        "retestable": finding.status in lifecycle.RETESTABLE,
        "can_write": can_write,
        "can_edit": request.user.has_perm(CHANGE_FINDING_PERMISSION),
    }
    return render(request, "findings/finding_detail.html", context)


@login_required
@require_POST
def finding_status(request: HttpRequest, finding_id: Any) -> HttpResponse:
    _need(request, CHANGE_FINDING_PERMISSION)
    finding = get_object_or_404(Finding, pk=finding_id)
    form = StatusForm(request.POST, current=finding.status)
    if form.is_valid():
        try:
            finding_status_set(
                finding=finding,
                status=form.cleaned_data["status"],
                note=form.cleaned_data["note"],
                actor=request.user,
            )
            messages.success(request, f"Status: {lifecycle.label(form.cleaned_data['status'])}.")
        except InvalidMemory as error:
            messages.error(request, str(error))
    else:
        messages.error(request, "Choose a status this finding can move to.")
    return redirect(finding)


@login_required
@require_POST
def finding_comment(request: HttpRequest, finding_id: Any) -> HttpResponse:
    _need(request, FINDING_PERMISSION)
    finding = get_object_or_404(Finding, pk=finding_id)
    form = CommentForm(request.POST)
    if form.is_valid():
        finding_comment_add(finding=finding, author=request.user, body=form.cleaned_data["body"])
    else:
        messages.error(request, "Write a comment first.")
    return redirect(f"{finding.get_absolute_url()}#comments")


@login_required
@require_POST
def finding_evidence(request: HttpRequest, finding_id: Any) -> HttpResponse:
    """Attach evidence: ``kind`` + ``ref`` (the form) or ``evidence=kind:ref`` values."""
    _need(request, FINDING_PERMISSION)
    finding = get_object_or_404(Finding, pk=finding_id)
    specs = _evidence_specs(request.POST.getlist("evidence"))
    if request.POST.get("kind") and request.POST.get("ref"):
        specs.append(
            EvidenceSpec(
                request.POST["kind"], request.POST["ref"].strip(), request.POST.get("note", "")
            )
        )
    try:
        created = evidence_attach(finding=finding, evidence=specs, actor=request.user)
        messages.success(request, f"{len(created)} piece(s) of evidence attached and sealed.")
    except InvalidMemory as error:
        messages.error(request, str(error))
    return redirect(f"{finding.get_absolute_url()}#evidence")


@login_required
def finding_pick(request: HttpRequest) -> HttpResponse:
    """ "Add to finding" from an attack page: choose the finding the evidence goes to."""
    _need(request, FINDING_PERMISSION)
    specs = _evidence_specs(request.GET.getlist("evidence"))
    if not specs:
        raise Http404("Name the evidence to add (evidence=attack:<id>).")
    open_findings = (
        Finding.objects.exclude(status__in=lifecycle.CLOSED)
        .select_related("operation")
        .order_by("-updated_at")[:100]
    )
    return render(
        request,
        "findings/finding_pick.html",
        {"evidence": _evidence_preview(specs), "findings": open_findings},
    )


@login_required
@require_POST
def finding_retest(request: HttpRequest, finding_id: Any) -> HttpResponse:
    _need(request, FINDING_PERMISSION)
    finding = get_object_or_404(Finding, pk=finding_id)
    attack = get_object_or_404(
        AttackResult.objects.select_related(
            "conversation__target_identifier", "attack_identifier", "atomic_attack_identifier"
        ),
        pk=request.POST.get("attack_result_id"),
    )
    try:
        retest = retest_record(
            finding=finding,
            attack=attack,
            actor=request.user,
            confirm_jump=request.POST.get("confirm_jump") == "1",
        )
        messages.success(
            request,
            f"Retest {retest.get_result_display().lower()}: "
            f"status is now {lifecycle.label(finding.status)}.",
        )
    except InvalidMemory as error:
        messages.error(request, str(error))
    return redirect(f"{finding.get_absolute_url()}#retests")


@login_required
@permission_required(VIEW_FINDINGS, raise_exception=True)
def finding_issue(request: HttpRequest, finding_id: Any) -> HttpResponse:
    """ "Open an issue": the finding as GitHub/Jira-ready Markdown."""
    finding = get_object_or_404(Finding.objects.select_related("operation", "owner"), pk=finding_id)
    evidence = list(Evidence.objects.filter(finding=finding))
    body = issues.issue_markdown(
        finding=finding,
        checks=seal_checks(evidence),
        url=request.build_absolute_uri(finding.get_absolute_url()),
        absolute=request.build_absolute_uri,
    )
    response = HttpResponse(body, content_type="text/markdown; charset=utf-8")
    if request.GET.get("download"):
        return as_attachment(response, f"finding-{finding.pk}.md")
    return response


# --- reports -------------------------------------------------------------------------------------


@login_required
@permission_required(VIEW_REPORTS, raise_exception=True)
def report_list(request: HttpRequest) -> HttpResponse:
    form = ReportForm(initial={"scope_query": request.GET.get("scope_query", "")})
    return _report_list_page(request, form)


def _report_list_page(request: HttpRequest, form: ReportForm, status: int = 200) -> HttpResponse:
    """The reports and the form to make one (bound, with its errors, after a refusal)."""
    return render(
        request,
        "findings/report_list.html",
        {
            # The outcome source read out of the snapshot in the same query, the rest of
            # the snapshot left unread.
            "reports": Report.objects.select_related("operation", "created_by")
            .defer("snapshot")
            .annotate(outcome_source=KT("snapshot__scope__source"))[:100],
            "source_labels": dict(ag.SOURCE_LABELS),
            "form": form,
            "can_add": request.user.has_perm(REPORT_PERMISSION),
        },
        status=status,
    )


@login_required
@require_POST
def report_create_view(request: HttpRequest) -> HttpResponse:
    """Make a report; a refused form comes back with each field's error and status 400."""
    _need(request, REPORT_PERMISSION)
    form = ReportForm(request.POST)
    if form.is_valid():
        try:
            report = report_create(actor=request.user, **form.cleaned_data)
        except InvalidMemory as error:
            _show_problems(form, error)
        else:
            return redirect(report)
    return _report_list_page(request, form, status=400)


def _report(report_id: Any) -> Report:
    return get_object_or_404(Report.objects.select_related("operation", "created_by"), pk=report_id)


@login_required
@permission_required(VIEW_REPORTS, raise_exception=True)
def report_detail(request: HttpRequest, report_id: Any) -> HttpResponse:
    report = _report(report_id)
    doc = reports.for_people(report.snapshot)
    return render(
        request,
        "findings/report_detail.html",
        {
            "report": report,
            "doc": doc,
            "basis": reports.basis_text(doc),
            "formats": REPORT_FORMATS,
        },
    )


#: Download formats of a report: extension → (content type, renderer).
REPORT_FORMATS = {
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "json": "application/json",
    "pdf": "application/pdf",
}


@login_required
@permission_required(VIEW_REPORTS, raise_exception=True)
def report_download(request: HttpRequest, report_id: Any, fmt: str) -> HttpResponse:
    """The stored report as a file, rendered from its snapshot (never from live memory)."""
    report = _report(report_id)
    if fmt not in REPORT_FORMATS:
        raise Http404("No such report format")
    document = report.snapshot
    if fmt == "md":
        body: str | bytes = reports.render_markdown(document)
    elif fmt == "json":
        body = reports.render_json(document)
    elif fmt == "pdf":
        body = reports.render_pdf(document)
    else:
        body = reports.render_html(document)
    response = HttpResponse(body, content_type=REPORT_FORMATS[fmt])
    return as_attachment(response, f"redline-report-{report.pk}.{fmt}")
