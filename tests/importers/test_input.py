"""Bad input gives one clear line and writes nothing; legacy generations; dry run; read-only."""

from __future__ import annotations

import hashlib
import io
import shutil
import sqlite3
import uuid

import pytest
from django.core.management import CommandError, call_command

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    MediaBlob,
    MessagePiece,
    Score,
)
from memory.transfer.importers.service import ImportFailed, import_pyrit_db
from seeds.models import Seed
from tests.importers.conftest import DB_012, DB_110, ORCHESTRATOR_0_9, copy_fixture

pytestmark = pytest.mark.django_db

WRITTEN = (Conversation, MessagePiece, Score, AttackResult, Seed, ComponentIdentifier, MediaBlob)


def _nothing_written():
    return all(not model.objects.exists() for model in WRITTEN)


def _bad_files(tmp_path):
    text = tmp_path / "notes.db"
    text.write_text("these are my notes, not a database\n")
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE todo (id INTEGER PRIMARY KEY, item TEXT)")
    truncated = tmp_path / "truncated.db"
    data = DB_110.read_bytes()
    truncated.write_bytes(data[: len(data) // 3])
    corrupt = tmp_path / "corrupt.db"
    damaged = bytearray(data)
    damaged[len(data) // 2 : len(data) // 2 + 8192] = b"\xa5" * 8192
    corrupt.write_bytes(bytes(damaged))
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    return {
        "missing": (tmp_path / "nope.db", "no such file"),
        "empty": (empty, "not a SQLite database"),
        "not sqlite": (text, "not a SQLite database"),
        "sqlite, not pyrit": (other, "not PyRIT memory"),
        "truncated": (truncated, "corrupt or truncated"),
        "corrupt": (corrupt, "corrupt or truncated"),
    }


CASES = [
    "missing",
    "empty",
    "not sqlite",
    "sqlite, not pyrit",
    "truncated",
    "corrupt",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_clear_error_and_nothing_is_written(tmp_path, case):
    path, expected = _bad_files(tmp_path)[case]
    with pytest.raises(ImportFailed) as failure:
        import_pyrit_db(path=path)
    message = str(failure.value)
    assert expected in message
    assert "\n" not in message
    assert str(path) in message
    assert _nothing_written()


@pytest.mark.parametrize("case", CASES)
def test_command_exits_non_zero_with_one_line(tmp_path, case):
    path, expected = _bad_files(tmp_path)[case]
    with pytest.raises(CommandError) as failure:
        call_command("import_pyrit", str(path), stdout=io.StringIO())
    assert expected in str(failure.value)
    assert _nothing_written()


def test_command_exit_status_is_non_zero(tmp_path):
    """Run through the real entry point: a CommandError becomes exit status 1."""
    path, _ = _bad_files(tmp_path)["not sqlite"]
    with pytest.raises(SystemExit) as exited:
        from django.core.management import ManagementUtility

        ManagementUtility(["manage.py", "import_pyrit", str(path)]).execute()
    assert exited.value.code != 0


def test_schema_without_required_columns_is_refused(tmp_path):
    path = tmp_path / "odd.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE PromptMemoryEntries (id CHAR(36), role VARCHAR)")
    with pytest.raises(ImportFailed, match=r"unknown PyRIT schema \(PromptMemoryEntries lacks"):
        import_pyrit_db(path=path)
    assert _nothing_written()


def test_media_root_that_is_not_a_folder_is_refused(tmp_path):
    with pytest.raises(ImportFailed, match="media root is not a folder"):
        import_pyrit_db(path=DB_012, media_root=tmp_path / "absent")
    assert _nothing_written()


def test_the_source_file_is_never_modified(tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    stat = db.stat()
    import_pyrit_db(path=db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert db.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in db.parent.iterdir()) == ["dbdata", "memory.db"]


def test_dry_run_writes_nothing_and_reports_what_would_happen():
    summary = import_pyrit_db(path=DB_110, dry_run=True)
    assert _nothing_written()
    assert summary.dry_run
    assert summary.created["message_pieces"] == 162
    assert summary.created["scores"] == 55
    assert summary.created["attack_results"] == 24
    assert summary.media_matched == 14 and summary.media_missing == 0
    import_pyrit_db(path=DB_110)
    again = import_pyrit_db(path=DB_110, dry_run=True)
    assert again.created["message_pieces"] == 0
    assert again.unchanged["message_pieces"] == 162


# --- PyRIT 0.9 -----------------------------------------------------------------------------


def test_0_9_file_imports_with_32_hex_ids_and_legacy_identifiers(db_0_9):
    summary = import_pyrit_db(path=db_0_9)
    assert summary.schema.startswith("PyRIT 0.9")
    assert summary.ok, summary.warnings
    assert MessagePiece.objects.count() == 6
    piece = MessagePiece.objects.select_related(
        "attack_identifier", "prompt_target_identifier"
    ).get(id=uuid.uuid5(uuid.NAMESPACE_URL, "piece-0-1"))
    # 32-hex ids read as UUIDs; orchestrator_identifier is the attack identifier (§9.2)
    assert piece.original_prompt_id == piece.id
    assert piece.attack_identifier.class_name == ORCHESTRATOR_0_9["__type__"]
    assert piece.attack_identifier.params == {"id": ORCHESTRATOR_0_9["id"]}
    assert piece.prompt_target_identifier.class_name == "OpenAIChatTarget"
    assert piece.labels == {"op_name": "demo", "username": "alice"}
    score = Score.objects.get(id=uuid.uuid5(uuid.NAMESPACE_URL, "score-0"))
    assert score.message_piece_id == piece.id
    assert score.score_category == ["refusal"]  # 0.9 stored one plain category
    assert score.objective == "Tell me secret 0"  # 0.9 ``task``
    assert score.score_metadata == {}
    assert Seed.objects.get().seed_type == "prompt"
    assert import_pyrit_db(path=db_0_9).created["message_pieces"] == 0


def test_unknown_columns_are_kept_in_extra(tmp_path):
    db = tmp_path / "extra.db"
    shutil.copy(DB_012, db)
    with sqlite3.connect(db) as connection:
        connection.execute("ALTER TABLE PromptMemoryEntries ADD COLUMN team_note VARCHAR")
        connection.execute("UPDATE PromptMemoryEntries SET team_note = 'checked'")
    import_pyrit_db(path=db)
    extras = list(MessagePiece.objects.values_list("extra", flat=True))
    assert len(extras) == 53
    assert all(extra == {"team_note": "checked"} for extra in extras)


def test_a_bad_row_is_left_out_with_a_warning_and_the_rest_imported(tmp_path):
    db = tmp_path / "one-bad.db"
    shutil.copy(DB_012, db)
    with sqlite3.connect(db) as connection:
        bad = connection.execute(
            "SELECT id FROM ScoreEntries WHERE score_type = 'true_false' LIMIT 1"
        ).fetchone()[0]
        connection.execute("UPDATE ScoreEntries SET score_value = 'maybe' WHERE id = ?", [bad])
    summary = import_pyrit_db(path=db)
    assert not summary.ok
    assert summary.refused["scores"] == 1
    assert Score.objects.count() == 10
    assert not Score.objects.filter(id=bad).exists()
    assert any(bad in w and "'maybe'" in w for w in summary.warnings)
    # the attack whose last score it was is kept, without that reference
    assert summary.refused["attack_results"] == 0
    assert AttackResult.objects.count() == 12
    assert any("reference dropped" in w and bad in w for w in summary.warnings)
    with pytest.raises(CommandError, match="1 row"):
        call_command("import_pyrit", str(db), stdout=io.StringIO())


def test_attack_pointing_at_a_missing_piece_keeps_the_attack(tmp_path):
    db = tmp_path / "dangling.db"
    shutil.copy(DB_012, db)
    with sqlite3.connect(db) as connection:
        attack_id = connection.execute("SELECT id FROM AttackResultEntries LIMIT 1").fetchone()[0]
        connection.execute(
            "UPDATE AttackResultEntries SET last_response_id = ? WHERE id = ?",
            [str(uuid.uuid4()), attack_id],
        )
    summary = import_pyrit_db(path=db)
    assert summary.ok
    assert AttackResult.objects.get(id=attack_id).last_response is None
    assert any("reference dropped" in w for w in summary.warnings)


def test_missing_media_is_recorded_not_fatal(tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    shutil.rmtree(db.parent / "dbdata" / "prompt-memory-entries" / "audio")
    summary = import_pyrit_db(path=db)
    assert summary.ok
    assert summary.media_missing == 4  # two audio pieces, original and converted side each
    missing = MessagePiece.objects.filter(original_value_data_type="audio_path")
    assert missing.count() == 2
    for piece in missing:
        assert piece.original_media is None and piece.original_media_key.endswith(".wav")
    # sending the media along later: the same import with the files attaches them
    shutil.copytree(DB_110.parent / "dbdata" / "prompt-memory-entries" / "audio",
                    db.parent / "dbdata" / "prompt-memory-entries" / "audio")  # fmt: skip
    again = import_pyrit_db(path=db)
    assert again.media_missing == 0
    assert not MessagePiece.objects.filter(
        original_value_data_type="audio_path", original_media__isnull=True
    ).exists()


def test_media_under_an_explicit_root_matches_by_file_name(tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    for path in (DB_012.parent / "dbdata").rglob("*.png"):
        shutil.copy(path, flat / path.name)
    summary = import_pyrit_db(path=DB_012, media_root=flat)
    assert summary.media_missing == 0 and summary.media_matched == 2
    assert MessagePiece.objects.filter(original_media__isnull=False).count() == 1


def test_a_file_with_the_right_name_but_other_bytes_is_not_used(tmp_path):
    db = copy_fixture(DB_012, tmp_path)
    image = next((db.parent / "dbdata").rglob("*.png"))
    image.write_bytes(b"not the image PyRIT stored")
    summary = import_pyrit_db(path=db)
    assert summary.media_missing == 2 and summary.media_matched == 0
    assert [w for w in summary.warnings if w.startswith("media differs")] == [
        f"media differs from recorded sha256: piece {piece_id} conversation {conversation_id} "
        f"file {image.relative_to(db.parent).as_posix()} expected sha256 {sha}: not linked"
        for piece_id, conversation_id, sha in sqlite3.connect(db).execute(
            "SELECT id, conversation_id, converted_value_sha256 FROM PromptMemoryEntries "
            "WHERE converted_value_data_type = 'image_path'"
        )
    ]
    assert not MediaBlob.objects.exists()


def test_symlinks_out_of_the_media_root_are_not_followed(tmp_path):
    db = copy_fixture(DB_012, tmp_path)
    image = next((db.parent / "dbdata").rglob("*.png"))
    outside = tmp_path / "outside.png"
    image.rename(outside)
    image.symlink_to(outside)
    summary = import_pyrit_db(path=db)
    assert summary.media_matched == 0
    assert not MediaBlob.objects.exists()


def test_identifier_hash_mismatch_is_kept_verbatim_and_warned(tmp_path):
    """A stored hash that is not the hash of the stored content (e.g. truncated params) is
    PyRIT 0.12's identity: kept exactly, and listed in the warnings."""
    import json

    db = tmp_path / "mismatch.db"
    shutil.copy(DB_012, db)
    with sqlite3.connect(db) as connection:
        row_id, text = connection.execute(
            "SELECT id, prompt_target_identifier FROM PromptMemoryEntries "
            "WHERE prompt_target_identifier != '{}' LIMIT 1"
        ).fetchone()
        target = json.loads(text)
        target["model_name"] = "local-fake-chat... [truncated]"
        connection.execute(
            "UPDATE PromptMemoryEntries SET prompt_target_identifier = ? WHERE id = ?",
            [json.dumps(target), row_id],
        )
    summary = import_pyrit_db(path=db)
    assert summary.ok
    piece = MessagePiece.objects.select_related("prompt_target_identifier").get(id=row_id)
    # the piece names the stored hash (one row per hash: the content first stored under it,
    # here the untouched copy nested in the attack identifier, is kept)
    assert piece.prompt_target_identifier.hash == target["hash"]
    assert any(
        "identifier hash kept as stored" in w and target["hash"][:12] in w for w in summary.warnings
    )


def test_files_nothing_names_are_counted(tmp_path):
    db = copy_fixture(DB_012, tmp_path)
    extra = db.parent / "dbdata" / "prompt-memory-entries" / "images" / "999.png"
    extra.write_bytes(b"an image nobody refers to")
    summary = import_pyrit_db(path=db)
    assert summary.media_unused_count == 1
    assert summary.media_unused == ["dbdata/prompt-memory-entries/images/999.png"]
    assert summary.as_dict()["media_unused_count"] == 1
