"""Importing the real PyRIT fixture databases: counts table by table, identifiers, scores,
media, related conversations, 1.x tags copied down, and a second import that changes nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from pathlib import Path

import pytest

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    MediaBlob,
    MessagePiece,
    PieceConverter,
    RelatedConversation,
    ScenarioResult,
    ScorableContent,
    Score,
)
from memory.transfer.importers.service import import_pyrit_db
from seeds.models import Seed, SeedGroup
from tests.importers.conftest import DB_012, DB_110, FIXTURE_DBS, source_rows

pytestmark = pytest.mark.django_db


def _import(db: Path, **kwargs):
    return import_pyrit_db(path=db, **kwargs)


def _json(text):
    return None if text is None else json.loads(text)


def _ids(values):
    return {uuid.UUID(v) for v in values}


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_counts_equal_the_source_tables(version):
    db = FIXTURE_DBS[version]
    summary = _import(db)
    count = lambda sql: source_rows(db, sql)[0][0]  # noqa: E731
    assert summary.ok, summary.warnings
    assert MessagePiece.objects.count() == count("SELECT count(*) FROM PromptMemoryEntries")
    assert Score.objects.count() == count("SELECT count(*) FROM ScoreEntries")
    assert AttackResult.objects.count() == count("SELECT count(*) FROM AttackResultEntries")
    assert Seed.objects.count() == count("SELECT count(*) FROM SeedPromptEntries")
    assert ScenarioResult.objects.count() == count("SELECT count(*) FROM ScenarioResultEntries")
    assert SeedGroup.objects.count() == count(
        "SELECT count(DISTINCT prompt_group_id) FROM SeedPromptEntries"
    )
    conversations = count("SELECT count(DISTINCT conversation_id) FROM PromptMemoryEntries")
    if version == "1.1.0":
        assert count("SELECT count(*) FROM Conversations") == conversations
        assert ScorableContent.objects.count() == count(
            "SELECT count(*) FROM ScorableContentEntries"
        )
    assert Conversation.objects.count() == conversations
    # the summary says the same, table by table
    for table, model in (
        ("PromptMemoryEntries", "message_pieces"),
        ("ScoreEntries", "scores"),
        ("AttackResultEntries", "attack_results"),
        ("SeedPromptEntries", "seeds"),
    ):
        assert summary.rows_read[table] == count(f"SELECT count(*) FROM {table}")
        assert summary.created[model] == summary.rows_read[table]
    assert summary.rows_total == sum(summary.rows_read.values())


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_pieces_keep_values_ids_order_and_converter_chain(version):
    db = FIXTURE_DBS[version]
    _import(db)
    rows = source_rows(
        db,
        "SELECT id, conversation_id, sequence, role, original_value, converted_value, "
        "original_prompt_id, converter_identifiers, original_value_sha256 "
        "FROM PromptMemoryEntries ORDER BY rowid",
    )
    stored = {
        p.id: p
        for p in MessagePiece.objects.select_related("message__conversation").prefetch_related(
            "converters__identifier"
        )
    }
    positions: dict[tuple, list] = {}
    for pid, cid, seq, role, original, converted, opid, converters, sha in rows:
        piece = stored[uuid.UUID(pid)]
        assert piece.message.conversation.conversation_id == cid
        assert (piece.message.sequence, piece.message.role) == (seq, role)
        assert (piece.original_value, piece.converted_value) == (original, converted)
        assert piece.original_prompt_id == uuid.UUID(opid)
        if sha is not None:
            assert piece.original_value_sha256 == sha
        chain = [c.identifier.hash for c in piece.converters.all()]
        assert chain == [c["hash"] for c in _json(converters) or []]
        positions.setdefault((cid, seq), []).append(piece.position)
    # pieces of a message keep PyRIT's insertion (rowid) order
    assert all(p == list(range(len(p))) for p in positions.values())


def _walk(identifier):
    yield identifier
    for child in (identifier.get("children") or {}).values():
        for node in child if isinstance(child, list) else [child]:
            yield from _walk(node)


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_every_stored_identifier_hash_and_eval_hash_is_preserved(version):
    db = FIXTURE_DBS[version]
    _import(db)
    texts = [r[0] for r in source_rows(db, "SELECT converter_identifiers FROM PromptMemoryEntries")]
    identifiers = [i for t in texts for i in _json(t) or []]
    identifiers += [
        _json(r[0]) for r in source_rows(db, "SELECT scorer_class_identifier FROM ScoreEntries")
    ]
    identifiers += [
        _json(r[0])
        for r in source_rows(db, "SELECT atomic_attack_identifier FROM AttackResultEntries")
    ]
    if version == "1.1.0":
        identifiers += [
            _json(r[0]) for r in source_rows(db, "SELECT target_identifier FROM Conversations")
        ]
        for column in ("scenario_identifier", "objective_target_identifier"):
            identifiers += [
                _json(r[0]) for r in source_rows(db, f"SELECT {column} FROM ScenarioResultEntries")
            ]
    else:
        for column in ("prompt_target_identifier", "attack_identifier"):
            identifiers += [
                _json(r[0]) for r in source_rows(db, f"SELECT {column} FROM PromptMemoryEntries")
            ]
    nodes = [n for i in identifiers if i for n in _walk(i)]
    assert len(nodes) > 20
    stored = {row.hash: row for row in ComponentIdentifier.objects.all()}
    for node in nodes:
        row = stored[node["hash"]]
        assert row.eval_hash == node.get("eval_hash")
        assert row.class_name == node["class_name"]


def test_objects_point_at_the_identifiers_their_rows_name():
    _import(DB_110)
    for sid, scorer in source_rows(DB_110, "SELECT id, scorer_class_identifier FROM ScoreEntries"):
        score = Score.objects.select_related("scorer_class_identifier").get(id=sid)
        assert score.scorer_class_identifier.hash == _json(scorer)["hash"]
    for cid, target in source_rows(
        DB_110, "SELECT conversation_id, target_identifier FROM Conversations"
    ):
        conversation = Conversation.objects.get(conversation_id=cid)
        assert conversation.target_identifier.hash == _json(target)["hash"]
        # §9.2: the 1.x conversation target is every piece's prompt target
        targets = set(
            MessagePiece.objects.filter(message__conversation=conversation).values_list(
                "prompt_target_identifier__hash", flat=True
            )
        )
        assert targets == {_json(target)["hash"]}
    for aid, atomic in source_rows(
        DB_110, "SELECT id, atomic_attack_identifier FROM AttackResultEntries"
    ):
        attack = AttackResult.objects.select_related(
            "atomic_attack_identifier", "attack_identifier"
        ).get(id=aid)
        atomic = _json(atomic)
        if atomic is None:
            continue
        assert attack.atomic_attack_identifier.hash == atomic["hash"]
        # 0.13+ nesting: children.attack_technique.children.attack is the strategy
        strategy = atomic["children"]["attack_technique"]["children"]["attack"]
        assert attack.attack_identifier.hash == strategy["hash"]


def test_legacy_attack_identifier_column_is_the_strategy():
    _import(DB_012)
    for aid, strategy in source_rows(
        DB_012, "SELECT id, attack_identifier FROM AttackResultEntries"
    ):
        attack = AttackResult.objects.select_related("attack_identifier").get(id=aid)
        assert attack.attack_identifier.hash == _json(strategy)["hash"]


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_every_score_is_attached_to_its_piece(version):
    db = FIXTURE_DBS[version]
    _import(db)
    rows = source_rows(db, "SELECT id, prompt_request_response_id, score_value FROM ScoreEntries")
    piece_ids = set(MessagePiece.objects.values_list("id", flat=True))
    for sid, piece_id, value in rows:
        score = Score.objects.get(id=sid)
        assert score.score_value == value
        if piece_id is None:
            assert score.message_piece_id is None
            continue
        assert score.message_piece_id == uuid.UUID(piece_id)
        # §6.4: visible on every piece whose original_prompt_id is the scored id (the scored
        # piece itself, or the copies of a duplicated piece whose original was not kept)
        sharing = MessagePiece.objects.filter(original_prompt_id=score.message_piece_id)
        assert score.message_piece_id in piece_ids or sharing.exists()
        if sharing.exists():
            assert score in Score.objects.for_pieces([score.message_piece_id])


def test_score_on_loose_content_links_to_its_content():
    _import(DB_110)
    content_id, value = source_rows(DB_110, "SELECT id, value FROM ScorableContentEntries")[0]
    score = Score.objects.get(scorable_content__isnull=False)
    assert score.scorable_content_id == uuid.UUID(content_id)
    assert score.scorable_content.value == value
    assert score.message_piece_id is None


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_related_conversations_are_linked(version):
    db = FIXTURE_DBS[version]
    _import(db)
    expected = set()
    for aid, pruned, adversarial in source_rows(
        db,
        "SELECT id, pruned_conversation_ids, adversarial_chat_conversation_ids "
        "FROM AttackResultEntries",
    ):
        expected |= {(uuid.UUID(aid), c, "pruned") for c in _json(pruned) or []}
        expected |= {(uuid.UUID(aid), c, "adversarial") for c in _json(adversarial) or []}
    assert expected
    stored = set(
        RelatedConversation.objects.values_list(
            "attack_result_id", "conversation__conversation_id", "conversation_type"
        )
    )
    assert stored == expected


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_every_media_file_is_matched(version):
    db = FIXTURE_DBS[version]
    summary = _import(db)
    files = [p for p in (db.parent / "dbdata").rglob("*") if p.is_file()]
    assert files
    assert summary.media_missing == 0
    assert summary.media_unused == [] and summary.media_unused_count == 0
    digests = {hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    assert set(MediaBlob.objects.values_list("sha256", flat=True)) == digests
    for piece in MessagePiece.objects.all():
        if piece.original_is_media:
            assert piece.original_media is not None
            assert piece.original_media.sha256 == piece.original_value_sha256
        if piece.converted_is_media:
            assert piece.converted_media is not None
            assert piece.converted_media.sha256 == piece.converted_value_sha256
    for seed in Seed.objects.exclude(media_key=""):
        assert seed.media is not None
        assert seed.media.sha256 == seed.value_sha256


def test_1x_attack_labels_and_harm_categories_reach_the_pieces():
    _import(DB_110)
    rows = source_rows(
        DB_110,
        "SELECT conversation_id, labels, targeted_harm_categories, "
        "adversarial_chat_conversation_ids FROM AttackResultEntries ORDER BY rowid",
    )
    checked = 0
    for cid, labels, harms, adversarial in rows:
        labels, harms = _json(labels) or {}, _json(harms) or []
        if not labels:
            continue
        for conversation_id in [cid, *(_json(adversarial) or [])]:
            pieces = MessagePiece.objects.filter(
                message__conversation__conversation_id=conversation_id
            )
            for piece in pieces:
                assert piece.labels == labels
                if harms:
                    assert piece.targeted_harm_categories == harms
                checked += 1
        conversation = Conversation.objects.get(conversation_id=cid)
        assert labels.items() <= conversation.labels.items()
    assert checked > 50


def test_legacy_piece_labels_are_kept_as_stored():
    _import(DB_012)
    for pid, labels in source_rows(DB_012, "SELECT id, labels FROM PromptMemoryEntries"):
        assert MessagePiece.objects.get(id=pid).labels == _json(labels)


def test_scenario_result_owns_its_attack_results():
    _import(DB_110)
    scenario = ScenarioResult.objects.get()
    owned = source_rows(
        DB_110, "SELECT id FROM AttackResultEntries WHERE attribution_parent_id IS NOT NULL"
    )
    assert set(scenario.attack_results.values_list("id", flat=True)) == _ids(r[0] for r in owned)
    assert scenario.display_group_map == {"prompt_sending_rot13": "ROT13 encoding"}


def test_seed_objective_flag_of_legacy_files_makes_objectives():
    _import(DB_012)
    flagged = source_rows(DB_012, "SELECT id FROM SeedPromptEntries WHERE is_objective = 1")
    assert flagged
    assert set(Seed.objects.filter(seed_type="objective").values_list("id", flat=True)) == _ids(
        r[0] for r in flagged
    )


def _snapshot():
    models = (
        Conversation,
        MessagePiece,
        PieceConverter,
        Score,
        AttackResult,
        RelatedConversation,
        ScenarioResult,
        ScorableContent,
        ComponentIdentifier,
        MediaBlob,
        Seed,
        SeedGroup,
    )
    return {m.__name__: list(m.objects.order_by("pk").values()) for m in models}


@pytest.mark.parametrize("version", list(FIXTURE_DBS))
def test_second_import_changes_nothing(version):
    db = FIXTURE_DBS[version]
    _import(db)
    before = _snapshot()
    summary = _import(db)
    assert _snapshot() == before
    assert not any(summary.created.values())
    assert not any(summary.updated.values())
    assert summary.unchanged["message_pieces"] == summary.rows_read["PromptMemoryEntries"]


def test_two_files_sharing_conversations_create_no_duplicates(tmp_path):
    """A second file holding some of the same conversations (PyRIT users copy databases
    around): the shared pieces, scores and attacks are recognised by id."""
    import shutil
    import sqlite3

    partial = tmp_path / "partial.db"
    shutil.copy(DB_110, partial)
    with sqlite3.connect(partial) as connection:
        keep = [
            r[0] for r in connection.execute("SELECT conversation_id FROM Conversations LIMIT 10")
        ]
        marks = ",".join("?" * len(keep))
        connection.execute(
            f"DELETE FROM PromptMemoryEntries WHERE conversation_id NOT IN ({marks})", keep
        )
    _import(partial)
    first = MessagePiece.objects.count()
    summary = _import(DB_110)
    assert summary.unchanged["message_pieces"] == first
    assert (
        MessagePiece.objects.count()
        == source_rows(DB_110, "SELECT count(*) FROM PromptMemoryEntries")[0][0]
    )
    assert Conversation.objects.count() == 38


@pytest.mark.django_db(transaction=True)
def test_hashes_pyrit_left_empty_stay_empty():
    """PyRIT 1.1.0 hashes no system piece (nor simulated or some user ones): Redline keeps
    them empty, and the export gives them back empty."""
    with sqlite3.connect(f"file:{DB_110}?mode=ro", uri=True) as source:
        empty = {
            uuid.UUID(row[0])
            for row in source.execute(
                "SELECT id FROM PromptMemoryEntries WHERE original_value_sha256 IS NULL"
            )
        }
    assert len(empty) == 33
    import_pyrit_db(path=DB_110)
    stored = set(
        MessagePiece.objects.filter(original_value_sha256__isnull=True).values_list("pk", flat=True)
    )
    assert stored == empty
