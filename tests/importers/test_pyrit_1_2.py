"""Importing a PyRIT 1.2 / main database (``pyrit-1.2-main``): the new columns land in their
Redline fields, the tables Redline has no model for are kept verbatim, a second import changes
nothing; and a database newer than Redline knows imports with warnings instead of failing."""

from __future__ import annotations

import json
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest

from memory.models import AttackResult, Label, PyritRecord, Score
from memory.transfer.importers.service import ImportFailed, import_pyrit_db
from tests.importers.conftest import DB_12, DB_110, copy_fixture, source_rows

pytestmark = pytest.mark.django_db

VERBATIM = {
    "OperationEntries": 1,
    "FindingEntries": 2,
    "FindingEvidenceEntries": 3,
    "ObservationEntries": 1,
    "ObservationMessagePieceEntries": 1,
    "ScoreObservationEntries": 1,
}


def test_pyrit_1_2_imports_every_row():
    summary = import_pyrit_db(path=DB_12)
    assert summary.ok, summary.warnings
    assert summary.schema == "PyRIT 1.2 (alembic c8d3e5f7a901)"
    assert not [w for w in summary.warnings if w.startswith("schema newer")]
    count = lambda sql: source_rows(DB_12, sql)[0][0]  # noqa: E731
    assert Score.objects.count() == count("SELECT count(*) FROM ScoreEntries")
    assert AttackResult.objects.count() == count("SELECT count(*) FROM AttackResultEntries")
    by_table = {t: PyritRecord.objects.filter(table=t).count() for t in VERBATIM}
    assert by_table == VERBATIM
    for table, rows in VERBATIM.items():
        assert summary.rows_read[table] == rows
    assert summary.created["pyrit_records"] == sum(VERBATIM.values())


def test_scored_expectation_keeps_the_objective_meaning():
    import_pyrit_db(path=DB_12)
    rows = source_rows(
        DB_12,
        "SELECT id, scored_expectation FROM ScoreEntries WHERE scored_expectation IS NOT NULL",
    )
    assert len(rows) == 30
    for score_id, text in rows:
        score = Score.objects.get(pk=uuid.UUID(score_id))
        expectation = json.loads(text)
        assert score.scored_expectation == expectation
        assert score.objective == expectation["objective"]
    # the same score in the 1.1.0 database had exactly that objective
    old = dict(source_rows(DB_110, "SELECT id, objective FROM ScoreEntries"))
    for score_id, _ in rows:
        assert Score.objects.get(pk=uuid.UUID(score_id)).objective == old[score_id]
    intermediate = Score.objects.exclude(extra={}).values_list("extra", flat=True)
    assert {e["is_intermediate"] for e in intermediate} == {0}


def test_attack_results_get_operator_operation_and_both_scores():
    import_pyrit_db(path=DB_12)
    rows = source_rows(
        DB_12,
        "SELECT id, operator, operation, labels, automated_score_id, human_score_id, "
        "preparation_conversation_ids, objective_target_eval_hash_v1 FROM AttackResultEntries",
    )
    for rid, operator, operation, labels, automated, human, preparation, eval_hash in rows:
        attack = AttackResult.objects.get(pk=uuid.UUID(rid))
        assert (attack.operator, attack.operation) == (operator, operation)
        assert attack.labels == json.loads(labels)
        assert attack.last_score_id == (uuid.UUID(automated) if automated else None)
        assert attack.human_score_id == (uuid.UUID(human) if human else None)
        if preparation is not None:
            assert attack.extra["preparation_conversation_ids"] == json.loads(preparation)
        assert attack.extra.get("objective_target_eval_hash_v1") == eval_hash
    assert AttackResult.objects.filter(human_score__isnull=False).count() == 1
    # the moved labels still find the attacks: operator / operation are indexed as labels
    bob = Label.objects.get(key="operator", value="bob")
    assert bob.attack_results.count() == sum(1 for r in rows if r[1] == "bob") > 0


def test_verbatim_rows_are_every_column_as_stored():
    import_pyrit_db(path=DB_12)
    with sqlite3.connect(f"file:{DB_12}?mode=ro", uri=True) as connection:
        connection.row_factory = sqlite3.Row
        for table in VERBATIM:
            for source in connection.execute(f'SELECT * FROM "{table}"'):
                row = dict(source)
                if table == "ObservationMessagePieceEntries":
                    pk = json.dumps([row["observation_id"], row["position"]])
                elif table == "ScoreObservationEntries":
                    pk = json.dumps([row["score_id"], row["position"]])
                else:
                    pk = row["id"]
                record = PyritRecord.objects.get(table=table, pk_text=pk)
                assert record.row == row
                assert record.alembic_revision == "c8d3e5f7a901"
    observation = PyritRecord.objects.get(table="ObservationEntries")
    assert observation.pyrit_version == "1.2.0"


def test_a_second_import_changes_nothing():
    import_pyrit_db(path=DB_12)
    before = list(PyritRecord.objects.values_list("table", "pk_text", "row", "updated_at"))
    summary = import_pyrit_db(path=DB_12)
    assert summary.created["pyrit_records"] == 0
    assert summary.updated["pyrit_records"] == 0
    assert summary.unchanged["pyrit_records"] == sum(VERBATIM.values())
    assert not any(summary.created.values()), summary.created
    assert list(PyritRecord.objects.values_list("table", "pk_text", "row", "updated_at")) == before


def test_a_changed_row_replaces_the_stored_one(tmp_path):
    import_pyrit_db(path=DB_12)
    db = copy_fixture(DB_12, tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE FindingEntries SET severity = 'critical' WHERE severity = 'other'"
        )
    summary = import_pyrit_db(path=db)
    assert summary.updated["pyrit_records"] == 1
    assert PyritRecord.objects.filter(table="FindingEntries", row__severity="critical").count() == 1


def test_dry_run_counts_the_verbatim_rows():
    summary = import_pyrit_db(path=DB_12, dry_run=True)
    assert summary.created["pyrit_records"] == sum(VERBATIM.values())
    assert not PyritRecord.objects.exists()


# --- a PyRIT newer than Redline ------------------------------------------------------------


def _future(tmp_path: Path) -> Path:
    """The 1.1.0 fixture as a made-up future PyRIT left it: an unknown revision, a new piece
    column, a new table (one row with a NUL, which PostgreSQL text refuses unescaped)."""
    db = copy_fixture(DB_110, tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE pyrit_memory_alembic_version SET version_num = 'ffee00112233'")
        connection.execute("ALTER TABLE PromptMemoryEntries ADD COLUMN reasoning_tokens INTEGER")
        connection.execute("UPDATE PromptMemoryEntries SET reasoning_tokens = length(id)")
        connection.execute(
            "CREATE TABLE RunBudgetEntries (id CHAR(36) PRIMARY KEY, spent REAL, note VARCHAR, "
            "raw BLOB)"
        )
        connection.execute(
            "INSERT INTO RunBudgetEntries VALUES ('b0000000-0000-4000-8000-000000000001', 1.5, "
            "'a' || char(0) || 'b', x'00ff')"
        )
    return db


def test_a_newer_schema_imports_with_warnings(tmp_path):
    db = _future(tmp_path)
    summary = import_pyrit_db(path=db)
    assert summary.ok
    assert summary.schema == "PyRIT newer than this Redline knows (alembic ffee00112233)"
    schema_warnings = [w for w in summary.warnings if w.startswith("schema newer")]
    assert any("unknown PyRIT schema revision 'ffee00112233'" in w for w in schema_warnings)
    assert any(
        "PromptMemoryEntries has columns" in w and "reasoning_tokens" in w for w in schema_warnings
    )
    assert any("kept verbatim (PyritRecord): RunBudgetEntries" in w for w in schema_warnings)
    # everything Redline understands is there, the unknown column in each piece's extra
    from memory.models import MessagePiece

    pieces = dict(source_rows(db, "SELECT id, reasoning_tokens FROM PromptMemoryEntries"))
    assert MessagePiece.objects.count() == len(pieces)
    for piece in MessagePiece.objects.all():
        assert piece.extra["reasoning_tokens"] == pieces[str(piece.id)]
    assert Score.objects.count() == source_rows(db, "SELECT count(*) FROM ScoreEntries")[0][0]
    record = PyritRecord.objects.get(table="RunBudgetEntries")
    assert record.row == {
        "id": "b0000000-0000-4000-8000-000000000001",
        "spent": 1.5,
        "note": "a\x00b",
        "raw": {"$base64": "AP8="},
    }
    assert record.alembic_revision == "ffee00112233"


def test_a_file_without_the_core_table_fails_clearly(tmp_path):
    db = tmp_path / "no-core.db"
    shutil.copy(DB_12, db)
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TRIGGER trg_observation_prompt_immutable_update")
        connection.execute("DROP TRIGGER trg_observation_prompt_immutable_delete")
        connection.execute("DROP TABLE PromptMemoryEntries")
    with pytest.raises(ImportFailed, match="no PromptMemoryEntries table, the core table"):
        import_pyrit_db(path=db)
    assert not PyritRecord.objects.exists()
