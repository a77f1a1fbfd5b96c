"""YAML import: plan (preview) and commit, shared by the admin upload page and ``import_seeds``.

A plan compares every parsed seed with the seeds stored in its dataset and gives it a status:

* ``new`` — the dataset has no seed with this content;
* ``identical`` — it has one with the same content and the same fields: skipped;
* ``changed`` — it has one with the same content but other fields (harm categories,
  description, metadata…): committing updates the stored seed;
* ``invalid`` — the seed (or its group, or its file) breaks a rule: never written.

"The same content" is the seed type plus the value's hash, within the same group context
(see :func:`seeds.services.content_key`): an ungrouped seed matches an ungrouped seed; a
``prompt_group_alias`` group matches a stored group of the dataset whose members have exactly
the same contents, sequences and roles. Fields a file does not set (``date_added``,
``added_by``) never make a seed "changed".
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from django.db import transaction

from redteam.core.choices import SeedType
from seeds.fields import CURATED_FIELDS, DATASET_DEFAULTS
from seeds.models import Seed, SeedDataset, SeedGroup
from seeds.rules import group_problems, normalise_group
from seeds.services import (
    content_key,
    group_kind,
    seed_dataset_fill_defaults,
    seed_datasets_ensure,
    seed_groups_write,
    seed_instance,
    seed_problems,
    seed_rows_write,
)
from seeds.specs import SeedSpec
from seeds.yaml_io import ParsedFile, ParsedSeed, YamlIssue, parse_seed_file

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

NEW, IDENTICAL, CHANGED, INVALID = "new", "identical", "changed", "invalid"
STATUSES = (NEW, IDENTICAL, CHANGED, INVALID)

#: Fields compared only when the file sets them (else PyRIT would fill "now" / the user).
_ONLY_WHEN_GIVEN = ("date_added", "added_by")


@dataclass
class PlannedSeed:
    """One seed of a file and what committing would do with it."""

    parsed: ParsedSeed
    status: str
    existing: Seed | None = None
    changes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def spec(self) -> SeedSpec:
        return self.parsed.spec


@dataclass
class PlannedFile:
    """One file's plan: its dataset, its seeds' statuses and the file-level issues."""

    parsed: ParsedFile
    seeds: list[PlannedSeed] = field(default_factory=list)
    dataset_exists: bool = False

    @property
    def name(self) -> str:
        return self.parsed.name

    @property
    def problems(self) -> list[YamlIssue]:
        return self.parsed.problems

    @property
    def warnings(self) -> list[YamlIssue]:
        out = list(self.parsed.warnings)
        for seed in self.parsed.seeds:
            out.extend(seed.warnings)
        return out

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(s.status for s in self.seeds)
        return {status: counted.get(status, 0) for status in STATUSES}

    @property
    def unresolved_media(self) -> int:
        return sum(s.parsed.unresolved_media for s in self.seeds if s.status != INVALID)


@dataclass
class ImportPlan:
    """The preview of an upload: one plan per file."""

    files: list[PlannedFile]

    @property
    def counts(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for planned in self.files:
            total.update(planned.counts)
        return {status: total.get(status, 0) for status in STATUSES}

    @property
    def has_problems(self) -> bool:
        return any(f.problems for f in self.files) or self.counts[INVALID] > 0

    @property
    def writes(self) -> int:
        counts = self.counts
        return counts[NEW] + counts[CHANGED]

    def fingerprint(self) -> list[tuple[str, int, str]]:
        """What the plan would do, to tell whether it changed between preview and commit."""
        return [(f.name, s.parsed.index, s.status) for f in self.files for s in f.seeds]


@dataclass
class ImportResult:
    """What a commit wrote."""

    created: int = 0
    updated: int = 0
    skipped: int = 0
    invalid: int = 0
    groups: int = 0
    datasets: list[str] = field(default_factory=list)


# --- planning -------------------------------------------------------------------------------------


def import_plan(
    *,
    files: Sequence[tuple[str, bytes | str]],
    default_dataset: str | None = None,
    added_by: str | None = None,
) -> ImportPlan:
    """Parse ``files`` (``(name, content)``) and compare them with the database (no writes)."""
    parsed = [
        parse_seed_file(
            content, name=name, default_dataset=default_dataset or None, added_by=added_by
        )
        for name, content in files
    ]
    return _plan(parsed)


def _plan(parsed_files: Sequence[ParsedFile]) -> ImportPlan:
    names = {p.dataset_name for p in parsed_files if p.dataset_name}
    index = _StoredIndex.load(names)
    plans = []
    for parsed in parsed_files:
        plan = PlannedFile(parsed=parsed, dataset_exists=parsed.dataset_name in index.datasets)
        plans.append(plan)
        if parsed.problems:
            continue
        groups = parsed.groups()
        for seed in parsed.seeds:
            if seed.alias is None:
                plan.seeds.append(index.plan_single(parsed.dataset_name, seed))
        for members in groups.values():
            plan.seeds.extend(index.plan_group(parsed.dataset_name, members))
        plan.seeds.sort(key=lambda s: s.parsed.index)
    return ImportPlan(files=plans)


def _seed_problems(seed: ParsedSeed) -> list[str]:
    """The file's own problems with the seed, else those of the services' seed rules."""
    if seed.problems:
        return [str(p) for p in seed.problems]
    where = f"seeds[{seed.index}]"
    return [
        str(YamlIssue(seed.file, seed.line, p.path, p.message))
        for p in seed_problems(seed.spec, where)
    ]


def _differences(spec: SeedSpec, stored: Seed, explicit: Iterable[str]) -> list[str]:
    given = set(explicit)
    changes = []
    for name in CURATED_FIELDS:
        if name in _ONLY_WHEN_GIVEN and name not in given:
            continue
        new, old = getattr(spec, name), getattr(stored, name)
        if name in ("harm_categories", "authors", "groups", "parameters"):
            new, old = list(new or []), list(old or [])
        if new != old:
            changes.append(name)
    return changes


class _StoredIndex:
    """The stored seeds of the datasets an upload touches, keyed by content (one query).

    Several stored seeds (or groups) may share a content key: a file may repeat a value with
    other fields (the same trigger text under two ``metadata`` families), and PyRIT stores
    both. Each stored seed answers for at most one seed of the upload, and a seed of the
    upload is matched first to a stored seed it repeats exactly, so a re-import is identical.
    """

    def __init__(self, datasets: dict[str, SeedDataset], seeds: list[Seed]) -> None:
        self.datasets = datasets
        self.singles: dict[tuple[str, tuple[str, str]], list[Seed]] = defaultdict(list)
        members: dict[uuid.UUID, list[Seed]] = defaultdict(list)
        # Keyed by the dataset a seed is filed in (what a plan looks up), not by the
        # ``dataset_name`` it carries: a file's seeds may name another dataset than the file.
        for seed in seeds:
            if seed.group_id is None:
                key = content_key(seed.seed_type, seed.data_type, seed.value, seed.value_sha256)
                self.singles[(seed.dataset.name, key)].append(seed)
            else:
                members[seed.group_id].append(seed)
        self.groups: dict[tuple[str, tuple], list[list[Seed]]] = defaultdict(list)
        for group_members in members.values():
            name = group_members[0].dataset.name
            self.groups[(name, _signature(group_members))].append(group_members)
        # Stored seeds and groups already matched by a seed of this upload.
        self.claimed: set[uuid.UUID] = set()
        self.claimed_groups: set[uuid.UUID] = set()
        # Seeds and groups of this upload planned so far (new, changed or identical).
        self.seen_singles: dict[tuple[str | None, tuple[str, str]], list[SeedSpec]] = defaultdict(
            list
        )
        self.seen_groups: dict[tuple[str | None, tuple], list[list[SeedSpec]]] = defaultdict(list)

    @classmethod
    def load(cls, names: set[str]) -> _StoredIndex:
        datasets = {d.name: d for d in SeedDataset.objects.filter(name__in=names)}
        seeds = (
            list(
                Seed.objects.filter(dataset__in=datasets.values())
                .select_related("dataset")
                .order_by("created_at", "id")
            )
            if datasets
            else []
        )
        return cls(datasets, seeds)

    def plan_single(self, dataset: str | None, seed: ParsedSeed) -> PlannedSeed:
        problems = _seed_problems(seed)
        if problems:
            return PlannedSeed(parsed=seed, status=INVALID, problems=problems)
        spec = seed.spec
        key = (dataset, content_key(spec.seed_type, spec.data_type, spec.value, spec.value_sha256))
        stored = self.singles.get(key, []) if dataset else []
        candidates = [s for s in stored if s.pk not in self.claimed]
        explicit = _explicit(seed)
        seen = self.seen_singles[key]
        exact = next((s for s in candidates if not _differences(spec, s, explicit)), None)
        if exact is None and any(not _differences(spec, other, CURATED_FIELDS) for other in seen):
            # The same seed twice in this upload: nothing to add (PyRIT keeps one per dataset).
            return PlannedSeed(
                parsed=seed, status=IDENTICAL, changes=["repeats a seed of this upload"]
            )
        seen.append(spec)
        match = exact or (candidates[0] if candidates else None)
        if match is None:
            return PlannedSeed(parsed=seed, status=NEW)
        self.claimed.add(match.pk)
        changes = _differences(spec, match, explicit)
        return PlannedSeed(
            parsed=seed, status=CHANGED if changes else IDENTICAL, existing=match, changes=changes
        )

    def plan_group(self, dataset: str | None, members: list[ParsedSeed]) -> list[PlannedSeed]:
        problems = {id(m): _seed_problems(m) for m in members}
        specs = [replace(m.spec, prompt_group_id=None) for m in members]
        first = members[0]
        shared = [
            str(
                YamlIssue(
                    first.file, first.line, "prompt_group_alias", f"{first.alias!r}: {p.message}"
                )
            )
            for p in group_problems(specs)
        ]
        if shared or any(problems.values()):
            return [
                PlannedSeed(parsed=m, status=INVALID, problems=problems[id(m)] + shared)
                for m in members
            ]
        ordered = normalise_group([replace(m.spec) for m in members])
        by_id = {m.spec.id: m for m in members}
        signature = _signature(ordered)
        specs_sorted = sorted(ordered, key=_member_key)
        stored = self.groups.get((dataset, signature), []) if dataset else []
        candidates = [g for g in stored if g[0].group_id not in self.claimed_groups]
        seen = self.seen_groups[(dataset, signature)]

        def changes_against(other: Sequence[Seed | SeedSpec], *, exact: bool) -> list[list[str]]:
            other_sorted = sorted(other, key=_member_key)
            return [
                _differences(spec, old, CURATED_FIELDS if exact else _explicit(by_id[spec.id]))
                for spec, old in zip(specs_sorted, other_sorted, strict=True)
            ]

        exact = next((g for g in candidates if not any(changes_against(g, exact=False))), None)
        if exact is None and any(not any(changes_against(g, exact=True)) for g in seen):
            return [
                PlannedSeed(parsed=m, status=IDENTICAL, changes=["repeats a group of this upload"])
                for m in members
            ]
        seen.append(specs_sorted)
        match = exact or (candidates[0] if candidates else None)
        if match is None:
            return [PlannedSeed(parsed=m, status=NEW) for m in members]
        self.claimed_groups.add(match[0].group_id)
        out = []
        for spec, old in zip(specs_sorted, sorted(match, key=_member_key), strict=True):
            member = by_id[spec.id]
            changes = _differences(spec, old, _explicit(member))
            status = CHANGED if changes else IDENTICAL
            out.append(PlannedSeed(parsed=member, status=status, existing=old, changes=changes))
        return out


def _explicit(seed: ParsedSeed) -> set[str]:
    """Fields the file set for this seed: the compared ones, plus date/author when given."""
    return (set(CURATED_FIELDS) - set(_ONLY_WHEN_GIVEN)) | (set(_ONLY_WHEN_GIVEN) & seed.given)


def _member_key(seed: Seed | SeedSpec) -> tuple:
    key = content_key(seed.seed_type, seed.data_type, seed.value, seed.value_sha256)
    is_prompt = seed.seed_type == SeedType.PROMPT
    return (*key, seed.sequence if is_prompt else 0, (seed.role or "") if is_prompt else "")


def _signature(seeds: Iterable[Seed | SeedSpec]) -> tuple:
    return tuple(sorted(_member_key(s) for s in seeds))


# --- commit -------------------------------------------------------------------------------------


def import_commit(
    *,
    files: Sequence[tuple[str, bytes | str]],
    default_dataset: str | None = None,
    added_by: str | None = None,
    actor: AbstractBaseUser | None = None,
) -> tuple[ImportPlan, ImportResult]:
    """Plan ``files`` again and write the plan atomically: new seeds and groups are created,
    changed seeds updated, identical and invalid ones skipped. Returns the plan and counts.
    """
    with transaction.atomic():
        plan = import_plan(files=files, default_dataset=default_dataset, added_by=added_by)
        result = _write(plan, actor=actor)
    return plan, result


def _write(plan: ImportPlan, *, actor: AbstractBaseUser | None) -> ImportResult:
    result = ImportResult()
    wanted = {f.parsed.dataset_name for f in plan.files if f.parsed.dataset_name and f.seeds}
    datasets = seed_datasets_ensure(names=wanted, actor=actor)
    filled: set[str] = set()
    for planned in plan.files:
        name = planned.parsed.dataset_name
        if name in datasets:
            defaults = {
                field_name: planned.parsed.defaults.get(key)
                for key, field_name in DATASET_DEFAULTS.items()
            }
            dataset = datasets[name]
            # The first file of a new dataset sets its defaults; later ones only fill gaps.
            new = getattr(dataset, "_created", False) and name not in filled
            seed_dataset_fill_defaults(dataset=dataset, defaults=defaults, new=new, actor=actor)
            filled.add(name)
    creates: list[Seed] = []
    updates: list[Seed] = []
    groups: list[SeedGroup] = []
    for planned in plan.files:
        dataset = datasets.get(planned.parsed.dataset_name or "")
        new_groups: dict[str, list[PlannedSeed]] = defaultdict(list)
        for seed in planned.seeds:
            if seed.status == NEW and seed.parsed.alias is not None:
                new_groups[seed.parsed.alias].append(seed)
        written_groups: set[str] = set()
        # File order, a new group's seeds together (canonical order) where its first seed is.
        for seed in planned.seeds:
            if seed.status == INVALID:
                result.invalid += 1
            elif seed.status == IDENTICAL:
                result.skipped += 1
            elif seed.status == CHANGED:
                updates.append(_updated(seed))
            elif seed.parsed.alias is None:
                creates.append(seed_instance(seed.spec, dataset, None))
            elif seed.parsed.alias not in written_groups:
                written_groups.add(seed.parsed.alias)
                members = new_groups[seed.parsed.alias]
                group = SeedGroup(
                    alias=seed.parsed.alias, kind=group_kind([m.spec for m in members])
                )
                groups.append(group)
                specs = [replace(m.spec, prompt_group_id=group.id) for m in members]
                for position, spec in enumerate(normalise_group(specs)):
                    row = seed_instance(spec, dataset, group)
                    row.position = position
                    creates.append(row)
    seed_groups_write(creates=groups, actor=actor)
    seed_rows_write(creates=creates, actor=actor)
    seed_rows_write(updates=updates, update_fields=_UPDATE_FIELDS, actor=actor)
    result.created, result.updated, result.groups = len(creates), len(updates), len(groups)
    result.datasets = sorted(datasets)
    return result


_UPDATE_FIELDS = [*CURATED_FIELDS, "value_sha256"]


def _updated(planned: PlannedSeed) -> Seed:
    stored = planned.existing
    assert stored is not None  # a changed seed always has its stored counterpart
    for name in planned.changes:
        setattr(stored, name, getattr(planned.spec, name))
    return stored


def plan_summary(plan: ImportPlan) -> dict[str, Any]:
    """Counts per file and in total, for messages and the command's output."""
    return {
        "files": {f.name: f.counts for f in plan.files},
        "total": plan.counts,
    }
