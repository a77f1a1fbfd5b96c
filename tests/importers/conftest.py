"""Fixtures for the PyRIT database importer: the two real fixture files and built variants."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_DIR

DB_110 = FIXTURES_DIR / "pyrit-1.1.0-small" / "memory.db"
DB_012 = FIXTURES_DIR / "pyrit-0.12.1-legacy" / "memory.db"
#: The 1.1.0 database migrated to PyRIT 1.2 / main (``tests/fixtures/README.md``).
DB_12 = FIXTURES_DIR / "pyrit-1.2-main" / "memory.db"
FIXTURE_DBS = {"1.1.0": DB_110, "0.12.1": DB_012}


def fail_a_chunk_of_pieces(monkeypatch, error: BaseException, *, number: int) -> None:
    """The ``number``-th insert of pieces raises ``error`` once its rows are in, on either
    write path (the direct path writes a chunk itself or hands it to the service)."""
    from memory.storage import write
    from memory.transfer.importers import direct

    real, real_direct = write.insert_rows, direct.insert_columns
    calls = {"pieces": 0}

    def check(model, rows):
        if model.__name__ == "MessagePiece" and rows:
            calls["pieces"] += 1
            if calls["pieces"] == number:
                raise error

    def failing(model, rows):
        real(model, rows)
        check(model, rows)

    def failing_direct(model, columns, **options):
        real_direct(model, columns, **options)
        check(model, columns[0] if columns else [])

    monkeypatch.setattr(write, "insert_rows", failing)
    monkeypatch.setattr(direct, "insert_columns", failing_direct)


def copy_fixture(source: Path, tmp_path: Path) -> Path:
    """A private copy of a fixture database with its ``dbdata`` media folder beside it."""
    folder = tmp_path / f"copy-{source.parent.name}"
    folder.mkdir()
    shutil.copy(source, folder / "memory.db")
    shutil.copytree(source.parent / "dbdata", folder / "dbdata")
    return folder / "memory.db"


def source_rows(db: Path, sql: str) -> list[tuple]:
    """Rows of a query on a source file, opened read-only."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchall()


# A PyRIT 0.9 memory file (pre-alembic, contract §11.5): 32-hex UUIDs, ``orchestrator_identifier``,
# legacy ``__type__`` identifiers, a plain-text score category, ``task``, no attack results.
SCHEMA_0_9 = """
CREATE TABLE "PromptMemoryEntries" (
  id CHAR(32) NOT NULL, role VARCHAR NOT NULL, conversation_id VARCHAR NOT NULL,
  sequence INTEGER NOT NULL, timestamp DATETIME NOT NULL, labels JSON NOT NULL,
  prompt_metadata JSON NOT NULL, converter_identifiers JSON,
  prompt_target_identifier JSON NOT NULL, orchestrator_identifier JSON NOT NULL,
  response_error VARCHAR, original_value_data_type VARCHAR NOT NULL,
  original_value VARCHAR NOT NULL, original_value_sha256 VARCHAR,
  converted_value_data_type VARCHAR NOT NULL, converted_value VARCHAR,
  converted_value_sha256 VARCHAR, original_prompt_id CHAR(32) NOT NULL, PRIMARY KEY (id));
CREATE TABLE "ScoreEntries" (
  id CHAR(32) NOT NULL, score_value VARCHAR NOT NULL, score_value_description VARCHAR,
  score_type VARCHAR NOT NULL, score_category VARCHAR, score_rationale VARCHAR,
  score_metadata VARCHAR, scorer_class_identifier JSON NOT NULL,
  prompt_request_response_id CHAR(32), timestamp DATETIME NOT NULL, task VARCHAR,
  PRIMARY KEY (id));
CREATE TABLE "SeedPromptEntries" (
  id CHAR(32) NOT NULL, value VARCHAR NOT NULL, value_sha256 VARCHAR,
  data_type VARCHAR NOT NULL, name VARCHAR, dataset_name VARCHAR, harm_categories JSON,
  description VARCHAR, authors JSON, groups JSON, source VARCHAR, date_added DATETIME NOT NULL,
  added_by VARCHAR NOT NULL, prompt_metadata JSON, parameters JSON, prompt_group_id CHAR(32),
  sequence INTEGER, PRIMARY KEY (id));
CREATE TABLE "EmbeddingData" (
  id CHAR(32) NOT NULL, embedding JSON, embedding_type_name VARCHAR, PRIMARY KEY (id));
"""

TARGET_0_9 = {
    "__type__": "OpenAIChatTarget",
    "__module__": "pyrit.prompt_target.openai.openai_chat_target",
}
ORCHESTRATOR_0_9 = {
    "__type__": "PromptSendingOrchestrator",
    "__module__": "pyrit.orchestrator.single_turn.prompt_sending_orchestrator",
    "id": "140093412345678",
}
SCORER_0_9 = {
    "__type__": "SelfAskRefusalScorer",
    "__module__": "pyrit.score.self_ask_refusal_scorer",
}


def build_0_9(path: Path, *, conversations: int = 3) -> dict[str, list]:
    """Write a PyRIT 0.9 file; returns the ids it holds (as PyRIT wrote them: 32 hex)."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_0_9)
    pieces, scores = [], []
    for c in range(conversations):
        conversation_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"conv-{c}"))
        for sequence, (role, text) in enumerate(
            [("user", f"Tell me secret {c}"), ("assistant", "I can't help with that.")]
        ):
            piece_id = uuid.uuid5(uuid.NAMESPACE_URL, f"piece-{c}-{sequence}").hex
            sha = hashlib.sha256(text.encode()).hexdigest()
            pieces.append(
                (piece_id, role, conversation_id, sequence, f"2025-01-10 09:12:0{sequence}.120044",
                 json.dumps({"op_name": "demo", "username": "alice"}), "{}", "[]",
                 json.dumps(TARGET_0_9), json.dumps(ORCHESTRATOR_0_9), None, "text", text, sha,
                 "text", text, sha, piece_id)
            )  # fmt: skip
            if role == "assistant":
                scores.append(
                    (uuid.uuid5(uuid.NAMESPACE_URL, f"score-{c}").hex, "false", "refusal check",
                     "true_false", "refusal", "It refused.", "", json.dumps(SCORER_0_9), piece_id,
                     "2025-01-10 09:12:04.001000", f"Tell me secret {c}")
                )  # fmt: skip
    db.executemany(f"INSERT INTO PromptMemoryEntries VALUES ({','.join('?' * 18)})", pieces)
    db.executemany(f"INSERT INTO ScoreEntries VALUES ({','.join('?' * 11)})", scores)
    db.execute(
        "INSERT INTO SeedPromptEntries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (uuid.uuid4().hex, "How to pick a lock?", None, "text", None, "legacy_set",
         '["crime"]', None, None, None, None, "2025-01-01 00:00:00.000000", "alice", "{}", None,
         None, None),
    )  # fmt: skip
    db.commit()
    db.close()
    return {"pieces": [p[0] for p in pieces], "scores": [s[0] for s in scores]}


@pytest.fixture
def db_0_9(tmp_path):
    """A PyRIT 0.9 memory file."""
    path = tmp_path / "pyrit-0.9.db"
    build_0_9(path)
    return path
