"""YAML export of a dataset or a selection of seeds, in PyRIT's dataset-file format (contract §12).

Seeds are read in two queries (seeds with their groups; group sizes), grouped as PyRIT groups
them, and written by :func:`seeds.yaml_io.export_seed_file`. A group gets its alias back as
``prompt_group_alias`` (a fresh alias when it has none, a suffix when two groups of the file
share one), so PyRIT's loader rebuilds the same groups.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from seeds.fields import EXPORTED_COLUMNS
from seeds.models import Seed, SeedDataset
from seeds.yaml_io import export_seed_file


def export_filename(name: str) -> str:
    """A safe download name for a dataset: ``<name>.prompt`` (PyRIT's dataset extension)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "seeds"
    return f"{stem}.prompt"


def _ordered(seeds: QuerySet[Seed]) -> list[Seed]:
    """Ungrouped seeds in the order they were stored; each group's seeds together, in PyRIT's
    canonical order, where the group's first seed was."""
    rows = list(
        # Whatever joins the caller's queryset had (the admin's list), only the group's here.
        seeds.select_related(None)
        .select_related("group")
        .order_by("created_at", "id")
        .only(*EXPORTED_COLUMNS, "position", "group")
    )
    by_group: dict[uuid.UUID, list[Seed]] = {}
    for seed in rows:
        if seed.group_id is not None:
            by_group.setdefault(seed.group_id, []).append(seed)
    rank = {"objective": 0, "simulated_conversation": 1, "prompt": 2}
    out: list[Seed] = []
    done: set[uuid.UUID] = set()
    for seed in rows:
        if seed.group_id is None:
            out.append(seed)
        elif seed.group_id not in done:
            done.add(seed.group_id)
            members = by_group[seed.group_id]
            members.sort(key=lambda s: (rank[s.seed_type], s.sequence, s.position))
            out.extend(members)
    return out


def _aliases(seeds: Iterable[Seed]) -> dict[uuid.UUID, str]:
    """A distinct alias per group of the file, its own where it has one."""
    used: set[str] = set()
    aliases: dict[uuid.UUID, str] = {}
    for seed in seeds:
        if seed.group_id is None or seed.group_id in aliases:
            continue
        base = (seed.group.alias if seed.group else None) or f"group-{str(seed.group_id)[:8]}"
        alias, n = base, 2
        while alias in used:
            alias, n = f"{base}-{n}", n + 1
        used.add(alias)
        aliases[seed.group_id] = alias
    return aliases


def seed_dicts(seeds: QuerySet[Seed]) -> list[dict[str, Any]]:
    """The export's seed mappings, grouped and ordered."""
    ordered = _ordered(seeds)
    aliases = _aliases(ordered)
    out = []
    for seed in ordered:
        item = {name: getattr(seed, name) for name in EXPORTED_COLUMNS}
        item["prompt_group_alias"] = aliases.get(seed.group_id) if seed.group_id else None
        out.append(item)
    return out


def export_dataset(dataset: SeedDataset) -> str:
    """The whole dataset as one PyRIT dataset file."""
    return export_seed_file(
        dataset_name=dataset.name,
        description=dataset.description,
        seeds=seed_dicts(Seed.objects.filter(dataset=dataset)),
    )


def export_seeds(seeds: QuerySet[Seed]) -> str:
    """A selection of seeds as one PyRIT dataset file (named after their dataset if shared).

    Groups are exported whole only as far as they are selected.
    """
    names = set(seeds.order_by().values_list("dataset_name", flat=True).distinct()[:2])
    name = names.pop() if len(names) == 1 else None
    return export_seed_file(dataset_name=name, seeds=seed_dicts(seeds))
