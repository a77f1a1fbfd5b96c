"""``/api/v1/operations/``, ``/findings/``, ``/reports/``: the same services as the pages.

Reading needs ``view_<model>`` (viewers); writing ``add_``/``change_`` (reviewers), and with a
token its ``ingest`` scope. Validation problems come back as 400 with each problem's path.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from memory.findings import services
from memory.findings.api import serializers as s
from memory.findings.filtersets import FindingFilter, OperationFilter
from memory.findings.selectors import seal_checks, tag_suggestions
from memory.models import AttackResult, Evidence, Finding, Operation, Report, Retest
from redteam.core.errors import InvalidMemory


def _invalid(error: InvalidMemory) -> ValidationError:
    return ValidationError(
        {"problems": [{"path": p.path, "message": p.message} for p in error.problems]}
    )


OPERATION_FIELDS = (
    "name",
    "description",
    "scope",
    "target_systems",
    "starts_on",
    "ends_on",
    "pyrit_operation",
    "attack_filter",
)


class OperationViewSet(
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """Operations (engagements) and the rule choosing their attacks; ``attack_query`` is the
    filter to pass to ``/api/v1/stats/…`` for the operation's success rates."""

    queryset = Operation.objects.prefetch_related("members").order_by("-created_at")
    serializer_class = s.OperationSerializer
    filterset_class = OperationFilter

    def perform_create(self, serializer: Any) -> None:
        self._save(serializer, None)

    def perform_update(self, serializer: Any) -> None:
        self._save(serializer, serializer.instance)

    def _save(self, serializer: Any, operation: Operation | None) -> None:
        data = dict(serializer.validated_data)
        if operation is not None:  # PATCH: what is not sent stays as it is
            for name in OPERATION_FIELDS:
                data.setdefault(name, getattr(operation, name))
            data.setdefault("members", list(operation.members.all()))
        try:
            serializer.instance = services.operation_save(
                actor=self.request.user, operation=operation, **data
            )
        except InvalidMemory as error:
            raise _invalid(error) from error


class FindingViewSet(
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """Findings with their sealed evidence (and whether each still matches), retests and
    comments. ``POST`` takes evidence to seal; status moves through ``…/status/``."""

    serializer_class = s.FindingSerializer
    filterset_class = FindingFilter
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_queryset(self):
        return (
            Finding.objects.select_related("owner", "created_by")
            # Evidence, retests and comments are listed whole: one query each per page.
            .prefetch_related(
                Prefetch("evidence", queryset=Evidence.objects.select_related("attached_by")),
                Prefetch("retests", queryset=Retest.objects.select_related("attack_result")),
                "comments",
            )
            .order_by("-created_at", "id")
        )

    def get_serializer_context(self) -> dict[str, Any]:
        return {
            **super().get_serializer_context(),
            "seal_states": getattr(self, "_seals", {}),
            "tag_suggestions": getattr(self, "_tags", {}),
        }

    def _check_seals(self, findings: list[Finding]) -> None:
        """Every seal and the crosswalk's tag suggestions of the findings shown, at once."""
        evidence = [e for f in findings for e in f.evidence.all()]
        self._seals = {c.evidence.pk: c.state for c in seal_checks(evidence)}
        self._tags = tag_suggestions(findings)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        rows = list(page if page is not None else queryset)
        self._check_seals(rows)
        data = self.get_serializer(rows, many=True).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        finding = self.get_object()
        self._check_seals([finding])
        return Response(self.get_serializer(finding).data)

    def _fresh(self, finding: Finding, code: int = status.HTTP_200_OK) -> Response:
        finding = self.get_queryset().get(pk=finding.pk)
        self._check_seals([finding])
        return Response(self.get_serializer(finding).data, status=code)

    @extend_schema(request=s.FindingCreateSerializer, responses={201: s.FindingSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        given = s.FindingCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        evidence = [services.EvidenceSpec(**item) for item in data.pop("evidence")]
        try:
            finding = services.finding_create(actor=request.user, evidence=evidence, **data)
        except InvalidMemory as error:
            raise _invalid(error) from error
        return self._fresh(finding, status.HTTP_201_CREATED)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        finding = self.get_object()
        given = self.get_serializer(finding, data=request.data, partial=True)
        given.is_valid(raise_exception=True)
        changes = {k: v for k, v in given.validated_data.items() if k in services.EDITABLE}
        try:
            services.finding_update(finding=finding, actor=request.user, **changes)
        except InvalidMemory as error:
            raise _invalid(error) from error
        return self._fresh(finding)

    @extend_schema(request=s.StatusInputSerializer, responses={200: s.FindingSerializer})
    @action(detail=True, methods=["post"])
    def status(self, request: Request, pk: Any = None) -> Response:
        """Move the finding along its lifecycle (the note is kept in its history)."""
        finding = self.get_object()
        given = s.StatusInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            services.finding_status_set(finding=finding, actor=request.user, **given.validated_data)
        except InvalidMemory as error:
            raise _invalid(error) from error
        return self._fresh(finding)

    @extend_schema(
        request=s.EvidenceInputSerializer(many=True), responses={201: s.FindingSerializer}
    )
    @action(detail=True, methods=["post"])
    def evidence(self, request: Request, pk: Any = None) -> Response:
        """Attach and seal evidence: a list of ``{kind, ref, note}``."""
        finding = self.get_object()
        given = s.EvidenceInputSerializer(data=request.data, many=True)
        given.is_valid(raise_exception=True)
        specs = [services.EvidenceSpec(**item) for item in given.validated_data]
        try:
            services.evidence_attach(finding=finding, evidence=specs, actor=request.user)
        except InvalidMemory as error:
            raise _invalid(error) from error
        return self._fresh(finding, status.HTTP_201_CREATED)

    @extend_schema(request=s.CommentSerializer, responses={201: s.CommentSerializer})
    @action(detail=True, methods=["post"])
    def comments(self, request: Request, pk: Any = None) -> Response:
        finding = self.get_object()
        given = s.CommentSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            comment = services.finding_comment_add(
                finding=finding, author=request.user, body=given.validated_data["body"]
            )
        except InvalidMemory as error:
            raise _invalid(error) from error
        return Response(s.CommentSerializer(comment).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.RetestInputSerializer, responses={201: s.FindingSerializer})
    @action(detail=True, methods=["post"])
    def retests(self, request: Request, pk: Any = None) -> Response:
        """Record a later attack of the same objective and configuration as a retest (moves
        the status; a move the lifecycle does not allow needs ``confirm_jump``)."""
        finding = self.get_object()
        given = s.RetestInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        attack = (
            AttackResult.objects.select_related(
                "conversation__target_identifier", "attack_identifier", "atomic_attack_identifier"
            )
            .filter(pk=given.validated_data["attack_result_id"])
            .first()
        )
        if attack is None:
            raise ValidationError({"attack_result_id": ["no such attack result"]})
        try:
            services.retest_record(
                finding=finding,
                attack=attack,
                actor=request.user,
                confirm_jump=given.validated_data["confirm_jump"],
            )
        except InvalidMemory as error:
            raise _invalid(error) from error
        return self._fresh(finding, status.HTTP_201_CREATED)


class ReportViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Reports with their whole snapshot; ``POST`` makes one of an operation or a filter."""

    queryset = Report.objects.select_related("created_by").order_by("-created_at")
    serializer_class = s.ReportSerializer

    @extend_schema(request=s.ReportCreateSerializer, responses={201: s.ReportSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        given = s.ReportCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            report = services.report_create(actor=request.user, **given.validated_data)
        except InvalidMemory as error:
            raise _invalid(error) from error
        return Response(s.ReportSerializer(report).data, status=status.HTTP_201_CREATED)
