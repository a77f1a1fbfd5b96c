"""``AttackResult.last_scorer``: the last score's scorer, kept by every write path.

After each way an attack's last score is written, changed or removed, the column must equal
the scorer of the score ``last_score`` names (or be empty without one), for every attack.
"""

from __future__ import annotations

import copy
import json
import uuid

import pytest

from memory.models import AttackResult, ComponentIdentifier, Score
from memory.storage.services import memory_delete
from memory.transfer.importers.service import import_pyrit_db
from memory.transfer.ingest.service import ingest
from tests.conftest import FIXTURES_DIR
from tests.importers.conftest import DB_12, FIXTURE_DBS, copy_fixture
from tests.ingest.conftest import post_json

pytestmark = pytest.mark.django_db

EXPORTS = {
    "1.1.0": FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json",
    "0.12.1": FIXTURES_DIR / "pyrit-0.12.1-legacy" / "export.json",
}


def _load(version: str) -> dict:
    return json.loads(EXPORTS[version].read_text())


def assert_last_scorers_right(*, at_least: int = 1) -> None:
    """Every attack's ``last_scorer`` is its last score's scorer; ``at_least`` carry one."""
    rows = list(
        AttackResult.objects.values_list(
            "pk", "last_scorer_id", "last_score__scorer_class_identifier_id"
        )
    )
    assert rows
    assert [(pk, kept) for pk, kept, _ in rows] == [(pk, truth) for pk, _, truth in rows]
    assert sum(1 for _, kept, _ in rows if kept is not None) >= at_least


def _scored_attacks(data: dict) -> int:
    return sum(1 for a in data["attack_results"] if a.get("last_score"))


@pytest.mark.parametrize("version", list(EXPORTS))
def test_rest_ingest_keeps_the_last_scorer(version, ingest_client):
    data = _load(version)
    response = post_json(ingest_client, data)
    assert response.status_code in (200, 201), response.content
    assert_last_scorers_right(at_least=_scored_attacks(data))


@pytest.mark.parametrize("version", list(EXPORTS))
def test_attacks_sent_after_their_scores_take_the_stored_scorer(version):
    """The last scores are stored already (an earlier batch): their scorer is read back."""
    data = _load(version)
    # Scenario results embed attack results: they come with the attacks.
    later = {"attack_results": data["attack_results"]}
    later["scenario_results"] = data.get("scenario_results", [])
    first = {**data, "attack_results": [], "scenario_results": []}
    assert ingest(payload=first).errors == []
    assert not AttackResult.objects.exists()
    assert Score.objects.exists()
    report = ingest(payload=later)
    assert report.errors == []
    assert_last_scorers_right(at_least=_scored_attacks(data))


def test_a_resend_changes_nothing_and_keeps_the_last_scorer():
    data = _load("1.1.0")
    ingest(payload=data)
    before = list(AttackResult.objects.order_by("pk").values("pk", "last_scorer", "updated_at"))
    report = ingest(payload=data)
    assert report.errors == []
    assert report.counts["attack_results"]["updated"] == 0
    assert list(AttackResult.objects.order_by("pk").values("pk", "last_scorer", "updated_at")) == (
        before
    )
    assert_last_scorers_right(at_least=_scored_attacks(data))


def test_a_changed_last_score_changes_the_last_scorer():
    """A re-sent attack naming another last score (of another scorer), then none."""
    data = _load("1.1.0")
    ingest(payload=data)
    attack = next(a for a in data["attack_results"] if a.get("last_score"))
    old = Score.objects.get(pk=attack["last_score"]["id"])
    other = next(s for s in data["scores"] if s["scorer_class_identifier"]["hash"] != old_hash(old))
    assert Score.objects.filter(pk=other["id"]).exists()
    changed = copy.deepcopy(attack)
    changed["last_score"] = other
    report = ingest(payload={"attack_results": [changed]})
    assert report.errors == []
    assert report.counts["attack_results"]["updated"] == 1
    stored = AttackResult.objects.get(pk=attack["attack_result_id"])
    assert stored.last_score_id == uuid.UUID(other["id"])
    assert stored.last_scorer.hash == other["scorer_class_identifier"]["hash"]
    assert stored.last_scorer_id != old.scorer_class_identifier_id
    assert_last_scorers_right()

    changed["last_score"] = None
    assert ingest(payload={"attack_results": [changed]}).errors == []
    stored.refresh_from_db()
    assert (stored.last_score_id, stored.last_scorer_id) == (None, None)
    assert_last_scorers_right()


def old_hash(score: Score) -> str:
    return ComponentIdentifier.objects.get(pk=score.scorer_class_identifier_id).hash


def test_deleting_a_last_score_clears_the_last_scorer(superuser):
    data = _load("1.1.0")
    ingest(payload=data)
    scored = list(
        AttackResult.objects.filter(last_score__isnull=False)
        .order_by("pk")
        .values_list("pk", "last_score_id")
    )
    assert len(scored) >= 3
    (gone, score_id), *kept = scored
    memory_delete(queryset=Score.objects.filter(pk=score_id), actor=superuser, reason="test")
    attack = AttackResult.objects.get(pk=gone)
    assert (attack.last_score_id, attack.last_scorer_id) == (None, None)
    assert all(
        AttackResult.objects.filter(pk=pk, last_scorer__isnull=False).exists() for pk, _ in kept
    )
    assert_last_scorers_right(at_least=len(kept))
    # A plain delete (the same collector) of the rest: no attack keeps a scorer.
    Score.objects.filter(pk__in=[s for _, s in kept]).delete()
    assert not AttackResult.objects.filter(last_scorer__isnull=False).exists()


@pytest.mark.parametrize("path", ["service", "direct"])
@pytest.mark.parametrize("version", [*FIXTURE_DBS, "1.2"])
def test_an_import_keeps_the_last_scorer(version, path, tmp_path):
    """Both write paths of the importer: the direct one writes the scores, the service the
    attacks (in later chunks, so their last scores are read back from the database)."""
    db = copy_fixture({**FIXTURE_DBS, "1.2": DB_12}[version], tmp_path)
    summary = import_pyrit_db(path=db, write_path=path)
    assert summary.created["attack_results"] > 0
    assert_last_scorers_right()


def test_exports_do_not_carry_the_last_scorer():
    """Redline's own column, not a PyRIT field: no export profile writes it."""
    from memory.transfer.exporters.profiles import PROFILES
    from tests.exporters.conftest import export_bytes

    ingest(payload=_load("1.1.0"))
    assert AttackResult.objects.filter(last_scorer__isnull=False).exists()
    for profile in [None, *PROFILES]:
        document = export_bytes(profile=profile)
        assert b'"attack_results"' in document
        assert b"last_scorer" not in document, profile
