"""Scenario runs as pages: the list of runs and a run's atomic attacks."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.template.loader import render_to_string

from memory.models import HumanVerdict, ScenarioResult
from redteam.core.choices import AttackOutcome, ScenarioRunState
from redteam.core.stats import OutcomeCounts, percent_text, wilson_interval
from tests.conftest import logged_in
from tests.exporters.conftest import ingest_ok
from tests.factories import NOW, make_attack, make_identifier, make_scenario
from tests.ingest.conftest import EXPORT_110, load
from tests.queries import get_counted

pytestmark = pytest.mark.django_db


def _run(name="foundry.red_team", outcomes=None, **fields) -> ScenarioResult:
    """A run whose attacks are filed per atomic attack: ``{collection: [outcome, ...]}``."""
    run = make_scenario(
        scenario_name=name,
        objective_target_identifier=make_identifier("OpenAIChatTarget", model_name="gpt-4o"),
        **fields,
    )
    for collection, results in (outcomes or {}).items():
        for outcome in results:
            make_attack(
                outcome=outcome,
                attribution_parent=run,
                attribution_data={"parent_collection": collection},
            )
    return run


S, F, U, E = (
    AttackOutcome.SUCCESS,
    AttackOutcome.FAILURE,
    AttackOutcome.UNDETERMINED,
    AttackOutcome.ERROR,
)


def _cells(html: str, run: ScenarioResult) -> str:
    """The list row of ``run``."""
    row = re.search(
        rf'<tr>\s*<td data-label="Scenario"><a href="/scenarios/{run.pk}/".*?</tr>', html, re.S
    )
    assert row, f"no row for {run.pk}"
    return row.group(0)


def test_the_list_shows_each_run_with_its_attacks_and_success_rate(viewer_client):
    run = _run(
        outcomes={"base64": [S, S, F], "rot13": [F, U, E]},
        scenario_run_state=ScenarioRunState.COMPLETED,
        completion_time=NOW + timedelta(seconds=75),
    )

    html = viewer_client.get("/scenarios/").content.decode()

    row = _cells(html, run)
    assert "foundry.red_team" in row and "Completed" in row and "gpt-4o" in row
    assert f'href="/attacks/?scenario={run.pk}">6</a>' in row
    # PyRIT's rate: 2 successes of 4 decided (undetermined and error left out).
    assert "50.0 %" in row
    assert "1 m 15 s" in row
    assert "not finished" not in row


def test_a_human_verdict_counts_in_the_rate(viewer_client, reviewer):
    run = _run(outcomes={"base64": [F, F]})
    attack = run.attack_results.first()
    attack.human_outcome = AttackOutcome.SUCCESS
    attack.save(update_fields=["human_outcome"])

    row = _cells(viewer_client.get("/scenarios/").content.decode(), run)

    assert "50.0 %" in row


def test_the_run_page_breaks_the_rate_down_per_atomic_attack(viewer_client):
    run = _run(
        outcomes={"base64": [S, S, S, F], "rot13": [F, F, U]},
        display_group_map={"base64": "Base64 encoding"},
    )

    html = viewer_client.get(f"/scenarios/{run.pk}/").content.decode()

    low, high = wilson_interval(3, 4)
    assert f"{percent_text(low)} – {percent_text(high)}" in html
    assert "Base64 encoding" in html
    assert "75.0 %" in html and "0.0 %" in html
    # Overall: 3 of 6 decided.
    assert "3 of 6 decided" in html
    assert f'href="/attacks/?scenario={run.pk}&amp;atomic_attack=rot13"' in html


def test_an_atomic_attack_link_lists_exactly_its_attacks(viewer_client):
    run = _run(outcomes={"base64": [S, F], "rot13": [F]})
    _run(name="other", outcomes={"base64": [S]})

    url = f"/attacks/?scenario={run.pk}&atomic_attack=base64"
    html = viewer_client.get(url).content.decode()

    expected = run.attack_results.filter(attribution_data__parent_collection="base64")
    shown = set(re.findall(r'href="/attacks/([0-9a-f-]{36})/"', html))
    assert shown == {str(a.pk) for a in expected}


def test_a_fixture_scenario_from_pyrit_reads_as_pyrit_filed_it(viewer_client):
    document = load(EXPORT_110)
    ingest_ok(document)
    [dump] = document["scenario_results"]
    run = ScenarioResult.objects.get(pk=dump["id"])

    html = viewer_client.get(f"/scenarios/{run.pk}/").content.decode()

    for collection, attacks in dump["attack_results"].items():
        assert f"atomic_attack={collection}" in html
        display = dump["display_group_map"].get(collection)
        if display:
            assert display in html
        assert run.attack_results.filter(
            attribution_data__parent_collection=collection
        ).count() == len(attacks)
    assert "FixtureScenario" in html and "LocalFakeChatTarget" in html


def test_filters_narrow_the_list_and_a_bad_one_is_a_400(viewer_client):
    done = _run(name="done", scenario_run_state=ScenarioRunState.COMPLETED)
    running = _run(name="running", scenario_run_state=ScenarioRunState.IN_PROGRESS)

    html = viewer_client.get("/scenarios/?state=IN_PROGRESS").content.decode()
    assert f"/scenarios/{running.pk}/" in html and f"/scenarios/{done.pk}/" not in html

    response = viewer_client.get("/scenarios/?created_after=last-tuesday")
    assert response.status_code == 400
    assert "created_after" in response.content.decode()


def test_the_list_costs_the_same_queries_for_3_or_30_runs(viewer_client):
    for _ in range(3):
        _run(outcomes={"a": [S, F]})
    small, _ = get_counted(viewer_client, "/scenarios/")
    for _ in range(27):
        _run(outcomes={"a": [S], "b": [F]})
    large, response = get_counted(viewer_client, "/scenarios/")
    assert response.content.decode().count('data-label="Scenario"') == 30
    assert large == small


def test_a_running_scenario_says_how_long_it_has_been_running(viewer_client):
    run = _run(scenario_run_state=ScenarioRunState.IN_PROGRESS)

    html = viewer_client.get(f"/scenarios/{run.pk}/").content.decode()

    assert "Running for" in html and "In progress" in html


def test_scenarios_need_the_view_permission(member, client):
    run = _run()
    nobody = logged_in(member(username="nobody"))
    assert nobody.get("/scenarios/").status_code == 403
    assert nobody.get(f"/scenarios/{run.pk}/").status_code == 403
    assert client.get("/scenarios/").status_code == 302


def test_the_api_filters_attack_results_by_scenario(bot):
    from django.test import Client

    from redteam.tokens import api_token_create

    run = _run(outcomes={"base64": [S, F], "rot13": [F]})
    _run(outcomes={"base64": [S]})
    _, raw = api_token_create(user=bot, scope="read")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    body = api.get(f"/api/v1/attack-results/?scenario={run.pk}&atomic_attack=base64").json()

    assert len(body["results"]) == 2
    assert {r["attribution_parent_id"] for r in body["results"]} == {str(run.pk)}


def test_outcome_counts_are_read_in_one_grouped_query(django_assert_num_queries):
    from memory.storage.selectors import scenario_outcomes

    runs = [_run(outcomes={"a": [S, F, U], "b": [E]}) for _ in range(3)]
    with django_assert_num_queries(1):
        counts = scenario_outcomes(scenario_ids=[r.pk for r in runs])
    assert counts[runs[0].pk] == OutcomeCounts(successes=1, failures=1, undetermined=1, errors=1)
    assert HumanVerdict.objects.count() == 0


def test_the_outcome_legend_counts_in_plain_words():
    counts = OutcomeCounts(successes=1, failures=2, undetermined=3, errors=2)
    html = render_to_string("review/parts/outcome_bar.html", {"counts": counts})
    legend = html.split('class="outcome-legend', 1)[1]
    assert ">1 success<" in legend and ">2 failures<" in legend
    assert ">3 undetermined<" in legend and ">2 errors<" in legend
    assert 'aria-label="1 success, 2 failures, 3 undetermined, 2 errors"' in html
