"""The dashboard page, its late parts and CSV downloads: access, drill-down, CSV = table,
pinned query counts."""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import urlsplit

import pytest
from django.urls import reverse
from django.utils.http import urlencode

from memory.dashboards.widgets import LATE_PARTS, WIDGETS, DashboardRequest
from tests.dashboards.conftest import dash, filtered_ids
from tests.dashboards.html import DashboardHTML
from tests.queries import count_queries, get_counted

NUMBER = re.compile(r"^\d[\d,]*$")
QUERIES = [
    "",
    "labels=operation:op_blue_heron",
    "source=human&harm_category=privacy",
    "attack_class=PromptSendingAttack&heat_rows=scorer&heat_cols=label&label_key=operator",
    "trend_by=target_model&period=week&eval_limit=all",
]


def whole_page(client, query: str = "") -> list[DashboardHTML]:
    """The page and its late parts, parsed."""
    response = client.get(f"/dashboards/?{query}")
    assert response.status_code == 200, response.content[:2000]
    pages = [DashboardHTML(response.content.decode())]
    for part in LATE_PARTS:
        part_response = client.get(f"/dashboards/part/{part}/?{query}")
        assert part_response.status_code == 200
        pages.append(DashboardHTML(part_response.content.decode()))
    return pages


def test_login_and_view_permission_required(client, reader, pyrit_memory):
    response = client.get("/dashboards/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert client.get("/dashboards/part/volume/").status_code == 302
    client.force_login(reader)
    assert client.get("/dashboards/").status_code == 403
    assert client.get("/dashboards/csv/headline.csv").status_code == 403
    assert client.get("/dashboards/part/scorers/").status_code == 403


def test_page_shows_every_widget(viewer_client, pyrit_memory):
    pages = whole_page(viewer_client)
    ids = {a.get("id") for p in pages for _, a in p.tags}
    for section in (
        "headline",
        "volume",
        "asr_by_attack_class",
        "asr_by_target_model",
        "asr_by_converter",
        "asr_by_harm_category",
        "asr_by_dataset",
        "asr_by_label",
        "asr_by_scorer",
        "heatmap",
        "eval_hash",
        "trend",
        "scorers",
    ):
        assert section in ids, section
    svgs = [a for p in pages for tag, a in p.tags if tag == "svg"]
    assert len(svgs) >= 10
    assert all(float(a["width"]) > 0 and float(a["height"]) > 0 for a in svgs)
    # The heat map says what its colours, hatching and dashes mean.
    html = viewer_client.get("/dashboards/").content.decode()
    legend = html[html.index('class="legend heat-legend"') :][:800]
    assert "success rate" in legend and "fewer than 10 decided attacks" in legend
    assert "no decided attack" in legend


@pytest.mark.parametrize("query", QUERIES)
def test_every_counted_link_lists_exactly_that_many_attacks(viewer_client, pyrit_memory, query):
    checked = 0
    for page in whole_page(viewer_client, query):
        for link in page.links:
            parts = urlsplit(link.href)
            if parts.path != "/attacks/":
                continue
            # Every drill-down is valid for the shared filter (the helper asserts it).
            ids = filtered_ids(parts.query)
            if NUMBER.match(link.text):
                assert len(ids) == int(link.text.replace(",", "")), (link.href, link.text)
                checked += 1
    assert checked > 50


def test_drill_down_links_are_the_urlencoded_filters(db):
    """The links reuse each pair's encoding within a request: the text is ``urlencode``'s."""
    filters = [
        ("labels", "operation:op blue"),
        ("labels", "é&x:1+2"),
        ("attack_class", "Crescendo Attack"),
    ]
    request = dash(urlencode(filters))
    outcome = request.scope.outcome_param
    for _ in range(2):  # the second time from the request's encoded pairs
        link = request.attacks_url((("attack_class", "Red/Teaming?"),), ("success", "failure"))
        assert link == reverse("attack-list") + "?" + urlencode(
            [
                *filters[:2],
                ("attack_class", "Red/Teaming?"),
                (outcome, "success"),
                (outcome, "failure"),
            ]
        )
        assert request.attacks_url() == reverse("attack-list") + "?" + urlencode(filters)
    assert dash("").attacks_url() == reverse("attack-list")


def test_drill_down_opens_the_attack_list_with_the_same_count(viewer_client, pyrit_memory):
    [page, *_] = whole_page(viewer_client)
    link = next(
        lk
        for lk in page.links
        if lk.href.startswith("/attacks/?")
        and "attack_class=" in lk.href
        and NUMBER.match(lk.text)
        and int(lk.text) > 1
    )
    response = viewer_client.get(link.href, follow=True)
    assert response.status_code == 200
    count = re.search(rb'class="result-count"[^>]*>\s*<strong>(\d+)</strong>', response.content)
    assert count, response.content[:3000]
    assert int(count.group(1)) == int(link.text)


def _same(html: str, value: str) -> bool:
    """Whether a table cell shows the CSV value (numbers formatted, hashes shortened)."""
    if html == value:
        return True
    if value.startswith("'") and html == value[1:]:
        return True  # a defused spreadsheet formula
    if value in ("yes", "no"):
        return (value == "yes") == bool(html)
    if value == "":
        return html in ("", "–")
    if html == "" and re.fullmatch(r"\d{4}-\d\d-\d\d|[0-9a-f]{64}", value):
        return True  # a trend or eval-hash group's key, repeated on its member rows
    if NUMBER.match(html) and value.isdigit():
        return int(html.replace(",", "")) == int(value)
    if html.endswith(" %"):
        # Shown with one decimal, written with six.
        return abs(float(html[:-2]) - float(value) * 100) <= 0.05 + 1e-9
    if re.fullmatch(r"-?\d+\.\d{6}", value):
        return abs(float(html) - float(value)) <= 5e-4 + 1e-9
    return len(html) >= 8 and value.startswith(html.rstrip("…"))  # a shortened hash


@pytest.mark.parametrize("query", QUERIES[:3])
def test_each_csv_holds_exactly_its_table(viewer_client, pyrit_memory, query):
    seen = 0
    for page in whole_page(viewer_client, query):
        csv_links = [lk for lk in page.links if lk.href.startswith("/dashboards/csv/")]
        for link in csv_links:
            slug = urlsplit(link.href).path.rsplit("/", 1)[1].removesuffix(".csv")
            if slug not in page.tables:
                continue
            response = viewer_client.get(link.href)
            assert response.status_code == 200
            assert response["Content-Type"].startswith("text/csv")
            assert "attachment" in response["Content-Disposition"]
            rows = list(csv.reader(io.StringIO(response.content.decode())))
            header, body = rows[0], rows[1:]
            assert header == page.headers[slug]
            shown = [r for r in page.tables[slug] if r != ["Nothing in scope."]]
            assert len(body) == len(shown), slug
            for html_row, csv_row in zip(shown, body, strict=True):
                assert len(html_row) == len(csv_row)
                for html_cell, csv_cell in zip(html_row, csv_row, strict=True):
                    assert _same(html_cell, csv_cell), (slug, html_cell, csv_cell)
            seen += 1
    assert seen >= 12


def test_csv_defuses_formulas_and_page_escapes_markup(viewer_client, db):
    from tests.api.conftest import tag
    from tests.factories import make_attack, make_identifier

    attack = make_attack(attack_identifier=make_identifier('=HYPERLINK("x")Attack'))
    tag(attack, {"operation": "<script>alert(1)</script>"})
    response = viewer_client.get("/dashboards/?label_key=operation")
    assert b"<script>alert(1)</script>" not in response.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in response.content
    body = viewer_client.get("/dashboards/csv/asr_by_attack_class.csv").content.decode()
    assert "'=HYPERLINK" in body
    assert "\n=HYPERLINK" not in body


def test_bad_input_is_a_clear_400(viewer_client, pyrit_memory):
    response = viewer_client.get("/dashboards/?labels=nocolon&timestamp_after=yesterday")
    assert response.status_code == 400
    assert b"is not a label filter" in response.content
    assert b"timestamp_after" in response.content
    response = viewer_client.get("/dashboards/?heat_rows=label&heat_cols=label")
    assert response.status_code == 400
    assert b"two different dimensions" in response.content
    response = viewer_client.get("/dashboards/csv/asr_by_label.csv?eval_hash=xyz")
    assert response.status_code == 400
    assert b"eval_hash" in response.content
    assert viewer_client.get("/dashboards/csv/nope.csv").status_code == 404
    assert viewer_client.get("/dashboards/part/nope/").status_code == 404
    # The ignored outcome filters never narrow the dashboard.
    assert dash("outcome=success").params == ()


#: Queries per widget, whatever the number of rows (the comment says what each one reads).
WIDGET_QUERIES = {
    # outcome totals, attacks with a human verdict (unfiltered or one label: the attack facts'
    # rollup, 1)
    "headline": 2,
    # conversations, pieces and scores in one statement (unfiltered: the count and score
    # rollups; filtered: the scope's conversations)
    "volume": 1,
    "asr_by_attack_class": 2,  # the attack facts, their identifier names
    "asr_by_target_model": 2,
    # (converter, attack) links, identifier names, outcome totals (unfiltered or one label: the
    # converter sets with the totals from the rollups, 1, and the names)
    "asr_by_converter": 3,
    "asr_by_harm_category": 1,
    # crosswalk, counts per attack class and harm-category list
    "asr_by_owasp": 2,
    "asr_by_atlas": 2,
    "asr_by_nist": 2,
    "asr_by_dataset": 2,  # counts per objective hash, seeds holding them
    "asr_by_label": 4,  # label keys (default key), the key's labels, counts, outcome totals
    "asr_by_scorer": 2,
    "heatmap": 2,
    "eval_hash": 2,  # the attack facts, their identifier names
    # first and last attack ("auto" period), counts per day or hour (unfiltered: the hour
    # rollup, 1)
    "trend": 2,
    "scorer_distributions": 2,  # counts per scorer id and bin, identifier names
    "attack_agreement": 1,  # attacks with a verdict (none on the page: the facts')
    "score_agreement": 2,  # human scores, machine scores on their pieces (+1 filtered)
}


def _widget_counts(query: str) -> dict[str, int]:
    out = {}
    for widget in WIDGETS:
        request = DashboardRequest.from_query(dash(query).query)
        out[widget.name], _ = count_queries(widget.build, request)
    return out


@pytest.mark.parametrize("query", ["", "labels=operation:op_blue_heron&trend_by=attack_class"])
def test_widget_query_counts_do_not_depend_on_rows(pyrit_memory, query):
    expected = dict(WIDGET_QUERIES)
    # Read from the rollups: the whole memory's, or one label's (docs/dashboards.md → Rollups).
    expected["headline"] = 1
    expected["asr_by_converter"] = 2
    if not query:
        expected["trend"] = 1
    if "trend_by" in query:
        expected["trend"] = 3  # and the series' identifier names
    if "labels" in query:
        expected["score_agreement"] = 3  # and which human-scored pieces are in scope
        # and, for each widget, the label filter's look-up of the label's id
        expected = {name: count + 1 for name, count in expected.items()}
    assert _widget_counts(query) == expected
    # Twice the memory: the 0.12 export on top.
    import json

    from memory.transfer.ingest.service import ingest
    from tests.conftest import FIXTURES_DIR

    ingest(
        payload=json.loads((FIXTURES_DIR / "pyrit-0.12.1-legacy" / "export.json").read_text()),
        partial=False,
    )
    assert _widget_counts(query) == expected


def test_page_query_count_is_pinned(viewer_client, pyrit_memory):
    small, _ = get_counted(viewer_client, "/dashboards/")
    from tests.factories import make_attack

    for outcome in ("success", "failure", "error"):
        make_attack(outcome=outcome)
    assert get_counted(viewer_client, "/dashboards/")[0] == small
    # Session, user, permissions (2), side-panel choices (4: the attack list's own
    # ``attack_filter_options`` without scorers), then the
    # inline widgets: the attack facts and their identifier names once for the headline,
    # attack class, target, scorer, heat map and eval hash (2); harm categories (1); seed
    # datasets (2); label keys (shared with the side panel's list), the key's labels and their
    # counts (3: the totals are the facts'); the trend (1: the hour rollup, which gives the
    # "auto" period too). Unfiltered, the facts, harm categories, datasets, labels and trend
    # read the rollups (docs/dashboards.md → Rollups). The framework breakdowns come late,
    # as a part of their own. Each widget grouping on its own was 20.
    assert small == 2 + 2 + 4 + 2 + 1 + 2 + 3 + 1


def test_each_late_part_has_a_placeholder_and_a_no_js_link(viewer_client, pyrit_memory):
    """The page names every late part once, with its filters: htmx fetches it, and without
    JavaScript a link opens it. The framework cards come only with their part."""
    query = "labels=operation:op_blue_heron&source=human"
    page = whole_page(viewer_client, query)[0]
    fetched = [a["hx-get"] for tag, a in page.tags if "hx-get" in a]
    expected = [f"/dashboards/part/{part}/?{query.replace(':', '%3A')}" for part in LATE_PARTS]
    assert sorted(fetched) == sorted(expected)
    assert {link.href for link in page.links} >= set(expected)
    ids = {a.get("id") for _, a in page.tags}
    assert not ids & {"asr_by_owasp", "asr_by_atlas", "asr_by_nist"}
    framework = DashboardHTML(
        viewer_client.get(f"/dashboards/part/framework/?{query}").content.decode()
    )
    cards = [a["id"] for tag, a in framework.tags if tag == "section"]
    assert cards == ["asr_by_owasp", "asr_by_atlas", "asr_by_nist"]
    assert {link.href.split("?")[0] for link in framework.links} >= {
        "/attacks/",
        "/dashboards/csv/asr_by_owasp.csv",
    }


def test_late_part_query_counts_are_pinned(viewer_client, pyrit_memory):
    """Each late part runs its widgets' own queries after the request's four."""
    parts = {
        "volume": WIDGET_QUERIES["volume"],
        "converter": 2,  # converter sets with the outcome totals, identifier names
        # the crosswalk tally of the scope (2), shared by the OWASP, ATLAS and NIST cards
        "framework": WIDGET_QUERIES["asr_by_owasp"],
        "scorers": WIDGET_QUERIES["scorer_distributions"]
        + WIDGET_QUERIES["attack_agreement"]
        + WIDGET_QUERIES["score_agreement"],
    }
    for part, widgets in parts.items():
        count, _ = get_counted(viewer_client, f"/dashboards/part/{part}/")
        assert count == 4 + widgets, part


HOSTILE = ["", "%", "%00", "x" * 3000, "1:2:3", "'; DROP TABLE x; --", "<svg onload=1>", "\u202e"]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_never_break_the_page(viewer_client, pyrit_memory, value):
    names = [
        "labels",
        "harm_category",
        "framework",
        "target_model",
        "attack_class",
        "dataset",
        "timestamp_after",
        "eval_hash",
        "has_human_verdict",
        "source",
        "label_key",
        "period",
        "trend_by",
        "heat_rows",
        "eval_limit",
    ]
    for name in names:
        for url in ("/dashboards/", "/dashboards/csv/heatmap.csv", "/dashboards/part/scorers/"):
            response = viewer_client.get(url, {name: value})
            assert response.status_code in (200, 400), (url, name, value)
            if response["Content-Type"].startswith("text/html"):
                assert b"<svg onload=1>" not in response.content
            else:  # CSV or a plain-text error: never rendered as markup (nosniff is on)
                assert response["Content-Type"].startswith(("text/csv", "text/plain"))


def test_repeatable_filters_are_capped_and_count_a_repeat_once(viewer_client, pyrit_memory):
    many = "&".join(["harm_category=privacy"] * 300)
    assert viewer_client.get("/dashboards/?" + many).status_code == 200
    eleven = "&".join(f"labels=k{n}:v" for n in range(11))
    response = viewer_client.get("/dashboards/?" + eleven)
    assert response.status_code == 400
    assert "at most 10 values" in response.content.decode()
