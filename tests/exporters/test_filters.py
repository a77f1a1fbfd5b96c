"""Export filters: what a slice holds, and that every slice ingests on its own."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.db import transaction

from memory.models import AttackResult
from memory.transfer.exporters.selection import ExportFilterError, export_filters, parse_since
from tests.exporters.conftest import EXPORT_110, export_doc, ingest_ok, stored_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def fixture_110():
    """The 1.1.0 fixture export, ingested; returns the source document."""
    source = json.loads(EXPORT_110.read_text())
    ingest_ok(source)
    return source


def _conversation_ids(doc):
    return {item["conversation"]["conversation_id"] for item in doc["conversations"]}


def _needed_conversations(doc):
    """Every conversation the doc's attack results refer to (main, related, last response)."""
    attacks = [*doc["attack_results"]]
    attacks += [a for s in doc["scenario_results"] for c in s["attack_results"].values() for a in c]
    needed = set()
    for attack in attacks:
        needed.add(attack["conversation_id"])
        needed |= {r["conversation_id"] for r in attack["related_conversations"]}
        if attack["last_response"]:
            needed.add(attack["last_response"]["conversation_id"])
    return needed


def test_conversation_filter_keeps_that_conversation_its_attack_and_helpers(fixture_110):
    attack = next(a for a in fixture_110["attack_results"] if a["related_conversations"])
    doc = export_doc(conversation_id=attack["conversation_id"])

    assert [a["attack_result_id"] for a in doc["attack_results"]] == [attack["attack_result_id"]]
    related = {r["conversation_id"] for r in attack["related_conversations"]}
    assert _conversation_ids(doc) == {attack["conversation_id"], *related}
    assert doc["seeds"] == doc["seed_groups"] == doc["scores"] == []


def test_label_filter_brings_the_owning_scenario_and_all_its_attacks(fixture_110):
    doc = export_doc(labels=["operation:op_seed_groups"])

    labelled = {
        a["attack_result_id"]
        for a in fixture_110["attack_results"]
        if a["labels"].get("operation") == "op_seed_groups"
    }
    assert labelled
    assert {a["attack_result_id"] for a in doc["attack_results"]} >= labelled
    assert all(a["labels"]["operation"] == "op_seed_groups" for a in doc["attack_results"])
    assert [s["id"] for s in doc["scenario_results"]] == [fixture_110["scenario_results"][0]["id"]]
    assert _needed_conversations(doc) <= _conversation_ids(doc)


def test_attack_class_filter(fixture_110):
    doc = export_doc(attack_class="RedTeamingAttack")

    assert doc["attack_results"]
    assert {a["attack_identifier"]["class_name"] for a in doc["attack_results"]} == {
        "RedTeamingAttack"
    }
    wanted = AttackResult.objects.filter(attack_identifier__class_name="RedTeamingAttack")
    assert len(doc["attack_results"]) == wanted.count()
    assert _needed_conversations(doc) == _conversation_ids(doc)


def test_since_keeps_what_happened_from_then_on(fixture_110):
    everything = export_doc()
    assert export_doc(since="2000-01-01") == everything

    later = export_doc(since="2100-01-01")
    assert all(later[section] == [] for section in everything if section != "export_format")


def test_since_in_the_middle_splits_attacks_by_time(fixture_110):
    times = sorted(a["timestamp"] for a in fixture_110["attack_results"])
    middle = times[len(times) // 2]
    doc = export_doc(since=middle)

    own = [a for a in doc["attack_results"] if not a["attribution_parent_id"]]
    assert own and all(a["timestamp"] >= middle for a in own)
    assert _needed_conversations(doc) <= _conversation_ids(doc)


@pytest.mark.parametrize(
    "filters",
    [
        {"labels": ["operation:op_seed_groups"]},
        {"attack_class": "TreeOfAttacksWithPruningAttack"},
        {"attack_class": "PromptSendingAttack", "labels": ["operator:alice"]},
        {"since": "2026-11-21T12:32:00Z"},
    ],
    ids=["label", "tap", "class+label", "since"],
)
def test_every_slice_ingests_into_an_empty_database_on_its_own(filters):
    with transaction.atomic():
        ingest_ok(json.loads(EXPORT_110.read_text()))
        first = export_doc(**filters)
        transaction.set_rollback(True)
    assert first["attack_results"] or first["conversations"]

    ingest_ok(first)

    # The new database holds exactly the slice: exporting all of it gives the slice back.
    assert stored_counts()["attack_results"] == len(first["attack_results"])
    assert export_doc() == first


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"labels": ["operator"]}, "label: 'operator' is not a label filter"),
        ({"labels": [":x"]}, "not a label filter"),
        ({"since": "last tuesday"}, "since: 'last tuesday' is not a date"),
        ({"since": "2026-02-30"}, "is not a date"),
        ({"conversation_id": "a\x00b"}, "null characters"),
        ({"labels": ["k:v\x00"]}, "null characters"),
    ],
)
def test_bad_filters_are_one_clear_error(filters, message):
    with pytest.raises(ExportFilterError, match=message):
        export_filters(**filters)


def test_since_takes_dates_and_date_times():
    assert parse_since("2026-01-31") == dt.datetime(2026, 1, 31, tzinfo=dt.UTC)
    assert parse_since("2026-01-31T12:30:00") == dt.datetime(2026, 1, 31, 12, 30, tzinfo=dt.UTC)
    assert parse_since("2026-01-31T12:30:00+02:00") == dt.datetime(
        2026, 1, 31, 10, 30, tzinfo=dt.UTC
    )
