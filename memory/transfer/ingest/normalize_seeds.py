"""Normalise PyRIT seeds, seed groups and scenario results of any version (contract §8, §9.10).

Pure functions like ``memory.transfer.ingest.normalize``: no database access; every problem
is returned with its path, and unknown keys go to ``extra``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.storage.batch import NormalizedSeedGroup, SeedDatasetSpec
from memory.storage.specs import ScenarioResultSpec
from memory.transfer.ingest.readers import Reader, not_object
from redteam.core.choices import ChatMessageRole, PromptDataType, ScenarioRunState, SeedType
from redteam.core.errors import Problem
from redteam.core.lengths import HARM_CATEGORIES_MAX_ITEMS
from seeds.fields import DATASET_DEFAULTS
from seeds.specs import SeedSpec

__all__ = [
    "normalize_scenario_result",
    "normalize_seed",
    "normalize_seed_group",
]

# 0.12 seeds carry their Python class instead of a ``seed_type``.
_SEED_CLASSES = {
    "SeedPrompt": SeedType.PROMPT,
    "SeedObjective": SeedType.OBJECTIVE,
    "SeedSimulatedConversation": SeedType.SIMULATED_CONVERSATION,
}
# A 0.12 seed's attributes (contract §8.1), which every seed class has; only ``SeedPrompt``
# adds the prompt ones. 0.12 has no serializer, so an attribute dump carries no class marker.
_SEED_BASE_ATTRIBUTES = frozenset(
    {
        "id",
        "value",
        "value_sha256",
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
    }
)
_PROMPT_ATTRIBUTES = frozenset({"role", "sequence", "parameters"})


def _unmarked_seed_type(data: Mapping[str, Any]) -> SeedType:
    """The class of a seed sent without ``seed_type`` or ``seed_class``.

    A complete 0.12 attribute dump without any prompt attribute is a ``SeedObjective``: a
    ``SeedPrompt``'s dump always holds ``role``, ``sequence`` and ``parameters``. Anything
    else (a hand-written seed, a partial dump) stays a prompt, as PyRIT's default is. PyRIT's
    group rule (at most one objective) still applies to the result.
    """
    if data.keys() >= _SEED_BASE_ATTRIBUTES and not _PROMPT_ATTRIBUTES & data.keys():
        return SeedType.OBJECTIVE
    return SeedType.PROMPT


def normalize_seed(data: Any, path: str) -> tuple[SeedSpec | None, list[Problem]]:
    """Normalise one seed dict: 1.1.0 ``model_dump`` (``seed_type``), 0.12 (``seed_class``), or a
    0.12 attribute dump without either (its class told by its attributes, see
    :func:`_unmarked_seed_type`).

    Lists that PyRIT stores as ``null`` when empty become ``[]``; ``metadata`` null becomes
    ``{}``; an objective's ``data_type`` is text. ``prompt_group_alias`` and
    ``is_jinja_template`` are not stored by PyRIT and stay in ``extra``. Returns
    ``(None, problems)`` without a string ``value``.
    """
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    value = r.text("value", required=True)
    r.raw("media")  # Redline's read output (download links); not client data

    seed_type = r.raw("seed_type")
    seed_class = r.raw("seed_class")
    if seed_type is None and seed_class is not None:
        seed_type = _SEED_CLASSES.get(seed_class)
        if seed_type is None:
            r.problem("seed_class", f"unknown seed class {seed_class!r}")
    if seed_type is None and seed_class is None:
        seed_type = _unmarked_seed_type(data)
    seed_type = r.choice("seed_type", SeedType, seed_type, default=SeedType.PROMPT)
    is_simulation = seed_type == SeedType.SIMULATED_CONVERSATION

    kwargs: dict[str, Any] = {}
    seed_id = r.uuid("id")
    if seed_id is not None:
        kwargs["id"] = seed_id
    general = r.raw("is_general_technique")
    if general is None:
        general = is_simulation
    elif not isinstance(general, bool):
        r.problem("is_general_technique", "must be true or false")
        general = False
    schema = r.raw("response_json_schema")
    if schema is not None and not isinstance(schema, Mapping):
        r.problem("response_json_schema", "must be an object")
        schema = None

    spec = SeedSpec(
        value=value or "",
        seed_type=seed_type,
        data_type=r.choice(
            "data_type", PromptDataType, r.raw("data_type"), default=PromptDataType.TEXT
        ),
        value_sha256=r.text("value_sha256"),
        name=r.text("name"),
        dataset_name=r.text("dataset_name"),
        harm_categories=r.strings("harm_categories", max_items=HARM_CATEGORIES_MAX_ITEMS),
        description=r.text("description"),
        authors=r.strings("authors"),
        groups=r.strings("groups"),
        source=r.text("source"),
        date_added=r.timestamp("date_added"),
        added_by=r.text("added_by"),
        metadata=r.mapping("metadata"),
        prompt_group_id=r.uuid("prompt_group_id"),
        sequence=r.integer("sequence") or 0,
        role=r.choice("role", ChatMessageRole, r.raw("role"), default=None),
        parameters=r.strings("parameters"),
        is_general_technique=general,
        response_json_schema=dict(schema) if schema is not None else None,
        num_turns=r.integer("num_turns", default=None, minimum=1),
        adversarial_chat_system_prompt_path=r.text("adversarial_chat_system_prompt_path"),
        simulated_target_system_prompt_path=r.text("simulated_target_system_prompt_path"),
        next_message_system_prompt_path=r.text("next_message_system_prompt_path"),
        pyrit_version=r.text("pyrit_version", default="") or "",
        **kwargs,
    )
    if seed_type != SeedType.PROMPT:
        # PyRIT discards these for objectives and simulated conversations (contract §8.6).
        spec.data_type = PromptDataType.TEXT
        spec.role = None
    if is_simulation and spec.num_turns is None:
        spec.num_turns = 3
    spec.extra = r.extra()
    if value is None:
        return None, problems
    return spec, problems


def normalize_seed_group(data: Any, path: str) -> tuple[NormalizedSeedGroup | None, list[Problem]]:
    """Normalise a ``SeedGroup`` dump ``{"seeds": [...]}`` (1.1.0) or a bare list of seeds.

    Redline's own read output adds ``id`` (the ``prompt_group_id``), ``kind`` and ``alias``.

    PyRIT's group rules (§8.5) are checked later, on the seeds as stored together.
    """
    if isinstance(data, list):
        data = {"seeds": data}
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    raw = r.raw("seeds")
    if not isinstance(raw, list) or not raw:
        r.problem("seeds", "a seed group needs a non-empty list of seeds")
        return None, problems
    seeds, paths = [], []
    for index, item in enumerate(raw):
        item_path = f"{r.at('seeds')}[{index}]"
        seed, seed_problems = normalize_seed(item, item_path)
        problems.extend(seed_problems)
        if seed is not None:
            seeds.append(seed)
            paths.append(item_path)
    group_id = r.uuid("id")
    if group_id is not None:
        for seed in seeds:
            if seed.prompt_group_id is None:
                seed.prompt_group_id = group_id
            elif seed.prompt_group_id != group_id:
                r.problem("id", f"differs from a seed's prompt_group_id {seed.prompt_group_id}")
    r.raw("kind")  # Redline's read output; derived from the seeds again on the way in
    alias = r.text("alias") or next(
        (s.extra.get("prompt_group_alias") for s in seeds if s.extra.get("prompt_group_alias")),
        None,
    )
    for key in r.extra():
        r.problem(key, "unknown seed group key")
    return NormalizedSeedGroup(seeds=seeds, alias=alias, path=path, seed_paths=paths), problems


def normalize_scenario_result(
    data: Any, path: str
) -> tuple[ScenarioResultSpec | None, list[Problem]]:
    """Normalise a 1.x ``ScenarioResult`` dump.

    The embedded ``attack_results`` (``{collection: [attack result dump, ...]}``) are for the
    caller to ingest as attack results, each attributed to the scenario and its collection
    (how PyRIT 1.x stores them). Run states are accepted in any case.
    """
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    name = r.text("scenario_name", required=True)
    scenario_identifier = r.identifier("scenario_identifier")
    if scenario_identifier is None and data.get("scenario_identifier") in (None, {}):
        r.problem("scenario_identifier", "is required")
    state = r.raw("scenario_run_state")
    if isinstance(state, str):
        state = state.upper()

    raw_results = r.raw("attack_results")
    if raw_results is not None:
        if not isinstance(raw_results, Mapping):
            r.problem("attack_results", "must be an object of lists of attack results")
        else:
            for collection, items in raw_results.items():
                if not isinstance(items, list):
                    r.problem(f"attack_results.{collection}", "must be a list")

    error_ids = r.raw("error_attack_result_ids")
    if error_ids is None:
        error_ids = []
    elif not isinstance(error_ids, list):
        r.problem("error_attack_result_ids", "must be a list")
        error_ids = []

    kwargs: dict[str, Any] = {}
    scenario_id = r.uuid("id")
    if scenario_id is not None:
        kwargs["id"] = scenario_id
    spec = ScenarioResultSpec(
        scenario_name=name or "",
        scenario_identifier=scenario_identifier,  # type: ignore[arg-type]  # None → not returned
        scenario_description=r.text("scenario_description"),
        scenario_version=r.integer("scenario_version", default=1) or 1,
        objective_target_identifier=r.identifier("objective_target_identifier"),
        objective_scorer_identifier=r.identifier("objective_scorer_identifier"),
        scenario_run_state=r.choice(
            "scenario_run_state", ScenarioRunState, state, default=ScenarioRunState.CREATED
        ),
        labels=r.labels("labels"),
        number_tries=r.integer("number_tries") or 0,
        creation_time=r.timestamp("creation_time"),
        completion_time=r.timestamp("completion_time"),
        display_group_map=r.mapping("display_group_map"),
        error_message=r.text("error_message"),
        error_type=r.text("error_type"),
        error_attack_result_ids=list(error_ids),
        metadata=r.mapping("metadata"),
        pyrit_version=r.text("pyrit_version", default="") or "",
        **kwargs,
    )
    spec.extra = r.extra()
    if name is None or scenario_identifier is None:
        return None, problems
    return spec, problems


#: Keys a dataset carries on the way out only (the read API's count of its seeds).
_DATASET_OUTPUT_ONLY = ("seed_count",)


def normalize_seed_dataset(data: Any, path: str) -> tuple[SeedDatasetSpec | None, list[Problem]]:
    """A seed dataset: ``dataset_name`` and PyRIT's dataset-level keys (``name`` is the default
    seed name), as the read API and exports write it; unknown keys go to ``extra``."""
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    name = r.nonblank("dataset_name")
    defaults: dict[str, Any] = {}
    for key, column in DATASET_DEFAULTS.items():
        if key in ("harm_categories", "authors", "groups"):
            defaults[column] = r.strings(key)
        elif key == "date_added":
            defaults[column] = r.timestamp(key)
        elif key == "seed_type":
            defaults[column] = r.choice(key, SeedType, r.raw(key), default=None)
        elif key == "data_type":
            defaults[column] = r.choice(key, PromptDataType, r.raw(key), default=None)
        else:
            defaults[column] = r.text(key)
    for key in _DATASET_OUTPUT_ONLY:
        r.raw(key)
    spec = SeedDatasetSpec(name=name or "", defaults=defaults, extra=r.extra())
    return (spec if name is not None else None), problems
