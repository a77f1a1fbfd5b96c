"""Server-side SVG charts: geometry computed here, drawn by the templates in
``templates/jinja2/dashboards/`` (so every label is escaped by the template engine).

No JavaScript and no chart library: the charts are static SVG with ``<a>`` elements, so every
bar, point and cell is a drill-down link and the page prints as it looks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from memory.dashboards.widgets import DashboardRequest
from memory.storage import aggregates as ag
from redteam.core.stats import HISTOGRAM_BINS, OutcomeCounts

#: Series colours (colour-blind-safe Okabe–Ito order, the Redline red first).
PALETTE = ["#b3261e", "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#6b7280"]


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def heat_colour(rate: float | None) -> str:
    """White at 0 % to Redline red at 100 %; grey when there is no rate."""
    if rate is None:
        return "#e5e7eb"
    low, high = (255, 255, 255), (179, 38, 30)
    r, g, b = (round(lo + (hi - lo) * rate) for lo, hi in zip(low, high, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass
class Bar:
    """One row of a horizontal ASR bar chart."""

    y: float
    label: str
    full_label: str
    counts: OutcomeCounts
    href: str | None
    width: float
    ci_x1: float | None
    ci_x2: float | None
    value_text: str
    low_n: bool
    muted: bool = False


@dataclass
class BarChart:
    """Horizontal bars of success rate with 95 % Wilson whiskers; one row per group."""

    title: str
    bars: list[Bar]
    width: int = 560
    label_width: int = 190
    plot_width: int = 220
    row_height: int = 26
    top: int = 22
    ticks: list[tuple[float, str]] = field(default_factory=list)

    @property
    def height(self) -> int:
        return self.top + self.row_height * max(len(self.bars), 1) + 8

    @property
    def plot_x(self) -> int:
        return self.label_width

    @property
    def value_x(self) -> int:
        return self.label_width + self.plot_width + 8

    @property
    def bar_height(self) -> int:
        return self.row_height - 10


def bar_chart(request: DashboardRequest, title: str, groups: list[ag.Group]) -> BarChart:
    """An ASR bar per group; bars link to the group's decided attacks (successes + failures)."""
    chart = BarChart(title, [])
    scale = chart.plot_width
    chart.ticks = [
        (chart.plot_x + scale * t, f"{round(t * 100)} %") for t in (0, 0.25, 0.5, 0.75, 1)
    ]
    for i, group in enumerate(groups):
        counts = group.counts
        asr, ci = counts.asr, counts.ci
        if asr is None:
            value = f"no rate: {counts.attacks:,} undecided"
        else:
            value = f"{asr * 100:.1f} % (n {counts.n:,})"
        chart.bars.append(
            Bar(
                y=chart.top + i * chart.row_height,
                label=_short(group.label, 24),
                full_label=group.label,
                counts=counts,
                href=request.attacks_url(group.params, ("success", "failure")),
                width=0 if asr is None else max(scale * asr, 1.5),
                ci_x1=None if ci is None else chart.plot_x + scale * ci[0],
                ci_x2=None if ci is None else chart.plot_x + scale * ci[1],
                value_text=value,
                low_n=counts.low_n,
                muted=group.key is None,
            )
        )
    return chart


@dataclass
class Segment:
    x: float
    width: float
    colour: str
    label: str
    count: int
    href: str | None


def outcome_strip(
    request: DashboardRequest, counts: OutcomeCounts, width: int = 640
) -> list[Segment]:
    """One stacked bar of all attacks by outcome (undetermined and errors shown apart)."""
    parts = [
        ("success", "successes", counts.successes, "#b3261e"),
        ("failure", "failures", counts.failures, "#57606a"),
        ("undetermined", "undetermined", counts.undetermined, "#d4a72c"),
        ("error", "errors", counts.errors, "#1f2328"),
    ]
    total = counts.attacks or 1
    x = 0.0
    segments = []
    for outcome, label, value, colour in parts:
        w = width * value / total
        segments.append(
            Segment(
                x, w, colour, label, value, request.attacks_url((), (outcome,)) if value else None
            )
        )
        x += w
    return segments


@dataclass
class HeatCellBox:
    x: float
    y: float
    colour: str
    text_colour: str
    rate_text: str
    n_text: str
    href: str | None
    title: str
    low_n: bool
    empty: bool


@dataclass
class HeatMapChart:
    """A grid of success rates; rows and columns ordered by volume."""

    rows: list[tuple[float, str, str]]
    cols: list[tuple[float, str, str]]
    cells: list[HeatCellBox]
    width: int
    height: int
    cell_w: int = 78
    cell_h: int = 38
    left: int = 190
    top: int = 96


def heatmap_chart(request: DashboardRequest, heat: ag.HeatMap) -> HeatMapChart:
    chart = HeatMapChart([], [], [], 0, 0)
    # Room on the right for the last column's slanted label.
    chart.width = chart.left + chart.cell_w * max(len(heat.col_keys), 1) + 90
    chart.height = chart.top + chart.cell_h * max(len(heat.row_keys), 1) + 8
    for j, col in enumerate(heat.col_keys):
        label = heat.label(heat.cols, col)
        chart.cols.append(
            (chart.left + j * chart.cell_w + chart.cell_w / 2, _short(label, 18), label)
        )
    for i, row in enumerate(heat.row_keys):
        label = heat.label(heat.rows, row)
        chart.rows.append(
            (chart.top + i * chart.cell_h + chart.cell_h / 2, _short(label, 26), label)
        )
        for j, col in enumerate(heat.col_keys):
            cell = heat.cell(row, col)
            x, y = chart.left + j * chart.cell_w, chart.top + i * chart.cell_h
            if cell is None:
                chart.cells.append(
                    HeatCellBox(
                        x,
                        y,
                        "#ffffff",
                        "#5b6676",
                        "",
                        "",
                        None,
                        f"{label} × {heat.label(heat.cols, col)}: no attacks",
                        False,
                        True,
                    )
                )
                continue
            c = cell.counts
            rate = c.asr
            dark = rate is not None and rate > 0.55
            chart.cells.append(
                HeatCellBox(
                    x,
                    y,
                    heat_colour(rate),
                    "#ffffff" if dark else "#1c2430",
                    "–" if rate is None else f"{rate * 100:.0f} %",
                    f"n {c.n:,}",
                    request.attacks_url(cell.params, ("success", "failure"))
                    if c.n
                    else request.attacks_url(cell.params),
                    f"{label} × {heat.label(heat.cols, col)}: "
                    + (
                        "no decided attacks"
                        if rate is None
                        else f"ASR {rate * 100:.1f} % "
                        f"(95 % CI {c.ci_low * 100:.1f}–{c.ci_high * 100:.1f} %)"
                    )
                    + f", n {c.n:,} of {c.attacks:,} attacks"
                    + (" — low n" if c.low_n else ""),
                    c.low_n,
                    False,
                )
            )
    return chart


@dataclass
class TrendChart:
    """Volume bars per period with the success rate line (and its CI band) on top."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    bars: list[dict[str, Any]]
    band: str
    lines: list[dict[str, Any]]
    y_ticks: list[tuple[float, str, str]]
    x_labels: list[tuple[float, str]]
    max_volume: int


def trend_chart(request: DashboardRequest, trend: ag.Trend, *, max_series: int = 6) -> TrendChart:
    width, height = 760, 250
    left, right, top, bottom = 52, 52, 24, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    points = trend.points
    n = max(len(points), 1)
    step = plot_w / n
    max_volume = max((p.counts.attacks for p in points), default=0) or 1
    bars, band_upper, band_lower = [], [], []
    total_line: list[dict[str, Any]] = []
    series_lines: dict[Any, list[dict[str, Any]]] = {k: [] for k in trend.series_keys[:max_series]}

    def y_rate(rate: float) -> float:
        return top + plot_h * (1 - rate)

    for i, point in enumerate(points):
        x = left + i * step
        volume = point.counts.attacks
        h = plot_h * volume / max_volume
        cx = x + step / 2
        day = trend.label(point)
        bars.append(
            {
                "x": x + step * 0.12,
                "y": top + plot_h - h,
                "w": max(step * 0.76, 1),
                "h": h,
                "href": request.attacks_url(point.params) if volume else None,
                "title": f"{trend.period} from {day}: {volume:,} attacks",
            }
        )
        c = point.counts
        if c.asr is not None:
            total_line.append(
                {
                    "x": cx,
                    "y": y_rate(c.asr),
                    "href": request.attacks_url(point.params, ("success", "failure")),
                    "title": f"{day}: ASR {c.asr * 100:.1f} % (95 % CI {c.ci_low * 100:.1f}–"
                    f"{c.ci_high * 100:.1f} %), n {c.n:,}",
                    "low_n": c.low_n,
                }
            )
            band_upper.append(f"{cx:.1f},{y_rate(c.ci_high):.1f}")
            band_lower.append(f"{cx:.1f},{y_rate(c.ci_low):.1f}")
        for key, line in series_lines.items():
            s = point.series.get(key)
            if s is None or s.asr is None:
                continue
            group = trend.split.group_params(key) if trend.split else None
            line.append(
                {
                    "x": cx,
                    "y": y_rate(s.asr),
                    "href": request.attacks_url(
                        None if group is None else point.params + group, ("success", "failure")
                    ),
                    "title": f"{key} {day}: ASR {s.asr * 100:.1f} %, n {s.n:,}",
                    "low_n": s.low_n,
                }
            )
    lines = []
    if trend.split:
        for index, (key, line) in enumerate(series_lines.items()):
            label = trend.split.none_label if key is None else str(key)
            lines.append(
                {
                    "label": label,
                    "colour": PALETTE[(index + 1) % len(PALETTE)],
                    "points": line,
                    "path": " ".join(f"{p['x']:.1f},{p['y']:.1f}" for p in line),
                }
            )
    lines.insert(
        0,
        {
            "label": "all attacks",
            "colour": PALETTE[0],
            "points": total_line,
            "path": " ".join(f"{p['x']:.1f},{p['y']:.1f}" for p in total_line),
        },
    )
    band = " ".join(band_upper + list(reversed(band_lower)))
    # A volume tick only where it is a whole number of attacks (max 1: "0, 0, 1" before).
    y_ticks = [
        (
            y_rate(t),
            f"{round(t * 100)} %",
            f"{max_volume * t:,.0f}" if t != 0.5 or max_volume % 2 == 0 else "",
        )
        for t in (0, 0.5, 1)
    ]
    every = max(1, round(n / 8))
    x_labels = []
    shown_day = None
    for i, p in enumerate(points):
        if i % every:
            continue
        local = timezone.localtime(p.start)
        label = local.strftime("%d %b")
        if trend.period == "hour":
            # Hours, with the date where it changes (and on the first label).
            label = local.strftime("%H:%M" if local.date() == shown_day else "%d %b %H:%M")
            shown_day = local.date()
        x_labels.append((left + i * step + step / 2, label))
    return TrendChart(
        width, height, left, right, top, bottom, bars, band, lines, y_ticks, x_labels, max_volume
    )


@dataclass
class Histogram:
    scorer: str
    bars: list[dict[str, Any]]
    width: int = 300
    height: int = 120
    total: int = 0


def histograms(distributions: list[ag.ScorerDistribution]) -> list[Histogram]:
    """One ten-bin histogram per scorer that produced float-scale scores."""
    out = []
    for dist in distributions:
        if not dist.float_count:
            continue
        hist = Histogram(dist.scorer, [], total=dist.float_count)
        peak = max(dist.bins) or 1
        plot_h, step = 84, (hist.width - 20) / HISTOGRAM_BINS
        for i, value in enumerate(dist.bins):
            h = plot_h * value / peak
            hist.bars.append(
                {
                    "x": 10 + i * step + 1,
                    "y": 8 + plot_h - h,
                    "w": step - 2,
                    "h": h,
                    "value": value,
                    "label": f"{i / HISTOGRAM_BINS:.1f}–{(i + 1) / HISTOGRAM_BINS:.1f}",
                }
            )
        out.append(hist)
    return out
