"""Read endpoints of seeds: shapes, filters, pagination and query counts."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import NoReverseMatch, reverse

from tests.api.conftest import get_json, walk
from tests.factories import make_media_blob
from tests.queries import get_counted

pytestmark = pytest.mark.django_db

SEED_KEYS = [
    "value",
    "value_sha256",
    "id",
    "name",
    "dataset_name",
    "harm_categories",
    "description",
    "authors",
    "groups",
    "source",
    "date_added",
    "added_by",
    "metadata",
    "prompt_group_id",
    "prompt_group_alias",
    "is_general_technique",
    "is_jinja_template",
    "data_type",
    "seed_type",
]


@pytest.mark.parametrize(
    "url", ["/api/v1/seeds/", "/api/v1/seed-groups/", "/api/v1/seed-datasets/"]
)
def test_anonymous_and_unprivileged_users_are_refused(url, reader):
    assert Client().get(url).status_code in (401, 403)
    client = Client()
    client.force_login(reader)
    assert client.get(url).status_code == 403


# --- shapes -------------------------------------------------------------------------------------


def test_prompt_seed_is_a_pyrit_1_1_0_dump_with_extra(admin_client, seed_world):
    w = seed_world
    status, body = get_json(admin_client, f"/api/v1/seeds/{w.template.id}/")
    assert status == 200
    prompt_keys = ["response_json_schema", "role", "sequence", "parameters"]
    assert list(body) == [*SEED_KEYS, *prompt_keys, "custom_key"]
    assert body["name"] == "Aligned"
    assert body["dataset_name"] == "templates"
    assert body["parameters"] == ["prompt"]
    assert body["is_general_technique"] is True
    assert body["is_jinja_template"] is False
    assert body["prompt_group_id"] == str(w.other.id)
    assert body["prompt_group_alias"] == "other"
    assert body["custom_key"] == "kept"


def test_objective_and_simulated_seeds_have_only_their_type_keys(admin_client, seed_world):
    w = seed_world
    status, body = get_json(admin_client, f"/api/v1/seeds/{w.objective.id}/")
    assert list(body) == SEED_KEYS
    assert body["seed_type"] == "objective"
    assert body["harm_categories"] == ["violence", "illegal"]
    status, body = get_json(admin_client, f"/api/v1/seeds/{w.simulated.id}/")
    assert status == 200
    assert list(body) == [
        *SEED_KEYS,
        "sequence",
        "num_turns",
        "adversarial_chat_system_prompt_path",
        "simulated_target_system_prompt_path",
        "next_message_system_prompt_path",
        "pyrit_version",
    ]
    assert body["num_turns"] == 1
    assert body["adversarial_chat_system_prompt_path"] == "adversarial.yaml"
    assert body["pyrit_version"] == "1.1.0"


def test_media_seed_links_its_bytes(admin_client, seed_world):
    w = seed_world
    status, body = get_json(admin_client, f"/api/v1/seeds/{w.image.id}/")
    assert "media" not in body  # no bytes stored yet
    blob = make_media_blob()
    w.image.media = blob
    w.image.save()
    status, body = get_json(admin_client, f"/api/v1/seeds/{w.image.id}/")
    assert status == 200
    try:
        path = reverse("api-media-detail", kwargs={"sha256": blob.sha256})
    except NoReverseMatch:
        assert "media" not in body
    else:
        assert body["media"] == {"value": f"http://testserver{path}"}


def test_group_lists_its_seeds_in_canonical_order(admin_client, seed_world):
    w = seed_world
    status, body = get_json(admin_client, f"/api/v1/seed-groups/{w.badge.id}/")
    assert status == 200
    assert list(body) == ["id", "kind", "alias", "seeds"]
    assert body["kind"] == "attack_seed_group" and body["alias"] == "badge"
    # Objective, simulated conversation, then prompts by sequence (they were stored 3, 2).
    expected = [w.objective, w.simulated, w.image, w.assistant]
    assert [seed["id"] for seed in body["seeds"]] == [str(s.id) for s in expected]
    assert {seed["prompt_group_id"] for seed in body["seeds"]} == {str(w.badge.id)}


def test_dataset_detail_by_name_with_pyrit_keys_and_seed_count(admin_client, seed_world):
    seed_world.demo.extra = {"license": "MIT"}
    seed_world.demo.default_seed_name = "demo seed"
    seed_world.demo.save()
    status, body = get_json(admin_client, "/api/v1/seed-datasets/airt_demo/")
    assert status == 200
    assert body == {
        "dataset_name": "airt_demo",
        "name": "demo seed",
        "description": None,
        "harm_categories": ["violence"],
        "authors": [],
        "groups": [],
        "source": None,
        "data_type": "text",
        "seed_type": "objective",
        "date_added": None,
        "added_by": "demo",
        "seed_count": 4,
        "license": "MIT",
    }
    assert admin_client.get("/api/v1/seed-datasets/unknown/").status_code == 404


# --- filters ------------------------------------------------------------------------------------

SEED_FILTERS = [
    ({"seed_type": "objective"}, {"objective"}),
    ({"seed_type": ["simulated_conversation", "objective"]}, {"objective", "simulated"}),
    ({"data_type": "image_path"}, {"image"}),
    ({"data_type": "audio_path"}, set()),
    ({"role": "assistant"}, {"assistant"}),
    ({"role": "system"}, set()),
    ({"dataset": "airt_demo"}, {"objective", "simulated", "image", "assistant"}),
    ({"dataset": "nope"}, set()),
    ({"dataset_name": "templates"}, {"template"}),
    ({"dataset_name": "template"}, set()),
    ({"group": "@other"}, {"template"}),
    ({"group": "00000000-0000-4000-8000-000000000000"}, set()),
    ({"harm_category": "illegal"}, {"objective"}),
    ({"harm_category": "ILLEGAL"}, {"objective"}),
    ({"harm_category": ["illegal", "violence"]}, {"objective"}),
    ({"harm_category": "illeg"}, set()),
    ({"added_by": "alice"}, {"template"}),
    ({"added_by": "bob"}, set()),
    ({"is_general_technique": "true"}, {"template"}),
    ({"is_general_technique": "false"}, {"objective", "simulated", "image", "assistant"}),
    ({"date_added_after": "2026-11-21T18:00:00Z"}, {"template"}),
    ({"date_added_before": "2026-11-20T00:00:00Z"}, set()),
    ({"q": "aligned"}, {"template"}),
    ({"q": "badge reader"}, {"objective"}),
    ({"q": "nothing like this"}, set()),
]
GROUP_FILTERS = [
    ({"kind": "attack_seed_group"}, {"badge"}),
    ({"kind": "attack_technique_seed_group"}, set()),
    ({"alias": "other"}, {"other"}),
    ({"alias": "oth"}, set()),
    ({"dataset": "airt_demo"}, {"badge"}),
    ({"dataset": "nope"}, set()),
    ({"harm_category": "violence"}, {"badge"}),
    ({"harm_category": "fraud"}, set()),
    ({"q": "benchmarking"}, {"other"}),
    ({"q": "nothing like this"}, set()),
]
DATASET_FILTERS = [
    ({"dataset_name": "templates"}, {"templates"}),
    ({"dataset_name": "temp"}, set()),
    ({"seed_type": "objective"}, {"demo"}),
    ({"seed_type": "simulated_conversation"}, set()),
    ({"data_type": "text"}, {"demo", "templates"}),
    ({"data_type": "video_path"}, set()),
    ({"harm_category": "violence"}, {"demo"}),
    ({"harm_category": "hate"}, set()),
    ({"added_by": "alice"}, {"templates"}),
    ({"added_by": "carol"}, set()),
    ({"q": "jailbreak"}, {"templates"}),
    ({"q": "nothing like this"}, set()),
]


def resolve(world, params):
    """``@name`` becomes the id of the world's row ``name``."""

    def one(value):
        return str(getattr(world, value[1:]).id) if value.startswith("@") else value

    return {
        k: [one(v) for v in vs] if isinstance(vs, list) else one(vs) for k, vs in params.items()
    }


@pytest.mark.parametrize(("params", "names"), SEED_FILTERS)
def test_seed_filters(admin_client, seed_world, params, names):
    found = {
        row["id"] for row in walk(admin_client, "/api/v1/seeds/", **resolve(seed_world, params))
    }
    assert found == {str(getattr(seed_world, name).id) for name in names}


@pytest.mark.parametrize(("params", "names"), GROUP_FILTERS)
def test_seed_group_filters(admin_client, seed_world, params, names):
    found = {row["id"] for row in walk(admin_client, "/api/v1/seed-groups/", **params)}
    assert found == {str(getattr(seed_world, name).id) for name in names}


@pytest.mark.parametrize(("params", "names"), DATASET_FILTERS)
def test_seed_dataset_filters(admin_client, seed_world, params, names):
    rows = walk(admin_client, "/api/v1/seed-datasets/", **params)
    assert {row["dataset_name"] for row in rows} == {
        getattr(seed_world, name).name for name in names
    }


@pytest.mark.parametrize(
    ("url", "params", "field"),
    [
        ("/api/v1/seeds/", {"seed_type": "template"}, "seed_type"),
        ("/api/v1/seeds/", {"group": "not-a-uuid"}, "group"),
        ("/api/v1/seeds/", {"date_added_after": "last week"}, "date_added_after"),
        ("/api/v1/seeds/", {"role": "robot"}, "role"),
        ("/api/v1/seed-groups/", {"kind": "box"}, "kind"),
        ("/api/v1/seed-datasets/", {"data_type": "pdf"}, "data_type"),
    ],
)
def test_bad_filter_values_are_a_400_naming_the_parameter(admin_client, url, params, field):
    status, body = get_json(admin_client, url, **params)
    assert status == 400
    assert list(body) == [field]


def test_seeds_paginate_by_limit_and_offset(admin_client, seed_world):
    status, body = get_json(admin_client, "/api/v1/seeds/", limit=2)
    assert status == 200
    assert body["count"] == 5 and len(body["results"]) == 2
    rows = walk(admin_client, "/api/v1/seeds/", limit=2)
    assert len({row["id"] for row in rows}) == 5


# --- query counts -------------------------------------------------------------------------------

# 1. session, 2. user, 3. count, 4. the page's rows (+ 5. the groups' seeds, one query).
PINNED = {"/api/v1/seeds/": 4, "/api/v1/seed-datasets/": 4, "/api/v1/seed-groups/": 5}


@pytest.mark.parametrize(("url", "queries"), PINNED.items())
def test_list_query_counts_do_not_depend_on_page_size(admin_client, uniform_seeds, url, queries):
    uniform_seeds(20)
    small, response = get_counted(admin_client, url, {"limit": 2})
    assert len(response.json()["results"]) == 2
    large, response = get_counted(admin_client, url, {"limit": 20})
    assert len(response.json()["results"]) == 20
    assert (small, large) == (queries, queries)
