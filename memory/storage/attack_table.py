"""A filtered attack list as a table: streamed CSV for spreadsheets, streamed JSON for scripts.

One row per attack result, the columns a reviewer reads in the attack list (outcome, verdict,
attack, target, turns, last score, labels) plus a link back to the attack page. It is a
reading aid, not a transfer format: the lossless PyRIT document is ``GET /api/v1/export/``.

Rows are read in chunks straight from the QuerySet, so a list of 100,000 attacks streams in
constant memory.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import QuerySet

from memory.models import AttackResult
from memory.storage.filters import SEEN_HUMAN_OUTCOME
from redteam.core.downloads import SafeCsvWriter

__all__ = [
    "ATTACK_TABLE_COLUMNS",
    "TABLE_FORMATS",
    "AttackTable",
    "attack_table",
    "attack_table_csv",
    "attack_table_json",
    "attack_table_rows",
    "table_header",
    "table_queryset",
]

#: Rows fetched per database round trip.
CHUNK_SIZE = 2000


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def _class_name(identifier: Any) -> str | None:
    return identifier.class_name if identifier is not None else None


def _model_name(identifier: Any) -> str | None:
    if identifier is None:
        return None
    value = (identifier.params or {}).get("model_name")
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class TableColumn:
    """A column: its header and how a row's value is read from an attack result."""

    name: str
    read: Callable[[AttackResult], Any]


def _human(attack: AttackResult) -> str | None:
    """The human outcome the reader may see: the one blind review leaves them where the
    caller annotated it (``queues.with_seen_human_outcome``), else the stored one."""
    return getattr(attack, SEEN_HUMAN_OUTCOME, attack.human_outcome)


#: The table's columns, in order (CSV header and JSON keys alike).
ATTACK_TABLE_COLUMNS: tuple[TableColumn, ...] = (
    TableColumn("attack_result_id", lambda a: str(a.id)),
    TableColumn("timestamp", lambda a: _iso(a.timestamp)),
    TableColumn("conversation_id", lambda a: a.conversation.conversation_id),
    TableColumn("objective", lambda a: a.objective),
    TableColumn("outcome", lambda a: _human(a) or a.outcome),
    TableColumn("automated_outcome", lambda a: a.outcome),
    TableColumn("human_outcome", lambda a: _human(a)),
    TableColumn("outcome_reason", lambda a: a.outcome_reason),
    TableColumn("attack_class", lambda a: _class_name(a.attack_identifier)),
    TableColumn("target_class", lambda a: _class_name(a.conversation.target_identifier)),
    TableColumn("target_model", lambda a: _model_name(a.conversation.target_identifier)),
    TableColumn("executed_turns", lambda a: a.executed_turns),
    TableColumn("execution_time_ms", lambda a: a.execution_time_ms),
    TableColumn("last_score_value", lambda a: a.last_score.score_value if a.last_score else None),
    TableColumn(
        "last_scorer_class",
        lambda a: _class_name(a.last_score.scorer_class_identifier) if a.last_score else None,
    ),
    TableColumn("labels", lambda a: a.labels),
    TableColumn("targeted_harm_categories", lambda a: a.targeted_harm_categories),
    TableColumn("scenario_result_id", lambda a: a.attribution_parent_id),
    TableColumn("pyrit_version", lambda a: a.pyrit_version),
)


def table_queryset(queryset: QuerySet[AttackResult]) -> QuerySet[AttackResult]:
    """``queryset`` with what the columns read joined in (one query per chunk)."""
    return queryset.select_related(
        "conversation__target_identifier",
        "attack_identifier",
        "last_score__scorer_class_identifier",
    ).only(
        "id",
        "timestamp",
        "objective",
        "outcome",
        "human_outcome",
        "outcome_reason",
        "executed_turns",
        "execution_time_ms",
        "labels",
        "targeted_harm_categories",
        "attribution_parent",
        "pyrit_version",
        "conversation__conversation_id",
        "conversation__target_identifier__class_name",
        "conversation__target_identifier__params",
        "attack_identifier__class_name",
        "last_score__score_value",
        "last_score__scorer_class_identifier__class_name",
    )


def attack_table_rows(
    *, queryset: QuerySet[AttackResult], link: Callable[[uuid.UUID], str] | None = None
) -> Iterator[dict[str, Any]]:
    """One dict per attack of ``queryset`` (in its order), keyed by the column names.

    ``link`` gives the absolute URL of an attack's page from its id (the caller knows its
    pages; storage does not); the ``url`` column is left out without it.
    """
    for attack in table_queryset(queryset).iterator(chunk_size=CHUNK_SIZE):
        row = {column.name: column.read(attack) for column in ATTACK_TABLE_COLUMNS}
        if row["scenario_result_id"] is not None:
            row["scenario_result_id"] = str(row["scenario_result_id"])
        if link is not None:
            row["url"] = link(attack.id)
        yield row


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


class _Line:
    """A file-like object whose ``write`` hands the written text back (for ``csv.writer``)."""

    def write(self, text: str) -> str:
        return text


def table_header(*, with_links: bool) -> list[str]:
    """The column names of :func:`attack_table_rows` (``url`` last when links are made)."""
    return [column.name for column in ATTACK_TABLE_COLUMNS] + (["url"] if with_links else [])


def attack_table_csv(rows: Iterable[dict[str, Any]], *, header: list[str]) -> Iterator[str]:
    """The rows as CSV text, the header line first, one line per row as it is read.

    Lists and objects (labels, harm categories) are JSON; text that a spreadsheet would run
    as a formula is prefixed with ``'``.
    """
    writer = SafeCsvWriter(_Line())
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow([_cell(row[name]) for name in header])


def attack_table_json(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The rows as one JSON array, written element by element."""
    yield "["
    for index, row in enumerate(rows):
        yield ("," if index else "") + "\n" + json.dumps(row, ensure_ascii=False)
    yield "\n]\n"


#: ``format`` value -> (content type, file suffix).
TABLE_FORMATS = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "json": ("application/json", "json"),
}


@dataclass(frozen=True)
class AttackTable:
    """A table ready to stream: its text chunks, content type and file suffix."""

    chunks: Iterator[str]
    content_type: str
    suffix: str


def attack_table(
    *, queryset: QuerySet[AttackResult], fmt: str, link: Callable[[uuid.UUID], str]
) -> AttackTable:
    """The attacks of ``queryset`` (filtered and ordered by the caller) in ``fmt`` (a key of
    :data:`TABLE_FORMATS`), with a ``url`` column made by ``link``. Nothing is read until the
    chunks are."""
    content_type, suffix = TABLE_FORMATS[fmt]
    rows = attack_table_rows(queryset=queryset, link=link)
    if fmt == "csv":
        chunks = attack_table_csv(rows, header=table_header(with_links=True))
    else:
        chunks = attack_table_json(rows)
    return AttackTable(chunks=chunks, content_type=content_type, suffix=suffix)
