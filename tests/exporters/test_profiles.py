"""Export profiles: what each emits, that nothing is lost that the rules keep, and the docs.

The real libraries are not installed here: these tests hold every emitted key to the field
lists ``profiles.py`` copies from PyRIT 1.1.0's and 0.12.1's source; ``.ci/pyrit_roundtrip.py``
loads a ``pyrit-1.1`` export into the real PyRIT 1.1.0 in CI.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import transaction

from memory.demo import demo_load
from memory.models import MessagePiece, Score
from memory.transfer.exporters.profiles import (
    PROFILES,
    PYRIT_0_12,
    PYRIT_1_1,
    REDLINE_KEYS,
    REPLACED_KEY,
    UnknownProfileError,
    drops_table,
    export_profile,
)
from memory.transfer.importers.service import import_pyrit_db
from redteam.core.choices import ScoreStatus, ScoreType
from tests.conftest import FIXTURES_DIR
from tests.exporters.conftest import EXPORT_012, EXPORT_110, export_bytes, export_doc, ingest_ok
from tests.factories import make_attack, make_conversation, make_message, make_piece, make_score

pytestmark = pytest.mark.django_db

#: Top-level keys that describe the document (ingestion reads them as meta).
META = {"export_format", "note"}
#: Section -> kind of its items, for every section any profile writes.
SECTION_KINDS = {
    "conversations": "conversation_item",
    "message_pieces": "piece",
    "scorable_contents": "scorable_content",
    "scores": "score",
    "scenario_results": "scenario_result",
    "attack_results": "attack_result",
    "seed_datasets": "seed_dataset",
    "seeds": "seed",
    "seed_groups": "seed_group",
    "pyrit_records": "pyrit_record",
}


def _objects(kind: str, item: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(kind, object)`` for ``item`` and every object nested in it, however deep."""
    if kind == "conversation_item":
        yield "conversation", item["conversation"]
        for message in item["messages"]:
            assert set(message) == {"message_pieces"}
            for piece in message["message_pieces"]:
                yield from _objects("piece", piece)
        return
    yield kind, item
    if kind == "piece":
        for score in item.get("scores", []):
            yield "score", score
    elif kind == "attack_result":
        if item.get("last_response"):
            yield from _objects("piece", item["last_response"])
        if item.get("last_score"):
            yield "score", item["last_score"]
    elif kind == "scenario_result":
        for attacks in item.get("attack_results", {}).values():
            for attack in attacks:
                yield from _objects("attack_result", attack)
    elif kind == "seed_group":
        for seed in item["seeds"]:
            yield "seed", seed


def _all_objects(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for section, items in document.items():
        if section in META:
            continue
        for item in items:
            yield from _objects(SECTION_KINDS[section], item)


def _allowed(profile, kind: str, obj: dict[str, Any]) -> tuple[str, ...]:
    rule = profile.shapes[kind]
    if rule.discriminator:
        return rule.variants[obj[rule.discriminator]]
    return rule.keys


@pytest.fixture
def memory_110_db():
    """The 1.1.0 fixture as ``import_pyrit`` reads PyRIT's own file: with its loose content."""
    source = FIXTURES_DIR / "pyrit-1.1.0-small"
    import_pyrit_db(path=source / "memory.db", media_root=source / "dbdata")


@pytest.fixture(params=["demo", "pyrit-1.1.0", "pyrit-1.2-main", "pyrit-0.12.1"])
def any_memory(request):
    """Four memories: the demo data (media, human scores), the PyRIT fixtures."""
    if request.param == "demo":
        demo_load()
    elif request.param in ("pyrit-1.1.0", "pyrit-1.2-main"):
        folder = "pyrit-1.1.0-small" if request.param == "pyrit-1.1.0" else request.param
        source = FIXTURES_DIR / folder
        import_pyrit_db(path=source / "memory.db", media_root=source / "dbdata")
    else:
        ingest_ok(json.loads(EXPORT_012.read_text()))
    return request.param


# --- the rules ------------------------------------------------------------------------------


def test_the_lossless_document_writes_only_the_keys_the_rules_know(any_memory):
    """The drops table is computed from REDLINE_KEYS: an export key missing there would be
    dropped by every profile without the docs saying so."""
    seen: dict[str, set[str]] = {}
    for kind, obj in _all_objects(export_doc()):
        seen.setdefault(kind, set()).update(obj)

    for kind, keys in seen.items():
        assert keys <= set(REDLINE_KEYS[kind]), (kind, keys - set(REDLINE_KEYS[kind]))
    assert {"conversation", "piece", "score", "attack_result", "seed_group", "seed"} <= set(seen)


@pytest.mark.parametrize("profile", [PYRIT_1_1, PYRIT_0_12], ids=lambda p: p.name)
def test_a_profile_writes_no_key_its_pyrit_version_does_not_define(any_memory, profile):
    document = export_doc(profile=profile.name)

    assert document["export_format"] == f"redline-export/1+{profile.name}"
    assert set(document) - META == set(profile.sections.values())
    kinds = Counter()
    for kind, obj in _all_objects(document):
        kinds[kind] += 1
        extra = set(obj) - set(_allowed(profile, kind, obj))
        assert not extra, (profile.name, kind, extra)
        assert "media" not in obj
    assert kinds["piece"] and kinds["score"] and kinds["attack_result"]


def test_pyrit_1_1_writes_every_score_once_in_scores_and_none_in_pieces(memory_110_db):
    document = export_doc(profile="pyrit-1.1")

    pieces = [
        piece
        for item in document["conversations"]
        for message in item["messages"]
        for piece in message["message_pieces"]
    ]
    assert len(pieces) == MessagePiece.objects.count() == 162
    assert all("scores" not in piece and "labels" not in piece for piece in pieces)
    ids = [score["id"] for score in document["scores"]]
    assert len(ids) == len(set(ids)) == Score.objects.count() == 55
    # Attack results keep what 1.1.0 moved there from the pieces.
    assert any(attack["labels"] for attack in document["attack_results"])
    assert all("objective_sha256" not in a for a in document["attack_results"])
    assert list(document["attack_results"][0]) == [
        k for k in PYRIT_1_1.shapes["attack_result"].keys if k in document["attack_results"][0]
    ]


def test_pyrit_1_1_carries_loose_content_in_its_score(memory_110_db):
    document = export_doc(profile="pyrit-1.1")

    assert "scorable_contents" not in document
    (loose,) = [s for s in document["scores"] if s["message_piece_id"] is None]
    assert loose["scorable"] == {
        "scorable_type": "content",
        "value": "loose text that mentions PINEAPPLE",
        "data_type": "text",
    }
    lossless = export_doc()
    (content,) = lossless["scorable_contents"]
    (by_id,) = [s for s in lossless["scores"] if s["id"] == loose["id"]]
    assert by_id["scorable"] == {
        "scorable_type": "content_entry",
        "content_id": content["id"],
        "data_type": "text",
    }


def test_pyrit_1_1_keeps_the_conversation_target_of_0_12_data():
    """The lossless document leaves out a 0.x conversation target its pieces imply; 1.1.0
    pieces name no target, so the profile keeps it on the conversation."""
    ingest_ok(json.loads(EXPORT_012.read_text()))

    lossless = {c["conversation"]["conversation_id"]: c for c in export_doc()["conversations"]}
    profiled = export_doc(profile="pyrit-1.1")["conversations"]

    implied = [
        c
        for c in profiled
        if lossless[c["conversation"]["conversation_id"]]["conversation"]["target_identifier"]
        is None
    ]
    assert all(c["conversation"]["target_identifier"] for c in profiled)
    assert implied


def test_pyrit_0_12_writes_flat_pieces_with_their_scores():
    ingest_ok(json.loads(EXPORT_012.read_text()))

    document = export_doc(profile="pyrit-0.12")

    assert "conversations" not in document and "scenario_results" not in document
    pieces = document["message_pieces"]
    assert len(pieces) == MessagePiece.objects.count()
    assert sum(len(p["scores"]) for p in pieces) + len(document["scores"]) == Score.objects.count()
    assert all("labels" in p and "prompt_target_identifier" in p for p in pieces)
    # PyRIT 0.12's own export of the same pieces had exactly these keys, in this order.
    original = json.loads(EXPORT_012.read_text())["message_pieces"][0]
    assert list(pieces[0]) == list(original)


#: ``datetime.isoformat()`` of an aware UTC time, what 0.12.1's ``to_dict()`` writes and what
#: ``datetime.fromisoformat`` reads on Python 3.10 (which refuses ``Z``).
ISO_OFFSET = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00")


def test_pyrit_0_12_writes_dates_as_0_12_writes_them(memory_110_db):
    document = export_doc(profile="pyrit-0.12")

    stored = dict(MessagePiece.objects.values_list("id", "timestamp"))
    stored_scores = dict(Score.objects.values_list("id", "timestamp"))
    dates = []
    for kind, obj in _all_objects(document):
        if kind == "piece":
            assert datetime.fromisoformat(obj["timestamp"]) == stored[UUID(obj["id"])]
            dates.append(obj["timestamp"])
        elif kind == "score":
            assert datetime.fromisoformat(obj["timestamp"]) == stored_scores[UUID(obj["id"])]
            dates.append(obj["timestamp"])
        elif kind == "seed" and "date_added" in obj:
            dates.append(obj["date_added"])
    assert len(dates) > 162 + 55
    assert [d for d in dates if not ISO_OFFSET.fullmatch(d)] == []
    # The other profiles keep the read API's form.
    lossless = export_doc()["conversations"][0]["messages"][0]["message_pieces"][0]
    assert lossless["timestamp"].endswith("Z")


def test_pyrit_0_12_maps_the_error_outcome_and_says_so(memory_110_db):
    lossless = {a["attack_result_id"]: a for a in export_doc()["attack_results"]}
    document = export_doc(profile="pyrit-0.12")

    errors = [
        a
        for a in document["attack_results"]
        if lossless[a["attack_result_id"]]["outcome"] == "error"
    ]
    assert len(errors) == 1
    assert errors[0]["outcome"] == "undetermined"
    assert errors[0]["metadata"] == {
        **(lossless[errors[0]["attack_result_id"]]["metadata"] or {}),
        REPLACED_KEY: {"outcome": "error"},
    }
    others = [a for a in document["attack_results"] if a not in errors]
    assert {a["outcome"] for a in others} == {"success", "failure", "undetermined"}
    assert all(a["outcome"] == lossless[a["attack_result_id"]]["outcome"] for a in others)
    assert not any(REPLACED_KEY in (a["metadata"] or {}) for a in others)
    assert "outcome error" in document["note"] and "load_pyrit_0_12.py" in document["note"]


def test_pyrit_0_12_gives_a_seed_without_added_by_one_and_says_so():
    seed = {"value": "v", "seed_type": "objective", "added_by": None, "metadata": {"k": "v"}}

    shaped = PYRIT_0_12.shape("seed", seed)

    assert shaped["added_by"] == "unknown"
    assert shaped["metadata"] == {"k": "v", REPLACED_KEY: {"added_by": None}}
    assert PYRIT_0_12.shape("seed", {**seed, "added_by": "alice"})["metadata"] == {"k": "v"}


def test_pyrit_0_12_document_ingests_back_with_its_note():
    """The note is a meta key: Redline reads the profile's document as it reads PyRIT's."""
    ingest_ok(json.loads(EXPORT_012.read_text()))
    document = export_doc(profile="pyrit-0.12")
    counts = (MessagePiece.objects.count(), Score.objects.count())
    MessagePiece.objects.all().delete()
    Score.objects.all().delete()

    ingest_ok(document)

    assert document["note"] == PYRIT_0_12.note
    assert (MessagePiece.objects.count(), Score.objects.count()) == counts


def test_seed_keys_follow_the_seed_type(memory_110_db):
    seeds = [s for g in export_doc(profile="pyrit-1.1")["seed_groups"] for s in g["seeds"]]

    objective = next(s for s in seeds if s["seed_type"] == "objective")
    prompt = next(s for s in seeds if s["seed_type"] == "prompt")
    assert "role" not in objective and "parameters" not in objective
    assert {"role", "sequence", "parameters"} <= set(prompt)


def test_a_narrowed_export_brings_the_scores_of_its_pieces(memory_110_db):
    """A filtered lossless export embeds the scores in pieces and writes no loose ones; with
    scores apart, the scores of the exported pieces must come along in ``scores``."""
    lossless = export_doc(attack_class="RedTeamingAttack")
    embedded = {
        score["id"]
        for item in lossless["conversations"]
        for message in item["messages"]
        for piece in message["message_pieces"]
        for score in piece["scores"]
    }

    document = export_doc(profile="pyrit-1.1", attack_class="RedTeamingAttack")

    assert embedded
    assert {score["id"] for score in document["scores"]} == embedded


def test_the_default_profile_is_the_lossless_document_byte_for_byte():
    ingest_ok(json.loads(EXPORT_110.read_text()))

    assert export_bytes(profile="redline") == export_bytes() == export_bytes(profile=" ")


def test_an_unknown_profile_names_the_known_ones():
    with pytest.raises(UnknownProfileError, match="'pyrit-2' is not a profile; use one of"):
        export_profile(name="pyrit-2")
    assert set(PROFILES) == {"redline", "pyrit-1.1", "pyrit-0.12"}


def test_a_profile_document_ingests_back_into_redline():
    """What a profile keeps stays PyRIT's shapes, so Redline reads it too."""
    with transaction.atomic():
        source = FIXTURES_DIR / "pyrit-1.1.0-small"
        import_pyrit_db(path=source / "memory.db", media_root=source / "dbdata")
        document = export_doc(profile="pyrit-1.1")
        counts = (MessagePiece.objects.count(), Score.objects.count())
        transaction.set_rollback(True)
    assert MessagePiece.objects.count() == 0

    ingest_ok(document)

    assert (MessagePiece.objects.count(), Score.objects.count()) == counts == (162, 55)


# --- the command, jsonl and the zip ------------------------------------------------------------


def test_the_command_takes_a_profile(memory_110_db, tmp_path, capsys):
    out = tmp_path / "memory.json"

    call_command("export_memory", "--out", str(out), "--profile", "pyrit-1.1")

    assert out.read_bytes() == export_bytes(profile="pyrit-1.1")
    assert "38 conversations, 55 scores, 1 scenario_results" in capsys.readouterr().err


def test_the_command_refuses_an_unknown_profile():
    with pytest.raises(CommandError, match="invalid choice: 'pyrit-9'"):
        call_command("export_memory", "--profile", "pyrit-9")


def test_jsonl_lines_are_single_item_profile_envelopes():
    ingest_ok(json.loads(EXPORT_012.read_text()))

    lines = export_bytes(fmt="jsonl", profile="pyrit-0.12").decode().splitlines()

    assert json.loads(lines[0]) == {
        "export_format": "redline-export/1+pyrit-0.12",
        "note": PYRIT_0_12.note,
    }
    sections = Counter(next(iter(json.loads(line))) for line in lines[1:])
    assert sections["message_pieces"] == MessagePiece.objects.count()


def test_the_zip_holds_the_profile_document(memory_110_db):
    with zipfile.ZipFile(io.BytesIO(export_bytes(with_media=True, profile="pyrit-1.1"))) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        document = zf.read(manifest["document"])
    assert manifest["export_format"] == "redline-export/1+pyrit-1.1"
    assert document == export_bytes(profile="pyrit-1.1")
    assert manifest["media"]


# --- the docs --------------------------------------------------------------------------------


def test_the_docs_table_is_the_rules():
    text = (Path(settings.BASE_DIR) / "docs" / "export.md").read_text()
    found = re.search(r"<!-- profile-drops:start -->\n(.*?)<!-- profile-drops:end -->", text, re.S)

    assert found, "docs/export.md lost its profile-drops markers"
    assert found.group(1) == drops_table()


def test_the_docs_table_names_what_1_1_rejects():
    """The keys issue 19 found PyRIT 1.1.0 rejecting are in the table as dropped."""
    table = drops_table()
    piece_row = next(line for line in table.splitlines() if line.startswith("| message piece"))
    for key in ("labels", "targeted_harm_categories", "originator", "media"):
        assert f"`{key}`" in piece_row.split("|")[2]
    assert "`objective_sha256`" in table


def test_pyrit_0_12_leaves_out_a_score_without_a_value():
    """0.12.1's Score refuses a null value; the lossless document keeps the score."""
    conversation = make_conversation()
    piece = make_piece(make_message(conversation, 0, "assistant"), "maybe")
    judged = make_score(piece, value="true", score_type=ScoreType.TRUE_FALSE)
    open_score = make_score(piece, value=None, status=ScoreStatus.UNDETERMINED)
    unstored = make_score(
        None, value=None, status=ScoreStatus.UNDETERMINED, message_piece_id=uuid4()
    )
    make_attack(conversation, last_score=open_score)

    lossless = export_doc()
    document = export_doc(profile="pyrit-0.12")

    lossless_ids = {s["id"] for kind, s in _all_objects(lossless) if kind == "score"}
    assert {str(open_score.id), str(unstored.id), str(judged.id)} <= lossless_ids
    ((embedded_piece,),) = [document["message_pieces"]]
    assert [s["id"] for s in embedded_piece["scores"]] == [str(judged.id)]
    assert document["scores"] == []
    (attack,) = document["attack_results"]
    assert attack["last_score"] is None
    assert "score without a value" in document["note"].replace("A score", "a score")
