"""``/api/v1/stats/…``: authentication, the same numbers as the page, drill-down URLs, errors,
the OpenAPI description."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlsplit

import pytest
from django.test import Client

from redteam.tokens import api_token_create
from tests.dashboards.conftest import filtered_ids

GROUP_BY = [
    "attack_class",
    "target_model",
    "converter",
    "harm_category",
    "dataset",
    "label",
    "scorer",
    "eval_hash",
]
COUNT_FIELDS = ("attacks", "successes", "failures", "undetermined", "errors", "n")


@pytest.fixture
def token_client(viewer):
    """A client sending a read-scope token of the viewer."""
    _, raw = api_token_create(user=viewer, scope="read")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def csv_rows(client, slug: str, query: str = "") -> list[dict[str, str]]:
    response = client.get(f"/dashboards/csv/{slug}.csv?{query}")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def counts_of(row: dict) -> tuple[int, ...]:
    return tuple(int(row[f if f != "n" else "n (decided)"]) for f in COUNT_FIELDS)


def test_authentication_and_permission(client, reader, pyrit_memory):
    assert client.get("/api/v1/stats/summary").status_code == 401
    _, raw = api_token_create(user=reader, scope="read")
    denied = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert denied.get("/api/v1/stats/asr?group_by=attack_class").status_code == 403


@pytest.mark.parametrize("group_by", GROUP_BY)
@pytest.mark.parametrize("query", ["", "labels=operation:op_blue_heron&source=human"])
def test_asr_matches_the_page_table(token_client, viewer_client, pyrit_memory, group_by, query):
    extra = "&eval_limit=all" if group_by == "eval_hash" else ""
    response = token_client.get(f"/api/v1/stats/asr?group_by={group_by}&{query}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["group_by"] == group_by
    slug = "eval_hash" if group_by == "eval_hash" else f"asr_by_{group_by}"
    rows = csv_rows(viewer_client, slug, query + extra)
    if group_by == "eval_hash":
        rows = [r for r in rows if r["identifier"].endswith("identifier(s)")]
        table = {r["eval hash"]: counts_of(r) for r in rows}
    else:
        table = {r[next(iter(r))]: counts_of(r) for r in rows}
    api = {
        (g["key"] if g["key"] is not None else g["label"]): tuple(g[f] for f in COUNT_FIELDS)
        for g in body["groups"]
    }
    assert api == table
    for group in body["groups"]:
        assert group["asr"] == (group["successes"] / group["n"] if group["n"] else None)
        if group["drilldown"] is None:
            continue
        parts = urlsplit(group["drilldown"])
        assert parts.path == "/attacks/"
        assert len(filtered_ids(parts.query)) == group["attacks"]
        for member in group.get("members", []):
            member_query = urlsplit(member["drilldown"]).query
            assert len(filtered_ids(member_query)) == member["attacks"]


def test_summary_matches_the_headline(token_client, viewer_client, pyrit_memory):
    body = token_client.get("/api/v1/stats/summary?harm_category=privacy").json()
    headline = {
        r["measure"]: r["value"]
        for r in csv_rows(viewer_client, "headline", "harm_category=privacy")
    }
    volume = {
        r["measure"]: r["value"] for r in csv_rows(viewer_client, "volume", "harm_category=privacy")
    }
    total = body["total"]
    assert total["attacks"] == int(headline["attacks"])
    assert total["successes"] == int(headline["successes"])
    assert total["errors"] == int(headline["errors"])
    assert total["asr"] == pytest.approx(float(headline["ASR"]), abs=1e-6)
    assert total["ci_low"] == pytest.approx(float(headline["95 % CI low"]), abs=1e-6)
    assert body["pieces"] == int(volume["pieces"])
    assert body["scores"] == int(volume["scores"])
    assert body["conversations"] == int(volume["conversations"])
    assert len(filtered_ids(urlsplit(body["drilldown"]).query)) == total["attacks"]


def test_heatmap_trend_and_scorers_match_the_page(token_client, viewer_client, pyrit_memory):
    heat = token_client.get("/api/v1/stats/heatmap?rows=scorer&cols=target_model").json()
    page = csv_rows(viewer_client, "heatmap", "heat_rows=scorer&heat_cols=target_model")
    assert len(heat["cells"]) == len(page)
    by_pair = {(r["Objective scorer (last score)"], r["Objective target (model)"]): r for r in page}
    for cell in heat["cells"]:
        row = by_pair[(cell["row"] or "(no score)", cell["col"] or "(no model name)")]
        assert tuple(cell[f] for f in COUNT_FIELDS) == counts_of(row)

    trend = token_client.get("/api/v1/stats/trend?period=day&split=attack_class").json()
    page = [
        r
        for r in csv_rows(viewer_client, "trend", "period=day&trend_by=attack_class")
        if r["Attack class"] == "all"
    ]
    assert [p["attacks"] for p in trend["points"]] == [int(r["attacks"]) for r in page]
    for point in trend["points"]:
        assert len(filtered_ids(urlsplit(point["drilldown"]).query)) == point["attacks"]
        for series in point["series"]:
            if series["drilldown"]:
                query = urlsplit(series["drilldown"]).query
                assert len(filtered_ids(query)) == series["attacks"]

    scorers = token_client.get("/api/v1/stats/scorers").json()
    page = {r["scorer"]: r for r in csv_rows(viewer_client, "scorer_distributions")}
    assert {d["scorer"] for d in scorers["distributions"]} == set(page)
    for dist in scorers["distributions"]:
        row = page[dist["scorer"]]
        assert dist["true"] == int(row["true"])
        assert dist["bins"] == [int(v) for k, v in row.items() if "–" in k]


def test_bad_parameters_are_400_with_the_reason(token_client, pyrit_memory):
    response = token_client.get("/api/v1/stats/asr")
    assert response.status_code == 400
    assert "group_by" in response.json()["detail"]
    response = token_client.get("/api/v1/stats/asr?group_by=label&labels=oops")
    assert response.status_code == 400
    assert "labels" in response.json()["errors"]
    response = token_client.get("/api/v1/stats/heatmap?rows=label&cols=label")
    assert response.status_code == 400
    assert "cols" in response.json()["errors"]
    response = token_client.get("/api/v1/stats/trend?period=month")
    assert response.status_code == 400
    assert "period" in response.json()["errors"]


def test_schema_documents_the_stats_endpoints(admin_client):
    schema = admin_client.get("/api/schema/?format=json").json()
    asr = schema["paths"]["/api/v1/stats/asr"]["get"]
    names = {p["name"] for p in asr["parameters"]}
    assert {"group_by", "labels", "harm_category", "source", "timestamp_after"} <= names
    assert "outcome" not in names
    for path in ("summary", "heatmap", "trend", "scorers"):
        assert f"/api/v1/stats/{path}" in schema["paths"]
    group = schema["components"]["schemas"]["Group"]["properties"]
    assert {
        "successes",
        "failures",
        "undetermined",
        "errors",
        "asr",
        "ci_low",
        "ci_high",
        "n",
    } <= set(group)
