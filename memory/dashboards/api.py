"""``/api/v1/stats/…``: the dashboard's aggregates as JSON (same filters, same numbers).

Every endpoint takes the attack list's filter parameters (``labels``, ``harm_category``,
``target_model``, ``timestamp_after`` …; ``outcome`` and ``effective_outcome`` are ignored,
since outcomes are what is counted) and ``source`` (``automated`` or ``human``). Each group
carries ``drilldown``: the attack-list URL showing exactly its attacks. Token (read scope is
enough) or session authentication; the user needs ``memory.view_attackresult``.
"""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.dashboards.widgets import DashboardRequest, filter_names, repeatable
from memory.storage import aggregates as ag
from memory.storage.filters import AttackResultFilter
from redteam.core.stats import OutcomeCounts
from redteam.permissions import RequiredPermissions, TokenScope

GROUP_BY = tuple(ag.DIMENSIONS)


# --- response shapes (documentation and output) ---------------------------------------------


class CountsSerializer(serializers.Serializer):
    """Outcome counts with PyRIT's success rate and its 95 % Wilson interval."""

    successes = serializers.IntegerField()
    failures = serializers.IntegerField()
    undetermined = serializers.IntegerField()
    errors = serializers.IntegerField()
    attacks = serializers.IntegerField(help_text="All attacks of the group, any outcome.")
    n = serializers.IntegerField(help_text="successes + failures: the rate's denominator.")
    asr = serializers.FloatField(allow_null=True, help_text="successes / n; null when n is 0.")
    ci_low = serializers.FloatField(allow_null=True, help_text="95 % Wilson interval, low end.")
    ci_high = serializers.FloatField(allow_null=True, help_text="95 % Wilson interval, high end.")
    low_n = serializers.BooleanField(help_text="n below 10: read the rate with care.")


class MemberSerializer(CountsSerializer):
    """A concrete identifier inside an eval-hash group."""

    hash = serializers.CharField()
    class_name = serializers.CharField()
    attack_classes = serializers.ListField(child=serializers.CharField())
    targets = serializers.ListField(child=serializers.CharField())
    drilldown = serializers.CharField(allow_null=True)


class GroupSerializer(CountsSerializer):
    """One group: its key (null for "not set"), a label, counts and the drill-down URL."""

    key = serializers.JSONField(allow_null=True)
    label = serializers.CharField()
    drilldown = serializers.CharField(
        allow_null=True,
        help_text="Attack-list URL with exactly these attacks (null: no filter "
        "parameter selects this group).",
    )
    members = MemberSerializer(many=True, required=False)


class AsrSerializer(serializers.Serializer):
    group_by = serializers.CharField()
    label_key = serializers.CharField(allow_null=True)
    source = serializers.CharField()
    groups = GroupSerializer(many=True)


class SummarySerializer(serializers.Serializer):
    source = serializers.CharField()
    total = CountsSerializer()
    conversations = serializers.IntegerField()
    pieces = serializers.IntegerField()
    scores = serializers.IntegerField()
    whole_memory = serializers.BooleanField(
        help_text="No filter set: conversations, pieces and scores are all of memory; else "
        "those behind the filtered attacks."
    )
    human_reviewed = serializers.IntegerField()
    drilldown = serializers.CharField()


class CellSerializer(CountsSerializer):
    row = serializers.JSONField(allow_null=True)
    col = serializers.JSONField(allow_null=True)
    drilldown = serializers.CharField(allow_null=True)


class HeatmapSerializer(serializers.Serializer):
    rows = serializers.CharField()
    cols = serializers.CharField()
    label_key = serializers.CharField(allow_null=True)
    source = serializers.CharField()
    row_keys = serializers.ListField(child=serializers.JSONField(allow_null=True))
    col_keys = serializers.ListField(child=serializers.JSONField(allow_null=True))
    cells = CellSerializer(many=True)


class SeriesSerializer(CountsSerializer):
    key = serializers.JSONField(allow_null=True)
    drilldown = serializers.CharField(allow_null=True)


class PointSerializer(CountsSerializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    drilldown = serializers.CharField()
    series = SeriesSerializer(many=True)


class TrendSerializer(serializers.Serializer):
    period = serializers.CharField()
    split = serializers.CharField(allow_null=True)
    source = serializers.CharField()
    points = PointSerializer(many=True)


class DistributionSerializer(serializers.Serializer):
    scorer = serializers.CharField()
    bins = serializers.ListField(
        child=serializers.IntegerField(), help_text="Float-scale scores in [0, 0.1), … [0.9, 1]."
    )
    true = serializers.IntegerField()
    false = serializers.IntegerField()
    undetermined = serializers.IntegerField()


class AgreementCellSerializer(serializers.Serializer):
    automated = serializers.CharField()
    human = serializers.CharField()
    count = serializers.IntegerField()
    drilldown = serializers.CharField(allow_null=True)


class AgreementSerializer(serializers.Serializer):
    scorer = serializers.CharField()
    n = serializers.IntegerField()
    observed = serializers.FloatField(allow_null=True)
    expected = serializers.FloatField(allow_null=True)
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's κ; null when undefined.")
    categories = serializers.ListField(child=serializers.CharField())
    cells = AgreementCellSerializer(many=True)


class ScorersSerializer(serializers.Serializer):
    distributions = DistributionSerializer(many=True)
    attack_agreement = AgreementSerializer(many=True)
    score_agreement = AgreementSerializer(many=True)


# --- parameters -------------------------------------------------------------------------------


def _filter_parameters() -> list[OpenApiParameter]:
    """The shared attack filter's parameters, documented once for every stats endpoint."""
    out = []
    for name in filter_names():
        f = AttackResultFilter.base_filters[name]
        label = f.label or name.replace("_", " ")
        out.append(
            OpenApiParameter(
                name,
                {"type": "array", "items": {"type": "string"}} if repeatable(name) else str,
                explode=True if repeatable(name) else None,
                description=f"Attack filter ({label}), as on the attack list.",
            )
        )
    out.append(
        OpenApiParameter(
            "source",
            str,
            enum=[s.value for s in ag.Source],
            description="Count PyRIT's outcome (automated, default) or the newest human "
            "verdict where one exists (human).",
        )
    )
    return out


LABEL_KEY = OpenApiParameter(
    "label_key",
    str,
    description="Label key for group_by=label (default: operation, else the first key).",
)


# --- views --------------------------------------------------------------------------------------


class StatsView(APIView):
    """Base: authentication, permissions and the shared parsing of filters and options."""

    permission_classes = [IsAuthenticated, TokenScope, RequiredPermissions]
    required_permissions = ["memory.view_attackresult"]
    #: API parameter name -> dashboard option name.
    renamed: dict[str, str] = {}

    def dashboard(self, request: Request) -> DashboardRequest | Response:
        query = QueryDict(mutable=True)
        for key, values in request.query_params.lists():
            query.setlist(self.renamed.get(key, key), values)
        dash = DashboardRequest.from_query(query, user=request.user)
        if not dash.valid:
            inverse = {v: k for k, v in self.renamed.items()}
            errors = {inverse.get(k, k): v for k, v in dash.errors.items()}
            return Response({"detail": "Invalid parameters.", "errors": errors}, status=400)
        return dash

    def link(self, request: Request, url: str | None) -> str | None:
        return None if url is None else request.build_absolute_uri(url)


def _counts(counts: OutcomeCounts) -> dict[str, Any]:
    return counts.as_dict()


def _key(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)


class SummaryView(StatsView):
    @extend_schema(
        summary="Headline figures",
        description="Attacks by outcome with the success rate and its 95 % Wilson interval, and "
        "the conversations (main and related), pieces and scores behind them.",
        parameters=_filter_parameters(),
        responses={200: SummarySerializer, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        dash = self.dashboard(request)
        if isinstance(dash, Response):
            return dash
        h = ag.headline(dash.scope)
        v = ag.volume(dash.scope)
        return Response(
            {
                "source": dash.scope.source.value,
                "total": _counts(h.counts),
                "conversations": v.conversations,
                "pieces": v.pieces,
                "scores": v.scores,
                "whole_memory": v.whole_memory,
                "human_reviewed": h.human_reviewed,
                "drilldown": self.link(request, dash.attacks_url()),
            }
        )


class AsrView(StatsView):
    @extend_schema(
        summary="Attack success rate per group",
        description="Successes, failures, undetermined, errors, ASR = successes / (successes + "
        "failures), its 95 % Wilson interval and n per group. With `group_by=eval_hash` each "
        "group lists its concrete identifiers (`members`).",
        parameters=[
            OpenApiParameter("group_by", str, enum=list(GROUP_BY), required=True),
            LABEL_KEY,
            *_filter_parameters(),
        ],
        responses={200: AsrSerializer, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        group_by = request.query_params.get("group_by", "")
        if group_by not in GROUP_BY:
            return Response(
                {"detail": f"group_by must be one of: {', '.join(GROUP_BY)}."}, status=400
            )
        dash = self.dashboard(request)
        if isinstance(dash, Response):
            return dash
        label_key = dash.label_key if group_by == "label" else None
        breakdown = ag.breakdown(dash.scope, group_by, label_key=label_key)
        groups = []
        for group in breakdown.groups:
            item = {
                "key": _key(group.key),
                "label": group.label,
                "drilldown": self.link(request, dash.attacks_url(group.params)),
                **_counts(group.counts),
            }
            if group_by == "eval_hash":
                item["members"] = [
                    {
                        "hash": m["hash"],
                        "class_name": m["class_name"],
                        "attack_classes": m["attack_classes"],
                        "targets": m["targets"],
                        "drilldown": self.link(
                            request, dash.attacks_url(group.params + m["params"])
                        ),
                        **_counts(m["counts"]),
                    }
                    for m in group.members
                ]
            groups.append(item)
        return Response(
            {
                "group_by": group_by,
                "label_key": label_key,
                "source": dash.scope.source.value,
                "groups": groups,
            }
        )


class HeatmapView(StatsView):
    renamed = {"rows": "heat_rows", "cols": "heat_cols"}

    @extend_schema(
        summary="Success rate per pair of groups (heat map)",
        parameters=[
            OpenApiParameter(
                "rows", str, enum=list(ag.AXIS_DIMENSIONS), description="Default attack_class."
            ),
            OpenApiParameter(
                "cols", str, enum=list(ag.AXIS_DIMENSIONS), description="Default target_model."
            ),
            LABEL_KEY,
            *_filter_parameters(),
        ],
        responses={200: HeatmapSerializer, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        dash = self.dashboard(request)
        if isinstance(dash, Response):
            return dash
        rows, cols = dash.option("heat_rows"), dash.option("heat_cols")
        label_key = dash.label_key if "label" in (rows, cols) else None
        heat = ag.heatmap(dash.scope, rows, cols, label_key=label_key)
        cells = [
            {
                "row": _key(row),
                "col": _key(col),
                "drilldown": self.link(request, dash.attacks_url(cell.params)),
                **_counts(cell.counts),
            }
            for row in heat.row_keys
            for col in heat.col_keys
            if (cell := heat.cell(row, col)) is not None
        ]
        return Response(
            {
                "rows": rows,
                "cols": cols,
                "label_key": label_key,
                "source": dash.scope.source.value,
                "row_keys": [_key(k) for k in heat.row_keys],
                "col_keys": [_key(k) for k in heat.col_keys],
                "cells": cells,
            }
        )


class TrendView(StatsView):
    renamed = {"split": "trend_by"}

    @extend_schema(
        summary="Volume and success rate over time",
        description="Per hour, day or ISO week in the server's time zone; the range is the "
        "`timestamp_after` / `timestamp_before` filter.",
        parameters=[
            OpenApiParameter(
                "period",
                str,
                enum=list(ag.PERIODS),
                description="auto: hours when the attacks span at most 48 hours, weeks when "
                "they span over 120 days, days in between.",
            ),
            OpenApiParameter(
                "split",
                str,
                enum=list(ag.TREND_SPLITS),
                description="One series per attack class or target model.",
            ),
            *_filter_parameters(),
        ],
        responses={200: TrendSerializer, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        dash = self.dashboard(request)
        if isinstance(dash, Response):
            return dash
        trend = ag.trend(
            dash.scope, period=dash.option("period"), split=dash.option("trend_by") or None
        )
        points = []
        for p in trend.points:
            series = []
            for key in trend.series_keys:
                counts = p.series.get(key)
                if counts is None:
                    continue
                group = trend.split.group_params(key) if trend.split else None
                params = None if group is None else p.params + group
                series.append(
                    {
                        "key": _key(key),
                        "drilldown": self.link(request, dash.attacks_url(params)),
                        **_counts(counts),
                    }
                )
            points.append(
                {
                    "start": p.start,
                    "end": p.end,
                    "drilldown": self.link(request, dash.attacks_url(p.params)),
                    "series": series,
                    **_counts(p.counts),
                }
            )
        body = {
            "period": trend.period,
            "split": trend.split.name if trend.split else None,
            "source": dash.scope.source.value,
            "points": points,
        }
        return Response(TrendSerializer(body).data)


class ScorersView(StatsView):
    @extend_schema(
        summary="Scorer analytics",
        description="Per scorer: float-scale histogram, true/false and undetermined counts; "
        "agreement between human and automated judgement (confusion matrix, Cohen's κ) for "
        "attack outcomes vs human verdicts and automated vs human scores on the same piece.",
        parameters=_filter_parameters(),
        responses={200: ScorersSerializer, 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        dash = self.dashboard(request)
        if isinstance(dash, Response):
            return dash

        def agreements(items: list[ag.ScorerAgreement]) -> list[dict[str, Any]]:
            out = []
            for item in items:
                a = item.agreement
                cells = [
                    {
                        "automated": machine,
                        "human": human,
                        "count": a.matrix[i][j],
                        "drilldown": self.link(
                            request, dash.attacks_url(item.cell_params.get((machine, human)))
                        ),
                    }
                    for i, machine in enumerate(a.categories)
                    for j, human in enumerate(a.categories)
                ]
                out.append(
                    {
                        "scorer": item.scorer,
                        "n": a.n,
                        "observed": a.observed,
                        "expected": a.expected,
                        "kappa": a.kappa,
                        "categories": list(a.categories),
                        "cells": cells,
                    }
                )
            return out

        return Response(
            {
                "distributions": [
                    {
                        "scorer": d.scorer,
                        "bins": d.bins,
                        "true": d.true,
                        "false": d.false,
                        "undetermined": d.undetermined,
                    }
                    for d in ag.scorer_distributions(dash.scope)
                ],
                "attack_agreement": agreements(ag.attack_agreement(dash.scope)),
                "score_agreement": agreements(ag.score_agreement(dash.scope)),
            }
        )
