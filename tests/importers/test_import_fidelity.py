"""Issue 34: what PyRIT writes comes back as it wrote it — labels of any length, the stored
identifier-hash columns, PyRIT main's ``PersistedTargets`` — and the summary and help say
what happened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command
from django.http import QueryDict

from memory.models import (
    AttackResult,
    Conversation,
    Label,
    MessagePiece,
    PyritRecord,
    ScenarioResult,
    Score,
)
from memory.storage.filters import AttackResultFilter
from memory.transfer.importers.service import ImportFailed, import_pyrit_db
from pyrit_memory_reader.source import KNOWN_VERSIONS
from seeds.models import SeedDataset
from tests.creating import databases_being_created
from tests.exporters.conftest import export_doc
from tests.importers.conftest import DB_12, DB_110, copy_fixture, source_rows

pytestmark = pytest.mark.django_db(transaction=True)

REPO_ROOT = Path(__file__).resolve().parents[2]

#: As long as the label PyRIT 1.1.0 stored in the issue's database.
LONG = "x" * 3_999 + "é\x00end"


def _long_labelled(tmp_path: Path) -> tuple[Path, str]:
    """A copy of the 1.1.0 database whose first attack result carries a 4,004-character
    label (and a second, short one); returns it and that attack's id."""
    db = copy_fixture(DB_110, tmp_path)
    with sqlite3.connect(db) as connection:
        attack_id, labels = connection.execute(
            "SELECT id, labels FROM AttackResultEntries ORDER BY rowid LIMIT 1"
        ).fetchone()
        labels = {**json.loads(labels), "long_note": LONG}
        connection.execute(
            "UPDATE AttackResultEntries SET labels = ? WHERE id = ?",
            (json.dumps(labels), attack_id),
        )
    return db, attack_id


@pytest.mark.parametrize("write_path", ["direct", "service"])
def test_a_label_of_4004_characters_is_imported_filtered_and_exported_verbatim(
    tmp_path, write_path
):
    db, attack_id = _long_labelled(tmp_path)
    assert len(LONG) == 4_004
    summary = import_pyrit_db(path=db, write_path=write_path)

    assert not any(summary.refused.values()), summary.warnings
    attacks = source_rows(db, "SELECT count(*) FROM AttackResultEntries")[0][0]
    assert AttackResult.objects.count() == attacks
    attack = AttackResult.objects.get(id=attack_id)
    assert attack.labels["long_note"] == LONG
    label = Label.objects.get(key="long_note")
    assert label.value == LONG
    # the label index finds it (the list filter, the rollup lookup)
    query = QueryDict(mutable=True)
    query.setlist("labels", [f"long_note:{LONG}"])
    found = AttackResultFilter(query, queryset=AttackResult.objects.all()).qs
    assert list(found.values_list("id", flat=True)) == [attack.id]
    # its conversation and pieces were imported with it, and its score points at them
    assert MessagePiece.objects.filter(message__conversation=attack.conversation_id).exists()
    if attack.last_score_id:
        assert Score.objects.filter(id=attack.last_score_id).exists()

    exported = {a["attack_result_id"]: a for a in export_doc()["attack_results"]}
    assert exported[str(attack_id)]["labels"]["long_note"] == LONG


def test_importing_the_long_label_twice_finds_the_stored_pair(tmp_path):
    db, _ = _long_labelled(tmp_path)
    import_pyrit_db(path=db)
    again = import_pyrit_db(path=db)
    assert not any(again.refused.values()), again.warnings
    assert Label.objects.filter(key="long_note").count() == 1


def test_a_label_key_too_long_is_refused_naming_labels_dot_key(tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    key = "k" * 300
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE AttackResultEntries SET labels = ? WHERE rowid = "
            "(SELECT min(rowid) FROM AttackResultEntries)",
            (json.dumps({key: "v"}),),
        )
    summary = import_pyrit_db(path=db, write_path="service")
    assert summary.refused["attack_results"] == 1
    assert any(f"labels.{key}" in warning for warning in summary.warnings), summary.warnings


def _dicts(value):
    """Every dict inside an export document (scores sit in pieces and in ``scores``)."""
    if isinstance(value, dict):
        yield value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _dicts(item)


def _hash_columns(db: Path) -> dict[str, dict[str, str]]:
    return {
        "attack": dict(
            source_rows(db, "SELECT id, atomic_attack_identifier_hash FROM AttackResultEntries")
        ),
        "conversation": dict(
            source_rows(db, "SELECT conversation_id, target_identifier_hash FROM Conversations")
        ),
        "score": dict(source_rows(db, "SELECT id, scorer_identifier_hash FROM ScoreEntries")),
        "scenario": dict(
            source_rows(db, "SELECT id, scenario_identifier_hash FROM ScenarioResultEntries")
        ),
    }


@pytest.mark.parametrize("write_path", ["direct", "service"])
def test_stored_identifier_hash_columns_are_kept_verbatim_beside_the_json(tmp_path, write_path):
    """Every hash column as PyRIT stored it, even where it is not the JSON's hash (what
    PyRIT 1.1.0 stores for scenario attacks): kept in the object and exported."""
    db = copy_fixture(DB_110, tmp_path)
    odd = "0" * 63 + "1"
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE AttackResultEntries SET atomic_attack_identifier_hash = ? WHERE rowid = "
            "(SELECT min(rowid) FROM AttackResultEntries)",
            (odd,),
        )
    stored = _hash_columns(db)
    assert odd in stored["attack"].values()
    import_pyrit_db(path=db, write_path=write_path)

    for attack in AttackResult.objects.all():
        assert attack.extra["atomic_attack_identifier_hash"] == stored["attack"][str(attack.id)]
    for conversation in Conversation.objects.filter(conversation_id__in=stored["conversation"]):
        assert (
            conversation.extra["target_identifier_hash"]
            == (stored["conversation"][conversation.conversation_id])
        )
    for score in Score.objects.all():
        assert score.extra["scorer_identifier_hash"] == stored["score"][str(score.id)]
    for scenario in ScenarioResult.objects.all():
        assert scenario.extra["scenario_identifier_hash"] == stored["scenario"][str(scenario.id)]

    document = export_doc()
    exported = {a["attack_result_id"]: a for a in document["attack_results"]}
    # the pyrit-1.1 profile leaves them out: PyRIT 1.1.0's models have no such field
    profiled = export_doc(profile="pyrit-1.1")["attack_results"]
    assert all("atomic_attack_identifier_hash" not in a for a in profiled)
    assert {k: exported[k]["atomic_attack_identifier_hash"] for k in exported} == stored["attack"]
    scores = {
        s["id"]: s["scorer_identifier_hash"]
        for s in _dicts(document)
        if "scorer_identifier_hash" in s
    }
    assert scores == stored["score"]


def test_the_inspector_shows_a_stored_hash_column_that_differs(tmp_path, viewer_client):
    db = copy_fixture(DB_110, tmp_path)
    odd = "0" * 63 + "2"
    with sqlite3.connect(db) as connection:
        attack_id = connection.execute(
            "SELECT id FROM AttackResultEntries ORDER BY rowid LIMIT 1"
        ).fetchone()[0]
        connection.execute(
            "UPDATE AttackResultEntries SET atomic_attack_identifier_hash = ? WHERE id = ?",
            (odd, attack_id),
        )
    import_pyrit_db(path=db)
    attack = AttackResult.objects.get(id=attack_id)
    page = viewer_client.get(f"/attacks/{attack_id}/").content.decode()
    assert f'Stored hash column: <code class="mono">{odd}</code>' in page
    assert "differs from the identifier's hash" in page
    assert attack.atomic_attack_identifier.hash in page
    # a column equal to the JSON's hash is shown without the warning
    same = AttackResult.objects.exclude(id=attack_id).filter(
        atomic_attack_identifier__isnull=False
    )[0]
    other = viewer_client.get(f"/attacks/{same.id}/").content.decode()
    assert same.extra["atomic_attack_identifier_hash"] in other
    assert "differs from the identifier" not in other


def test_persisted_targets_are_kept_verbatim_without_a_newer_schema_warning(tmp_path):
    """PyRIT main's ``PersistedTargets`` (alembic 6d8f0a2c4e6b): every column kept, the
    ``secret_uri`` as the reference it is, and no "newer than this Redline" warning."""
    db = copy_fixture(DB_12, tmp_path)
    with sqlite3.connect(db) as connection:
        connection.executescript(
            """
            CREATE TABLE "PersistedTargets" (
                id VARCHAR(36) NOT NULL, target_registry_name VARCHAR(512) NOT NULL,
                target_type VARCHAR(128) NOT NULL, parameters JSON NOT NULL,
                auth_mode VARCHAR(16) NOT NULL, secret_uri VARCHAR(512),
                created_at DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE (target_registry_name));
            INSERT INTO PersistedTargets VALUES ('6f0c1f7e-0000-4000-8000-000000000001',
                'prod-gpt', 'OpenAIChatTarget', '{"model_name": "gpt-4o"}', 'key_vault',
                'https://vault.example/secrets/prod-gpt', '2026-09-01 10:00:00.000000');
            UPDATE pyrit_memory_alembic_version SET version_num = '6d8f0a2c4e6b';
            """
        )
    summary = import_pyrit_db(path=db)
    assert not [w for w in summary.warnings if "newer than this Redline" in w], summary.warnings
    record = PyritRecord.objects.get(table="PersistedTargets")
    assert record.pk_text == "6f0c1f7e-0000-4000-8000-000000000001"
    assert record.row["secret_uri"] == "https://vault.example/secrets/prod-gpt"
    assert record.row["target_registry_name"] == "prod-gpt"
    assert json.loads(record.row["parameters"]) == {"model_name": "gpt-4o"}


def test_the_summary_counts_the_datasets_the_seeds_created(tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    names = {row[0] for row in source_rows(db, "SELECT dataset_name FROM SeedPromptEntries")}
    assert SeedDataset.objects.count() == 0
    summary = import_pyrit_db(path=db)
    assert SeedDataset.objects.count() == len(names - {None, ""}) > 0
    assert summary.created["seed_datasets"] == SeedDataset.objects.count()
    assert import_pyrit_db(path=db).created.get("seed_datasets", 0) == 0


def test_help_docs_and_upload_page_name_the_versions_the_reader_knows(capsys, client, ingester):
    with pytest.raises(SystemExit):
        call_command("import_pyrit", "--help")
    assert KNOWN_VERSIONS in " ".join(capsys.readouterr().out.split())
    for doc in ("import.md", "upload.md", "push.md"):
        text = " ".join((REPO_ROOT / "docs" / doc).read_text().split())
        assert KNOWN_VERSIONS in text, doc
    client.force_login(ingester)
    assert KNOWN_VERSIONS in client.get("/imports/").content.decode()


# --- a database PyRIT is creating or migrating ------------------------------------------------


def _creating(tmp_path: Path) -> dict[str, Path]:
    """The states a database passes through while PyRIT creates it."""
    states = databases_being_created(tmp_path)
    half_built = copy_fixture(DB_110, tmp_path)
    with sqlite3.connect(half_built) as connection:
        connection.execute("CREATE TABLE _alembic_tmp_ScoreEntries (id VARCHAR(36))")
    return {**states, "half built": half_built}


@pytest.mark.parametrize("state", ["empty", "no tables", "alembic only", "half built"])
def test_importing_a_database_being_created_is_one_clear_line(tmp_path, state):
    with pytest.raises(ImportFailed) as failure:
        import_pyrit_db(path=_creating(tmp_path)[state])
    message = str(failure.value)
    assert "database is being created/migrated by PyRIT (revision " in message
    assert "\n" not in message
    assert AttackResult.objects.count() == 0


@pytest.mark.parametrize("write_path", ["direct", "service"])
def test_a_migration_during_the_import_is_one_clear_line(tmp_path, monkeypatch, write_path):
    """PyRIT drops a column the reader detected (its 1.1 migration drops
    ``attack_results_json``) between detection and reading."""
    from memory.transfer.importers import runner

    db = copy_fixture(DB_110.parent.parent / "pyrit-0.12.1-legacy" / "memory.db", tmp_path)
    real = runner.Importer._prepare

    def migrated_meanwhile(self):
        with sqlite3.connect(db) as connection:
            connection.execute("ALTER TABLE ScenarioResultEntries DROP COLUMN attack_results_json")
        real(self)

    monkeypatch.setattr(runner.Importer, "_prepare", migrated_meanwhile)
    with pytest.raises(ImportFailed) as failure:
        import_pyrit_db(path=db, write_path=write_path)
    message = str(failure.value)
    assert "database is being created/migrated by PyRIT" in message
    assert "\n" not in message


# --- on real PyRIT 1.1.0 data (tests/fixtures/README.md, issue 34) ----------------------------

TRUTH = DB_110.parent.parent / "pyrit-1.1.0-truth" / "memory.db"
MIGRATING = DB_110.parent.parent / "pyrit-1.1.0-migrating"
#: The states of a database PyRIT 1.1.0 is creating, as its own machinery left them.
UNDER_CREATION = [
    "00-empty.db",
    "01-ab8f2c1a9d07-version-table-only.db",
    "02-ab8f2c1a9d07-first-memory-table.db",
    "r01-ab8f2c1a9d07.db",
    "r07-b2f4c6a8d1e3.db",
    "r10-e5f7a9c1b3d2.db",
]


@pytest.mark.parametrize("write_path", ["direct", "service"])
def test_the_real_4000_character_label_is_imported_and_exported_verbatim(write_path):
    [(labels,)] = source_rows(
        TRUTH,
        "SELECT labels FROM AttackResultEntries WHERE id = '3003a657-068b-4e8c-bf3a-ef10a764b3a5'",
    )
    stored = json.loads(labels)["operator_notes"]
    assert len(stored) == 4_000
    summary = import_pyrit_db(path=TRUTH, media_root=TRUTH.parent / "dbdata", write_path=write_path)
    assert not summary.refused.get("attack_results"), summary.warnings
    attack = AttackResult.objects.get(id="3003a657-068b-4e8c-bf3a-ef10a764b3a5")
    assert attack.labels["operator_notes"] == stored
    assert MessagePiece.objects.filter(message__conversation=attack.conversation_id).exists()
    exported = {a["attack_result_id"]: a for a in export_doc()["attack_results"]}
    assert exported[str(attack.id)]["labels"] == json.loads(labels)


def test_the_real_scenario_attacks_keep_their_stored_hash_beside_the_json():
    stored = dict(
        source_rows(
            TRUTH,
            "SELECT id, atomic_attack_identifier_hash FROM AttackResultEntries "
            "WHERE attribution_parent_id = '3b11f36a-be42-4a67-9694-047820e13946'",
        )
    )
    assert len(stored) == 4
    import_pyrit_db(path=TRUTH, media_root=TRUTH.parent / "dbdata")
    for attack in AttackResult.objects.filter(id__in=stored):
        column = stored[str(attack.id)]
        assert attack.extra["atomic_attack_identifier_hash"] == column
        # the JSON's own hash, kept as PyRIT stored it, is another one
        assert attack.atomic_attack_identifier.hash != column
    exported = {a["attack_result_id"]: a for a in export_doc()["attack_results"]}
    assert {k: exported[k]["atomic_attack_identifier_hash"] for k in stored} == stored


@pytest.mark.parametrize("name", UNDER_CREATION)
def test_each_state_of_a_database_pyrit_is_creating_is_one_clear_line(name):
    with pytest.raises(ImportFailed) as failure:
        import_pyrit_db(path=MIGRATING / name)
    message = str(failure.value)
    assert "database is being created/migrated by PyRIT (revision " in message
    assert "\n" not in message


def test_the_created_database_at_its_head_imports_as_empty():
    summary = import_pyrit_db(path=MIGRATING / "r20-8d1e3f5a7b9c.db")
    assert summary.schema.startswith("PyRIT 1.1.0")
    assert not any(summary.created.values()) and not summary.warnings
