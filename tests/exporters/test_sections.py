"""The export's sections: each score once, scored loose content, seed datasets, and the PyRIT
version a conversation was written by: everything a re-ingestion needs to rebuild the rows."""

from __future__ import annotations

import json
import uuid

import pytest

from memory.models import Conversation, ScorableContent, Score
from memory.transfer.importers.service import import_pyrit_db
from memory.transfer.ingest.service import ingest
from seeds.models import SeedDataset
from tests.api.conftest import get_json
from tests.exporters.conftest import export_doc, ingest_ok
from tests.importers.conftest import DB_110

pytestmark = pytest.mark.django_db


def _exported_score_ids(document: dict) -> list[str]:
    ids = [score["id"] for score in document["scores"]]
    for item in document["conversations"]:
        for message in item["messages"]:
            for piece in message["message_pieces"]:
                ids += [score["id"] for score in piece["scores"]]
    return ids


@pytest.mark.django_db(transaction=True)
def test_each_score_is_exported_exactly_once():
    import_pyrit_db(path=DB_110)
    ids = _exported_score_ids(export_doc())
    assert len(ids) == len(set(ids))
    assert set(ids) == {str(pk) for pk in Score.objects.values_list("pk", flat=True)}


@pytest.mark.django_db(transaction=True)
def test_scored_loose_content_is_exported_and_listed(viewer_client):
    import_pyrit_db(path=DB_110)
    stored = {str(pk) for pk in ScorableContent.objects.values_list("pk", flat=True)}
    assert stored, "the 1.1.0 fixture scores loose content"

    document = export_doc()
    assert {item["id"] for item in document["scorable_contents"]} == stored
    # The content comes before the scores that name it, so the document ingests in order.
    assert list(document).index("scorable_contents") < list(document).index("scores")

    status, page = get_json(viewer_client, "/api/v1/scorable-contents/")
    assert status == 200
    assert {item["id"] for item in page["results"]} == stored
    one = page["results"][0]
    status, detail = get_json(viewer_client, f"/api/v1/scorable-contents/{one['id']}/")
    assert status == 200 and detail == one
    assert set(one) == {"id", "value", "value_sha256", "data_type", "timestamp"}


def test_scorable_contents_need_a_login(client):
    assert client.get("/api/v1/scorable-contents/").status_code == 401


DATASET = {
    "dataset_name": "jailbreaks",
    "name": "jb",
    "description": "Known jailbreak prompts",
    "harm_categories": ["illegal"],
    "authors": ["Ana"],
    "groups": ["AI Red Team"],
    "source": "https://example.test/jb",
    "data_type": "text",
    "seed_type": "prompt",
    "date_added": "2025-01-02T03:04:05Z",
    "added_by": "ana",
    "curation_round": 3,
}


def test_a_seed_dataset_ingests_with_its_defaults_and_unknown_keys():
    counts = ingest_ok({"seed_datasets": [DATASET]})
    assert counts["seed_datasets"]["created"] == 1

    dataset = SeedDataset.objects.get(name="jailbreaks")
    assert dataset.default_seed_name == "jb"
    assert dataset.description == "Known jailbreak prompts"
    assert dataset.harm_categories == ["illegal"]
    assert dataset.extra == {"curation_round": 3}

    exported = export_doc()["seed_datasets"]
    assert exported == [DATASET]
    # Re-sending what was exported changes nothing.
    assert ingest_ok({"seed_datasets": exported})["seed_datasets"]["unchanged"] == 1


def test_a_sent_dataset_never_overwrites_what_a_curator_set():
    ingest_ok({"seed_datasets": [DATASET]})
    SeedDataset.objects.filter(name="jailbreaks").update(description="Curated text")

    ingest_ok({"seed_datasets": [{**DATASET, "description": "Sent again"}]})

    assert SeedDataset.objects.get(name="jailbreaks").description == "Curated text"


@pytest.mark.parametrize(
    ("dataset", "where"),
    [
        ({"description": "no name"}, "dataset_name"),
        ({"dataset_name": "   "}, "dataset_name"),
        ({"dataset_name": "x", "harm_categories": "illegal"}, "harm_categories"),
        ({"dataset_name": "x", "date_added": "yesterday"}, "date_added"),
    ],
)
def test_a_bad_dataset_is_refused_naming_the_field(dataset, where):
    report = ingest(payload={"seed_datasets": [dataset]})
    assert not report.ok
    assert any(where in error["path"] for error in report.errors), report.errors
    assert not SeedDataset.objects.exists()


def test_the_pyrit_version_of_a_conversation_round_trips():
    conversation_id = str(uuid.uuid4())
    ingest_ok(
        {
            "conversations": [
                {
                    "conversation": {
                        "conversation_id": conversation_id,
                        "pyrit_version": "1.1.0",
                    },
                    "messages": [],
                }
            ]
        }
    )
    assert Conversation.objects.get(conversation_id=conversation_id).pyrit_version == "1.1.0"
    (item,) = export_doc()["conversations"]
    assert item["conversation"]["pyrit_version"] == "1.1.0"
    again = json.loads(json.dumps(export_doc()))
    assert ingest_ok(again)["conversations"]["unchanged"] == 1
