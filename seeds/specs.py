"""Typed inputs of the seeds services (no Django model imports)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from redteam.core.choices import PromptDataType, SeedType


@dataclass(kw_only=True)
class SeedSpec:
    """One seed with PyRIT's fields (contract §8.1 – §8.4)."""

    value: str
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    seed_type: str = SeedType.PROMPT
    data_type: str = PromptDataType.TEXT
    value_sha256: str | None = None
    name: str | None = None
    dataset_name: str | None = None
    harm_categories: list[str] = field(default_factory=list)
    description: str | None = None
    authors: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    source: str | None = None
    date_added: datetime | None = None
    added_by: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    prompt_group_id: uuid.UUID | None = None
    sequence: int = 0
    role: str | None = None
    parameters: list[str] = field(default_factory=list)
    is_general_technique: bool = False
    response_json_schema: dict[str, Any] | None = None
    num_turns: int | None = None
    adversarial_chat_system_prompt_path: str | None = None
    simulated_target_system_prompt_path: str | None = None
    next_message_system_prompt_path: str | None = None
    pyrit_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # The bytes of a media seed, when the caller has them.
    media: bytes | None = None
