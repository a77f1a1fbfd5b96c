"""Turn rows of PyRIT's SQLite tables into PyRIT's JSON shapes, as ingestion accepts them.

Contract §9, §11.

One :class:`TableReader` per source table, built from the columns the file actually has, so
every schema generation is read by the same code: 0.9's ``orchestrator_identifier`` and
``task``, 0.10–0.13's per-piece labels and identifiers, 1.x's conversation targets and
attack-result labels all come out under the key names of PyRIT's own ``to_dict`` /
``model_dump``, and Redline's ingestion applies the §9.2 aliases as for any other input.
Columns we do not know are passed through under their own name and end up in the object's
``extra``: nothing is dropped silently.

Values are decoded here (contract §11.2): JSON text (the text ``null`` included) is parsed, naive
``DATETIME`` text becomes an aware UTC datetime, identifier JSON becomes a dict — or whatever
the caller's ``parse`` makes of it (Redline's importer: a ``ComponentIdentifier``, parsed once
per distinct text). A value that does not decode is passed on as it is, for ingestion to report
with its path.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from pyrit_memory_reader.source import Schema

Decoder = Callable[[Any], Any]


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    # most JSON cells of a PyRIT file are one of these; a new object each time, as loads gives
    if value == "{}":
        return {}
    if value == "[]":
        return []
    if value == "null":
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def _json_or_empty(value: Any) -> Any:
    """A JSON text column that older PyRIT also left empty (``retry_events_json``)."""
    if value == "":
        return None
    return _json(value)


def _timestamp(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed


class IdentifierCache:
    """Identifier JSON text → identifier, for the few distinct texts a file repeats.

    A target or converter identifier is stored once per piece, so a million pieces hold a
    handful of distinct texts; decoding (and, for the importer, parsing and hashing) each once
    is most of the saving. ``parse`` turns one identifier dict into what the caller wants
    (default: the dict itself, JSON as the push client sends it). Bounded: the cache is
    dropped when it grows past ``size`` entries.
    """

    def __init__(self, size: int = 20_000, parse: Callable[[dict[str, Any]], Any] | None = None):
        self.size = size
        self.single: dict[str, Any] = {}
        self.lists: dict[str, Any] = {}
        self.parse = parse

    def _parse(self, data: dict[str, Any]) -> Any:
        return data if self.parse is None else self.parse(data)

    def _store(self, cache: dict[str, Any], key: str, value: Any) -> Any:
        if len(cache) >= self.size:
            cache.clear()
        cache[key] = value
        return value

    def one(self, value: Any) -> Any:
        """One identifier column: ``None``/``{}``/``null`` mean none."""
        if not isinstance(value, str):
            return value
        found = self.single.get(value)
        if found is not None or value in self.single:
            return found
        data = _json(value)
        if isinstance(data, dict):
            data = self._parse(data) if data else None
        return self._store(self.single, value, data)

    def many(self, value: Any) -> Any:
        """A list-of-identifiers column (``converter_identifiers``)."""
        if not isinstance(value, str):
            return value
        found = self.lists.get(value)
        if found is not None:
            return found
        data = _json(value)
        if isinstance(data, list):
            items = []
            for item in data:
                items.append(self._parse(item) if isinstance(item, dict) and item else item)
            data = items
        return self._store(self.lists, value, data)


class TableReader:
    """Reads one source table: the SELECT to run and how each column becomes a dict key."""

    def __init__(
        self,
        table: str,
        columns: Sequence[tuple[str, str, Decoder | None]],
        *,
        finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.table = table
        self.columns = list(columns)
        self.keys = [key for _, key, _ in self.columns]
        self.decoders = [decoder for _, _, decoder in self.columns]
        self.finish = finish
        self.select = ", ".join(f'"{column}"' for column, _, _ in self.columns)

    def to_dict(self, row: Sequence[Any]) -> dict[str, Any]:
        """The PyRIT-shaped dict of one row (without its leading rowid)."""
        data = {
            key: (value if decoder is None or value is None else decoder(value))
            for key, decoder, value in zip(self.keys, self.decoders, row, strict=True)
        }
        return self.finish(data) if self.finish else data


def _reader(
    schema: Schema,
    table: str,
    known: dict[str, tuple[str, Decoder | None] | None],
    *,
    finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> TableReader:
    """A reader of ``table``'s columns: ``known`` maps column → (key, decoder), or None to skip.

    Unknown columns are read too, under their own name (JSON columns decoded).
    """
    columns = []
    for column in schema.columns.get(table, {}):
        if column in known:
            spec = known[column]
            if spec is None:
                continue
            key, decoder = spec
        else:
            key, decoder = column, (_json if schema.is_json(table, column) else None)
        columns.append((column, key, decoder))
    return TableReader(table, columns, finish=finish)


# --- the tables ---------------------------------------------------------------------------------


def piece_reader(schema: Schema, ids: IdentifierCache) -> TableReader:
    """``PromptMemoryEntries`` → a ``MessagePiece.to_dict()``-shaped dict (any version)."""
    known: dict[str, tuple[str, Decoder | None] | None] = {
        "id": ("id", None),
        "role": ("role", None),
        "conversation_id": ("conversation_id", None),
        "sequence": ("sequence", None),
        "timestamp": ("timestamp", _timestamp),
        "labels": ("labels", _json),
        "prompt_metadata": ("prompt_metadata", _json),
        "targeted_harm_categories": ("targeted_harm_categories", _json),
        "converter_identifiers": ("converter_identifiers", ids.many),
        "prompt_target_identifier": ("prompt_target_identifier", ids.one),
        "attack_identifier": ("attack_identifier", ids.one),
        "orchestrator_identifier": ("orchestrator_identifier", ids.one),
        "response_error": ("response_error", None),
        "original_value_data_type": ("original_value_data_type", None),
        "original_value": ("original_value", None),
        "original_value_sha256": ("original_value_sha256", None),
        "converted_value_data_type": ("converted_value_data_type", None),
        "converted_value": ("converted_value", None),
        "converted_value_sha256": ("converted_value_sha256", None),
        "original_prompt_id": ("original_prompt_id", None),
        "pyrit_version": ("pyrit_version", None),
    }
    return _reader(schema, "PromptMemoryEntries", known)


def conversation_reader(schema: Schema, ids: IdentifierCache) -> TableReader:
    """``Conversations`` (1.x) → a 1.1.0 ``Conversation`` dict."""
    known: dict[str, tuple[str, Decoder | None] | None] = {
        "conversation_id": ("conversation_id", None),
        "target_identifier": ("target_identifier", ids.one),
        "retries": ("retries", _json),
        "pyrit_version": ("pyrit_version", None),
        # the content-addressed key of target_identifier (contract §11.3): read as stored, under
        # its own name (the object's extra), beside the JSON's own hash, which may differ
        "target_identifier_hash": ("target_identifier_hash", None),
    }
    return _reader(schema, "Conversations", known)


#: The scorer of a score whose row names none. PyRIT 0.10's ``PlagiarismScorer`` builds its
#: scores without ``scorer_class_identifier``, so the column holds ``{}``; Redline keeps one
#: scorer per score, and a placeholder that says "unknown" loses less than refusing the score.
UNKNOWN_SCORER = {"class_name": "UnknownScorer", "class_module": "unknown"}


def _score_finish(data: dict[str, Any], ids: IdentifierCache) -> dict[str, Any]:
    if "scorer_class_identifier" in data and data["scorer_class_identifier"] is None:
        data["scorer_class_identifier"] = ids.one(json.dumps(UNKNOWN_SCORER))
        # kept in the score's extra, so the placeholder is never mistaken for a recorded scorer
        data["scorer_class_identifier_missing"] = True
    metadata = data.get("score_metadata")
    if metadata is not None and not isinstance(metadata, dict):
        # 0.9 kept free text here; PyRIT's current shape wants an object: keep the text aside
        data["score_metadata"] = None
        if metadata != "":
            data["legacy_score_metadata"] = metadata
    content_id = data.pop("scorable_content_id", None)
    scorable = data.get("scorable")
    if content_id is not None and not (
        isinstance(scorable, dict) and scorable.get("content_id") == content_id
    ):
        data["scorable_content_id"] = content_id
    return data


def score_reader(schema: Schema, ids: IdentifierCache) -> TableReader:
    """``ScoreEntries`` → a ``Score.to_dict()`` / 1.1.0 ``model_dump``-shaped dict."""
    score_category: Decoder | None = (
        _json if schema.is_json("ScoreEntries", "score_category") else None
    )
    known: dict[str, tuple[str, Decoder | None] | None] = {
        "score_category": ("score_category", score_category),
        "score_metadata": ("score_metadata", _json),
        "scorer_class_identifier": ("scorer_class_identifier", ids.one),
        "prompt_request_response_id": ("prompt_request_response_id", None),
        "timestamp": ("timestamp", _timestamp),
        "task": ("task", None),
        "objective": ("objective", None),
        "scorable": ("scorable", _json),
        "scored_expectation": ("scored_expectation", _json),
        "scorer_identifier_hash": ("scorer_identifier_hash", None),
    }
    return _reader(schema, "ScoreEntries", known, finish=lambda data: _score_finish(data, ids))


def scorable_content_reader(schema: Schema) -> TableReader:
    """``ScorableContentEntries`` (1.1.0) → ``{id, value, value_sha256, data_type, timestamp}``."""
    return _reader(schema, "ScorableContentEntries", {"timestamp": ("timestamp", _timestamp)})


_RELATED = (
    ("pruned_conversation_ids", "pruned", "pruned conversation"),
    ("adversarial_chat_conversation_ids", "adversarial", "adversarial chat conversation"),
)


def _attack_finish(data: dict[str, Any]) -> dict[str, Any]:
    related = []
    for key, kind, description in _RELATED:
        ids = data.pop(key, None)
        if isinstance(ids, list):
            # PyRIT re-creates the references with these descriptions on load (contract §7)
            related.extend(
                {"conversation_id": cid, "conversation_type": kind, "description": description}
                for cid in ids
            )
        elif ids is not None:
            data[key] = ids  # not a list: left for the normaliser to report
    data["related_conversations"] = related
    return data


def attack_reader(schema: Schema, ids: IdentifierCache) -> TableReader:
    """``AttackResultEntries`` → a 1.1.0 ``AttackResult`` dump (0.10–0.14 columns included;
    1.2's ``operator`` / ``operation`` pass under their own names)."""
    known: dict[str, tuple[str, Decoder | None] | None] = {
        "id": ("attack_result_id", None),
        "attack_identifier": ("attack_identifier", ids.one),
        "atomic_attack_identifier": ("atomic_attack_identifier", ids.one),
        "last_response_id": ("last_response", None),
        "last_score_id": ("last_score", None),
        # PyRIT 1.2 (alembic 2f8c4d6a9b1e) renamed it and added the human score
        "automated_score_id": ("last_score", None),
        "human_score_id": ("human_score", None),
        "attack_metadata": ("metadata", _json),
        "pruned_conversation_ids": ("pruned_conversation_ids", _json),
        "adversarial_chat_conversation_ids": ("adversarial_chat_conversation_ids", _json),
        "timestamp": ("timestamp", _timestamp),
        "labels": ("labels", _json),
        "targeted_harm_categories": ("targeted_harm_categories", _json),
        "retry_events_json": ("retry_events", _json_or_empty),
        "attribution_data": ("attribution_data", _json),
        # as stored: PyRIT 1.1.0 stores another hash here than the JSON's for scenario attacks
        "atomic_attack_identifier_hash": ("atomic_attack_identifier_hash", None),
    }
    return _reader(schema, "AttackResultEntries", known, finish=_attack_finish)


def _scenario_finish(data: dict[str, Any]) -> dict[str, Any]:
    if data.get("scenario_identifier") is None:
        # before alembic d4e6f8a0b2c4 the column was scenario_init_data, not an identifier
        # in every version: name the scenario by its name, keep the data as it was
        init = data.pop("scenario_init_data", None)
        if isinstance(init, dict) and (init.get("class_name") or init.get("__type__")):
            data["scenario_identifier"] = init
        else:
            data["scenario_identifier"] = {
                "class_name": data.get("scenario_name") or "Unknown",
                "class_module": "unknown",
            }
            if init is not None:
                data["scenario_init_data"] = init
    return data


def scenario_reader(schema: Schema, ids: IdentifierCache) -> TableReader:
    """``ScenarioResultEntries`` → a 1.x ``ScenarioResult`` dump."""
    known: dict[str, tuple[str, Decoder | None] | None] = {
        "scenario_identifier": ("scenario_identifier", ids.one),
        "objective_target_identifier": ("objective_target_identifier", ids.one),
        "objective_scorer_identifier": ("objective_scorer_identifier", ids.one),
        "labels": ("labels", _json),
        "completion_time": ("completion_time", _timestamp),
        "timestamp": ("creation_time", _timestamp),
        "display_group_map_json": ("display_group_map", _json),
        "scenario_metadata": ("metadata", _json),
        "attack_results_json": ("attack_results_json", _json),
        "scenario_init_data": ("scenario_init_data", _json),
        "scenario_identifier_hash": ("scenario_identifier_hash", None),
    }
    return _reader(schema, "ScenarioResultEntries", known, finish=_scenario_finish)


def _seed_finish(data: dict[str, Any]) -> dict[str, Any]:
    is_objective = data.pop("is_objective", None)
    if is_objective:
        # 0.10–0.12 marked objectives with this flag (contract §11.5)
        data["seed_type"] = "objective"
    elif data.get("seed_type") is None:
        data["seed_type"] = "prompt"
    return data


def seed_reader(schema: Schema) -> TableReader:
    """``SeedPromptEntries`` → a 1.1.0 seed dump (``prompt_metadata`` is the seed's metadata)."""
    known: dict[str, tuple[str, Decoder | None] | None] = {
        "harm_categories": ("harm_categories", _json),
        "authors": ("authors", _json),
        "groups": ("groups", _json),
        "date_added": ("date_added", _timestamp),
        "prompt_metadata": ("metadata", _json),
        "parameters": ("parameters", _json),
    }
    return _reader(schema, "SeedPromptEntries", known, finish=_seed_finish)


# --- tables kept verbatim ---------------------------------------------------------------------


def _verbatim_value(value: Any) -> Any:
    """A SQLite value as JSON: BLOBs as base64 (``{"$base64": …}``), the rest as returned."""
    if isinstance(value, bytes | memoryview):
        return {"$base64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


class VerbatimReader:
    """Reads a table Redline has no model for into ``pyrit_records`` items: every column by
    name, the primary key as text (JSON array for a composite key, the rowid without one)."""

    def __init__(self, table: str, info: Sequence[Sequence[Any]], revision: str | None) -> None:
        self.table = table
        self.columns = [row[1] for row in info]
        key = sorted((row[5], row[1]) for row in info if row[5])
        self.key = [name for _, name in key]
        self.revision = revision or ""
        #: False for a ``WITHOUT ROWID`` table (read whole, in primary-key order)
        self.has_rowid = True
        self.select = ", ".join(f'"{column}"' for column in self.columns)

    def to_dict(self, rowid: Any, values: Sequence[Any]) -> dict[str, Any]:
        """One ``pyrit_records`` item."""
        row = {c: _verbatim_value(v) for c, v in zip(self.columns, values, strict=True)}
        if not self.key:
            pk = str(rowid)
        elif len(self.key) == 1:
            pk = str(row[self.key[0]])
        else:
            pk = json.dumps([row[name] for name in self.key], ensure_ascii=False)
        version = row.get("pyrit_version")
        return {
            "table": self.table,
            "pk": pk,
            "row": row,
            "pyrit_version": version if isinstance(version, str) else "",
            "alembic_revision": self.revision,
        }
