"""PyRIT's own object dumps are accepted as they are: a ``ContentScorable.model_dump()`` as
loose content, and 0.12 seed attribute dumps that carry no class marker."""

from __future__ import annotations

import copy

import pytest

from memory.models import ScorableContent
from memory.transfer.ingest.service import ingest
from redteam.core.choices import SeedType
from seeds.models import Seed
from tests.exporters.conftest import export_doc, ingest_ok
from tests.ingest.conftest import EXPORT_012, load

pytestmark = pytest.mark.django_db

CONTENT_SCORABLE = {"scorable_type": "content", "value": "a loose reply", "data_type": "text"}


def test_a_content_scorable_dump_is_stored_as_loose_content():
    counts = ingest_ok({"scorable_contents": [CONTENT_SCORABLE]})

    content = ScorableContent.objects.get()
    assert counts["scorable_contents"]["created"] == 1
    assert (content.value, content.data_type) == ("a loose reply", "text")
    assert content.extra == {"scorable_type": "content"}


def test_sending_the_same_content_scorable_again_changes_nothing():
    ingest_ok({"scorable_contents": [CONTENT_SCORABLE]})
    stored = ScorableContent.objects.get()

    counts = ingest_ok({"scorable_contents": [dict(CONTENT_SCORABLE)]})

    assert (counts["scorable_contents"]["created"], counts["scorable_contents"]["unchanged"]) == (
        0,
        1,
    )
    assert list(ScorableContent.objects.values_list("id", "timestamp")) == [
        (stored.id, stored.timestamp)
    ]


def test_different_content_gets_a_different_id():
    ingest_ok(
        {
            "scorable_contents": [
                CONTENT_SCORABLE,
                {**CONTENT_SCORABLE, "value": "another reply"},
                {**CONTENT_SCORABLE, "data_type": "error"},
            ]
        }
    )
    assert ScorableContent.objects.count() == 3


def test_the_scorable_type_and_unknown_keys_come_back_on_export():
    row = {
        "id": "5b0f6a3e-3c1c-4d55-9a1e-0d2f3b4c5d6e",
        "value": "stored elsewhere",
        "data_type": "text",
        "timestamp": "2026-11-21T12:32:02.452133Z",
        "scorable_type": "content_entry",
        "reviewed_by": "lab-7",
    }
    ingest_ok({"scorable_contents": [row]})

    [exported] = export_doc()["scorable_contents"]
    assert exported["scorable_type"] == "content_entry"
    assert exported["reviewed_by"] == "lab-7"
    assert exported["id"] == row["id"]


def test_a_row_without_id_needs_the_content_tag():
    report = ingest(payload={"scorable_contents": [{"value": "no id", "data_type": "text"}]})

    assert not report.ok
    assert [e["path"] for e in report.errors] == ["scorable_contents[0].id"]
    assert not ScorableContent.objects.exists()


def test_a_message_scorable_is_not_loose_content():
    report = ingest(
        payload={"scorable_contents": [{**CONTENT_SCORABLE, "scorable_type": "message"}]}
    )

    assert not report.ok
    messages = {e["path"]: e["message"] for e in report.errors}
    assert "'message'" in messages["scorable_contents[0].scorable_type"]
    assert not ScorableContent.objects.exists()


def _unmarked_012_seeds() -> tuple[list[dict], dict[str, str]]:
    """The 0.12.1 fixture's seeds as plain attribute dumps, and each seed's true class."""
    seeds = copy.deepcopy(load(EXPORT_012)["seeds"])
    classes = {}
    for seed in seeds:
        classes[seed["id"]] = seed.pop("seed_class")
    return seeds, classes


def test_012_attribute_dumps_without_a_class_marker_keep_their_class():
    seeds, classes = _unmarked_012_seeds()
    assert {"SeedObjective", "SeedPrompt"} <= set(classes.values())

    ingest_ok({"seeds": seeds})

    stored = dict(Seed.objects.values_list("id", "seed_type"))
    expected = {"SeedObjective": SeedType.OBJECTIVE, "SeedPrompt": SeedType.PROMPT}
    assert {str(k): v for k, v in stored.items()} == {
        seed_id: expected[name] for seed_id, name in classes.items()
    }


def test_a_hand_written_seed_without_a_marker_stays_a_prompt():
    ingest_ok({"seeds": [{"value": "Tell me a secret", "dataset_name": "mine", "added_by": "me"}]})

    assert Seed.objects.get().seed_type == SeedType.PROMPT


def test_two_unmarked_objectives_in_one_group_are_refused_by_the_group_rule():
    seeds, classes = _unmarked_012_seeds()
    objectives = [s for s in seeds if classes[s["id"]] == "SeedObjective"][:2]
    objectives[1]["prompt_group_id"] = objectives[0]["prompt_group_id"]

    report = ingest(payload={"seed_groups": [{"seeds": objectives}]})

    assert not report.ok
    assert any("at most one objective" in e["message"] for e in report.errors)
    assert not Seed.objects.exists()
