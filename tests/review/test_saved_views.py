"""Each reviewer's saved views of the attack list, and the columns it shows them."""

from __future__ import annotations

import pytest

from redteam.models import SavedView, UserPreference
from tests.conftest import logged_in
from tests.factories import make_attack, make_scenario

pytestmark = pytest.mark.django_db


def _save(client, name, query, **extra):
    data = {"page": "attack-list", "name": name, "query": query, "next": "/attacks/"}
    data.update(extra)
    return client.post("/views/", data)


def test_a_saved_view_is_listed_with_its_filters_and_without_its_page(viewer, viewer_client):
    make_attack()

    response = _save(viewer_client, "Failures of op1", "?outcome=failure&labels=op:op1&page=3")

    assert response.status_code == 302 and response["Location"] == "/attacks/"
    [view] = SavedView.objects.filter(user=viewer)
    assert (view.name, view.query) == ("Failures of op1", "outcome=failure&labels=op%3Aop1")
    html = viewer_client.get("/attacks/").content.decode()
    assert 'href="/attacks/?outcome=failure&amp;labels=op%3Aop1"' in html
    assert "Failures of op1" in html


def test_the_same_name_replaces_the_query(viewer, viewer_client):
    _save(viewer_client, "Mine", "outcome=failure")
    _save(viewer_client, "Mine", "outcome=success")

    assert list(SavedView.objects.values_list("name", "query")) == [("Mine", "outcome=success")]


def test_views_are_private(viewer, viewer_client, reviewer):
    _save(viewer_client, "Vera's", "outcome=failure")
    view = SavedView.objects.get()
    other = logged_in(reviewer)

    assert "Vera&#x27;s" not in other.get("/attacks/").content.decode()
    assert other.post(f"/views/{view.pk}/delete/").status_code == 404
    assert viewer_client.post(f"/views/{view.pk}/delete/").status_code == 302
    assert not SavedView.objects.exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "  "}, "name: is required"),
        ({"page": "admin"}, "views cannot be saved for 'admin'"),
        ({"name": "x" * 121}, "at most 120 characters"),
    ],
)
def test_a_bad_view_is_a_clear_400(viewer_client, data, message):
    response = _save(viewer_client, data.pop("name", "ok"), "outcome=failure", **data)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not SavedView.objects.exists()


def test_next_never_leaves_the_site(viewer_client):
    response = _save(viewer_client, "x", "", next="https://evil.example/")

    assert response["Location"] == "/attacks/"


def test_saving_needs_a_post_and_a_login(client, viewer_client):
    assert viewer_client.get("/views/").status_code == 405
    assert client.post("/views/", {"page": "attack-list", "name": "x"}).status_code == 302
    assert not SavedView.objects.exists()


def _headers(html: str) -> list[str]:
    import re

    head = html[html.index("<thead>") : html.index("</thead>")]
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<th.*?</th>", head)]


def test_columns_are_chosen_per_user_and_read_without_a_query(viewer, viewer_client):
    scenario = make_scenario(scenario_name="nightly")
    make_attack(operator="alice", attribution_parent=scenario)
    default = _headers(viewer_client.get("/attacks/").content.decode())
    assert default == [
        "Outcome",
        "Objective",
        "Attack",
        "Target",
        "TurnsDuration",
        "Last score",
        "Time",
    ]

    response = viewer_client.post(
        "/preferences/attack-columns/",
        {"columns": ["time", "operator", "scenario", "bogus"], "next": "/attacks/"},
    )

    assert response.status_code == 302
    assert UserPreference.objects.get(user=viewer).attack_columns == [
        "operator",
        "scenario",
        "time",
    ]
    html = logged_in(viewer).get("/attacks/").content.decode()
    assert _headers(html) == ["Outcome", "Objective", "Operator", "Scenario", "Time"]
    assert '<td class="col-operator" data-label="Operator">alice</td>' in html
    assert f'href="/scenarios/{scenario.pk}/">nightly</a>' in html
    assert 'class="col-target"' not in html


def test_the_converter_and_message_columns_cost_one_query_each_when_shown(viewer, viewer_client):
    from tests.factories import (
        make_conversation,
        make_identifier,
        make_message,
        make_piece,
        make_piece_converter,
    )
    from tests.queries import get_counted

    conversation = make_conversation()
    prompt = make_piece(make_message(conversation, 0, "user"), "aGk=")
    make_piece_converter(prompt, make_identifier("Base64Converter"), position=0)
    make_piece_converter(prompt, make_identifier("ROT13Converter"), position=1)
    make_piece(make_message(conversation, 1, "assistant"), "ok")
    make_attack(conversation)
    viewer_client.get("/attacks/")
    before, _ = get_counted(viewer_client, "/attacks/")

    viewer_client.post(
        "/preferences/attack-columns/", {"columns": ["converters", "messages"], "next": "/"}
    )
    client = logged_in(viewer)
    after, response = get_counted(client, "/attacks/")

    html = response.content.decode()
    assert after == before + 2
    assert _headers(html) == ["Outcome", "Objective", "Converters", "Messages"]
    assert html.index(">Base64Converter</a>") < html.index(">ROT13Converter</a>")
    assert '<td class="num col-messages" data-label="Messages">2</td>' in html
