"""PyRIT error pieces in the human-label files, on the PyRIT 1.1.0 fixture (it has three:
two blocked responses and the traceback of a target that raised)."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import call_command

from memory.models import AttackResult, MessagePiece
from memory.models.reviews import HumanOutcome
from memory.storage.human_labels import harm_labels, human_labels_csv, objective_labels
from memory.storage.services import human_score_add, human_verdict_record
from memory.transfer.importers.service import import_pyrit_db
from redteam.core.choices import PromptDataType
from tests.conftest import FIXTURES_DIR

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_110(reviewer):
    """The 1.1.0 fixture with a verdict on every attack."""
    source = FIXTURES_DIR / "pyrit-1.1.0-small"
    import_pyrit_db(path=source / "memory.db", media_root=source / "dbdata")
    for i, attack in enumerate(AttackResult.objects.order_by("timestamp", "pk")):
        outcome = HumanOutcome.SUCCESS if i % 2 else HumanOutcome.FAILURE
        human_verdict_record(attack_result=attack, outcome=outcome, reason="t", reviewer=reviewer)


def _rows(labels) -> list[dict[str, str]]:
    text = "".join(human_labels_csv(labels, dataset_version="1.0"))
    return list(csv.DictReader(io.StringIO(text.partition("\n")[2])))


def test_error_responses_are_labelled_as_errors_not_text(judged_110):
    errors = {
        piece.converted_value: piece
        for piece in MessagePiece.objects.filter(converted_value_data_type=PromptDataType.ERROR)
    }

    labels = objective_labels(attacks=AttackResult.objects.all())
    rows = _rows(labels)

    assert len(rows) == AttackResult.objects.count() == 24
    error_rows = [row for row in rows if row["assistant_response"] in errors]
    # The target that raised (outcome error, no last response): its conversation's traceback.
    assert any(
        "Traceback (most recent call last)" in row["assistant_response"] for row in error_rows
    )
    assert len(error_rows) == labels.error_rows == 3
    assert {row["data_type"] for row in error_rows} == {"error"}
    assert {row["data_type"] for row in rows if row not in error_rows} == {"text"}


def test_a_harm_score_of_an_error_piece_is_an_error_row(judged_110, reviewer):
    blocked = MessagePiece.objects.filter(
        converted_value_data_type=PromptDataType.ERROR, response_error="blocked"
    ).first()
    answer = MessagePiece.objects.filter(
        message__role="assistant", converted_value_data_type=PromptDataType.TEXT
    ).first()
    for piece in (blocked, answer):
        human_score_add(
            piece=piece,
            score_type="float_scale",
            value=0.5,
            rationale="t",
            reviewer=reviewer,
            categories=["violence"],
        )

    labels = harm_labels(attacks=AttackResult.objects.all(), harm_category="violence")

    assert [(r["assistant_response"], r["data_type"]) for r in _rows(labels)] == sorted(
        [(blocked.converted_value, "error"), (answer.converted_value, "text")],
        key=lambda pair: (
            pair[0]
            != min((blocked, answer), key=lambda p: (p.timestamp, str(p.pk))).converted_value
        ),
    )
    assert labels.error_rows == 1


def test_the_command_says_how_many_rows_are_errors(judged_110, tmp_path, capsys):
    out = tmp_path / "objective.csv"

    call_command("export_human_labels", "objective", "-o", str(out))

    err = capsys.readouterr().err
    assert err.startswith("24 objective rows; left out: 0 with fewer than 1 rater(s), 0 whose")
    assert "; 3 of the rows are error responses (data_type error: PyRIT reads them" in err
