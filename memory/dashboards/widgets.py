"""A dashboard request (filters + options) and the registry of widgets built from it.

The page, the CSV export, the stats API and ``bench/dashboards.py`` all go through
:class:`DashboardRequest` and :data:`WIDGETS`, so they count the same attacks the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from django import forms
from django.http import QueryDict
from django.urls import reverse
from django.utils.http import urlencode

from memory.models import AttackResult, Label
from memory.storage import aggregates as ag
from memory.storage.filters import AttackResultFilter
from memory.storage.queues import blind_hidden_attacks, with_seen_human_outcome

#: Filter parameters the dashboard ignores: it counts outcomes, so it never filters on them.
IGNORED_FILTERS = frozenset({"outcome", "effective_outcome"})


def filter_names() -> list[str]:
    """The shared attack filter's parameters the dashboard passes on, in declaration order."""
    return [name for name in AttackResultFilter.base_filters if name not in IGNORED_FILTERS]


@cache
def repeatable(name: str) -> bool:
    """Whether the filter parameter ``name`` takes several values (``labels``, …)."""
    widget = AttackResultFilter.base_filters[name].field.widget
    # The widgets that read every value of a parameter (``getlist``): multiple selects
    # (choices) and ``MultipleHiddenInput`` (labels, harm categories), which does not set
    # ``allow_multiple_selected``.
    return isinstance(widget, forms.SelectMultiple | forms.MultipleHiddenInput)


class DashboardOptionsForm(forms.Form):
    """How the dashboard counts and draws, beside the filters (all kept in the URL)."""

    source = forms.ChoiceField(
        choices=list(ag.SOURCE_LABELS.items()),
        required=False,
    )
    label_key = forms.CharField(max_length=255, required=False, strip=True)
    period = forms.ChoiceField(
        choices=[("auto", "Auto"), ("hour", "Hour"), ("day", "Day"), ("week", "Week")],
        required=False,
    )
    trend_by = forms.ChoiceField(
        choices=[("", "All attacks")]
        + [(name, ag.DIMENSIONS[name].title) for name in ag.TREND_SPLITS],
        required=False,
    )
    heat_rows = forms.ChoiceField(
        choices=[(name, ag.DIMENSIONS[name].title) for name in ag.AXIS_DIMENSIONS], required=False
    )
    heat_cols = forms.ChoiceField(
        choices=[(name, ag.DIMENSIONS[name].title) for name in ag.AXIS_DIMENSIONS], required=False
    )
    eval_limit = forms.ChoiceField(
        choices=[("20", "Top 20"), ("50", "Top 50"), ("all", "All")], required=False
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["source"] = ag.Source(data.get("source") or ag.Source.AUTOMATED)
        data["period"] = data.get("period") or "auto"
        data["heat_rows"] = data.get("heat_rows") or "attack_class"
        data["heat_cols"] = data.get("heat_cols") or "target_model"
        data["eval_limit"] = data.get("eval_limit") or "20"
        if data["heat_rows"] == data["heat_cols"]:
            self.add_error("heat_cols", "Choose two different dimensions for the heat map.")
        return data


@dataclass
class DashboardRequest:
    """Parsed dashboard parameters: the filtered attacks (scope) and the display options."""

    query: QueryDict
    filterset: AttackResultFilter
    options: DashboardOptionsForm
    params: ag.Params
    errors: dict[str, list[str]] = field(default_factory=dict)
    #: The attacks whose verdicts blind review hides from the reader (``ag.Scope.hidden``).
    hidden: Any = None

    @classmethod
    def from_query(cls, query: QueryDict, *, user: Any = None) -> DashboardRequest:
        """Validate ``query`` (a request's GET) against the shared filter and the options.

        Blind review: the verdicts hidden from ``user`` count as not given, in the filters and
        in the "human where reviewed" figures alike (no ``user``: nobody is blinded)."""
        params: list[tuple[str, str]] = []
        for name in filter_names():
            values = [v for v in query.getlist(name) if v != ""]
            if not repeatable(name):
                # A single-valued filter reads the last value, as QueryDict.get does.
                values = values[-1:]
            params += [(name, value) for value in values]
        data = QueryDict(mutable=True)
        for name, value in params:
            data.appendlist(name, value)
        hidden = None if user is None else blind_hidden_attacks(user=user)
        filterset = AttackResultFilter(
            data=data,
            queryset=with_seen_human_outcome(
                attacks=AttackResult.objects.all(), hidden=hidden, select=False
            ),
        )
        options = DashboardOptionsForm(query)
        errors: dict[str, list[str]] = {}
        if not filterset.is_valid():
            errors.update({k: [str(m) for m in v] for k, v in filterset.errors.items()})
        if not options.is_valid():
            errors.update({k: [str(m) for m in v] for k, v in options.errors.items()})
        return cls(query, filterset, options, tuple(params), errors, hidden)

    @property
    def valid(self) -> bool:
        return not self.errors

    @cached_property
    def scope(self) -> ag.Scope:
        if not self.valid:
            raise ValueError("invalid dashboard request")
        return ag.Scope(
            self.filterset.qs, self.options.cleaned_data["source"], self.params, hidden=self.hidden
        )

    def option(self, name: str) -> Any:
        return self.options.cleaned_data[name]

    @property
    def eval_limit(self) -> int | None:
        """How many eval-hash groups the page and its CSV show (None: all)."""
        value = self.option("eval_limit")
        return None if value == "all" else int(value)

    @cached_property
    def label_keys(self) -> list[str]:
        """Every label key in memory, sorted. One query."""
        return list(Label.objects.order_by("key").values_list("key", flat=True).distinct())

    @cached_property
    def label_key(self) -> str | None:
        """The label key to break down by: the one asked for, else ``operation`` if used, else
        the first key (one query to find it)."""
        asked = self.option("label_key")
        if asked:
            return asked
        keys = self.label_keys
        if "operation" in keys:
            return "operation"
        return keys[0] if keys else None

    # --- URLs ---------------------------------------------------------------------------------

    def option_pairs(self, **overrides: str) -> list[tuple[str, str]]:
        """The non-default display options as query pairs (for links that keep them)."""
        pairs = []
        for name in DashboardOptionsForm.base_fields:
            value = overrides.get(name, self.query.get(name, ""))
            if value:
                pairs.append((name, value))
        return pairs

    def attacks_url(
        self, params: ag.Params | None = (), outcomes: tuple[str, ...] = ()
    ) -> str | None:
        """The attack list showing exactly the attacks of ``params`` within this scope.

        ``outcomes`` adds the outcome parameter of the current source (``outcome`` or
        ``effective_outcome``). ``None`` in, ``None`` out (a group no filter can select).
        """
        if params is None:
            return None
        replaced = {name for name, _ in params if not repeatable(name)}
        pairs = [(k, v) for k, v in self.params if k not in replaced] + list(params)
        pairs += [(self.scope.outcome_param, outcome) for outcome in outcomes]
        url = self._attack_list_url
        return f"{url}?{self._encode(pairs)}" if pairs else url

    @cached_property
    def _attack_list_url(self) -> str:
        return reverse("attack-list")

    @cached_property
    def _encoded_pairs(self) -> dict[tuple[str, str], str]:
        return {}

    def _encode(self, pairs: list[tuple[str, str]]) -> str:
        """``urlencode(pairs)``, each distinct pair encoded once per request.

        A page draws thousands of drill-down links from a few dozen distinct pairs, and
        ``urlencode`` joins its encoded pairs with ``&``, so joining cached ones is the same text.
        """
        encoded = self._encoded_pairs
        parts = []
        for pair in pairs:
            text = encoded.get(pair)
            if text is None:
                text = encoded[pair] = urlencode([pair])
            parts.append(text)
        return "&".join(parts)

    def dashboard_url(self, *, without: tuple[str, str] | None = None, **options: str) -> str:
        """This dashboard with one filter value dropped or some options changed."""
        pairs = [p for p in self.params if p != without] + self.option_pairs(**options)
        url = reverse("dashboards")
        return f"{url}?{urlencode(pairs)}" if pairs else url

    def csv_url(self, table: str) -> str:
        pairs = list(self.params) + self.option_pairs()
        url = reverse("dashboards-csv", args=[table])
        return f"{url}?{urlencode(pairs)}" if pairs else url


@dataclass(frozen=True)
class Widget:
    """One dashboard widget: a name and how to build its aggregate from a request."""

    name: str
    title: str
    build: Callable[[DashboardRequest], Any]


def _breakdown(name: str) -> Widget:
    def build(request: DashboardRequest) -> ag.Breakdown:
        label_key = request.label_key if name == "label" else None
        return ag.breakdown(request.scope, name, label_key=label_key)

    return Widget(f"asr_by_{name}", ag.DIMENSIONS[name].title, build)


def _trend(request: DashboardRequest) -> ag.Trend:
    return ag.trend(
        request.scope, period=request.option("period"), split=request.option("trend_by") or None
    )


def _heatmap(request: DashboardRequest) -> ag.HeatMap:
    rows, cols = request.option("heat_rows"), request.option("heat_cols")
    label_key = request.label_key if "label" in (rows, cols) else None
    return ag.heatmap(request.scope, rows, cols, label_key=label_key)


#: Every widget of the page, in page order.
WIDGETS: list[Widget] = [
    Widget("headline", "Headline", lambda r: ag.headline(r.scope)),
    Widget("volume", "Conversations, pieces and scores", lambda r: ag.volume(r.scope)),
    *[_breakdown(name) for name in ag.BREAKDOWNS],
    Widget("heatmap", "Heat map", _heatmap),
    Widget("eval_hash", "Same attack across endpoints", lambda r: ag.eval_hash_breakdown(r.scope)),
    Widget("trend", "Trend", _trend),
    Widget(
        "scorer_distributions", "Score distributions", lambda r: ag.scorer_distributions(r.scope)
    ),
    Widget(
        "attack_agreement", "Human vs automated outcome", lambda r: ag.attack_agreement(r.scope)
    ),
    Widget("score_agreement", "Human vs automated scores", lambda r: ag.score_agreement(r.scope)),
]
WIDGETS_BY_NAME = {widget.name: widget for widget in WIDGETS}

#: Widgets the page loads after itself (``/dashboards/part/<name>/``), side by side: those that
#: follow attacks down to their pieces (their cost grows with the pieces behind the filtered
#: attacks), and the three framework breakdowns, whose shared crosswalk tally groups every
#: attack by class and harm categories (docs/dashboards.md → Performance).
LATE_PARTS: dict[str, tuple[str, ...]] = {
    "volume": ("volume",),
    "converter": ("asr_by_converter",),
    "framework": ("asr_by_owasp", "asr_by_atlas", "asr_by_nist"),
    "scorers": ("scorer_distributions", "attack_agreement", "score_agreement"),
}
LATE_WIDGETS = frozenset(name for names in LATE_PARTS.values() for name in names)
#: The late part each late widget comes with.
PART_OF = {name: part for part, names in LATE_PARTS.items() for name in names}
