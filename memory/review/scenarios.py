"""Scenario runs as pages: the list of runs and one run with its atomic attacks.

A PyRIT scenario runs several atomic attacks (one per technique) against one target and
files each attack result under its atomic attack's collection. The list answers "what ran,
against what, how far did it get, how often did it work"; a run's page breaks the success
rate down per atomic attack and links every figure to the attacks behind it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import Count, F
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import urlencode

from memory.models import ScenarioResult
from memory.review.lists import (
    When,
    active_filters,
    camel_wrap,
    canonical_url,
    format_duration,
    needs_cleanup,
    pagination_context,
    run_list,
)
from memory.review.thread import IdentNode, identifier_rows
from memory.storage.filters import ScenarioResultFilter
from memory.storage.selectors import scenario_collection_outcomes, scenario_outcomes
from redteam.core.choices import ScenarioRunState
from redteam.core.stats import OutcomeCounts, rate_text

VIEW_PERMISSION = "memory.view_scenarioresult"
#: The one sort of the run list: newest first.
RUN_SORTS = {"created": (F("creation_time"), False)}

#: Run states that mean the run is over.
FINISHED = {ScenarioRunState.COMPLETED, ScenarioRunState.FAILED, ScenarioRunState.CANCELLED}


def _duration(run: ScenarioResult) -> str:
    """How long the run took; empty while it has not finished."""
    if run.completion_time is None:
        return ""
    ms = int((run.completion_time - run.creation_time).total_seconds() * 1000)
    return format_duration(max(ms, 0))


@dataclass
class RunRow:
    """A scenario run as the list shows it."""

    run: ScenarioResult
    counts: OutcomeCounts
    when: When | None
    duration: str
    attacks_url: str

    @property
    def rate(self) -> dict[str, str]:
        """The success rate for people (see :func:`redteam.core.stats.rate_text`)."""
        return rate_text(self.counts)

    @property
    def target_display(self) -> str:
        """The target's class, breakable at its camel-case joints."""
        target = self.run.objective_target_identifier
        return camel_wrap(target.class_name if target else "")


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def scenario_list(request: HttpRequest) -> HttpResponse:
    """Scenario runs, newest first: scenario, state, target, time, attacks, success rate.

    Queries: session and user, the count, the page's ids, its rows, and one grouped count of
    their attack results' outcomes.
    """
    if needs_cleanup(request):
        return HttpResponseRedirect(canonical_url(request))
    filterset, page, _, errors = run_list(
        request,
        filterset_class=ScenarioResultFilter,
        base=ScenarioResult.objects.all(),
        sorts=RUN_SORTS,
        default_sort="-created",
        load=lambda pks: ScenarioResult.objects.filter(pk__in=pks).select_related(
            "objective_target_identifier", "objective_scorer_identifier"
        ),
    )
    if page is not None:
        counts = scenario_outcomes(scenario_ids=[run.pk for run in page.rows])
        attack_list = reverse("attack-list")
        page.rows = [
            RunRow(
                run=run,
                counts=counts.get(run.pk, OutcomeCounts()),
                when=When.of(run.creation_time),
                duration=_duration(run),
                attacks_url=f"{attack_list}?scenario={run.pk}",
            )
            for run in page.rows
        ]
    names = list(
        ScenarioResult.objects.order_by("scenario_name")
        .values_list("scenario_name", flat=True)
        .distinct()
    )
    context = {
        "filterset": filterset,
        "page": page,
        "errors": errors,
        "chips": active_filters(request.GET, filterset),
        "clear_url": reverse("scenario-list"),
        "scenario_names": names,
        "states": ScenarioRunState.choices,
        "selected_states": request.GET.getlist("state"),
    }
    if page is not None:
        context.update(pagination_context(request.GET, page))
    return render(
        request,
        "review/scenario_list.html",
        context,
        status=400 if errors else 200,
    )


@dataclass
class CollectionRow:
    """One atomic attack of a run: its name, display group and outcome counts."""

    name: str
    display: str
    counts: OutcomeCounts
    attacks_url: str

    @property
    def rate(self) -> dict[str, str]:
        """The success rate for people (see :func:`redteam.core.stats.rate_text`)."""
        return rate_text(self.counts)


@dataclass
class RunPage:
    """Everything a run's page shows."""

    run: ScenarioResult
    total: OutcomeCounts
    collections: list[CollectionRow]
    duration: str
    finished: bool
    scenario_tree: IdentNode | None
    target_tree: IdentNode | None
    scorer_tree: IdentNode | None
    attacks_url: str

    @property
    def rate(self) -> dict[str, str]:
        """The run's success rate for people."""
        return rate_text(self.total)


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def scenario_detail(request: HttpRequest, scenario_id) -> HttpResponse:
    """One scenario run: state, timing, configuration, and each atomic attack's success rate
    (with its 95 % interval) linking to its attacks."""
    run = get_object_or_404(
        ScenarioResult.objects.select_related(
            "scenario_identifier", "objective_target_identifier", "objective_scorer_identifier"
        ).annotate(attack_count=Count("attack_results")),
        pk=scenario_id,
    )
    per_collection = scenario_collection_outcomes(scenario_id=run.pk)
    attack_list = reverse("attack-list")
    attacks_url = f"{attack_list}?{urlencode({'scenario': run.pk})}"
    display_map = run.display_group_map if isinstance(run.display_group_map, dict) else {}
    collections = [
        CollectionRow(
            name=name,
            display=str(display_map.get(name, "")) if name else "",
            counts=counts,
            attacks_url=(
                f"{attack_list}?{urlencode({'scenario': run.pk, 'atomic_attack': name})}"
                if name
                else attacks_url
            ),
        )
        for name, counts in sorted(per_collection.items())
    ]
    total = sum((row.counts for row in collections), OutcomeCounts())
    nodes = identifier_rows(
        roots=[
            run.scenario_identifier,
            run.objective_target_identifier,
            run.objective_scorer_identifier,
        ]
    )

    def tree(row) -> IdentNode | None:
        return nodes.get(row.hash) if row is not None else None

    page = RunPage(
        run=run,
        total=total,
        collections=collections,
        duration=_duration(run),
        finished=run.scenario_run_state in FINISHED,
        scenario_tree=tree(run.scenario_identifier),
        target_tree=tree(run.objective_target_identifier),
        scorer_tree=tree(run.objective_scorer_identifier),
        attacks_url=attacks_url,
    )
    return render(request, "review/scenario_detail.html", {"page": page, "run": run})
