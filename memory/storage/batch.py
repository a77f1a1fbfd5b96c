"""The typed batch the storage layer writes: what a normaliser produces from PyRIT input.

Each item is a spec (``memory.storage.specs``, ``seeds.specs``) plus where it came from (its
path in the input), so problems and per-item statuses name the item the caller sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.storage.specs import (
    AttackResultSpec,
    PieceSpec,
    ScenarioResultSpec,
    ScoreSpec,
)
from redteam.core.choices import PromptDataType
from redteam.core.errors import printable
from redteam.core.identifiers import ComponentIdentifier
from seeds.specs import SeedSpec

#: The keys that carry an item's own id in the client's input, per kind (default ``id``).
_ID_KEYS = {
    "attack_result": ("attack_result_id", "id"),
    "conversation": ("conversation_id",),
    "seed_group": ("id", "prompt_group_id"),
    "seed_dataset": ("dataset_name",),
    "pyrit_record": ("pk",),
}


@dataclass(kw_only=True)
class NormalizedSeedGroup:
    """A ``SeedGroup`` dump: its seeds in the order given, and where it was found."""

    seeds: list[SeedSpec]
    alias: str | None = None
    path: str = ""
    seed_paths: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class SeedDatasetSpec:
    """A seed dataset's PyRIT defaults (the top-level keys of a YAML file), by its name."""

    name: str
    defaults: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class NormalizedPiece:
    """One piece with the message-level fields PieceSpec does not carry.

    ``scores`` are the 0.x scores embedded in the piece dict; ``path`` is where it was found.
    """

    conversation_id: str
    sequence: int
    role: str
    spec: PieceSpec
    scores: list[ScoreSpec] = field(default_factory=list)
    path: str = ""


@dataclass(kw_only=True)
class NormalizedMessage:
    """The pieces of one (conversation_id, sequence), in source order (contract §3)."""

    conversation_id: str
    sequence: int
    role: str
    pieces: list[NormalizedPiece]

    @property
    def piece_specs(self) -> list[PieceSpec]:
        """The pieces' specs, ready for ``memory.storage.services.message_add``."""
        return [piece.spec for piece in self.pieces]


@dataclass(kw_only=True)
class NormalizedConversation:
    """A PyRIT 1.1.0 ``Conversation`` entity (contract §4.3)."""

    conversation_id: str
    target_identifier: ComponentIdentifier | None = None
    retries: list[dict[str, Any]] = field(default_factory=list)
    pyrit_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class ScorableContentSpec:
    """Loose content a 1.1.0 score judged (``ScorableContentEntries``, contract §6.3)."""

    id: uuid.UUID
    value: str
    data_type: str = PromptDataType.TEXT
    value_sha256: str | None = None
    timestamp: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class PyritRecordSpec:
    """One row of a PyRIT table Redline does not model, kept verbatim (``PyritRecord``)."""

    table: str
    pk: str
    row: dict[str, Any]
    pyrit_version: str = ""
    alembic_revision: str = ""


@dataclass(frozen=True)
class ItemRef:
    """One item of the payload: its kind, where it is, and the id the client gave it."""

    kind: str
    path: str
    id: str | None


@dataclass(kw_only=True)
class NormalizedBatch:
    """Everything found in one payload.

        ``pieces`` in source order; ``messages`` groups them by (conversation_id, sequence) in
        order of first appearance; ``scores`` holds top-level, embedded and ``last_score`` scores
        deduplicated by id (first occurrence wins; a differing duplicate is a problem); attack
        results likewise, including those embedded in scenario results. ``seeds`` holds every seed
        (top-level and inside groups) once; ``seed_groups`` the groups as given; ``pyrit_records``
    the verbatim rows of PyRIT tables Redline does not model. ``items`` lists
        every item with its path and client id, for per-item reports. ``meta`` holds export-level
        keys (``export_format``, ``pyrit_version``, ``note``) and any unknown top-level key.
    """

    pieces: list[NormalizedPiece] = field(default_factory=list)
    messages: list[NormalizedMessage] = field(default_factory=list)
    conversations: list[NormalizedConversation] = field(default_factory=list)
    scores: list[ScoreSpec] = field(default_factory=list)
    attack_results: list[AttackResultSpec] = field(default_factory=list)
    seeds: list[SeedSpec] = field(default_factory=list)
    seed_groups: list[NormalizedSeedGroup] = field(default_factory=list)
    seed_datasets: list[SeedDatasetSpec] = field(default_factory=list)
    scenario_results: list[ScenarioResultSpec] = field(default_factory=list)
    scorable_contents: list[ScorableContentSpec] = field(default_factory=list)
    pyrit_records: list[PyritRecordSpec] = field(default_factory=list)
    items: dict[str, ItemRef] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    _paths: dict[int, str] = field(default_factory=dict, repr=False)

    def path_of(self, spec: object) -> str:
        """Where ``spec`` (a spec object of this batch) was found in the payload."""
        return self._paths.get(id(spec), "")

    def item_at(self, path: str) -> ItemRef | None:
        """The innermost item containing ``path`` (e.g. ``message_pieces[3].role``)."""
        while True:
            item = self.items.get(path)
            if item is not None:
                return item
            cut = max(path.rfind("."), path.rfind("["))
            if cut < 0:
                return None
            path = path[:cut]

    def register(self, kind: str, path: str, raw: Any, spec: object | None = None) -> None:
        """Record an item (its client id taken from ``raw``) and, if given, its spec's path."""
        client_id = None
        if isinstance(raw, Mapping):
            for key in _ID_KEYS.get(kind, ("id",)):
                if raw.get(key) is not None:
                    client_id = printable(str(raw[key]))
                    break
        self.items[path] = ItemRef(kind, path, client_id)
        if spec is not None:
            self._paths[id(spec)] = path
