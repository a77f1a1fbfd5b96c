"""Export → ingest into an empty database → export again gives the same document."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from memory.demo import demo_load
from memory.transfer.exporters.document import SECTIONS
from memory.transfer.importers.service import import_pyrit_db
from tests.conftest import FIXTURES_DIR
from tests.exporters.conftest import (
    EXPORT_012,
    EXPORT_110,
    database_snapshot,
    export_bytes,
    import_zip,
    ingest_ok,
    read_zip,
    stored_counts,
)

pytestmark = pytest.mark.django_db


def _export_then_empty(load, **options) -> tuple[bytes, dict[str, int]]:
    """Load memory, export it, and roll the database back to empty; the counts and a snapshot
    of every row are kept for the comparison after re-ingesting."""
    with transaction.atomic():
        load()
        first = export_bytes(**options)
        counts = stored_counts()
        _SNAPSHOTS[first] = database_snapshot()
        transaction.set_rollback(True)
    assert set(stored_counts().values()) == {0}
    return first, counts


#: The database snapshot taken with each export (by its bytes).
_SNAPSHOTS: dict[bytes, dict[str, list[str]]] = {}


def _assert_same_database(first: bytes) -> None:
    """The re-ingested database holds the very rows the exported one held."""
    before, after = _SNAPSHOTS.pop(first), database_snapshot()
    assert sorted(before) == sorted(after)
    for model in before:
        assert after[model] == before[model], model


@pytest.mark.parametrize("export", [EXPORT_110, EXPORT_012], ids=["1.1.0", "0.12.1"])
def test_fixture_export_round_trips_byte_for_byte(export):
    first, counts = _export_then_empty(lambda: ingest_ok(json.loads(export.read_text())))

    ingest_ok(json.loads(first))

    assert export_bytes() == first
    # Nothing was lost on the way: the re-ingested database holds the same rows.
    assert stored_counts() == counts
    _assert_same_database(first)


def test_fixture_export_holds_every_object_of_the_source():
    source = json.loads(EXPORT_110.read_text())
    ingest_ok(source)

    doc = json.loads(export_bytes())

    assert list(doc) == ["export_format", *SECTIONS]
    assert len(doc["conversations"]) == len(source["conversations"])
    pieces = [
        piece
        for item in doc["conversations"]
        for message in item["messages"]
        for piece in message["message_pieces"]
    ]
    assert len(pieces) == 162
    shown = {s["id"] for piece in pieces for s in piece["scores"]}
    assert shown | {s["id"] for s in doc["scores"]} == {s["id"] for s in source["scores"]}
    assert {a["attack_result_id"] for a in doc["attack_results"]} == {
        a["attack_result_id"] for a in source["attack_results"]
    }
    in_groups = {s["id"] for g in doc["seed_groups"] for s in g["seeds"]}
    assert in_groups | {s["id"] for s in doc["seeds"]} == {s["id"] for s in source["seeds"]}
    assert [s["id"] for s in doc["scenario_results"]] == [
        s["id"] for s in source["scenario_results"]
    ]


def test_fixture_export_keeps_1_1_0_shapes_and_0_12_piece_fields():
    source = json.loads(EXPORT_110.read_text())
    ingest_ok(source)

    doc = json.loads(export_bytes())

    attack = next(a for a in doc["attack_results"] if a["last_response"] and a["last_score"])
    original = next(
        a for a in source["attack_results"] if a["attack_result_id"] == attack["attack_result_id"]
    )
    # 1.1.0 embeds the last response and score; so does the export (not their ids).
    assert "last_response_id" not in attack
    assert attack["last_response"]["id"] == original["last_response"]["id"]
    assert attack["last_score"]["id"] == original["last_score"]["id"]
    assert (
        attack["atomic_attack_identifier"]["hash"] == original["atomic_attack_identifier"]["hash"]
    )
    for key in ("outcome", "labels", "targeted_harm_categories", "related_conversations"):
        assert attack[key] == original[key]
    # The 0.12 fields 1.x dropped are on every piece: labels copied from the attack result,
    # the conversation's target, the scores.
    item = next(
        c
        for c in doc["conversations"]
        if c["conversation"]["conversation_id"] == attack["conversation_id"]
    )
    piece = item["messages"][0]["message_pieces"][0]
    assert piece["labels"] == original["labels"]
    assert piece["prompt_target_identifier"] == item["conversation"]["target_identifier"]
    assert "scores" in piece and "originator" in piece
    scenario = doc["scenario_results"][0]
    (collection,) = scenario["attack_results"]
    assert [a["attack_result_id"] for a in scenario["attack_results"][collection]] == [
        a["attack_result_id"] for a in source["scenario_results"][0]["attack_results"][collection]
    ]


def test_demo_export_with_media_round_trips():
    first, counts = _export_then_empty(demo_load, with_media=True)
    document, manifest, members = read_zip(first)
    assert manifest["media"], "the demo has media"
    assert all(entry["locations"] for entry in manifest["media"])

    import_zip(first)

    second = export_bytes(with_media=True)
    again_document, again_manifest, again_members = read_zip(second)
    assert again_document == document
    assert again_manifest == manifest
    assert again_members == members
    assert stored_counts() == counts
    _assert_same_database(first)


def test_jsonl_lines_ingest_one_by_one_into_the_same_memory():
    with transaction.atomic():
        ingest_ok(json.loads(EXPORT_110.read_text()))
        first_json = export_bytes()
        lines = export_bytes(fmt="jsonl").decode().splitlines()
        transaction.set_rollback(True)

    assert json.loads(lines[0]) == {"export_format": "redline-export/1"}
    for line in lines[1:]:
        (section,) = (key for key in json.loads(line))
        assert section in SECTIONS
        ingest_ok(json.loads(line))

    assert export_bytes() == first_json


@pytest.mark.parametrize("fixture", ["pyrit-1.2-main", "pyrit-1.1.0-small", "pyrit-0.12.1-legacy"])
def test_an_imported_pyrit_database_round_trips_with_its_media(fixture):
    """What ``import_pyrit`` read from PyRIT's own SQLite file (and media) comes back whole."""
    source = FIXTURES_DIR / fixture

    def load():
        summary = import_pyrit_db(path=source / "memory.db", media_root=source / "dbdata")
        assert summary.media_missing == 0

    first, counts = _export_then_empty(load, with_media=True)
    document, manifest, members = read_zip(first)
    assert manifest["media"]

    import_zip(first)

    again_document, again_manifest, again_members = read_zip(export_bytes(with_media=True))
    assert again_document == document
    assert again_manifest == manifest
    assert again_members == members
    assert stored_counts() == counts
    _assert_same_database(first)


def test_pyrit_1_2_export_carries_the_new_fields_and_the_verbatim_rows():
    """The 1.2 columns and tables come out where ingestion reads them back."""
    source = FIXTURES_DIR / "pyrit-1.2-main"
    import_pyrit_db(path=source / "memory.db", media_root=source / "dbdata")

    doc = json.loads(export_bytes())

    assert list(doc) == ["export_format", *SECTIONS]
    assert SECTIONS[-1] == "pyrit_records"
    records = doc["pyrit_records"]
    assert [(r["table"], r["pk"]) for r in records] == sorted(
        (r["table"], r["pk"]) for r in records
    )
    assert {r["table"] for r in records} == {
        "FindingEntries",
        "FindingEvidenceEntries",
        "ObservationEntries",
        "ObservationMessagePieceEntries",
        "OperationEntries",
        "ScoreObservationEntries",
    }
    operation = next(r for r in records if r["table"] == "OperationEntries")
    assert operation["row"]["name"] == "Op Blue Heron"
    assert operation["alembic_revision"] == "c8d3e5f7a901"
    attacks = doc["attack_results"] + [
        a for s in doc["scenario_results"] for group in s["attack_results"].values() for a in group
    ]
    human = [a for a in attacks if a.get("human_score")]
    assert len(human) == 1
    assert human[0]["human_score"]["id"] != human[0]["last_score"]["id"]
    assert {(a["operator"], a["operation"]) for a in attacks} >= {("bob", "op_blue_heron")}
    assert all("operator" not in a["labels"] for a in attacks)
    scores = [s for a in attacks for s in (a["last_score"],) if s] + doc["scores"]
    with_expectation = [s for s in scores if "scored_expectation" in s]
    assert with_expectation
    for score in with_expectation:
        assert score["objective"] == score["scored_expectation"]["objective"]
