"""The seed part of a batch: seeds upserted by id, groups checked and stored as a whole.

Seeds are grouped by ``prompt_group_id``. A group is checked by PyRIT's rules (contract §8.5) on
the union of its stored seeds and the incoming ones, so a batch can add to a group but never
leave it invalid. Seeds name their dataset by ``dataset_name``; a dataset row is created for a
new name so curators find it in the admin.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

from django.contrib.auth.base_user import AbstractBaseUser

from memory.models.media_links import MediaIndex
from memory.storage.batch import NormalizedSeedGroup, SeedDatasetSpec
from redteam.core.choices import is_media_value
from redteam.core.errors import Problem
from seeds.fields import SEED_COLUMNS
from seeds.models import Seed, SeedDataset, SeedGroup
from seeds.rules import group_problems, normalise_group
from seeds.services import (
    group_kind,
    seed_dataset_fill_defaults,
    seed_dataset_save,
    seed_datasets_ensure,
    seed_groups_write,
    seed_instance,
    seed_problems,
    seed_rows_write,
    spec_from_seed,
)
from seeds.specs import SeedSpec

CREATED, UPDATED, UNCHANGED = "created", "updated", "unchanged"


class SeedPlan:
    """Checks and writes the seeds, seed groups and seed datasets of one batch."""

    def __init__(
        self,
        *,
        seeds: list[SeedSpec],
        groups: list[NormalizedSeedGroup],
        path_of: Callable[[object], str],
        datasets: list[SeedDatasetSpec] | None = None,
        actor: AbstractBaseUser | None = None,
    ) -> None:
        self.seeds = seeds
        #: Who the history rows of written seeds, groups and datasets name.
        self.actor = actor
        self.groups = groups
        self.datasets = datasets or []
        self.path_of = path_of
        self.problems: list[Problem] = []
        self.status: dict[str, str] = {}
        #: Datasets created for seeds' ``dataset_name`` alone (no item of their own to count)
        self.implicit_datasets = 0

    def check(self) -> None:
        """Seed rules per seed, group rules per group (with its stored members)."""
        if not self.seeds:
            return
        for spec in self.seeds:
            self.problems.extend(seed_problems(spec, self.path_of(spec)))
        self.existing = {s.id: s for s in Seed.objects.filter(id__in=[s.id for s in self.seeds])}
        group_ids = {s.prompt_group_id for s in self.seeds if s.prompt_group_id}
        stored_members: dict[uuid.UUID, list[Seed]] = defaultdict(list)
        if group_ids:
            for seed in Seed.objects.filter(group_id__in=group_ids):
                stored_members[seed.group_id].append(seed)
        self.existing_groups = set(
            SeedGroup.objects.filter(id__in=group_ids).values_list("id", flat=True)
            if group_ids
            else []
        )
        incoming: dict[uuid.UUID, list[SeedSpec]] = defaultdict(list)
        for spec in self.seeds:
            if spec.prompt_group_id:
                incoming[spec.prompt_group_id].append(spec)
        self.members: dict[uuid.UUID, list[SeedSpec]] = {}
        for group_id, specs in incoming.items():
            ours = {s.id for s in specs}
            stored = [spec_from_seed(s) for s in stored_members[group_id] if s.id not in ours]
            union = stored + specs
            # a stored seed moved out of this group is checked with its new group only
            self.members[group_id] = union
            for problem in group_problems([replace(s) for s in union]):
                where, _, rest = problem.path.partition(".")
                index = int(where[6:-1]) if where.startswith("seeds[") else None
                if index is not None and union[index].id in ours:
                    self.problems.append(
                        Problem(f"{self.path_of(union[index])}.{rest}", problem.message)
                    )
                else:
                    for spec in specs:
                        self.problems.append(
                            Problem(
                                self.path_of(spec),
                                f"seed group {group_id}: {problem.message}",
                            )
                        )

    def write(self) -> None:
        """Create or update datasets, groups and seeds (a handful of bulk statements)."""
        if not (self.seeds or self.datasets):
            return
        datasets = self._datasets()
        self._dataset_defaults(datasets)
        if not self.seeds:
            return
        groups = self._groups()
        media = MediaIndex.for_values(
            (s.value, s.data_type, s.value_sha256)
            for s in self.seeds
            if s.media is None and is_media_value(s.data_type, s.value)
        )
        positions: dict[uuid.UUID, int] = {}
        for union in self.members.values():
            for position, spec in enumerate(normalise_group(union)):
                positions[spec.id] = position
        creates, updates = [], []
        for spec in self.seeds:
            path = self.path_of(spec)
            dataset_name = spec.dataset_name
            dataset = datasets.get(dataset_name) if dataset_name else None
            blob = None
            if spec.media is None and is_media_value(spec.data_type, spec.value):
                blob = media.find(spec.value, spec.value_sha256)
            row = seed_instance(
                spec,
                dataset,
                groups.get(spec.prompt_group_id) if spec.prompt_group_id else None,
                blob=blob,
            )
            row.position = positions.get(spec.id, 0)
            existing = self.existing.get(spec.id)
            if existing is None:
                creates.append(row)
                self.status[path] = CREATED
                continue
            if spec.date_added is None:
                row.date_added = existing.date_added
            if row.media_id is None:
                row.media_id = existing.media_id
            if any(getattr(existing, f) != getattr(row, f) for f in SEED_COLUMNS):
                for name in (*SEED_COLUMNS, "media_id"):
                    setattr(existing, name, getattr(row, name))
                updates.append(existing)
                self.status[path] = UPDATED
            else:
                self.status[path] = UNCHANGED
        # The same row building and history recording as every other seed write.
        seed_rows_write(
            creates=creates,
            updates=updates,
            update_fields=[f.removesuffix("_id") for f in SEED_COLUMNS] + ["media"],
            actor=self.actor,
        )
        self._group_status()

    def _datasets(self) -> dict[str, SeedDataset]:
        names = {s.dataset_name for s in self.seeds if s.dataset_name}
        sent = {d.name for d in self.datasets}
        found = seed_datasets_ensure(names=names | sent, actor=self.actor)
        self.implicit_datasets = sum(
            1
            for name, dataset in found.items()
            if name not in sent and getattr(dataset, "_created", False)
        )
        return found

    def _dataset_defaults(self, datasets: dict[str, SeedDataset]) -> None:
        """A sent dataset's defaults: all of them on a new dataset, the missing ones on a
        stored one (a curator's values are never overwritten); its unknown keys are kept."""
        for spec in self.datasets:
            dataset = datasets[spec.name]
            new = getattr(dataset, "_created", False)
            changed = seed_dataset_fill_defaults(
                dataset=dataset, defaults=spec.defaults, new=new, actor=self.actor
            )
            extra = {**spec.extra, **(dataset.extra or {})}
            if extra != (dataset.extra or {}):
                dataset.extra = extra
                seed_dataset_save(dataset=dataset, actor=self.actor)
                changed = True
            path = self.path_of(spec)
            self.status[path] = CREATED if new else UPDATED if changed else UNCHANGED

    def _groups(self) -> dict[uuid.UUID, SeedGroup]:
        aliases = {}
        for group in self.groups:
            for spec in group.seeds:
                if spec.prompt_group_id and group.alias:
                    aliases[spec.prompt_group_id] = group.alias
        for spec in self.seeds:
            # Read output names each seed's group alias; a bare seed list carries it that way.
            alias = spec.extra.get("prompt_group_alias")
            if spec.prompt_group_id and isinstance(alias, str) and alias:
                aliases.setdefault(spec.prompt_group_id, alias)
        rows: dict[uuid.UUID, SeedGroup] = {}
        creates = []
        for group_id, union in self.members.items():
            row = SeedGroup(id=group_id, kind=group_kind(union), alias=aliases.get(group_id))
            rows[group_id] = row
            if group_id not in self.existing_groups:
                creates.append(row)
        seed_groups_write(creates=creates, actor=self.actor)
        stale = [row for group_id, row in rows.items() if group_id in self.existing_groups]
        if stale:
            # kind follows the members; an alias is only ever added
            current = {g.id: g for g in SeedGroup.objects.filter(id__in=[g.id for g in stale])}
            changed = []
            for row in stale:
                stored = current[row.id]
                alias = row.alias = stored.alias or row.alias
                if stored.kind != row.kind or stored.alias != alias:
                    stored.kind, stored.alias = row.kind, alias
                    changed.append(stored)
            seed_groups_write(updates=changed, actor=self.actor)
        self._drop_stored_aliases(rows)
        return rows

    def _drop_stored_aliases(self, rows: dict[uuid.UUID, SeedGroup]) -> None:
        """A seed's ``prompt_group_alias`` that its group now holds is not kept twice; one
        that differs from the group's (a second alias for one group) stays in ``extra``."""
        for spec in self.seeds:
            group = rows.get(spec.prompt_group_id) if spec.prompt_group_id else None
            if group is not None and spec.extra.get("prompt_group_alias") == group.alias:
                spec.extra = {k: v for k, v in spec.extra.items() if k != "prompt_group_alias"}

    def _group_status(self) -> None:
        for group in self.groups:
            statuses = {self.status.get(self.path_of(s)) for s in group.seeds}
            # a group's seeds may have been counted at their top-level copy
            ids = {s.id for s in group.seeds}
            statuses |= {self.status.get(self.path_of(s)) for s in self.seeds if s.id in ids}
            statuses.discard(None)
            if group.path:
                if statuses == {CREATED} and not any(
                    s.prompt_group_id in self.existing_groups for s in group.seeds
                ):
                    self.status[group.path] = CREATED
                elif statuses - {UNCHANGED}:
                    self.status[group.path] = UPDATED
                else:
                    self.status[group.path] = UNCHANGED
