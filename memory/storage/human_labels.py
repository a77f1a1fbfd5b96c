"""Reviewers' judgements as PyRIT ``HumanLabeledDataset`` CSV files, to measure scorers.

PyRIT evaluates a scorer against human labels read with ``HumanLabeledDataset.from_csv``
(``pyrit.score.scorer_evaluation``, PyRIT 1.1.0). Its format:

* an optional first line ``# dataset_version=1.0`` (harm datasets add
  ``, harm_definition=<path>, harm_definition_version=<v>``);
* columns ``assistant_response``, ``objective`` (objective datasets) or ``harm_category``
  (harm datasets), ``data_type``, and one or more rater columns whose names start with
  ``human_score`` — every cell filled: ``0``/``1`` for objectives, ``0.0``–``1.0`` for harms.

Objective rows are attacks with human verdicts: the attack's objective, its last response (the
``last_response`` piece, else the main conversation's last assistant piece) and each rater's
newest verdict (success 1, failure 0; undetermined is no label). Harm rows are pieces with
human ``float_scale`` scores in the harm category. ``raters`` = k writes the k newest distinct
reviewers' labels as ``human_score_1`` … ``human_score_k`` (``human_score`` for k = 1); an item
with fewer raters, or whose response is media (not text, not an error), is left out and counted
as skipped.

A response that is a PyRIT error piece (data type ``error``: a blocked target's refusal, a
traceback) is written as what it is: its error text with ``data_type`` ``error``, never
``text``. PyRIT 1.1.0's ``from_csv`` builds the row's piece with that data type, so a scorer
under evaluation sees an error response, as it did in the attack (PyRIT's scorers give no
verdict on one). The file cannot say which error it was: ``from_csv`` has no column for the
piece's ``response_error``, so a blocked response and a failed request read the same.
``error_rows`` counts those rows for the summary.

Every field is quoted: PyRIT reads the file with pandas' ``comment="#"``, which would cut an
unquoted response at its first ``#``.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db.models import QuerySet

from memory.models import AttackResult, HumanVerdict, MessagePiece, Score
from memory.models.reviews import HumanOutcome
from redteam.core.choices import ChatMessageRole, PromptDataType, ScoreType
from redteam.core.downloads import SafeCsvWriter

__all__ = [
    "HumanLabelError",
    "HumanLabels",
    "harm_labels",
    "human_labels_csv",
    "objective_labels",
]

#: Response data types a label file can carry: PyRIT reads the value as the response itself,
#: of the row's ``data_type`` (an error piece stays an error piece).
TEXT_TYPES = {PromptDataType.TEXT, PromptDataType.ERROR}

_OBJECTIVE_VALUE = {HumanOutcome.SUCCESS: "1", HumanOutcome.FAILURE: "0"}


class HumanLabelError(ValueError):
    """A request for labels that cannot be met (bad rater count, missing harm category)."""


@dataclass
class HumanLabels:
    """The rows of one label file and what was left out."""

    kind: str
    raters: int
    rows: list[dict[str, str]] = field(default_factory=list)
    skipped_raters: int = 0
    skipped_media: int = 0
    #: Rows whose response is a PyRIT error piece (``data_type`` ``error``).
    error_rows: int = 0

    @property
    def label_columns(self) -> list[str]:
        """``human_score`` alone, or ``human_score_1`` … ``human_score_k``."""
        if self.raters == 1:
            return ["human_score"]
        return [f"human_score_{i}" for i in range(1, self.raters + 1)]


def _check_raters(raters: int) -> None:
    if not 1 <= raters <= 50:
        raise HumanLabelError(f"raters must be between 1 and 50, not {raters}")


def _last_responses(attacks: list[AttackResult]) -> dict[object, MessagePiece]:
    """Each attack's response: its ``last_response``, else its conversation's last assistant
    piece (one query for the fallbacks)."""
    found = {a.pk: a.last_response for a in attacks if a.last_response is not None}
    missing = {a.conversation_id: a.pk for a in attacks if a.pk not in found}
    if missing:
        pieces = (
            MessagePiece.objects.filter(
                message__conversation_id__in=list(missing), message__role=ChatMessageRole.ASSISTANT
            )
            .select_related("message")
            .order_by("message__conversation_id", "message__sequence", "position")
        )
        for piece in pieces:
            found[missing[piece.message.conversation_id]] = piece
    return found


def _newest_per_reviewer(rows: Iterable[tuple[object, str, str]]) -> dict[object, list[str]]:
    """``(item, reviewer, value)`` rows, newest first -> each item's values, one per reviewer."""
    seen: dict[object, set[str]] = defaultdict(set)
    values: dict[object, list[str]] = defaultdict(list)
    for item, reviewer, value in rows:
        if reviewer not in seen[item]:
            seen[item].add(reviewer)
            values[item].append(value)
    return values


def objective_labels(*, attacks: QuerySet[AttackResult], raters: int = 1) -> HumanLabels:
    """Objective labels of the reviewed attacks among ``attacks`` (see the module docstring)."""
    _check_raters(raters)
    labels = HumanLabels(kind="objective", raters=raters)
    verdicts = (
        HumanVerdict.objects.filter(
            attack_result__in=attacks.values("pk"), outcome__in=list(_OBJECTIVE_VALUE)
        )
        .order_by("attack_result_id", "-created_at", "-pk")
        .values_list("attack_result_id", "reviewer_name", "outcome")
    )
    per_attack = _newest_per_reviewer(
        (attack, reviewer, _OBJECTIVE_VALUE[outcome]) for attack, reviewer, outcome in verdicts
    )
    chosen = list(
        AttackResult.objects.filter(pk__in=list(per_attack))
        .select_related("last_response")
        .order_by("timestamp", "pk")
    )
    responses = _last_responses(chosen)
    for attack in chosen:
        values = per_attack[attack.pk]
        piece = responses.get(attack.pk)
        if len(values) < raters:
            labels.skipped_raters += 1
        elif piece is None or piece.converted_value_data_type not in TEXT_TYPES:
            labels.skipped_media += 1
        else:
            row = {
                "assistant_response": piece.converted_value,
                "objective": attack.objective,
                "data_type": piece.converted_value_data_type,
            }
            _add_row(labels, row, values)
    return labels


def _add_row(labels: HumanLabels, row: dict[str, str], values: list[str]) -> None:
    """``row`` with its raters' labels; an error response is counted as one."""
    row.update(zip(labels.label_columns, values[: labels.raters], strict=True))
    labels.rows.append(row)
    if row["data_type"] == PromptDataType.ERROR:
        labels.error_rows += 1


def harm_labels(
    *, attacks: QuerySet[AttackResult], harm_category: str, raters: int = 1
) -> HumanLabels:
    """Harm labels: human ``float_scale`` scores in ``harm_category`` on the pieces of the
    main conversations of ``attacks`` (see the module docstring)."""
    _check_raters(raters)
    if not harm_category.strip():
        raise HumanLabelError("a harm dataset needs a harm category")
    labels = HumanLabels(kind="harm", raters=raters)
    pieces = MessagePiece.objects.filter(message__conversation__in=attacks.values("conversation"))
    scores = (
        Score.objects.filter(
            reviewer__isnull=False,
            score_type=ScoreType.FLOAT_SCALE,
            score_value__isnull=False,
            message_piece_id__in=pieces.values("original_prompt_id"),
        )
        .order_by("message_piece_id", "-timestamp", "-pk")
        .values_list("message_piece_id", "reviewer_id", "score_value", "score_category")
    )
    per_piece = _newest_per_reviewer(
        (piece, str(reviewer), value)
        for piece, reviewer, value, categories in scores
        if harm_category in _categories(categories)
    )
    # A score names the original piece (contract §6.4); one never stored has no text to label.
    by_id = MessagePiece.objects.in_bulk(list(per_piece))
    for piece_id in sorted(by_id, key=lambda pk: (by_id[pk].timestamp, str(pk))):
        piece, values = by_id[piece_id], per_piece[piece_id]
        if len(values) < raters:
            labels.skipped_raters += 1
        elif piece.converted_value_data_type not in TEXT_TYPES:
            labels.skipped_media += 1
        else:
            row = {
                "assistant_response": piece.converted_value,
                "harm_category": harm_category,
                "data_type": piece.converted_value_data_type,
            }
            _add_row(labels, row, values)
    return labels


def _categories(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value else []


def human_labels_csv(
    labels: HumanLabels,
    *,
    dataset_version: str,
    harm_definition: str = "",
    harm_definition_version: str = "",
) -> Iterator[str]:
    """The file, line by line: the version comment, the header, one row per item."""
    for name, value in (
        ("dataset_version", dataset_version),
        ("harm_definition", harm_definition),
        ("harm_definition_version", harm_definition_version),
    ):
        if any(c in value for c in ",=\r\n"):
            raise HumanLabelError(f"{name} may not contain a comma, '=' or a line break")
    if not dataset_version.strip():
        raise HumanLabelError("a dataset version is required (PyRIT refuses a file without one)")
    comment = f"# dataset_version={dataset_version}"
    if labels.kind == "harm":
        if harm_definition:
            comment += f", harm_definition={harm_definition}"
        if harm_definition_version:
            comment += f", harm_definition_version={harm_definition_version}"
    yield comment + "\n"
    subject = "objective" if labels.kind == "objective" else "harm_category"
    header = ["assistant_response", subject, *labels.label_columns, "data_type"]
    buffer = io.StringIO()
    # Every cell is spreadsheet-safe: a response starting with "=" is written as "'=…", and
    # PyRIT's from_csv reads that quote back as part of the text (docs/export.md).
    writer = SafeCsvWriter(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    yield buffer.getvalue()
    for row in labels.rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([row[name] for name in header])
        yield buffer.getvalue()
