"""PyRIT's seed and dataset fields, listed once (contract §8.1 – §8.4, §12).

Every list of seed fields the app needs — what the API dumps and in which order, what the YAML
reader understands, what an upsert compares, what a curator's change is, what an export reads —
is derived here from one catalogue in PyRIT 1.1.0's ``model_dump`` order, so a field added to
PyRIT is added in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from redteam.core.choices import SeedType

PROMPT = SeedType.PROMPT
OBJECTIVE = SeedType.OBJECTIVE
SIMULATED = SeedType.SIMULATED_CONVERSATION
ALL_TYPES = frozenset({PROMPT, OBJECTIVE, SIMULATED})


@dataclass(frozen=True)
class SeedField:
    """One field of PyRIT's seed classes and how Redline keeps it."""

    name: str
    #: The seed types whose ``model_dump`` has the field.
    types: frozenset[str] = ALL_TYPES
    #: Its ``Seed`` column, when it has one of another name (``""``: none).
    column: str | None = None
    #: A list of strings.
    is_list: bool = False
    #: A curator's edit or a re-import of the same seed may change it.
    curated: bool = True
    #: Only in PyRIT's JSON dumps, never in its YAML files.
    json_only: bool = False

    @property
    def stored_as(self) -> str:
        """The ``Seed`` column holding the field (``""`` when none does)."""
        return self.name if self.column is None else self.column


#: PyRIT's seed fields, in PyRIT 1.1.0's dump order.
SEED_CATALOGUE: tuple[SeedField, ...] = (
    SeedField("value", curated=False),
    SeedField("value_sha256", curated=False),
    SeedField("id", curated=False, json_only=True, column=""),
    SeedField("name"),
    SeedField("dataset_name", curated=False),
    SeedField("harm_categories", is_list=True),
    SeedField("description"),
    SeedField("authors", is_list=True),
    SeedField("groups", is_list=True),
    SeedField("source"),
    SeedField("date_added"),
    SeedField("added_by"),
    SeedField("metadata"),
    SeedField("prompt_group_id", curated=False, column="group_id"),
    SeedField("prompt_group_alias", curated=False, column=""),
    SeedField("is_general_technique"),
    SeedField("is_jinja_template", curated=False, json_only=True, column=""),
    SeedField("data_type"),
    SeedField("seed_type", curated=False),
    SeedField("response_json_schema", types=frozenset({PROMPT})),
    SeedField("role", types=frozenset({PROMPT})),
    SeedField("sequence", types=frozenset({PROMPT, SIMULATED})),
    SeedField("parameters", types=frozenset({PROMPT}), is_list=True),
    SeedField("num_turns", types=frozenset({SIMULATED})),
    SeedField("adversarial_chat_system_prompt_path", types=frozenset({SIMULATED})),
    SeedField("simulated_target_system_prompt_path", types=frozenset({SIMULATED})),
    SeedField("next_message_system_prompt_path", types=frozenset({SIMULATED})),
    SeedField("pyrit_version"),
)

#: Redline's own seed columns beside PyRIT's fields: the media link key, the curated dataset,
#: the position in the group, and the client's unknown keys.
REDLINE_SEED_COLUMNS = ("media_key", "dataset_id", "position", "extra")


def _names(fields: tuple[SeedField, ...] | list[SeedField]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f.name for f in fields))


#: Every field name, in dump order.
SEED_FIELD_NAMES = _names(SEED_CATALOGUE)
#: Fields one seed type has and the others do not, in dump order (the API's typed keys).
PROMPT_ONLY = _names([f for f in SEED_CATALOGUE if PROMPT in f.types and f.types != ALL_TYPES])
SIMULATED_ONLY = _names(
    [f for f in SEED_CATALOGUE if SIMULATED in f.types and f.types != ALL_TYPES]
)
#: The simulated conversation's own settings.
SIMULATION_FIELDS = _names([f for f in SEED_CATALOGUE if f.types == frozenset({SIMULATED})])
#: List fields every seed type has.
COMMON_LIST_FIELDS = _names([f for f in SEED_CATALOGUE if f.is_list and f.types == ALL_TYPES])
#: Keys of PyRIT's JSON dumps that have no place in its YAML files (``seed_class``: 0.12's
#: class marker; ``media``: Redline's link to stored bytes).
JSON_ONLY_KEYS = (*_names([f for f in SEED_CATALOGUE if f.json_only]), "seed_class", "media")
#: The seed keys of PyRIT's YAML files (``is_objective``: the 0.10-era spelling of an
#: objective seed).
YAML_SEED_KEYS = (*_names([f for f in SEED_CATALOGUE if not f.json_only]), "is_objective")
#: The stored columns a spec decides (compared to tell whether an upsert changes a seed).
SEED_COLUMNS = (
    *(f.stored_as for f in SEED_CATALOGUE if f.stored_as),
    *REDLINE_SEED_COLUMNS,
)
#: Fields a curator's bulk edits and the YAML importer compare to call a seed "changed".
CURATED_FIELDS = (*_names([f for f in SEED_CATALOGUE if f.curated]), "extra")
#: The columns an export reads: every PyRIT field stored under its own name, and ``extra``.
EXPORTED_COLUMNS = (
    *(f.name for f in SEED_CATALOGUE if f.stored_as == f.name and f.name != "id"),
    "extra",
)


#: PyRIT's dataset-level YAML keys -> the ``SeedDataset`` column each sets (PyRIT's ``name``
#: is the default *seed* name of the file).
DATASET_DEFAULTS: dict[str, str] = {
    "name": "default_seed_name",
    "description": "description",
    "harm_categories": "harm_categories",
    "authors": "authors",
    "groups": "groups",
    "source": "source",
    "data_type": "data_type",
    "seed_type": "seed_type",
    "date_added": "date_added",
    "added_by": "added_by",
}
#: The dataset columns a YAML file's top level sets.
DATASET_DEFAULT_FIELDS = tuple(DATASET_DEFAULTS.values())
#: The top-level keys of PyRIT's dataset files (``prompts``: the older name of ``seeds``).
YAML_DATASET_KEYS = ("dataset_name", *DATASET_DEFAULTS, "is_objective", "seeds", "prompts")
