"""Shapes of operations, findings, evidence and reports in the API (input and output apart
where they differ)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.findings.selectors import operation_params, params_query
from memory.models import (
    Evidence,
    EvidenceKind,
    Finding,
    FindingComment,
    FindingStatus,
    Operation,
    Report,
    Retest,
    Severity,
)
from memory.storage import aggregates as ag
from redteam.core.lengths import HARM_CATEGORIES_MAX_ITEMS


class UserField(serializers.SlugRelatedField):
    """A user by user name."""

    def __init__(self, **kwargs):
        super().__init__(slug_field="username", queryset=get_user_model().objects.all(), **kwargs)

    def to_internal_value(self, data):
        # No user name holds a NUL, and PostgreSQL refuses one even in a look-up: say so
        # the same way on both databases instead of failing inside the query.
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class OperationSerializer(serializers.ModelSerializer):
    members = UserField(many=True, required=False)
    target_systems = serializers.ListField(
        child=serializers.CharField(max_length=255, allow_blank=True), required=False
    )
    attack_query = serializers.SerializerMethodField(
        help_text="The attack-list / stats filter parameters of the rule, as a query string."
    )

    class Meta:
        model = Operation
        fields = [
            "id",
            "name",
            "description",
            "scope",
            "target_systems",
            "starts_on",
            "ends_on",
            "members",
            "pyrit_operation",
            "attack_filter",
            "attack_query",
            "pyrit_id",
            "created_at",
        ]
        read_only_fields = ["id", "pyrit_id", "created_at"]

    def get_attack_query(self, obj: Operation) -> str:
        return params_query(operation_params(obj))


class EvidenceSerializer(serializers.ModelSerializer):
    seal_state = serializers.SerializerMethodField(
        help_text="intact, broken (the memory changed since it was sealed), missing (deleted), "
        "legacy (an unkeyed seal that matches but proves nothing) or unknown_key (sealed "
        "under a key not configured)."
    )
    attached_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Evidence
        fields = [
            "id",
            "kind",
            "ref",
            "attack_result",
            "conversation",
            "piece",
            "score",
            "note",
            "seal",
            "seal_key_id",
            "seal_state",
            "attached_by",
            "attached_at",
        ]
        read_only_fields = fields

    def get_seal_state(self, obj: Evidence) -> str:
        return self.context.get("seal_states", {}).get(obj.pk, "unchecked")


class EvidenceInputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=EvidenceKind.choices)
    ref = serializers.CharField(
        max_length=255,
        help_text="PyRIT's id: attack_result_id, conversation_id, piece id or score id.",
    )
    note = serializers.CharField(required=False, allow_blank=True, default="")


class CommentSerializer(serializers.ModelSerializer):
    class Meta:
        model = FindingComment
        fields = ["id", "author_name", "body", "created_at"]
        read_only_fields = ["id", "author_name", "created_at"]


class RetestSerializer(serializers.ModelSerializer):
    """A recorded retest with the objective its attack repeated (null: the attack was
    deleted)."""

    objective = serializers.CharField(source="attack_result.objective", default=None)

    class Meta:
        model = Retest
        fields = [
            "id",
            "attack_result",
            "attack_ref",
            "objective",
            "attack_outcome",
            "result",
            "recorded_at",
        ]
        read_only_fields = fields


class TagSuggestionSerializer(serializers.Serializer):
    """A framework tag the crosswalk suggests, and why."""

    tag = serializers.CharField(help_text="owasp-llm:LLM01, atlas:AML.T0051, nist-ai-600-1:…")
    code = serializers.CharField()
    title = serializers.CharField()
    framework = serializers.CharField()
    reasons = serializers.ListField(child=serializers.CharField())


class FindingSerializer(serializers.ModelSerializer):
    """A finding with its evidence (each with its seal state), retests and comments, and the
    framework tags the crosswalk suggests that it does not carry yet (read-only)."""

    owner = UserField(required=False, allow_null=True)
    operation = serializers.PrimaryKeyRelatedField(
        queryset=Operation.objects.all(), required=False, allow_null=True
    )
    evidence = EvidenceSerializer(many=True, read_only=True)
    retests = RetestSerializer(many=True, read_only=True)
    comments = CommentSerializer(many=True, read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    suggested_tags = serializers.SerializerMethodField()

    class Meta:
        model = Finding
        fields = [
            "id",
            "title",
            "description",
            "severity",
            "status",
            "owner",
            "operation",
            "harm_categories",
            "framework_tags",
            "reproduction_steps",
            "remediation",
            "found_eval_hash",
            "found_target_hash",
            "found_at",
            "pyrit_id",
            "created_by",
            "created_at",
            "updated_at",
            "evidence",
            "retests",
            "comments",
            "suggested_tags",
        ]
        read_only_fields = [
            "id",
            "status",
            "found_eval_hash",
            "found_target_hash",
            "found_at",
            "pyrit_id",
            "created_by",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(TagSuggestionSerializer(many=True))
    def get_suggested_tags(self, finding: Finding) -> list[dict[str, Any]]:
        # Computed for the whole page at once by the view (``tag_suggestions``).
        found = self.context.get("tag_suggestions", {}).get(finding.pk, [])
        return TagSuggestionSerializer(found, many=True).data


class FindingCreateSerializer(serializers.Serializer):
    """A new finding; ``evidence`` is sealed as the memory is when it arrives."""

    title = serializers.CharField(max_length=255)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    severity = serializers.ChoiceField(choices=Severity.choices, default=Severity.MEDIUM)
    owner = UserField(required=False, allow_null=True, default=None)
    operation = serializers.PrimaryKeyRelatedField(
        queryset=Operation.objects.all(), required=False, allow_null=True, default=None
    )
    harm_categories = serializers.ListField(
        child=serializers.CharField(), default=list, max_length=HARM_CATEGORIES_MAX_ITEMS
    )
    framework_tags = serializers.ListField(
        child=serializers.CharField(), default=list, max_length=HARM_CATEGORIES_MAX_ITEMS
    )
    reproduction_steps = serializers.CharField(required=False, allow_blank=True, default="")
    remediation = serializers.CharField(required=False, allow_blank=True, default="")
    evidence = EvidenceInputSerializer(many=True, required=False, default=list)


class StatusInputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=FindingStatus.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class RetestInputSerializer(serializers.Serializer):
    attack_result_id = serializers.UUIDField()
    confirm_jump = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Record it although the status move skips the lifecycle (e.g. confirmed → "
        "retest passed); the history records it as a confirmed jump.",
    )


class ReportSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    outcome_source = serializers.SerializerMethodField(
        help_text="Whose outcome the figures count: automated (PyRIT's) or human (the "
        "reviewers' verdict where there is one); the snapshot's scope.source."
    )

    class Meta:
        model = Report
        fields = [
            "id",
            "title",
            "operation",
            "scope_query",
            "snapshot_sha256",
            "attack_count",
            "finding_count",
            "outcome_source",
            "created_by",
            "created_at",
            "snapshot",
        ]
        read_only_fields = fields

    def get_outcome_source(self, report: Report) -> str:
        return report.snapshot.get("scope", {}).get("source") or ag.Source.AUTOMATED.value


class ReportCreateSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, allow_blank=True, default="", max_length=255)
    operation = serializers.PrimaryKeyRelatedField(
        queryset=Operation.objects.all(), required=False, allow_null=True, default=None
    )
    scope_query = serializers.CharField(required=False, allow_blank=True, default="")
    redact_media = serializers.BooleanField(required=False, default=False)
    outcome_source = serializers.ChoiceField(
        choices=[source.value for source in ag.Source],
        required=False,
        default=ag.Source.AUTOMATED.value,
        help_text="Whose outcome the scorecard counts: PyRIT's (automated) or the reviewers' "
        "verdict where there is one (human), as the dashboards' source.",
    )
