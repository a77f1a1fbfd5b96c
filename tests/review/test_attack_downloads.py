"""The filtered attack list as CSV and JSON downloads, from the browser and from the API."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.test import Client

from memory.storage.attack_table import table_header
from redteam.core.choices import AttackOutcome
from redteam.tokens import api_token_create
from tests.conftest import logged_in
from tests.factories import NOW, make_attack, make_conversation, make_identifier
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


def _fetch(client: Client, url: str) -> tuple[int, object, str]:
    """(queries run, response, body): the streamed body is read inside the count."""

    def get():
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        return response, body.decode()

    queries, (response, body) = count_queries(get)
    return queries, response, body


def _attacks(successes: int, failures: int) -> list:
    target = make_identifier("OpenAIChatTarget", model_name="gpt-4o")
    attack_class = make_identifier("PromptSendingAttack")
    made = []
    for index in range(successes + failures):
        made.append(
            make_attack(
                make_conversation(target_identifier=target),
                objective=f"objective {index:02d}",
                outcome=AttackOutcome.SUCCESS if index < successes else AttackOutcome.FAILURE,
                timestamp=NOW - timedelta(minutes=index),
                attack_identifier=attack_class,
                executed_turns=index + 1,
                labels={"operation": "op-1"},
            )
        )
    return made


def _rows(body: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body)))


def test_the_csv_holds_every_match_of_the_filters_newest_first(viewer_client):
    made = _attacks(3, 2)

    _, response, body = _fetch(viewer_client, "/attacks/?outcome=success&format=csv")

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="redline-attacks-')
    assert body.splitlines()[0].split(",") == table_header(with_links=True)
    rows = _rows(body)
    assert [r["attack_result_id"] for r in rows] == [str(a.id) for a in made[:3]]
    first = rows[0]
    assert first["outcome"] == "success"
    assert first["attack_class"] == "PromptSendingAttack"
    assert first["target_model"] == "gpt-4o"
    assert json.loads(first["labels"]) == {"operation": "op-1"}
    assert first["url"] == f"http://testserver/attacks/{made[0].id}/"


def test_the_sort_of_the_list_is_the_order_of_the_file(viewer_client):
    _attacks(2, 2)

    _, _, body = _fetch(viewer_client, "/attacks/?sort=-objective&format=csv")

    objectives = [r["objective"] for r in _rows(body)]
    assert objectives == sorted(objectives, reverse=True)


def test_json_gives_the_same_rows_with_their_types(viewer_client):
    _attacks(2, 1)

    _, _, csv_body = _fetch(viewer_client, "/attacks/?format=csv")
    _, response, json_body = _fetch(viewer_client, "/attacks/?format=json")

    assert response["Content-Type"] == "application/json"
    rows = json.loads(json_body)
    assert [r["attack_result_id"] for r in rows] == [r["attack_result_id"] for r in _rows(csv_body)]
    assert rows[0]["executed_turns"] == 1
    assert rows[0]["labels"] == {"operation": "op-1"}
    assert list(rows[0]) == table_header(with_links=True)


def test_a_formula_in_llm_text_is_defused_in_csv_and_kept_in_json(viewer_client):
    payload = '=HYPERLINK("http://evil.example","click")'
    make_attack(objective=payload, outcome_reason="-2+3")

    _, _, csv_body = _fetch(viewer_client, "/attacks/?format=csv")
    _, _, json_body = _fetch(viewer_client, "/attacks/?format=json")

    [row] = _rows(csv_body)
    assert row["objective"] == "'" + payload
    assert row["outcome_reason"] == "'-2+3"
    assert json.loads(json_body)[0]["objective"] == payload


def test_the_download_costs_the_same_queries_for_5_or_40_attacks(viewer_client):
    _attacks(3, 2)
    small, _, body = _fetch(viewer_client, "/attacks/?format=csv")
    assert len(_rows(body)) == 5

    _attacks(20, 15)
    large, _, body = _fetch(viewer_client, "/attacks/?format=csv")
    assert len(_rows(body)) == 40
    assert large == small


def test_no_match_gives_the_header_alone(viewer_client):
    _attacks(1, 0)

    _, _, body = _fetch(viewer_client, "/attacks/?outcome=error&format=csv")

    assert body.splitlines() == [",".join(table_header(with_links=True))]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("format=xlsx", "not a download format"),
        ("format=csv&timestamp_after=yesterday", "timestamp_after"),
    ],
)
def test_a_bad_format_or_filter_is_a_clear_400(viewer_client, query, message):
    response = viewer_client.get(f"/attacks/?{query}")

    assert response.status_code == 400
    assert message in response.content.decode()


def test_the_list_links_its_downloads_with_its_filters(viewer_client):
    _attacks(1, 1)

    body = viewer_client.get("/attacks/?outcome=failure&sort=objective").content.decode()

    assert 'href="?outcome=failure&amp;sort=objective&amp;format=csv"' in body
    assert 'href="?outcome=failure&amp;sort=objective&amp;format=json"' in body


def test_a_user_without_a_group_gets_no_download(member, client):
    _attacks(1, 0)

    assert logged_in(member(username="nobody")).get("/attacks/?format=csv").status_code == 403
    response = client.get("/attacks/?format=csv")
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_the_api_streams_the_filtered_table_as_csv(bot):
    _attacks(2, 3)
    _, raw = api_token_create(user=bot, scope="read")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    _, response, body = _fetch(api, "/api/v1/attack-results/?outcome=failure&format=csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert [r["outcome"] for r in _rows(body)] == ["failure"] * 3
    page = api.get("/api/v1/attack-results/?outcome=failure").json()
    assert [r["attack_result_id"] for r in page["results"]] == [
        r["attack_result_id"] for r in _rows(body)
    ]
