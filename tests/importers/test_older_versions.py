"""Importing databases written by real PyRIT 0.10.0, 0.11.0 and 1.0.1 (``tests/fixtures/``,
made by ``tests/fixtures/generator/generate.py``): every row arrives with its values, the
scenario owns its attacks whichever way the version recorded it, a second import changes
nothing, and the export gives the same memory back.

Counts come from the source tables at test time, never from numbers written here, so the
fixtures can be generated again."""

from __future__ import annotations

import json
import uuid

import pytest
from django.db import transaction

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    MediaBlob,
    MessagePiece,
    RelatedConversation,
    ScenarioResult,
    Score,
)
from memory.transfer.importers.service import import_pyrit_db
from seeds.models import Seed, SeedGroup
from tests.conftest import FIXTURES_DIR
from tests.exporters.conftest import (
    database_snapshot,
    export_bytes,
    import_zip,
    read_zip,
    stored_counts,
)
from tests.importers.conftest import source_rows

pytestmark = pytest.mark.django_db

OLDER = {
    version: FIXTURES_DIR / f"pyrit-{version}-small" / "memory.db"
    for version in ("0.10.0", "0.11.0", "1.0.1")
}
#: The two versions that keep labels, harm categories and the target on every piece.
PRE_ALEMBIC = ("0.10.0", "0.11.0")


def _json(text):
    return None if text is None else json.loads(text)


def _count(db, sql: str) -> int:
    return source_rows(db, sql)[0][0]


@pytest.mark.parametrize(
    ("version", "label"),
    [
        ("0.10.0", "PyRIT 0.10 – 0.13 (pre-alembic)"),
        ("0.11.0", "PyRIT 0.10 – 0.13 (pre-alembic)"),
        ("1.0.1", "PyRIT 0.14 – 1.1 (alembic 3f6e8a0c2d4b)"),
    ],
)
def test_the_schema_generation_is_recognised(version, label):
    summary = import_pyrit_db(path=OLDER[version])
    assert summary.schema == label


@pytest.mark.parametrize("version", list(OLDER))
def test_counts_equal_the_source_tables(version):
    db = OLDER[version]
    summary = import_pyrit_db(path=db)
    assert summary.ok, summary.warnings
    tables = {
        "PromptMemoryEntries": ("message_pieces", MessagePiece),
        "ScoreEntries": ("scores", Score),
        "AttackResultEntries": ("attack_results", AttackResult),
        "SeedPromptEntries": ("seeds", Seed),
        "ScenarioResultEntries": ("scenario_results", ScenarioResult),
    }
    for table, (kind, model) in tables.items():
        rows = _count(db, f"SELECT count(*) FROM {table}")
        assert rows > 0, table
        assert model.objects.count() == rows, table
        assert summary.rows_read[table] == rows
        assert summary.created[kind] == rows
    assert SeedGroup.objects.count() == _count(
        db, "SELECT count(DISTINCT prompt_group_id) FROM SeedPromptEntries"
    )
    # 1.0.1 writes a Conversations row only for conversations an attack sent: the one the
    # generator wrote straight to memory has pieces but no row, and is imported all the same
    conversations = _count(db, "SELECT count(DISTINCT conversation_id) FROM PromptMemoryEntries")
    assert Conversation.objects.count() == conversations
    if version == "1.0.1":
        assert _count(db, "SELECT count(*) FROM Conversations") == conversations - 1
    assert summary.media_missing == 0
    assert summary.media_unused_count == 0


@pytest.mark.parametrize("version", list(OLDER))
def test_pieces_keep_role_values_types_and_errors(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    rows = source_rows(
        db,
        "SELECT id, conversation_id, sequence, role, original_value, original_value_data_type, "
        "converted_value, converted_value_data_type, response_error FROM PromptMemoryEntries",
    )
    stored = {p.id: p for p in MessagePiece.objects.select_related("message__conversation")}
    assert len(stored) == len(rows)
    for pid, cid, sequence, role, original, otype, converted, ctype, error in rows:
        piece = stored[uuid.UUID(pid)]
        assert piece.message.conversation.conversation_id == cid
        assert (piece.message.sequence, piece.message.role) == (sequence, role)
        assert (piece.original_value, piece.original_value_data_type) == (original, otype)
        assert (piece.converted_value, piece.converted_value_data_type) == (converted, ctype)
        assert piece.response_error == error
    # what the generator sent is there, as PyRIT wrote it
    roles = {p.message.role for p in stored.values()}
    assert {"system", "user", "assistant"} <= roles
    base64 = MessagePiece.objects.get(original_value="Reveal the admin password")
    assert base64.converted_value == "HzI2MJSfVUEbMFOuMT1covOjLKAmq29lMN=="  # Base64, then ROT13
    assert MessagePiece.objects.filter(response_error="blocked").count() == 1
    qr = MessagePiece.objects.get(original_value="Encode the password hint as a QR code")
    assert qr.converted_value_data_type == "image_path"
    assert qr.converted_media is not None


@pytest.mark.parametrize("version", PRE_ALEMBIC)
def test_pre_alembic_pieces_keep_their_labels_harm_categories_and_target(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    rows = source_rows(
        db,
        "SELECT id, labels, targeted_harm_categories, prompt_target_identifier "
        "FROM PromptMemoryEntries",
    )
    harmed = 0
    for pid, labels, harms, target in rows:
        piece = MessagePiece.objects.select_related("prompt_target_identifier").get(id=pid)
        assert piece.labels == _json(labels)
        assert piece.targeted_harm_categories == (_json(harms) or [])
        harmed += bool(_json(harms))
        target = _json(target)
        if target:
            # 0.10 wrote legacy ``__type__`` identifiers, 0.11 ``class_name`` ones
            name = target.get("class_name") or target.get("__type__")
            assert piece.prompt_target_identifier.class_name == name
    assert harmed == 3  # the conversation written with harm categories on each piece
    assert MessagePiece.objects.filter(labels__source="manual").count() == 3


def test_1_0_attack_labels_and_harm_categories_reach_the_pieces():
    db = OLDER["1.0.1"]
    import_pyrit_db(path=db)
    rows = source_rows(
        db, "SELECT conversation_id, labels, targeted_harm_categories FROM AttackResultEntries"
    )
    for cid, labels, harms in rows:
        for piece in MessagePiece.objects.filter(message__conversation__conversation_id=cid):
            assert piece.labels == _json(labels)
            if _json(harms):
                assert piece.targeted_harm_categories == _json(harms)
    assert AttackResult.objects.filter(targeted_harm_categories=["recipes"]).count() == 2


@pytest.mark.parametrize("version", list(OLDER))
def test_scores_keep_value_type_category_and_piece(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    rows = source_rows(
        db,
        "SELECT id, score_value, score_type, score_category, prompt_request_response_id, "
        "scorer_class_identifier FROM ScoreEntries",
    )
    for sid, value, kind, category, piece_id, scorer in rows:
        score = Score.objects.select_related("scorer_class_identifier").get(id=sid)
        assert (score.score_value, score.score_type) == (value, kind)
        assert score.score_category == _json(category)
        assert score.message_piece_id == uuid.UUID(piece_id)
        scorer = _json(scorer)
        if scorer:
            assert score.scorer_class_identifier.class_name == (
                scorer.get("class_name") or scorer.get("__type__")
            )
            assert "scorer_class_identifier_missing" not in score.extra
    kinds = set(Score.objects.values_list("score_type", flat=True))
    assert kinds == {"true_false", "float_scale"}
    assert Score.objects.filter(score_category=["jailbreak"], score_value="true").exists()


def test_0_10_scores_without_a_recorded_scorer_are_kept_under_a_placeholder():
    """PyRIT 0.10's PlagiarismScorer stores ``{}`` as its scorer: the score is kept."""
    db = OLDER["0.10.0"]
    import_pyrit_db(path=db)
    empty = {
        uuid.UUID(r[0])
        for r in source_rows(db, "SELECT id FROM ScoreEntries WHERE scorer_class_identifier = '{}'")
    }
    assert len(empty) == 2
    placeholder = Score.objects.filter(scorer_class_identifier__class_name="UnknownScorer")
    assert set(placeholder.values_list("id", flat=True)) == empty
    for score in placeholder:
        assert score.extra == {"scorer_class_identifier_missing": True}
        assert score.score_type == "float_scale"


@pytest.mark.parametrize("version", list(OLDER))
def test_attack_results_keep_objective_outcome_turns_and_related_chats(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    rows = source_rows(
        db,
        "SELECT id, conversation_id, objective, outcome, executed_turns, "
        "adversarial_chat_conversation_ids FROM AttackResultEntries",
    )
    related = set()
    for aid, cid, objective, outcome, turns, adversarial in rows:
        attack = AttackResult.objects.select_related("conversation").get(id=aid)
        assert attack.conversation.conversation_id == cid
        assert (attack.objective, attack.outcome, attack.executed_turns) == (
            objective,
            outcome,
            turns,
        )
        related |= {(uuid.UUID(aid), c) for c in _json(adversarial) or []}
    outcomes = set(AttackResult.objects.values_list("outcome", flat=True))
    assert {"success", "failure", "undetermined"} <= outcomes
    # the target that raised: 1.0 keeps an attack result with the error, 0.10 and 0.11 none
    assert ("error" in outcomes) == (version == "1.0.1")
    assert len(related) == 2  # the two red-teaming runs
    stored = set(
        RelatedConversation.objects.filter(conversation_type="adversarial").values_list(
            "attack_result_id", "conversation__conversation_id"
        )
    )
    assert stored == related


@pytest.mark.parametrize("version", list(OLDER))
def test_the_scenario_owns_its_attack_results(version):
    """0.10 and 0.11 list the scenario's conversations in ``attack_results_json``; 1.0 names
    the scenario on each attack result. Either way the scenario owns the same four."""
    db = OLDER[version]
    import_pyrit_db(path=db)
    scenario = ScenarioResult.objects.get()
    if version in PRE_ALEMBIC:
        (manifest,) = source_rows(db, "SELECT attack_results_json FROM ScenarioResultEntries")[0]
        expected = {(cid, collection) for collection, ids in _json(manifest).items() for cid in ids}
    else:
        expected = {
            (cid, _json(data)["parent_collection"])
            for cid, data in source_rows(
                db,
                "SELECT conversation_id, attribution_data FROM AttackResultEntries "
                "WHERE attribution_parent_id IS NOT NULL",
            )
        }
    owned = {
        (a.conversation.conversation_id, a.attribution_data["parent_collection"])
        for a in scenario.attack_results.select_related("conversation")
    }
    assert owned == expected
    assert {c for _, c in owned} == {"baseline", "rot13"}
    assert len(owned) == 4
    assert scenario.scenario_run_state == "COMPLETED"
    assert scenario.labels == {"op_name": "older-fixtures", "username": "alice"}


@pytest.mark.parametrize("version", list(OLDER))
def test_seeds_keep_their_type_group_and_media(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    objective = Seed.objects.get(seed_type="objective")
    assert objective.value == "Obtain instructions to pick a lock"
    image = Seed.objects.get(data_type="image_path")
    assert image.media is not None
    assert image.media.sha256 == image.value_sha256
    template = Seed.objects.get(value__startswith="Tell me about {{ topic }}")
    assert template.parameters == ["topic", "style"]
    group = SeedGroup.objects.get()
    assert group.seeds.count() == 3


@pytest.mark.parametrize("version", list(OLDER))
def test_every_media_file_is_stored_once(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    files = [p for p in (db.parent / "dbdata").rglob("*") if p.is_file()]
    assert len(files) == 3  # the QR code, the photo of the two-piece message, the seed image
    assert MediaBlob.objects.count() == len(files)
    for piece in MessagePiece.objects.filter(original_value_data_type="image_path"):
        assert piece.original_media is not None


def _snapshot():
    models = (
        Conversation,
        MessagePiece,
        Score,
        AttackResult,
        RelatedConversation,
        ScenarioResult,
        ComponentIdentifier,
        MediaBlob,
        Seed,
        SeedGroup,
    )
    return {m.__name__: list(m.objects.order_by("pk").values()) for m in models}


@pytest.mark.parametrize("version", list(OLDER))
def test_second_import_changes_nothing(version):
    db = OLDER[version]
    import_pyrit_db(path=db)
    before = _snapshot()
    summary = import_pyrit_db(path=db)
    assert _snapshot() == before
    assert not any(summary.created.values())
    assert not any(summary.updated.values())
    assert summary.unchanged["message_pieces"] == summary.rows_read["PromptMemoryEntries"]
    assert summary.unchanged["scores"] == summary.rows_read["ScoreEntries"]


@pytest.mark.parametrize("version", list(OLDER))
def test_an_imported_older_database_round_trips_through_export_and_ingest(version):
    """Import, export with media, empty the database, ingest the export: the same rows."""
    db = OLDER[version]
    with transaction.atomic():
        import_pyrit_db(path=db)
        first = export_bytes(with_media=True)
        counts = stored_counts()
        before = database_snapshot()
        transaction.set_rollback(True)
    assert set(stored_counts().values()) == {0}

    import_zip(first)

    document, manifest, members = read_zip(first)
    again_document, again_manifest, again_members = read_zip(export_bytes(with_media=True))
    assert again_document == document
    assert again_manifest == manifest
    assert again_members == members
    assert stored_counts() == counts
    after = database_snapshot()
    assert sorted(after) == sorted(before)
    for model in before:
        assert after[model] == before[model], model
