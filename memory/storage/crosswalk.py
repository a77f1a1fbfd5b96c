"""The framework crosswalk: the shipped data file, loading it, and reading the mapping.

``crosswalk.yaml`` beside this module is the shipped crosswalk (its ``version`` is bumped with
every change). :func:`crosswalk_load` writes it into the crosswalk tables; the data migration
and ``manage.py load_crosswalk`` call it, the migration with its historical models. The rule
for admin edits (docs/findings.md): shipped rows that nobody edited follow the file — added,
changed, removed; rows edited or switched off in the admin and rows added there are left
alone, unless ``reset`` discards every edit.

:func:`crosswalk_current` reads the mapping in one query; harm categories match it
case-insensitively (PyRIT writes enum names, enum values and dataset strings alike), attack
classes exactly (they are Python class names).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from memory.models import (
    CrosswalkLoad,
    CrosswalkMapping,
    CrosswalkOrigin,
    Framework,
    FrameworkEntry,
)

DATA_FILE = Path(__file__).with_name("crosswalk.yaml")
HARM = "harm_category"
TECHNIQUE = "attack_technique"


def harm_key(value: Any) -> str:
    """How a harm category is compared: trimmed and case-folded ("" for a non-string)."""
    return value.strip().casefold() if isinstance(value, str) else ""


def split_tag(tag: str) -> tuple[str, str]:
    """``"owasp-llm:LLM01"`` → ``("owasp-llm", "LLM01")``; no colon → ``("", tag)``."""
    key, sep, code = tag.partition(":")
    return (key, code) if sep else ("", tag)


# --- the data file -------------------------------------------------------------------------


@dataclass(frozen=True)
class CrosswalkData:
    """The shipped crosswalk as read from its file: frameworks with entries, and mapping rows
    ``(source kind, source value, tag)``."""

    version: str
    frameworks: list[dict[str, Any]]
    rows: list[tuple[str, str, str]]


def parse_crosswalk(text: str) -> CrosswalkData:
    """Read and check a crosswalk file (YAML, loaded safely). ``ValueError`` lists every
    problem: a missing version, a duplicate entry, a mapping to an entry that does not exist."""
    document = yaml.safe_load(text)
    problems: list[str] = []
    if not isinstance(document, dict):
        raise ValueError("the crosswalk file must be a mapping")
    version = document.get("version")
    if not isinstance(version, str) or not version.strip() or len(version) > 32:
        problems.append("version: a string of at most 32 characters is required")
    frameworks: list[dict[str, Any]] = []
    tags: set[str] = set()
    for index, item in enumerate(document.get("frameworks") or []):
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str) or not key or ":" in key:
            problems.append(f"frameworks[{index}].key: a key without a colon is required")
            continue
        entries = []
        for position, entry in enumerate(item.get("entries") or []):
            code, title = str(entry.get("code") or ""), str(entry.get("title") or "")
            tag = f"{key}:{code}"
            if not code or not title:
                problems.append(f"{key} entries[{position}]: code and title are required")
            elif tag in tags:
                problems.append(f"{tag}: listed twice")
            else:
                tags.add(tag)
                entries.append({"code": code, "title": title, "url": str(entry.get("url") or "")})
        frameworks.append(
            {
                "key": key,
                "name": str(item.get("name") or key),
                "edition": str(item.get("edition") or ""),
                "url": str(item.get("url") or ""),
                "entries": entries,
            }
        )
    rows: list[tuple[str, str, str]] = []
    for kind, section in ((HARM, "harm_categories"), (TECHNIQUE, "attack_techniques")):
        for name, spec in (document.get(section) or {}).items():
            spec = spec or {}
            for tag in spec.get("tags") or []:
                if tag not in tags:
                    problems.append(f"{section}.{name}: no entry {tag!r}")
                    continue
                for value in [name, *(spec.get("match") or [])]:
                    row = (kind, str(value).strip(), tag)
                    if row[1] and row not in rows:
                        rows.append(row)
    if problems:
        raise ValueError("; ".join(problems))
    return CrosswalkData(version.strip(), frameworks, rows)


def shipped_crosswalk() -> CrosswalkData:
    """The crosswalk shipped with this version of Redline."""
    return parse_crosswalk(DATA_FILE.read_text(encoding="utf-8"))


# --- loading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadResult:
    """What a load changed (mapping rows), and the version now in force."""

    version: str
    added: int
    updated: int
    removed: int
    kept_edited: int


def _models(apps: Any) -> tuple[Any, Any, Any, Any]:
    if apps is None:
        return Framework, FrameworkEntry, CrosswalkMapping, CrosswalkLoad
    return tuple(
        apps.get_model("memory", name)
        for name in ("Framework", "FrameworkEntry", "CrosswalkMapping", "CrosswalkLoad")
    )


def crosswalk_load(
    *, data: CrosswalkData | None = None, reset: bool = False, apps: Any = None
) -> LoadResult:
    """Write the shipped crosswalk (or ``data``) into the crosswalk tables, in one transaction.

    Rows nobody edited follow the file; edited and admin-added rows stay (``reset``: they are
    discarded too). ``apps`` is a migration's app registry (historical models). A handful of
    queries per framework plus one per changed row: the crosswalk is a few hundred rows.
    """
    data = data or shipped_crosswalk()
    framework_model, entry_model, mapping_model, load_model = _models(apps)
    with transaction.atomic():
        entries: dict[str, Any] = {}
        for position, spec in enumerate(data.frameworks):
            framework, created = framework_model.objects.get_or_create(
                key=spec["key"], defaults={"name": spec["name"], "position": position}
            )
            if created or reset or not framework.edited:
                framework.name, framework.edition = spec["name"], spec["edition"]
                framework.url, framework.position = spec["url"], position
                framework.edited = False
                framework.save()
            existing = {e.code: e for e in entry_model.objects.filter(framework=framework)}
            for index, item in enumerate(spec["entries"]):
                entry = existing.get(item["code"]) or entry_model(
                    framework=framework, code=item["code"]
                )
                if entry.pk is None or reset or not entry.edited:
                    entry.title, entry.url, entry.position = item["title"], item["url"], index
                    entry.edited = False
                # Set here, not by the model's save: historical models have no save().
                entry.tag = f"{framework.key}:{entry.code}"
                entry.save()
                entries[entry.tag] = entry
        wanted = {(kind, value, tag) for kind, value, tag in data.rows}
        current = {
            (row.source_kind, row.source_value, row.entry.tag): row
            for row in mapping_model.objects.select_related("entry")
        }
        added = updated = removed = kept = 0
        for key, row in current.items():
            shipped = row.origin == "shipped"
            if row.edited and not reset:
                kept += key in wanted
                continue
            if key in wanted:
                if not (shipped and row.active and row.shipped_version == data.version):
                    row.origin, row.active, row.edited = "shipped", True, False
                    row.shipped_version = data.version
                    row.save()
                    updated += 1
            elif shipped or reset:
                row.delete()
                removed += 1
        new = [
            mapping_model(
                source_kind=kind,
                source_value=value,
                entry=entries[tag],
                origin="shipped",
                shipped_version=data.version,
            )
            for kind, value, tag in sorted(wanted - set(current))
        ]
        mapping_model.objects.bulk_create(new, batch_size=500)
        added = len(new)
        load_model.objects.create(
            version=data.version,
            reset=reset,
            added=added,
            updated=updated,
            removed=removed,
            kept_edited=kept,
        )
    return LoadResult(data.version, added, updated, removed, kept)


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """A framework entry as the pages show it."""

    tag: str
    code: str
    title: str
    framework: str
    framework_name: str

    @property
    def label(self) -> str:
        return f"{self.code} {self.title}"


@dataclass
class Crosswalk:
    """The crosswalk in force: every entry by tag, and the active rows by source."""

    entries: dict[str, Entry] = field(default_factory=dict)
    by_harm: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    by_technique: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def harm_tags(self, harm: Any) -> set[str]:
        return self.by_harm.get(harm_key(harm), set())

    def technique_tags(self, technique: Any) -> set[str]:
        return self.by_technique.get(technique, set()) if isinstance(technique, str) else set()

    def tags_for(
        self,
        *,
        harms: Iterable[Any] = (),
        techniques: Iterable[Any] = (),
        framework: str | None = None,
    ) -> set[str]:
        """Every tag the harm categories and attack classes map to (of one framework)."""
        tags: set[str] = set()
        for harm in harms or ():
            tags |= self.harm_tags(harm)
        for technique in techniques:
            tags |= self.technique_tags(technique)
        if framework is not None:
            tags = {t for t in tags if self.entries[t].framework == framework}
        return tags

    def sources(self, tag: str) -> tuple[set[str], set[str]]:
        """The harm keys and attack classes mapped to ``tag``."""
        harms = {h for h, tags in self.by_harm.items() if tag in tags}
        techniques = {t for t, tags in self.by_technique.items() if tag in tags}
        return harms, techniques

    def in_framework(self, framework: str) -> list[Entry]:
        return [e for e in self.entries.values() if e.framework == framework]


def crosswalk_current() -> Crosswalk:
    """The crosswalk as stored now: entries and active mapping rows. One query."""
    walk = Crosswalk()
    rows = FrameworkEntry.objects.order_by("framework__position", "position", "code").values_list(
        "tag",
        "code",
        "title",
        "framework__key",
        "framework__name",
        "mappings__source_kind",
        "mappings__source_value",
        "mappings__active",
    )
    for tag, code, title, key, name, kind, value, active in rows:
        walk.entries.setdefault(tag, Entry(tag, code, title, key, name))
        if not active:
            continue
        if kind == HARM:
            walk.by_harm[harm_key(value)].add(tag)
        elif kind == TECHNIQUE:
            walk.by_technique[value].add(tag)
    return walk


def crosswalk_version() -> str | None:
    """The version of the newest load of the shipped data (None before any). One query."""
    return (
        CrosswalkLoad.objects.order_by("-loaded_at", "-id")
        .values_list("version", flat=True)
        .first()
    )


# --- admin edits ---------------------------------------------------------------------------


def crosswalk_row_save(*, row: Framework | FrameworkEntry | CrosswalkMapping, adding: bool) -> None:
    """Save a crosswalk row edited in the admin, marking it so reloads leave it alone.

    A mapping row made in the admin is ``origin=admin``; a shipped row (or framework, or
    entry) changed there becomes ``edited``. A new entry's tag is derived from its code.
    """
    if isinstance(row, CrosswalkMapping) and adding:
        row.origin = CrosswalkOrigin.ADMIN
        row.shipped_version = ""
    elif not adding:
        row.edited = True
    row.save()


def crosswalk_rows_switch(*, rows: Iterable[CrosswalkMapping], active: bool) -> int:
    """Switch mapping rows on or off (kept, and marked edited so a reload keeps the choice)."""
    ids = [row.pk for row in rows]
    return CrosswalkMapping.objects.filter(pk__in=ids).update(active=active, edited=True)
