"""Export profiles: the lossless document cut down to what one PyRIT version loads as it is.

The default document (profile ``redline``) keeps everything Redline stores, which is more than
any PyRIT version accepts: PyRIT 1.1.0's pydantic models are ``extra="forbid"`` and reject the
0.x keys Redline keeps on pieces (``labels``, identifiers, ``scores``, …), the ``pyrit_version``
of a score, the ``objective_sha256`` of an attack result, the ``media`` links. A profile is a
declarative transform of that document:

* per object kind, the keys the PyRIT version defines, in its field order; every other key
  is dropped (keys a client once sent that PyRIT does not define too);
* per object kind, what its PyRIT version needs of the values it keeps: dates in the form it
  reads, values it has no word for replaced (and the replacement recorded in the object), and
  the keys without which its class cannot be built (an object lacking one is left out);
* per section, whether it is written and under which name;
* three structural choices the document writer honours: whether a piece carries its scores
  (0.12 ``to_dict``) or they come in ``scores`` (1.x, where a piece has none), whether a
  conversation is ``{conversation, messages}`` (1.x) or flat pieces (0.12
  ``export_conversations``), and whether a score of loose content names the stored row or
  carries the content (1.1.0 has no call that stores a row with a given id; a
  ``ContentScorable`` is stored by ``add_scores_to_memory``).

The field lists were read from the released wheels' source (``pyrit/models/…`` of PyRIT 1.1.0
and 0.12.1). The table of what each profile drops (``docs/export.md``) is generated from the
same rules by :func:`drops_table`, and a test compares the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.transfer.shapes import PIECE_KEYS, SCORE_KEYS

#: The lossless document's keys per object kind: what Redline's export writes (the read API's
#: serializers), PyRIT 1.2's columns Redline keeps in ``extra`` included. Used to list what a
#: profile drops; a test checks exports emit nothing else.
REDLINE_KEYS: dict[str, tuple[str, ...]] = {
    "conversation": (
        "conversation_id",
        "target_identifier",
        "retries",
        "pyrit_version",
        "attack_result_id",
        # the stored columns PyRIT keys its identifier tables by, kept as stored (``extra``)
        "target_identifier_hash",
    ),
    "piece": PIECE_KEYS,
    # PyRIT 1.2's ``is_intermediate`` arrives as an unknown key and is kept in ``extra``.
    "score": (*SCORE_KEYS, "is_intermediate", "scorer_identifier_hash"),
    "scorable_content": ("id", "value", "value_sha256", "data_type", "timestamp"),
    "attack_result": (
        "attack_result_id",
        "conversation_id",
        "objective",
        "objective_sha256",
        "attack_identifier",
        "atomic_attack_identifier",
        "last_response",
        "last_score",
        "executed_turns",
        "execution_time_ms",
        "outcome",
        "outcome_reason",
        "timestamp",
        "timestamp_source",
        "related_conversations",
        "metadata",
        "labels",
        "targeted_harm_categories",
        "error_message",
        "error_type",
        "error_traceback",
        "retry_events",
        "total_retries",
        "attribution_parent_id",
        "attribution_data",
        "human_score",
        "operator",
        "operation",
        "preparation_conversation_ids",
        "objective_target_eval_hash_v1",
        "atomic_attack_identifier_hash",
        "pyrit_version",
    ),
    "scenario_result": (
        "id",
        "scenario_identifier",
        "scenario_description",
        "attack_results",
        "scenario_run_state",
        "labels",
        "creation_time",
        "completion_time",
        "number_tries",
        "display_group_map",
        "error_message",
        "error_type",
        "error_attack_result_ids",
        "metadata",
        "scenario_name",
        "scenario_version",
        "pyrit_version",
        "objective_target_identifier",
        "objective_scorer_identifier",
        "scenario_identifier_hash",
    ),
    "seed_dataset": (
        "dataset_name",
        "name",
        "description",
        "harm_categories",
        "authors",
        "groups",
        "source",
        "data_type",
        "seed_type",
        "date_added",
        "added_by",
    ),
    "seed": (
        "value",
        "value_sha256",
        "id",
        "name",
        "dataset_name",
        "harm_categories",
        "description",
        "authors",
        "groups",
        "source",
        "date_added",
        "added_by",
        "metadata",
        "prompt_group_id",
        "prompt_group_alias",
        "is_general_technique",
        "is_jinja_template",
        "data_type",
        "seed_type",
        "response_json_schema",
        "role",
        "sequence",
        "parameters",
        "num_turns",
        "adversarial_chat_system_prompt_path",
        "simulated_target_system_prompt_path",
        "next_message_system_prompt_path",
        "conditions",
        "origin",
        "pyrit_version",
        "media",
    ),
    "seed_group": ("id", "kind", "alias", "seeds"),
    "pyrit_record": ("table", "pk", "row", "pyrit_version", "alembic_revision"),
}

# --- PyRIT 1.1.0 (pyrit/models/…, every model ``extra="forbid"``) ------------------------------

#: ``messages/message_piece.py`` ``MessagePiece`` fields (``not_in_memory`` is never dumped).
_PIECE_110 = (
    "id",
    "role",
    "conversation_id",
    "sequence",
    "timestamp",
    "original_value",
    "original_value_data_type",
    "original_value_sha256",
    "converted_value",
    "converted_value_data_type",
    "converted_value_sha256",
    "response_error",
    "original_prompt_id",
    "prompt_metadata",
    "converter_identifiers",
)
#: ``score/score.py`` ``Score``.
_SCORE_110 = (
    "id",
    "score_value",
    "status",
    "score_value_description",
    "score_type",
    "score_category",
    "score_rationale",
    "score_metadata",
    "scorer_class_identifier",
    "message_piece_id",
    "scorable",
    "timestamp",
    "objective",
)
#: ``results/attack_result.py`` ``AttackResult``.
_ATTACK_110 = (
    "conversation_id",
    "objective",
    "attack_result_id",
    "atomic_attack_identifier",
    "last_response",
    "last_score",
    "executed_turns",
    "execution_time_ms",
    "outcome",
    "outcome_reason",
    "timestamp",
    "related_conversations",
    "metadata",
    "labels",
    "targeted_harm_categories",
    "error_message",
    "error_type",
    "error_traceback",
    "retry_events",
    "total_retries",
    "attribution_parent_id",
    "attribution_data",
)
#: ``results/scenario_result.py`` ``ScenarioResult``: its fields, then the computed fields
#: ``model_dump`` writes and ``model_validate`` ignores (``_drop_computed_identity_fields``).
_SCENARIO_110 = (
    "id",
    "scenario_identifier",
    "scenario_description",
    "attack_results",
    "scenario_run_state",
    "labels",
    "creation_time",
    "completion_time",
    "number_tries",
    "display_group_map",
    "error_message",
    "error_type",
    "error_attack_result_ids",
    "metadata",
    "scenario_name",
    "scenario_version",
    "pyrit_version",
    "objective_target_identifier",
    "objective_scorer_identifier",
)
#: ``seeds/seed.py`` ``Seed``: the fields every seed type has.
_SEED_BASE_110 = (
    "value",
    "value_sha256",
    "id",
    "name",
    "dataset_name",
    "harm_categories",
    "description",
    "authors",
    "groups",
    "source",
    "date_added",
    "added_by",
    "metadata",
    "prompt_group_id",
    "prompt_group_alias",
    "is_general_technique",
    "is_jinja_template",
    "data_type",
)
#: ``SeedPrompt`` / ``SeedObjective`` / ``SeedSimulatedConversation``, by ``seed_type`` (the
#: discriminator of PyRIT's ``SeedUnion``).
_SEEDS_110 = {
    "prompt": (
        *_SEED_BASE_110,
        "seed_type",
        "response_json_schema",
        "role",
        "sequence",
        "parameters",
    ),
    "objective": (*_SEED_BASE_110, "seed_type"),
    "simulated_conversation": (
        *_SEED_BASE_110,
        "seed_type",
        "num_turns",
        "sequence",
        "adversarial_chat_system_prompt_path",
        "simulated_target_system_prompt_path",
        "next_message_system_prompt_path",
        "pyrit_version",
    ),
}

# --- PyRIT 0.12.1 (plain classes and dataclasses: the constructors' keyword arguments) ----------

#: ``models/message_piece.py`` ``MessagePiece.__init__`` in ``to_dict()`` order (scores embedded):
#: the lossless piece without what 1.x added (``pyrit_version``) and Redline's ``media``.
_PIECE_012 = tuple(k for k in PIECE_KEYS if k not in ("pyrit_version", "media"))
#: ``models/score.py`` ``Score.__init__`` in ``to_dict()`` order.
_SCORE_012 = (
    "id",
    "score_value",
    "score_value_description",
    "score_type",
    "score_category",
    "score_rationale",
    "score_metadata",
    "scorer_class_identifier",
    "message_piece_id",
    "timestamp",
    "objective",
)
#: ``models/attack_result.py`` ``AttackResult`` dataclass fields, plus ``attack_identifier``:
#: the deprecated keyword its ``__init__`` still takes (the attack strategy, which 0.12's
#: ``get_attack_strategy_identifier`` cannot find in a 1.x atomic identifier).
_ATTACK_012 = (
    "conversation_id",
    "objective",
    "attack_result_id",
    "attack_identifier",
    "atomic_attack_identifier",
    "last_response",
    "last_score",
    "executed_turns",
    "execution_time_ms",
    "outcome",
    "outcome_reason",
    "related_conversations",
    "metadata",
)
#: ``models/seeds/seed.py`` ``Seed`` dataclass fields (``data_type`` is a property there).
_SEED_BASE_012 = (
    "value",
    "value_sha256",
    "id",
    "name",
    "dataset_name",
    "harm_categories",
    "description",
    "authors",
    "groups",
    "source",
    "date_added",
    "added_by",
    "metadata",
    "prompt_group_id",
    "prompt_group_alias",
    "is_general_technique",
    "is_jinja_template",
)
#: By ``seed_type``, which 0.12.1's ``SeedGroup`` and ``SeedDataset`` take from a seed dict to
#: pick the class; ``SeedSimulatedConversation.from_dict`` reads only its settings.
_SEEDS_012 = {
    "prompt": (*_SEED_BASE_012, "seed_type", "data_type", "role", "sequence", "parameters"),
    "objective": (*_SEED_BASE_012, "seed_type"),
    "simulated_conversation": (
        "seed_type",
        "num_turns",
        "sequence",
        "adversarial_chat_system_prompt_path",
        "simulated_target_system_prompt_path",
        "next_message_system_prompt_path",
    ),
}


@dataclass(frozen=True)
class Shape:
    """The keys one kind of object keeps, and which of them hold objects of other kinds.

    ``nested`` maps a key to ``(kind, container)``: ``one`` (an object or null), ``list``
    (a list of objects) or ``map`` (``{name: [objects]}``, a scenario's attack results).
    ``variants`` picks the key list by the value of ``discriminator`` (seed types).
    """

    keys: tuple[str, ...] = ()
    nested: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    discriminator: str | None = None
    variants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Date-time keys written as Python's ``datetime.isoformat()`` (``+00:00``, never ``Z``).
    dates: tuple[str, ...] = ()
    #: ``{key: {value: written value}}`` for values the PyRIT version has no word for.
    replaced: Mapping[str, Mapping[Any, Any]] = field(default_factory=dict)
    #: The object key (a JSON object) that records each replaced value under
    #: :data:`REPLACED_KEY`, so the change travels with the object into PyRIT's memory.
    replaced_in: str | None = None
    #: Keys the PyRIT version's class cannot be built without: an object whose value of one
    #: is null is left out (dropped from its list; an embedded one becomes null).
    required: tuple[str, ...] = ()

    def all_keys(self) -> tuple[str, ...]:
        """Every key this shape can keep (all variants), in first-seen order."""
        return tuple(dict.fromkeys([*self.keys, *(k for v in self.variants.values() for k in v)]))


#: Key of the record of replaced values, inside the object's ``replaced_in`` key.
REPLACED_KEY = "redline_replaced"


@dataclass(frozen=True)
class Profile:
    """One export profile (see the module docstring). ``shapes`` is empty for ``redline``."""

    name: str
    title: str
    #: Lossless section -> section written; a section not listed is left out.
    sections: Mapping[str, str]
    shapes: Mapping[str, Shape] = field(default_factory=dict)
    #: Scores are written in ``scores``, not under their piece.
    scores_apart: bool = False
    #: Conversations are written as their pieces (0.12 ``export_conversations``).
    flat_pieces: bool = False
    #: A score of stored loose content carries it: ``{"scorable_type": "content", value, …}``.
    inline_scorable_content: bool = False
    #: Keys (``kind.key``), kinds and sections that are not lost but written elsewhere:
    #: where, for the docs table.
    moved: Mapping[str, str] = field(default_factory=dict)
    #: What is lost beyond keys, for the docs.
    notes: tuple[str, ...] = ()
    #: Written as the document's ``note`` (a key ingestion reads as meta): what a reader must
    #: know to load it. Empty: no ``note``.
    note: str = ""

    @property
    def lossless(self) -> bool:
        """The default document: nothing is reshaped."""
        return not self.shapes

    def shape(self, kind: str, item: dict[str, Any]) -> dict[str, Any] | None:
        """``item`` (an object of ``kind``) with only the keys this profile keeps; None when
        the profile leaves the object out (a required key is null)."""
        if self.lossless:
            return item
        return _shaped(self.shapes, kind, item)


def _shaped(shapes: Mapping[str, Shape], kind: str, item: dict[str, Any]) -> dict[str, Any] | None:
    rule = shapes[kind]
    if any(item.get(key) is None for key in rule.required):
        return None
    keys = rule.keys
    if rule.discriminator is not None:
        keys = rule.variants.get(item.get(rule.discriminator), rule.keys)
    out: dict[str, Any] = {}
    for key in keys:
        if key not in item:
            continue
        value = item[key]
        if key in rule.nested and value is not None:
            inner, container = rule.nested[key]
            if container == "one":
                value = _shaped(shapes, inner, value)
            elif container == "list":
                value = _kept(shapes, inner, value)
            else:
                value = {name: _kept(shapes, inner, vs) for name, vs in value.items()}
        out[key] = value
    for key in rule.dates:
        if isinstance(out.get(key), str):
            out[key] = iso_offset(out[key])
    for key, table in rule.replaced.items():
        if key in out and out[key] in table:
            original, out[key] = out[key], table[out[key]]
            if rule.replaced_in is not None:
                record = dict(out.get(rule.replaced_in) or {})
                record[REPLACED_KEY] = {**record.get(REPLACED_KEY, {}), key: original}
                out[rule.replaced_in] = record
    return out


def _kept(shapes: Mapping[str, Shape], kind: str, items: list[Any]) -> list[dict[str, Any]]:
    return [out for v in items if (out := _shaped(shapes, kind, v)) is not None]


def iso_offset(value: str) -> str:
    """An ISO 8601 date-time as ``datetime.isoformat()`` writes it: ``Z`` becomes ``+00:00``,
    which ``datetime.fromisoformat`` reads on every Python (3.10 refuses ``Z``)."""
    return datetime.fromisoformat(value).isoformat()


_CONVERSATION_ITEM = Shape(
    keys=("conversation", "messages"),
    nested={"conversation": ("conversation", "one"), "messages": ("message", "list")},
)
_MESSAGE = Shape(keys=("message_pieces",), nested={"message_pieces": ("piece", "list")})

REDLINE = Profile(
    name="redline",
    title="the lossless Redline document (default)",
    sections={
        name: name
        for name in (
            "conversations",
            "scorable_contents",
            "scores",
            "scenario_results",
            "attack_results",
            "seed_datasets",
            "seeds",
            "seed_groups",
            "pyrit_records",
        )
    },
)

PYRIT_1_1 = Profile(
    name="pyrit-1.1",
    title="PyRIT 1.1.0: every object `model_validate`s as it is",
    sections={
        "conversations": "conversations",
        "scores": "scores",
        "scenario_results": "scenario_results",
        "attack_results": "attack_results",
        "seeds": "seeds",
        "seed_groups": "seed_groups",
    },
    shapes={
        "conversation_item": _CONVERSATION_ITEM,
        "message": _MESSAGE,
        # ``messages/conversations.py`` ``Conversation``.
        "conversation": Shape(keys=("conversation_id", "target_identifier", "retries")),
        "piece": Shape(keys=_PIECE_110),
        "score": Shape(keys=_SCORE_110),
        "attack_result": Shape(
            keys=_ATTACK_110,
            nested={"last_response": ("piece", "one"), "last_score": ("score", "one")},
        ),
        "scenario_result": Shape(
            keys=_SCENARIO_110, nested={"attack_results": ("attack_result", "map")}
        ),
        "seed": Shape(discriminator="seed_type", variants=_SEEDS_110, keys=_SEEDS_110["prompt"]),
        # ``seeds/seed_group.py`` ``SeedGroup``.
        "seed_group": Shape(keys=("seeds",), nested={"seeds": ("seed", "list")}),
    },
    scores_apart=True,
    inline_scorable_content=True,
    moved={
        "piece.scores": "the `scores` section",
        "scorable_contents": "each score's `scorable`: the content, not its id",
    },
    notes=(
        "`scorable_contents`: no 1.1.0 call stores a row with a given id; each score of loose "
        "content carries the content instead (`scorable: {scorable_type: content, value, "
        "data_type}`), and `add_scores_to_memory` stores it again (new id and time).",
        "`seed_datasets`: PyRIT keeps no dataset rows; the seeds carry `dataset_name`.",
        "`pyrit_records`: the tables of PyRIT 1.2 and newer (operations, findings, evidence, "
        "observations) do not exist in 1.1.0.",
        "Scores are not embedded in pieces: all of them are in `scores`.",
    ),
)

#: The outcomes 1.x has and 0.12.1's ``AttackOutcome`` (success, failure, undetermined) lacks.
OUTCOMES_012 = {"error": "undetermined"}
#: 0.12.1's ``add_seeds_to_memory_async`` refuses a seed without ``added_by`` (1.x allows it).
ADDED_BY_012 = {None: "unknown", "": "unknown"}

PYRIT_0_12 = Profile(
    name="pyrit-0.12",
    title="PyRIT 0.12.1: every object is its class's keyword arguments",
    sections={
        "conversations": "message_pieces",
        "scores": "scores",
        "attack_results": "attack_results",
        "seeds": "seeds",
        "seed_groups": "seed_groups",
    },
    shapes={
        "piece": Shape(keys=_PIECE_012, nested={"scores": ("score", "list")}, dates=("timestamp",)),
        # 0.12.1's Score refuses a null value (true_false must be true or false, float_scale
        # a number): a 1.1.0 score that reached no verdict (status undetermined) has none.
        "score": Shape(keys=_SCORE_012, dates=("timestamp",), required=("score_value",)),
        "attack_result": Shape(
            keys=_ATTACK_012,
            nested={"last_response": ("piece", "one"), "last_score": ("score", "one")},
            replaced={"outcome": OUTCOMES_012},
            replaced_in="metadata",
        ),
        "seed": Shape(
            discriminator="seed_type",
            variants=_SEEDS_012,
            keys=_SEEDS_012["prompt"],
            dates=("date_added",),
            replaced={"added_by": ADDED_BY_012},
            replaced_in="metadata",
        ),
        "seed_group": Shape(keys=("seeds",), nested={"seeds": ("seed", "list")}),
    },
    flat_pieces=True,
    moved={"conversation": "`prompt_target_identifier` of each piece; `retries` are lost"},
    notes=(
        "`conversations` become `message_pieces`, a flat list of `MessagePiece.to_dict()` "
        "(scores embedded) as 0.12's `export_conversations` wrote: the conversation's "
        "`retries` and 1.x target are dropped (each piece names its target).",
        "`scenario_results`: 0.12.1 builds a `ScenarioResult` from a `ScenarioIdentifier` "
        "object that no JSON key maps to; their attack results are in `attack_results`.",
        "`scorable_contents`, `seed_datasets`, `pyrit_records`: 0.12.1 has none of them.",
        "Dates (`timestamp` of pieces and scores, `date_added` of seeds) are written as "
        "0.12.1's `to_dict()` writes them, `datetime.isoformat()` with `+00:00`, which "
        "`datetime.fromisoformat` reads on every Python 0.12.1 supports (3.10 refuses `Z`).",
        "An attack outcome 0.12.1's `AttackOutcome` lacks, `error` (PyRIT 1.x), is written "
        "as `undetermined`, and the attack's `metadata` records it: "
        '`"redline_replaced": {"outcome": "error"}` (0.12.1 stores that metadata).',
        "A seed without `added_by` (PyRIT 1.x allows it; 0.12.1's `add_seeds_to_memory_async` "
        'refuses it) is written with `added_by: "unknown"`, and its `metadata` records '
        '`"redline_replaced": {"added_by": null}`.',
        "A score without a value (a 1.1.0 score whose `status` is `undetermined`) is left "
        "out: 0.12.1's `Score` refuses it (`true_false` must be `true` or `false`, "
        "`float_scale` a number from 0 to 1). It is missing from its piece's `scores` and "
        "from `scores`; an attack whose `last_score` it is has `last_score: null`.",
    ),
    note=(
        "PyRIT 0.12.1 profile. 0.12.1 has no JSON loader: build each object with its class, "
        "every key as a keyword argument (MessagePiece, Score, AttackResult, SeedGroup), "
        "turning what JSON cannot hold into PyRIT's types: dates (timestamp, date_added) with "
        "datetime.fromisoformat; identifiers with ComponentIdentifier.from_dict; embedded "
        "pieces and scores with MessagePiece and Score; outcome with AttackOutcome; "
        "related_conversations with ConversationReference. docs/examples/load_pyrit_0_12.py "
        "does exactly that. The outcome error (0.12.1 has none) is written as undetermined, "
        'and the attack\'s metadata says so: "redline_replaced": {"outcome": "error"}; a seed '
        'without added_by (0.12.1 requires one) gets "unknown" and "redline_replaced": '
        '{"added_by": null} in its metadata. A score without a value (1.1.0 status '
        "undetermined; 0.12.1's Score refuses it) is left out: not in its piece's scores nor "
        "in scores, and an attack's last_score that is one is null."
    ),
)

#: Every profile by name, the default first.
PROFILES: dict[str, Profile] = {p.name: p for p in (REDLINE, PYRIT_1_1, PYRIT_0_12)}
DEFAULT_PROFILE = REDLINE.name


class UnknownProfileError(ValueError):
    """A profile name that is not in :data:`PROFILES`; the message lists the known ones."""


def export_profile(*, name: str | None) -> Profile:
    """The profile called ``name`` (the default for None or blank)."""
    key = (name or "").strip() or DEFAULT_PROFILE
    try:
        return PROFILES[key]
    except KeyError:
        known = ", ".join(PROFILES)
        message = f"profile: {name!r} is not a profile; use one of {known}"
        raise UnknownProfileError(message) from None


# --- the docs table ------------------------------------------------------------------------------

#: Rows of the drops table: (label, kind); conversation items are the section's wrapper.
_TABLE_KINDS = (
    ("conversation", "conversation"),
    ("message piece", "piece"),
    ("score", "score"),
    ("attack result", "attack_result"),
    ("scenario result", "scenario_result"),
    ("seed", "seed"),
    ("seed group", "seed_group"),
)


def dropped_keys(profile: Profile, kind: str) -> tuple[str, ...] | None:
    """Keys of the lossless ``kind`` that ``profile`` drops; None when it drops the kind."""
    rule = profile.shapes.get(kind)
    if rule is None:
        return None
    kept = set(rule.all_keys())
    return tuple(key for key in REDLINE_KEYS[kind] if key not in kept)


def _moved(profile: Profile, what: str, label: str) -> str:
    where = profile.moved.get(what)
    return f"{label} (moved to {where})" if where else label


def drops_table() -> str:
    """The Markdown table of what each non-default profile drops, then each profile's notes
    (``docs/export.md`` holds a copy between ``profile-drops`` markers)."""
    profiles = [p for p in PROFILES.values() if not p.lossless]
    lines = [
        "| object | " + " | ".join(f"`{p.name}` drops" for p in profiles) + " |",
        "|---|" + "---|" * len(profiles),
    ]
    for label, kind in _TABLE_KINDS:
        cells = []
        for profile in profiles:
            keys = dropped_keys(profile, kind)
            if keys is None:
                cells.append(_moved(profile, kind, "the whole object"))
            else:
                named = [_moved(profile, f"{kind}.{k}", f"`{k}`") for k in keys]
                cells.append(", ".join(named) or "nothing")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for name in REDLINE.sections:
        if all(name in p.sections for p in profiles):
            continue
        cells = [
            "—" if name in profile.sections else _moved(profile, name, "the section")
            for profile in profiles
        ]
        lines.append(f"| section `{name}` | " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"- `{p.name}`: {note}" for p in profiles for note in p.notes]
    return "\n".join(lines) + "\n"
