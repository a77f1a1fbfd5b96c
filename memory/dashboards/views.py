"""Dashboard pages: the dashboard itself and the CSV download of each of its tables."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from memory.dashboards import charts
from memory.dashboards.tables import TABLE_WIDGETS, tables_for
from memory.dashboards.widgets import (
    LATE_PARTS,
    LATE_WIDGETS,
    PART_OF,
    WIDGETS,
    WIDGETS_BY_NAME,
    DashboardRequest,
)
from memory.storage.aggregates import (
    AXIS_DIMENSIONS,
    BREAKDOWNS,
    DIMENSIONS,
    TREND_SPLITS,
    ScorerAgreement,
    attack_facts,
)
from memory.storage.selectors import attack_filter_options
from redteam.core.downloads import as_attachment, file_stamp
from redteam.core.forms import datetime_input_value
from redteam.core.stats import percent_text

VIEW_PERMISSION = "memory.view_attackresult"

#: Filter parameters with their own control in the side panel; the others show as chips.
SIDEBAR_FILTERS = (
    "timestamp_after",
    "timestamp_before",
    "labels",
    "target_model",
    "attack_class",
    "harm_category",
    "dataset",
    "has_human_verdict",
)


#: The identifier choices the side panel offers (attack class, target model).
DASHBOARD_ROLES = ("attack", "target")


def _active_filters(request: DashboardRequest) -> list[dict[str, str]]:
    """Every filter in effect, as removable chips."""
    return [
        {"name": name, "value": value, "remove": request.dashboard_url(without=(name, value))}
        for name, value in request.params
    ]


def _form_state(dash: DashboardRequest) -> dict[str, Any]:
    """What the side panel shows as selected (also when the request did not validate)."""
    selected: dict[str, list[str]] = {}
    for name, value in dash.params:
        selected.setdefault(name, []).append(value)
    one = {name: values[-1] for name, values in selected.items()}
    query = dash.query
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    quick_ranges = []
    for label, days in (("7 days", 7), ("30 days", 30), ("90 days", 90), ("all time", None)):
        pairs = [p for p in dash.params if p[0] not in ("timestamp_after", "timestamp_before")]
        if days:
            start = (today - timedelta(days=days)).replace(tzinfo=None).isoformat()
            pairs.append(("timestamp_after", start))
        pairs += dash.option_pairs()
        quick_ranges.append((label, f"{reverse('dashboards')}?{urlencode(pairs)}"))
    return {
        "selected": selected,
        "one": one,
        "time_after": datetime_input_value(one.get("timestamp_after", "")),
        "time_before": datetime_input_value(one.get("timestamp_before", "")),
        "quick_ranges": quick_ranges,
        "form_source": query.get("source") or "automated",
        "form_heat_rows": query.get("heat_rows") or "attack_class",
        "form_heat_cols": query.get("heat_cols") or "target_model",
        "hidden_filters": _hidden_filters(dash),
    }


def _hidden_filters(request: DashboardRequest) -> list[tuple[str, str]]:
    """Filters without a side-panel control: kept as hidden fields when the form is sent."""
    return [(k, v) for k, v in request.params if k not in SIDEBAR_FILTERS]


def matrix_view(
    dash: DashboardRequest, item: ScorerAgreement, rows_label: str, cols_label: str
) -> dict[str, Any]:
    """A confusion matrix ready to draw: rows of cells with counts and drill-down links."""
    a = item.agreement
    rows = []
    for i, machine in enumerate(a.categories):
        cells = []
        for j, human in enumerate(a.categories):
            value = a.matrix[i][j]
            params = item.cell_params.get((machine, human))
            cells.append(
                {
                    "count": value,
                    "diagonal": i == j,
                    "href": dash.attacks_url(params) if value and params else None,
                }
            )
        rows.append({"label": machine, "cells": cells})
    return {
        "scorer": item.scorer,
        "n": a.n,
        "observed": percent_text(a.observed),
        "kappa": a.kappa,
        "categories": a.categories,
        "rows": rows,
        "rows_label": rows_label,
        "cols_label": cols_label,
    }


def _breakdown_card(dash: DashboardRequest, slug: str, breakdown: Any, table: Any) -> dict:
    return {
        "slug": slug,
        "breakdown": breakdown,
        "chart": charts.bar_chart(dash, breakdown.title, breakdown.groups),
        "table": table,
        "csv": dash.csv_url(slug),
        "multi": breakdown.dimension.multi,
    }


#: What a late breakdown part's placeholder says it is counting.
LATE_BREAKDOWNS = {"converter": "the converter breakdown", "framework": "the framework breakdowns"}


def _breakdown_cards(
    dash: DashboardRequest, built: dict[str, Any], tables: dict[str, Any]
) -> list[dict[str, Any]]:
    """The breakdown cards ``built`` holds, in page order; a late part's cards not built here
    are one placeholder, where its first card goes (its cards then fill the grid in its
    place). A late part's own response draws only its built cards."""
    cards: list[dict[str, Any]] = []
    placed: set[str] = set()
    for name in BREAKDOWNS:
        slug = f"asr_by_{name}"
        if slug in built:
            cards.append(_breakdown_card(dash, slug, built[slug], tables[slug]))
        elif slug in PART_OF and PART_OF[slug] not in placed:
            part = PART_OF[slug]
            placed.add(part)
            url = _part_url(dash, part)
            cards.append({"slug": slug, "late": True, "url": url, "what": LATE_BREAKDOWNS[part]})
    return cards


def widget_context(dash: DashboardRequest, built: dict[str, Any]) -> dict[str, Any]:
    """Template context for whichever widgets ``built`` holds (the page, or one late part)."""
    tables = tables_for(dash, built)
    context: dict[str, Any] = {
        "tables": tables,
        "csv": {slug: dash.csv_url(slug) for slug in tables},
        "breakdowns": _breakdown_cards(dash, built, tables),
    }
    if "headline" in built:
        counts = built["headline"].counts
        stats = [
            ("attacks", "Attacks", counts.attacks, dash.attacks_url()),
            ("successes", "Successes", counts.successes, dash.attacks_url((), ("success",))),
            ("failures", "Failures", counts.failures, dash.attacks_url((), ("failure",))),
            (
                "undetermined",
                "Undetermined",
                counts.undetermined,
                dash.attacks_url((), ("undetermined",)),
            ),
            ("errors", "Errors", counts.errors, dash.attacks_url((), ("error",))),
            (
                "reviewed",
                "With a human verdict",
                built["headline"].human_reviewed,
                dash.attacks_url((("has_human_verdict", "true"),)),
            ),
        ]
        context.update(
            {
                "headline": built["headline"],
                "asr_card": {
                    "value": percent_text(counts.asr),
                    "ci": f"{percent_text(counts.ci_low)} – {percent_text(counts.ci_high)}"
                    if counts.n
                    else "–",
                    "href": dash.attacks_url((), ("success", "failure")),
                },
                "stats": [
                    {"key": k, "label": label, "text": f"{v:,}", "href": href if v else None}
                    for k, label, v, href in stats
                ],
                "strip": charts.outcome_strip(dash, counts),
            }
        )
    if "volume" in built:
        volume = built["volume"]
        context["volume"] = volume
        context["volume_stats"] = [
            {"key": key, "label": label, "text": f"{value:,}"}
            for key, label, value in (
                ("conversations", "Conversations", volume.conversations),
                ("pieces", "Pieces", volume.pieces),
                ("scores", "Scores", volume.scores),
            )
        ]
    if "heatmap" in built:
        context["heatmap"] = built["heatmap"]
        context["heatmap_chart"] = charts.heatmap_chart(dash, built["heatmap"])
    if "eval_hash" in built:
        groups = built["eval_hash"].groups
        context["eval_hash"] = built["eval_hash"]
        context["eval_shown"] = groups[: dash.eval_limit]
        context["eval_chart"] = charts.bar_chart(dash, "Eval hash", context["eval_shown"])
        current = dash.option("eval_limit")
        context["eval_options"] = [
            (label, None if value == current else dash.dashboard_url(eval_limit=value))
            for value, label in dash.options.fields["eval_limit"].choices
        ]
    if "trend" in built:
        context["trend"] = built["trend"]
        context["trend_chart"] = charts.trend_chart(dash, built["trend"])
    if "scorer_distributions" in built:
        context["histograms"] = charts.histograms(built["scorer_distributions"])
        context["attack_matrices"] = [
            matrix_view(dash, item, "automated outcome", "human verdict")
            for item in built["attack_agreement"]
        ]
        context["score_matrices"] = [
            matrix_view(dash, item, "automated score", "human score")
            for item in built["score_agreement"]
        ]
    return context


def _part_url(dash: DashboardRequest, part: str) -> str:
    pairs = list(dash.params) + dash.option_pairs()
    url = reverse("dashboards-part", args=[part])
    return f"{url}?{urlencode(pairs)}" if pairs else url


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def dashboard(request: HttpRequest) -> HttpResponse:
    """The dashboard: headline, breakdowns, heat map, eval-hash groups, trend, scorers.

    Attack-level widgets render with the page. The parts of :data:`LATE_PARTS` — those that
    follow attacks down to their pieces (volume, converters, scorers), whose cost grows with
    the pieces behind the filtered attacks, and the framework breakdowns — load right after
    it, side by side, from :func:`dashboard_part` (htmx; without JavaScript, a link opens
    each).
    """
    dash = DashboardRequest.from_query(request.GET, user=request.user)
    context: dict[str, Any] = {
        "dash": dash,
        "choices": attack_filter_options(roles=DASHBOARD_ROLES),
        "axis_choices": [(name, DIMENSIONS[name].title) for name in AXIS_DIMENSIONS],
        "trend_choices": [(name, DIMENSIONS[name].title) for name in TREND_SPLITS],
        **_form_state(dash),
    }
    if not dash.valid:
        context["errors"] = dash.errors
        return render(request, "dashboards/dashboard.html", context, status=400)
    # Read once for the six widgets that sum it (docs/dashboards.md → Performance).
    attack_facts(dash.scope)
    built = {w.name: w.build(dash) for w in WIDGETS if w.name not in LATE_WIDGETS}
    context.update(widget_context(dash, built))
    context.update(
        {
            "part_urls": {part: _part_url(dash, part) for part in LATE_PARTS},
            "active_filters": _active_filters(dash),
            "label_key": dash.label_key,
            "label_keys": dash.label_keys,
            "generated_at": timezone.now(),
        }
    )
    return render(request, "dashboards/dashboard.html", context)


def _invalid(dash: DashboardRequest) -> HttpResponse:
    """400 for a fragment or CSV asked for with bad filters: one plain line per parameter."""
    lines = [f"{name}: {'; '.join(messages)}" for name, messages in dash.errors.items()]
    return HttpResponse("\n".join(lines), status=400, content_type="text/plain; charset=utf-8")


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def dashboard_part(request: HttpRequest, part: str) -> HttpResponse:
    """One late part of the dashboard (same filters and options), as an HTML fragment."""
    names = LATE_PARTS.get(part)
    if names is None:
        raise Http404("No such dashboard part")
    dash = DashboardRequest.from_query(request.GET, user=request.user)
    if not dash.valid:
        return _invalid(dash)
    built = {name: WIDGETS_BY_NAME[name].build(dash) for name in names}
    context = {"dash": dash, **widget_context(dash, built)}
    partial = "breakdowns" if part in LATE_BREAKDOWNS else part
    return render(request, f"dashboards/dashboard.html#part-{partial}", context)


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def dashboard_csv(request: HttpRequest, table: str) -> HttpResponse:
    """One dashboard table as CSV, for the same filters and options as the page."""
    widget_name = TABLE_WIDGETS.get(table)
    if widget_name is None:
        raise Http404("No such dashboard table")
    dash = DashboardRequest.from_query(request.GET, user=request.user)
    if not dash.valid:
        return _invalid(dash)
    built = {widget_name: WIDGETS_BY_NAME[widget_name].build(dash)}
    content = tables_for(dash, built)[table].to_csv()
    response = HttpResponse(content, content_type="text/csv; charset=utf-8")
    return as_attachment(response, f"redline-{table}-{file_stamp()}.csv")
