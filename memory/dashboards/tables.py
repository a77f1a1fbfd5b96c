"""Every dashboard table as rows of cells: rendered as HTML and written as CSV from one source.

A :class:`Cell` keeps the raw value (what the CSV gets), the text shown, and the drill-down
link. Because the page and the CSV export both come from :func:`tables_for`, the CSV always
holds exactly the table the page shows.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memory.dashboards.widgets import DashboardRequest
from memory.storage import aggregates as ag
from redteam.core.downloads import SafeCsvWriter
from redteam.core.stats import OutcomeCounts, bin_bounds, percent_text


@dataclass(frozen=True)
class Cell:
    """One table cell: raw value, display text, optional link and CSS class."""

    value: Any
    text: str
    href: str | None = None
    css: str = ""
    title: str = ""

    @property
    def csv(self) -> str:
        if self.value is None:
            return ""
        if isinstance(self.value, bool):
            return "yes" if self.value else "no"
        if isinstance(self.value, float):
            return f"{self.value:.6f}"
        return str(self.value)


@dataclass
class Table:
    """A titled table; ``slug`` names its CSV download."""

    slug: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    numeric: set[int] = field(default_factory=set)

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = SafeCsvWriter(out, lineterminator="\r\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow([cell.csv for cell in row])
        return out.getvalue()


def count(value: int, href: str | None = None, *, title: str = "") -> Cell:
    return Cell(value, f"{value:,}", href if value else None, title=title)


COUNT_COLUMNS = [
    "attacks",
    "successes",
    "failures",
    "undetermined",
    "errors",
    "n (decided)",
    "ASR",
    "95 % CI low",
    "95 % CI high",
    "low n",
]


def count_cells(request: DashboardRequest, counts: OutcomeCounts, params: ag.Params | None):
    """The shared columns of every success-rate row, each number linked to its attacks."""

    def link(*outcomes: str) -> str | None:
        return request.attacks_url(params, outcomes)

    return [
        count(counts.attacks, link()),
        count(counts.successes, link("success")),
        count(counts.failures, link("failure")),
        count(counts.undetermined, link("undetermined")),
        count(counts.errors, link("error")),
        count(counts.n, link("success", "failure")),
        Cell(counts.asr, percent_text(counts.asr), link("success") if counts.successes else None),
        Cell(counts.ci_low, percent_text(counts.ci_low)),
        Cell(counts.ci_high, percent_text(counts.ci_high)),
        Cell(
            counts.low_n,
            "low n" if counts.low_n else "",
            css="low-n" if counts.low_n else "",
            title="Fewer than 10 decided attacks" if counts.low_n else "",
        ),
    ]


def _numeric(columns: list[str], first_text: int) -> set[int]:
    return {i for i in range(first_text, len(columns)) if columns[i] != "low n"}


def headline_table(request: DashboardRequest, headline: ag.Headline) -> Table:
    table = Table("headline", "Headline", ["measure", "value"], numeric={1})
    c = headline.counts
    rows: list[tuple[str, Cell]] = [
        ("attacks", count(c.attacks, request.attacks_url())),
        ("successes", count(c.successes, request.attacks_url((), ("success",)))),
        ("failures", count(c.failures, request.attacks_url((), ("failure",)))),
        ("undetermined", count(c.undetermined, request.attacks_url((), ("undetermined",)))),
        ("errors", count(c.errors, request.attacks_url((), ("error",)))),
        ("n (decided)", count(c.n, request.attacks_url((), ("success", "failure")))),
        ("ASR", Cell(c.asr, percent_text(c.asr))),
        ("95 % CI low", Cell(c.ci_low, percent_text(c.ci_low))),
        ("95 % CI high", Cell(c.ci_high, percent_text(c.ci_high))),
        (
            "attacks with a human verdict",
            count(headline.human_reviewed, request.attacks_url((("has_human_verdict", "true"),))),
        ),
    ]
    table.rows = [[Cell(name, name), cell] for name, cell in rows]
    return table


def volume_table(request: DashboardRequest, volume: ag.Volume) -> Table:
    where = "in memory" if volume.whole_memory else "behind the attacks"
    table = Table("volume", f"Conversations, pieces and scores {where}", ["measure", "value"])
    table.numeric = {1}
    # Not linked: the attack list counts attacks, and these are not attacks.
    table.rows = [
        [Cell(name, name), count(value)]
        for name, value in (
            ("conversations", volume.conversations),
            ("pieces", volume.pieces),
            ("scores", volume.scores),
        )
    ]
    return table


def breakdown_table(request: DashboardRequest, slug: str, breakdown: ag.Breakdown) -> Table:
    # A framework entry shows as its tag (what the CSV and the filter use) and its title.
    framework = bool(breakdown.dimension.framework)
    if framework:
        columns = ["tag", "entry"]
    else:
        columns = [breakdown.dimension.title if breakdown.dimension.name != "label" else "value"]
    columns += COUNT_COLUMNS
    title = breakdown.title if framework else breakdown.title.lower()
    first_count = len(columns) - len(COUNT_COLUMNS)
    table = Table(slug, f"ASR by {title}", columns, numeric=_numeric(columns, first_count))
    for group in breakdown.groups:
        shown = group.key if framework and group.key is not None else group.label
        cells = [
            Cell(
                group.label if group.key is None else group.key,
                shown,
                request.attacks_url(group.params),
                css="none-group" if group.key is None else "",
                title="" if group.linkable else "No attack-list filter selects this group",
            )
        ]
        if framework:
            entry = "" if group.key is None else group.label.partition(" ")[2]
            cells.append(Cell(entry, entry))
        table.rows.append([*cells, *count_cells(request, group.counts, group.params)])
    return table


def eval_hash_table(request: DashboardRequest, breakdown: ag.Breakdown) -> Table:
    columns = ["eval hash", "identifier", "class", "attack classes", "targets", *COUNT_COLUMNS]
    table = Table(
        "eval_hash", "Same attack across endpoints", columns, numeric=_numeric(columns, 5)
    )
    for group in breakdown.groups[: request.eval_limit]:
        table.rows.append(
            [
                Cell(group.key, group.key[:12], request.attacks_url(group.params), title=group.key),
                Cell(
                    f"{len(group.members)} identifier(s)",
                    f"{len(group.members)} identifier(s)",
                    css="muted",
                ),
                Cell(None, ""),
                Cell(
                    " / ".join(sorted({c for m in group.members for c in m["attack_classes"]})),
                    " / ".join(sorted({c for m in group.members for c in m["attack_classes"]})),
                ),
                Cell(
                    " / ".join(sorted({t for m in group.members for t in m["targets"]})),
                    " / ".join(sorted({t for m in group.members for t in m["targets"]})),
                ),
                *count_cells(request, group.counts, group.params),
            ]
        )
        for member in group.members:
            params = group.params + member["params"]
            table.rows.append(
                [
                    Cell(group.key, "", css="member"),
                    Cell(
                        member["hash"],
                        member["hash"][:12],
                        request.attacks_url(params),
                        css="hash",
                        title=member["hash"],
                    ),
                    Cell(member["class_name"], member["class_name"]),
                    Cell(
                        " / ".join(member["attack_classes"]), " / ".join(member["attack_classes"])
                    ),
                    Cell(" / ".join(member["targets"]), " / ".join(member["targets"])),
                    *count_cells(request, member["counts"], params),
                ]
            )
    return table


def heatmap_table(request: DashboardRequest, heat: ag.HeatMap) -> Table:
    columns = [heat.rows.title, heat.cols.title, *COUNT_COLUMNS]
    table = Table("heatmap", "Heat map", columns, numeric=_numeric(columns, 2))
    for row in heat.row_keys:
        for col in heat.col_keys:
            cell = heat.cell(row, col)
            if cell is None:
                continue
            table.rows.append(
                [
                    Cell(heat.label(heat.rows, row), heat.label(heat.rows, row)),
                    Cell(heat.label(heat.cols, col), heat.label(heat.cols, col)),
                    *count_cells(request, cell.counts, cell.params),
                ]
            )
    return table


def trend_table(request: DashboardRequest, trend: ag.Trend) -> Table:
    split = trend.split.title if trend.split else "series"
    columns = [f"{trend.period} from", split, *COUNT_COLUMNS]
    table = Table("trend", "Trend", columns, numeric=_numeric(columns, 2))
    for point in trend.points:
        day = trend.label(point)
        table.rows.append(
            [Cell(day, day), Cell("all", "all"), *count_cells(request, point.counts, point.params)]
        )
        for key in trend.series_keys:
            counts = point.series.get(key)
            if counts is None:
                continue
            group = trend.split.group_params(key) if trend.split else None
            params = None if group is None else point.params + group
            label = trend.split.none_label if key is None else str(key)
            table.rows.append(
                [Cell(day, ""), Cell(label, label), *count_cells(request, counts, params)]
            )
    return table


def scorer_table(request: DashboardRequest, distributions: list[ag.ScorerDistribution]) -> Table:
    bins = [f"{lo:.1f}–{hi:.1f}" for lo, hi in (bin_bounds(i) for i in range(10))]
    columns = ["scorer", *bins, "true", "false", "undetermined"]
    table = Table("scorer_distributions", "Score distributions", columns, numeric=set(range(1, 14)))
    for dist in distributions:
        table.rows.append(
            [
                Cell(dist.scorer, dist.scorer),
                *[count(n) for n in dist.bins],
                count(dist.true),
                count(dist.false),
                count(dist.undetermined),
            ]
        )
    return table


def agreement_tables(
    request: DashboardRequest, slug: str, title: str, items: list[ag.ScorerAgreement]
) -> list[Table]:
    """A κ summary per scorer and the confusion matrices in long form (one row per cell)."""
    summary = Table(
        f"{slug}_kappa",
        f"{title}: agreement per scorer",
        ["scorer", "items", "observed agreement", "chance agreement", "Cohen's κ"],
        numeric={1, 2, 3, 4},
    )
    cells = Table(
        f"{slug}_matrix",
        f"{title}: confusion matrix",
        ["scorer", "automated", "human", "count"],
        numeric={3},
    )
    for item in items:
        a = item.agreement
        summary.rows.append(
            [
                Cell(item.scorer, item.scorer),
                count(a.n),
                Cell(a.observed, percent_text(a.observed)),
                Cell(a.expected, percent_text(a.expected)),
                Cell(a.kappa, "undefined" if a.kappa is None else f"{a.kappa:.3f}"),
            ]
        )
        for i, machine in enumerate(a.categories):
            for j, human in enumerate(a.categories):
                value = a.matrix[i][j]
                if not value:
                    continue
                href = request.attacks_url(item.cell_params.get((machine, human)))
                cells.rows.append(
                    [
                        Cell(item.scorer, item.scorer),
                        Cell(machine, machine),
                        Cell(human, human),
                        count(value, href),
                    ]
                )
    return [summary, cells]


def tables_for(request: DashboardRequest, built: dict[str, Any]) -> dict[str, Table]:
    """Every table of the page by slug, from the widgets already built (``WIDGETS`` names)."""
    tables: dict[str, Table] = {}
    if "headline" in built:
        tables["headline"] = headline_table(request, built["headline"])
    if "volume" in built:
        tables["volume"] = volume_table(request, built["volume"])
    for name in ag.BREAKDOWNS:
        widget = f"asr_by_{name}"
        if widget in built:
            tables[widget] = breakdown_table(request, widget, built[widget])
    if "heatmap" in built:
        tables["heatmap"] = heatmap_table(request, built["heatmap"])
    if "eval_hash" in built:
        tables["eval_hash"] = eval_hash_table(request, built["eval_hash"])
    if "trend" in built:
        tables["trend"] = trend_table(request, built["trend"])
    if "scorer_distributions" in built:
        tables["scorer_distributions"] = scorer_table(request, built["scorer_distributions"])
    for name, title in (
        ("attack_agreement", "Human verdict vs automated outcome"),
        ("score_agreement", "Human score vs automated score"),
    ):
        if name in built:
            for table in agreement_tables(request, name, title, built[name]):
                tables[table.slug] = table
    return tables


#: CSV slug -> the widget that builds it.
TABLE_WIDGETS = {
    "headline": "headline",
    "volume": "volume",
    **{f"asr_by_{name}": f"asr_by_{name}" for name in ag.BREAKDOWNS},
    "heatmap": "heatmap",
    "eval_hash": "eval_hash",
    "trend": "trend",
    "scorer_distributions": "scorer_distributions",
    "attack_agreement_kappa": "attack_agreement",
    "attack_agreement_matrix": "attack_agreement",
    "score_agreement_kappa": "score_agreement",
    "score_agreement_matrix": "score_agreement",
}


def rows_text(table: Table) -> Iterable[list[str]]:
    """The displayed text of each row (tests compare it with the CSV)."""
    for row in table.rows:
        yield [cell.text for cell in row]
