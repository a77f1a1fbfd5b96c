"""Write services for seeds: datasets, seeds and groups. The admin, the YAML importer and the
ingestion API all call these, so every path applies the same rules:

* PyRIT's seed rules (:func:`seed_problems`) and group rules (``seeds.rules``, contract §8.5);
* a template that declares ``parameters`` must parse (``seeds.templating``);
* curated adds refuse a seed that already exists in its dataset (:func:`seed_duplicate`);
* text hashes are computed here, media bytes stored through ``memory.models.media.media_store``
  and linked to the pieces and seeds naming them (:func:`seeds_link_media`);
* every change is recorded in the history tables (django-simple-history), with ``actor`` as
  the user when given (else the request's user, through the history middleware).
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q, QuerySet

from memory.models import MediaBlob
from memory.models.media import locations_match, media_key, media_store
from memory.models.media_links import media_link_pieces
from redteam.core.choices import PromptDataType, SeedType, is_media_value
from redteam.core.errors import InvalidMemory, Problem
from redteam.core.hashing import sha256_text
from redteam.core.lengths import spec_problems
from seeds import templating
from seeds.choices import SeedGroupKind
from seeds.fields import DATASET_DEFAULT_FIELDS, SEED_COLUMNS
from seeds.models import Seed, SeedDataset, SeedGroup
from seeds.rules import group_problems, normalise_group
from seeds.specs import SeedSpec

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


_SPEC_FIELDS = {f.name for f in dataclass_fields(SeedSpec)}


def _with_actor(obj: Any, actor: AbstractBaseUser | None) -> Any:
    """Mark ``obj`` so its history row names ``actor`` (the middleware's user otherwise)."""
    if actor is not None:
        obj._history_user = actor
    return obj


# --- rows: the one place that turns specs into rows and back ------------------------------------


def spec_from_seed(seed: Seed) -> SeedSpec:
    """A spec with every PyRIT field of a stored (or unsaved) seed."""
    values = {
        name: getattr(seed, name)
        for name in _SPEC_FIELDS - {"prompt_group_id", "media", "id", "value_sha256"}
    }
    return SeedSpec(
        id=seed.pk or uuid.uuid4(),
        prompt_group_id=seed.group_id,
        value_sha256=seed.value_sha256,
        **values,
    )


def group_kind(seeds: Iterable[SeedSpec | Seed]) -> str:
    """PyRIT's grouping: an attack seed group holds exactly one objective."""
    objectives = sum(s.seed_type == SeedType.OBJECTIVE for s in seeds)
    return SeedGroupKind.ATTACK if objectives == 1 else SeedGroupKind.PLAIN


def content_key(seed_type: str, data_type: str, value: str, sha: str | None) -> tuple[str, str]:
    """What makes two seeds the same content: type and value hash (media: hash or location)."""
    if sha:
        return (seed_type, sha)
    if is_media_value(data_type, value):
        return (seed_type, "location:" + value.strip())
    return (seed_type, sha256_text(value))


def seed_instance(
    spec: SeedSpec,
    dataset: SeedDataset | None,
    group: SeedGroup | None,
    *,
    blob: MediaBlob | None = None,
) -> Seed:
    """An unsaved ``Seed`` for ``spec``: text SHA-256 computed, media bytes stored."""
    sha = spec.value_sha256
    is_media = is_media_value(spec.data_type, spec.value)
    if spec.media is not None:
        blob = media_store(data=spec.media, original_name=spec.value)
        sha = blob.sha256
    elif not is_media:
        sha = sha or sha256_text(spec.value)
    return Seed(
        id=spec.id,
        seed_type=spec.seed_type,
        value=spec.value,
        value_sha256=sha,
        data_type=spec.data_type,
        media=blob,
        # Block-scalar YAML values end in a newline; the file name is what matters.
        media_key=media_key(spec.value.strip()) if is_media else "",
        name=spec.name,
        dataset=dataset,
        dataset_name=spec.dataset_name or (dataset.name if dataset else None),
        harm_categories=list(spec.harm_categories),
        description=spec.description,
        authors=list(spec.authors),
        groups=list(spec.groups),
        source=spec.source,
        date_added=spec.date_added or datetime.now(UTC),
        added_by=spec.added_by,
        metadata=dict(spec.metadata),
        group=group,
        sequence=spec.sequence,
        role=spec.role,
        parameters=list(spec.parameters),
        is_general_technique=spec.is_general_technique,
        response_json_schema=spec.response_json_schema,
        num_turns=spec.num_turns,
        adversarial_chat_system_prompt_path=spec.adversarial_chat_system_prompt_path,
        simulated_target_system_prompt_path=spec.simulated_target_system_prompt_path,
        next_message_system_prompt_path=spec.next_message_system_prompt_path,
        pyrit_version=spec.pyrit_version,
        extra=_stored_extra(spec.extra),
    )


#: Keys of PyRIT's dumps that are never stored (contract §8.1), with the value that says nothing.
_UNSTORED_DEFAULTS = {"prompt_group_alias": None, "is_jinja_template": False}


def _stored_extra(extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` without PyRIT's unstored keys at their defaults.

    They come back in every read of a seed (so read output re-ingests), so keeping them only
    from some inputs would make the same seed differ by where it came from.
    """
    return {
        key: value
        for key, value in extra.items()
        if not (key in _UNSTORED_DEFAULTS and value == _UNSTORED_DEFAULTS[key])
    }


def seed_rows_write(
    *,
    creates: Sequence[Seed] = (),
    updates: Sequence[Seed] = (),
    update_fields: Sequence[str] = (),
    actor: AbstractBaseUser | None = None,
) -> None:
    """Bulk-insert and bulk-update seed rows and record their history (a few statements).

    Callers have checked that ``creates`` are new (ingestion holds its write lock), so the
    history rows are written for exactly these objects.
    """
    if creates:
        Seed.objects.bulk_create(creates, batch_size=500, ignore_conflicts=True)
        Seed.history.bulk_history_create(creates, batch_size=500, default_user=actor)
    if updates:
        now = datetime.now(UTC)
        for seed in updates:
            seed.updated_at = now
        Seed.objects.bulk_update(updates, [*update_fields, "updated_at"], batch_size=500)
        Seed.history.bulk_history_create(updates, batch_size=500, update=True, default_user=actor)


def seed_groups_write(
    *,
    creates: Sequence[SeedGroup] = (),
    updates: Sequence[SeedGroup] = (),
    actor: AbstractBaseUser | None = None,
) -> None:
    """Bulk-insert / update seed groups (kind, alias) with their history."""
    if creates:
        SeedGroup.objects.bulk_create(creates, ignore_conflicts=True)
        SeedGroup.history.bulk_history_create(creates, default_user=actor)
    if updates:
        SeedGroup.objects.bulk_update(updates, ["kind", "alias"])
        SeedGroup.history.bulk_history_create(updates, update=True, default_user=actor)


def seed_datasets_ensure(
    *, names: Iterable[str], actor: AbstractBaseUser | None = None
) -> dict[str, SeedDataset]:
    """The datasets called ``names``, creating (with history) the ones that do not exist.

    Datasets created here are marked ``_created`` (for callers that fill their defaults).
    """
    names = {n for n in names if n}
    if not names:
        return {}
    existing = {d.name: d for d in SeedDataset.objects.filter(name__in=names)}
    missing = [SeedDataset(name=name) for name in sorted(names - existing.keys())]
    if missing:
        SeedDataset.objects.bulk_create(missing, ignore_conflicts=True)
        created = list(SeedDataset.objects.filter(name__in=[d.name for d in missing]))
        SeedDataset.history.bulk_history_create(created, default_user=actor)
        for dataset in created:
            dataset._created = True
        existing.update({d.name: d for d in created})
    return existing


# --- rules ---------------------------------------------------------------------------------------


def seed_problems(spec: SeedSpec, where: str) -> list[Problem]:
    """Every way one seed breaks PyRIT's seed rules, with paths under ``where``."""
    problems = []
    if spec.seed_type not in SeedType.values:
        problems.append(Problem(f"{where}.seed_type", f"unknown seed type {spec.seed_type!r}"))
    if spec.data_type not in PromptDataType.values:
        problems.append(Problem(f"{where}.data_type", f"unknown data type {spec.data_type!r}"))
    if spec.seed_type == SeedType.OBJECTIVE and spec.data_type != PromptDataType.TEXT:
        problems.append(Problem(f"{where}.data_type", "an objective is always text"))
    if spec.seed_type == SeedType.OBJECTIVE and spec.is_general_technique:
        problems.append(
            Problem(f"{where}.is_general_technique", "an objective cannot be a general technique")
        )
    if spec.seed_type == SeedType.SIMULATED_CONVERSATION and not (spec.num_turns or 0) > 0:
        problems.append(Problem(f"{where}.num_turns", "a simulated conversation needs turns > 0"))
    if not spec.added_by:
        # PyRIT's memory refuses seeds without ``added_by``.
        problems.append(Problem(f"{where}.added_by", "is required"))
    if spec.sequence < 0:
        problems.append(Problem(f"{where}.sequence", "must be >= 0"))
    problems.extend(spec_problems(spec, Seed, where))
    # PyRIT accepts an empty text value (garak's latent-injection tasks ship some); a media
    # seed needs its path or an uploaded file.
    if not isinstance(spec.value, str) or (
        not spec.value and spec.media is None and spec.data_type != PromptDataType.TEXT
    ):
        problems.append(Problem(f"{where}.value", "is required"))
    elif spec.parameters:
        # A seed that declares parameters is a template: PyRIT cannot render a broken one.
        error = templating.syntax_error(spec.value)
        if error:
            problems.append(Problem(f"{where}.value", f"template syntax error, {error}"))
    return problems


def seed_template_warnings(spec: SeedSpec) -> list[str]:
    """Placeholders used but not declared and parameters declared but unused."""
    if not spec.parameters and not templating.looks_like_template(spec.value):
        return []
    return templating.analyse(spec.value, spec.parameters).warnings


def seed_duplicate(
    *,
    spec: SeedSpec,
    dataset: SeedDataset | None,
    group_id: uuid.UUID | None,
) -> Seed | None:
    """A stored seed with the same content as ``spec`` in the same dataset and group, if any.

    "The same content" is the seed type plus the value's SHA-256 (media: the bytes' hash, or
    the location while the bytes are unknown), as PyRIT de-duplicates seeds of a dataset. A
    seed is never its own duplicate. Seeds of different groups may repeat a value (a refusal
    that several multi-turn groups share).
    """
    if dataset is None:
        return None
    seed_type, key = content_key(spec.seed_type, spec.data_type, spec.value, spec.value_sha256)
    match = Q(value_sha256=key)
    if key.startswith("location:"):
        match = Q(value_sha256__isnull=True, value=spec.value) | Q(
            value_sha256__isnull=True, value=spec.value.strip()
        )
    candidates = Seed.objects.filter(match, dataset=dataset, seed_type=seed_type).exclude(
        pk=spec.id
    )
    candidates = (
        candidates.filter(group_id=group_id) if group_id else candidates.filter(group__isnull=True)
    )
    return candidates.order_by("created_at").first()


class DuplicateSeed(InvalidMemory):
    """Raised when a curated add would repeat a seed of the dataset; names the existing one."""

    def __init__(self, existing: Seed) -> None:
        self.existing = existing
        super().__init__(
            [Problem("value", f"this seed already exists in dataset {existing.dataset_name!r}")]
        )


# --- datasets -----------------------------------------------------------------------------------


def seed_dataset_upsert(
    *, name: str, actor: AbstractBaseUser | None = None, **defaults: Any
) -> SeedDataset:
    """The dataset called ``name``, created or updated with ``defaults`` (model fields)."""
    if not name or not name.strip():
        raise InvalidMemory([Problem("name", "a dataset needs a name")])
    with transaction.atomic():
        dataset = SeedDataset.objects.select_for_update().filter(name=name).first()
        if dataset is None:
            dataset = SeedDataset(name=name, **defaults)
        else:
            for key, value in defaults.items():
                setattr(dataset, key, value)
        _with_actor(dataset, actor).save()
    return dataset


def seed_dataset_save(
    *, dataset: SeedDataset, actor: AbstractBaseUser | None = None
) -> SeedDataset:
    """Save a curator's edit of a dataset; a rename is carried to its seeds' ``dataset_name``."""
    if not dataset.name or not dataset.name.strip():
        raise InvalidMemory([Problem("name", "a dataset needs a name")])
    with transaction.atomic():
        old_name = None
        if dataset.pk:
            old_name = SeedDataset.objects.filter(pk=dataset.pk).values_list("name", flat=True)
            old_name = old_name.first()
        _with_actor(dataset, actor).save()
        if old_name is not None and old_name != dataset.name:
            seeds = list(dataset.seeds.all())
            for seed in seeds:
                seed.dataset_name = dataset.name
            seed_rows_write(updates=seeds, update_fields=["dataset_name"], actor=actor)
    return dataset


def seed_dataset_fill_defaults(
    *,
    dataset: SeedDataset,
    defaults: dict[str, Any],
    new: bool = False,
    actor: AbstractBaseUser | None = None,
) -> bool:
    """Set the dataset-level defaults a dataset does not have yet; returns whether it changed.

    Several files may feed one dataset: the first to name a default sets it (a ``new``
    dataset takes all of them), later files never overwrite a curator's value.
    """
    changed = False
    for key, value in defaults.items():
        if value in (None, "", []) or key not in DATASET_DEFAULT_FIELDS:
            continue
        current = getattr(dataset, key)
        # data_type / seed_type always have a value: only a new dataset takes the file's.
        empty = new or (current in (None, "", []) and key not in ("data_type", "seed_type"))
        if empty and current != value:
            setattr(dataset, key, value)
            changed = True
    if changed:
        _with_actor(dataset, actor).save()
    return changed


def seed_dataset_delete(*, dataset: SeedDataset, actor: AbstractBaseUser | None = None) -> int:
    """Delete a dataset and its seeds (each deletion recorded); returns the seeds deleted."""
    with transaction.atomic():
        deleted = seed_delete(seeds=Seed.objects.filter(dataset=dataset), actor=actor)
        _with_actor(dataset, actor).delete()
    return deleted


# --- single seeds -------------------------------------------------------------------------------


def seed_create(
    *,
    spec: SeedSpec,
    dataset: SeedDataset | None = None,
    refuse_duplicates: bool = False,
    actor: AbstractBaseUser | None = None,
) -> Seed:
    """Store one ungrouped seed; its SHA-256 is computed for text (or from media bytes)."""
    return seed_save(spec=spec, dataset=dataset, refuse_duplicates=refuse_duplicates, actor=actor)


def seed_save(
    *,
    spec: SeedSpec,
    dataset: SeedDataset | None = None,
    group: SeedGroup | None = None,
    media_name: str = "",
    refuse_duplicates: bool = True,
    actor: AbstractBaseUser | None = None,
) -> Seed:
    """Create or update the seed ``spec.id`` after every check a curator's save needs.

    Checks PyRIT's seed rules, the template syntax of a parameterised seed, the rules of the
    group the seed ends up in (with its other members), and (``refuse_duplicates``) that the
    dataset does not already hold the same seed (:class:`DuplicateSeed`). ``spec.media``
    bytes are stored content-addressed and linked; the text hash is recomputed on each save.
    """
    spec = replace(spec)
    if spec.media is not None and not spec.value:
        spec.value = media_name or "upload"
    problems, duplicate = seed_check(
        spec=spec, dataset=dataset, group=group, refuse_duplicates=refuse_duplicates
    )
    if duplicate is not None:
        raise DuplicateSeed(duplicate)
    if problems:
        raise InvalidMemory(problems)
    spec.prompt_group_id = group.pk if group is not None else None
    with transaction.atomic():
        existing = Seed.objects.select_for_update().filter(pk=spec.id).first()
        if not is_media_value(spec.data_type, spec.value):
            spec.value_sha256 = sha256_text(spec.value)
        elif existing is not None and existing.value != spec.value and spec.media is None:
            # Another location: the stored bytes (and their hash) no longer belong to it.
            spec.value_sha256 = None
        if refuse_duplicates:
            duplicate = seed_duplicate(spec=spec, dataset=dataset, group_id=spec.prompt_group_id)
            if duplicate is not None:
                raise DuplicateSeed(duplicate)
        row = seed_instance(spec, dataset, group)
        if existing is not None:
            row.created_at = existing.created_at
            row.position = existing.position
            if row.media_id is None and existing.value == spec.value:
                row.media_id, row.value_sha256 = existing.media_id, existing.value_sha256
        elif group is not None:
            row.position = group.seeds.count()
        # A row with a default primary key is INSERTed unless Django knows it is stored.
        row._state.adding = existing is None
        _with_actor(row, actor).save(force_insert=existing is None)
        if row.media_id is not None and spec.media is not None:
            # Other seeds and pieces naming the same file get the bytes too (contract §13).
            location = row.value.strip()
            media_link_pieces(blob=row.media, location=location)
            seeds_link_media(blob=row.media, location=location)
        if existing is not None and existing.group_id and existing.group_id != row.group_id:
            _group_refresh(existing.group, actor=actor)
        if group is not None:
            _group_refresh(group, actor=actor)
    return row


def seed_check(
    *,
    spec: SeedSpec,
    dataset: SeedDataset | None,
    group: SeedGroup | None,
    refuse_duplicates: bool = True,
) -> tuple[list[Problem], Seed | None]:
    """Everything :func:`seed_save` checks, without writing: ``(problems, duplicate)``.

    Problem paths are field names (``value``, ``data_type``, ``group``…), so forms can put
    each message next to its field. ``duplicate`` is the stored seed ``spec`` would repeat.
    """
    problems = [replace(p, path=p.path.removeprefix("seed.")) for p in seed_problems(spec, "seed")]
    if spec.media is not None and spec.data_type not in (
        PromptDataType.IMAGE_PATH,
        PromptDataType.AUDIO_PATH,
        PromptDataType.VIDEO_PATH,
        PromptDataType.BINARY_PATH,
    ):
        problems.append(Problem("data_type", "an uploaded file needs a *_path data type"))
    if group is not None:
        siblings = [spec_from_seed(s) for s in group.seeds.exclude(pk=spec.id)]
        member = replace(spec, prompt_group_id=group.pk)
        problems.extend(_group_problems([*siblings, member], where="group"))
    duplicate = None
    if refuse_duplicates and not problems:
        probe = replace(spec)
        if not is_media_value(spec.data_type, spec.value):
            probe.value_sha256 = sha256_text(spec.value)
        elif spec.media is not None:
            probe.value_sha256 = hashlib.sha256(spec.media).hexdigest()
        group_id = group.pk if group is not None else None
        duplicate = seed_duplicate(spec=probe, dataset=dataset, group_id=group_id)
        if duplicate is not None:
            problems.append(
                Problem("value", f"this seed already exists in dataset {dataset.name!r}")
            )
    return problems, duplicate


def _group_problems(specs: Sequence[SeedSpec], *, where: str) -> list[Problem]:
    problems = []
    for problem in group_problems([replace(s) for s in specs]):
        problems.append(Problem(where, problem.message))
    return problems


def _group_refresh(group: SeedGroup, *, actor: AbstractBaseUser | None) -> None:
    """Re-derive a group's kind and its members' canonical positions after a change."""
    members = list(group.seeds.all())
    kind = group_kind(members)
    if kind != group.kind:
        group.kind = kind
        _with_actor(group, actor).save(update_fields=["kind"])
    specs = {s.pk: spec_from_seed(s) for s in members}
    ordered = normalise_group(sorted(specs.values(), key=lambda s: _position(members, s.id)))
    moved = []
    by_id = {s.pk: s for s in members}
    for position, spec in enumerate(ordered):
        seed = by_id[spec.id]
        if seed.position != position or seed.role != spec.role:
            seed.position, seed.role = position, spec.role
            moved.append(seed)
    if moved:
        seed_rows_write(updates=moved, update_fields=["position", "role"], actor=actor)


def _position(members: Sequence[Seed], seed_id: uuid.UUID) -> int:
    for seed in members:
        if seed.pk == seed_id:
            return seed.position
    return 0


# --- groups --------------------------------------------------------------------------------------


def seed_group_create(
    *,
    seeds: Sequence[SeedSpec],
    dataset: SeedDataset | None = None,
    alias: str | None = None,
    actor: AbstractBaseUser | None = None,
) -> SeedGroup:
    """Store seeds as one group after PyRIT's group validation (contract §8.5).

    The group id is the seeds' shared ``prompt_group_id`` (or a new one); the group is an
    "attack seed group" when it holds exactly one objective, as PyRIT groups datasets.
    """
    problems = group_problems(seeds)
    for index, spec in enumerate(seeds):
        problems.extend(seed_problems(spec, f"seeds[{index}]"))
    if problems:
        raise InvalidMemory(problems)
    ordered = normalise_group([replace(s) for s in seeds])
    group_id = next((s.prompt_group_id for s in seeds if s.prompt_group_id), None)
    with transaction.atomic():
        group = SeedGroup(kind=group_kind(seeds), alias=alias)
        if group_id is not None:
            group.id = group_id
        _with_actor(group, actor).save(force_insert=True)
        rows = []
        for position, spec in enumerate(ordered):
            seed = seed_instance(spec, dataset, group)
            seed.position = position
            rows.append(seed)
        seed_rows_write(creates=rows, actor=actor)
    return group


def seed_group_save(
    *,
    group: SeedGroup,
    members: Sequence[SeedSpec],
    deleted: Sequence[uuid.UUID] = (),
    actor: AbstractBaseUser | None = None,
) -> SeedGroup:
    """Save a curator's edit of a whole group: its fields, changed / new members, deletions.

    ``members`` are the specs of every seed that stays in the group (stored or new, in the
    order shown); the group as a whole must pass PyRIT's rules, else :class:`InvalidMemory`
    is raised and nothing is written. New members join the dataset of the group's other
    seeds.
    """
    specs = [replace(s, prompt_group_id=group.pk) for s in members]
    problems = _group_problems(specs, where="seeds") if specs else []
    for index, spec in enumerate(specs):
        problems.extend(seed_problems(spec, f"seeds[{index}]"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        group.kind = group_kind(specs) if specs else group.kind
        _with_actor(group, actor).save()
        stored = {s.pk: s for s in Seed.objects.select_for_update().filter(group=group)}
        if deleted:
            seed_delete(seeds=Seed.objects.filter(pk__in=deleted, group=group), actor=actor)
        datasets = Counter(s.dataset_id for s in stored.values() if s.pk not in deleted)
        dataset_id = datasets.most_common(1)[0][0] if datasets else None
        dataset = SeedDataset.objects.filter(pk=dataset_id).first() if dataset_id else None
        ordered = normalise_group(specs)
        for position, spec in enumerate(ordered):
            old = stored.get(spec.id)
            if not is_media_value(spec.data_type, spec.value):
                spec.value_sha256 = sha256_text(spec.value)
            row = seed_instance(spec, old.dataset if old else dataset, group)
            row.position = position
            if old is not None:
                row.created_at = old.created_at
                if old.value == row.value and row.media_id is None:
                    row.media_id, row.value_sha256 = old.media_id, old.value_sha256
                if all(getattr(old, f) == getattr(row, f) for f in SEED_COLUMNS):
                    continue
            row._state.adding = old is None
            _with_actor(row, actor).save(force_insert=old is None)
    return group


def seed_group_delete(*, group: SeedGroup, actor: AbstractBaseUser | None = None) -> None:
    """Delete a group; its seeds stay, ungrouped (each change recorded in their history)."""
    with transaction.atomic():
        members = list(group.seeds.all())
        for seed in members:
            seed.group = None
        seed_rows_write(updates=members, update_fields=["group"], actor=actor)
        _with_actor(group, actor).delete()


# --- bulk curation ------------------------------------------------------------------------------


def seed_delete(*, seeds: QuerySet[Seed], actor: AbstractBaseUser | None = None) -> int:
    """Delete seeds (their history keeps a "deleted" record each); returns how many."""
    rows = list(Seed.objects.filter(pk__in=seeds.values("pk")))
    groups = {s.group_id for s in rows if s.group_id}
    with transaction.atomic():
        for seed in rows:
            _with_actor(seed, actor).delete()
        for group in SeedGroup.objects.filter(pk__in=groups):
            _group_refresh(group, actor=actor)
    return len(rows)


def seeds_move_to_dataset(
    *, seeds: QuerySet[Seed], dataset: SeedDataset, actor: AbstractBaseUser | None = None
) -> int:
    """Move seeds into ``dataset`` (``dataset_name`` follows); returns how many moved."""
    rows = [s for s in Seed.objects.filter(pk__in=seeds.values("pk")) if s.dataset_id != dataset.pk]
    for seed in rows:
        seed.dataset, seed.dataset_name = dataset, dataset.name
    with transaction.atomic():
        seed_rows_write(updates=rows, update_fields=["dataset", "dataset_name"], actor=actor)
    return len(rows)


def seeds_copy_to_dataset(
    *, seeds: QuerySet[Seed], dataset: SeedDataset, actor: AbstractBaseUser | None = None
) -> tuple[int, int]:
    """Copy seeds into ``dataset`` as new seeds; returns ``(copied, skipped as duplicates)``.

    Grouped seeds are copied group by group into new groups; a seed (or a whole group) whose
    content the dataset already holds is skipped.
    """
    rows = list(Seed.objects.filter(pk__in=seeds.values("pk")).in_group_order())
    existing = {
        content_key(s.seed_type, s.data_type, s.value, s.value_sha256)
        for s in Seed.objects.filter(dataset=dataset, group__isnull=True)
    }
    copied = skipped = 0
    by_group: dict[uuid.UUID, list[Seed]] = {}
    singles = []
    for seed in rows:
        (by_group.setdefault(seed.group_id, []) if seed.group_id else singles).append(seed)
    with transaction.atomic():
        creates = []
        for seed in singles:
            key = content_key(seed.seed_type, seed.data_type, seed.value, seed.value_sha256)
            if key in existing:
                skipped += 1
                continue
            existing.add(key)
            creates.append(_copy(seed, dataset, None))
        groups = []
        for members in by_group.values():
            source = members[0].group
            group = SeedGroup(kind=group_kind(members), alias=source.alias if source else None)
            groups.append(group)
            for position, seed in enumerate(members):
                row = _copy(seed, dataset, group)
                row.position = position
                creates.append(row)
        seed_groups_write(creates=groups, actor=actor)
        seed_rows_write(creates=creates, actor=actor)
        copied = len(creates)
    return copied, skipped


def _copy(seed: Seed, dataset: SeedDataset, group: SeedGroup | None) -> Seed:
    spec = spec_from_seed(seed)
    spec.id = uuid.uuid4()
    spec.dataset_name = dataset.name
    row = seed_instance(spec, dataset, group, blob=seed.media)
    row.value_sha256 = seed.value_sha256
    return row


def seeds_change_harm_categories(
    *,
    seeds: QuerySet[Seed],
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    actor: AbstractBaseUser | None = None,
) -> int:
    """Add and/or remove harm categories on seeds; returns how many seeds changed."""
    add = [c.strip() for c in add if c.strip()]
    drop = {c.strip() for c in remove if c.strip()}
    rows = []
    for seed in Seed.objects.filter(pk__in=seeds.values("pk")):
        new = [c for c in [*seed.harm_categories, *add] if c not in drop]
        new = list(dict.fromkeys(new))
        if new != seed.harm_categories:
            seed.harm_categories = new
            rows.append(seed)
    with transaction.atomic():
        seed_rows_write(updates=rows, update_fields=["harm_categories"], actor=actor)
    return len(rows)


def seed_media_upload(
    *, seed: Seed, data: bytes, name: str, actor: AbstractBaseUser | None = None
) -> Seed:
    """Attach uploaded bytes to a media seed (stored and linked as the ingestion API does)."""
    spec = spec_from_seed(seed)
    spec.media = data
    return seed_save(
        spec=spec,
        dataset=seed.dataset,
        group=seed.group,
        media_name=name,
        refuse_duplicates=False,
        actor=actor,
    )


def seeds_link_media(*, blob: MediaBlob, location: str = "") -> int:
    """Link every seed without media that names ``blob``'s bytes; returns how many.

    A seed matches when its stored ``value_sha256`` is the blob's SHA-256, or, having no stored
    hash, its value names the same file as ``location`` (contract §13). Pieces link the same way in
    ``memory.models.media_links.media_link_pieces``.
    """
    seeds = Seed.objects.filter(media__isnull=True).exclude(media_key="")
    linked = seeds.filter(value_sha256=blob.sha256).update(media=blob)
    if location:
        named = seeds.filter(media_key=media_key(location), value_sha256=None)
        ids = [
            pk for pk, value in named.values_list("id", "value") if locations_match(value, location)
        ]
        if ids:
            linked += Seed.objects.filter(id__in=ids).update(media=blob)
    return linked
