"""Forms of the operation and finding pages; the services validate again and have the last word."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from memory.findings import lifecycle
from memory.models import EvidenceKind, FindingStatus, Operation, Severity
from memory.storage import aggregates as ag
from redteam.core.forms import StoredValuesForm

#: Who may write findings, evidence, comments and retests (the reviewer group has it).
FINDING_PERMISSION = "memory.add_finding"
CHANGE_FINDING = "memory.change_finding"
OPERATION_PERMISSION = "memory.add_operation"
REPORT_PERMISSION = "memory.add_report"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace(",", "\n").splitlines() if line.strip()]


class OperationForm(StoredValuesForm):
    name = forms.CharField(max_length=128)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    scope = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, help_text="In and out of scope."
    )
    target_systems = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        help_text="One system per line.",
    )
    starts_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    ends_on = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    members = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 5}),
    )
    pyrit_operation = forms.CharField(
        max_length=128,
        required=False,
        label="PyRIT operation",
        help_text="Attacks PyRIT labelled operation=<this> (or, from PyRIT 1.2, stored with this "
        "operation) belong to the operation.",
    )
    attack_filter = forms.CharField(
        required=False,
        label="Attack filter",
        help_text="Or any query string of the attack list, e.g. harm_category=violence&"
        "timestamp_after=2026-01-01. Both given: attacks must match both.",
    )

    def clean_target_systems(self) -> list[str]:
        return _lines(self.cleaned_data.get("target_systems") or "")


class FindingForm(StoredValuesForm):
    title = forms.CharField(max_length=255)
    severity = forms.ChoiceField(choices=Severity.choices, initial=Severity.MEDIUM)
    operation = forms.ModelChoiceField(queryset=Operation.objects.order_by("name"), required=False)
    owner = forms.ModelChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    harm_categories = forms.CharField(
        required=False, help_text="Comma-separated, e.g. violence, cybercrime."
    )
    framework_tags = forms.CharField(
        required=False, help_text="Comma-separated, e.g. owasp-llm:LLM01, atlas:AML.T0051."
    )
    reproduction_steps = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    remediation = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, label="Remediation advice"
    )

    def clean_harm_categories(self) -> list[str]:
        return _lines(self.cleaned_data.get("harm_categories") or "")

    def clean_framework_tags(self) -> list[str]:
        return _lines(self.cleaned_data.get("framework_tags") or "")


class StatusForm(forms.Form):
    status = forms.ChoiceField(choices=FindingStatus.choices)
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    def __init__(self, *args, current: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if current is not None:
            allowed = lifecycle.next_statuses(current)
            self.fields["status"].choices = [
                (value, label) for value, label in FindingStatus.choices if value in allowed
            ]


class CommentForm(forms.Form):
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), label="Comment")


class EvidenceForm(forms.Form):
    kind = forms.ChoiceField(choices=EvidenceKind.choices)
    ref = forms.CharField(max_length=255, label="PyRIT id")
    note = forms.CharField(required=False, max_length=1000)


class ReportForm(forms.Form):
    title = forms.CharField(max_length=255, required=False)
    operation = forms.ModelChoiceField(queryset=Operation.objects.order_by("name"), required=False)
    scope_query = forms.CharField(
        required=False,
        label="Or a saved filter",
        help_text="A query string of the attack list (what the dashboards' address shows).",
    )
    outcome_source = forms.ChoiceField(
        choices=list(ag.SOURCE_LABELS.items()),
        initial=ag.Source.AUTOMATED,
        required=False,
        label="Outcome source",
        help_text="Whose outcome the scorecard counts, as on the dashboards: PyRIT's, or the "
        "reviewers' verdict where an attack has one.",
    )
    redact_media = forms.BooleanField(required=False, label="Redact media in evidence excerpts")

    def clean_outcome_source(self) -> str:
        return self.cleaned_data.get("outcome_source") or ag.Source.AUTOMATED.value
