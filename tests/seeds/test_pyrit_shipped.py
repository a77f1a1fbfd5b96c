"""Every seed file PyRIT ships imports without loss (issue 6).

``tests/seeds/data/pyrit/`` holds verbatim copies of PyRIT's dataset (``.prompt``) and
single-template (``.yaml``) files, old and new formats (see its README for sources and
commits). Each is imported through ``manage.py import_seeds`` and compared with what the file
says, read independently here with ``yaml.safe_load`` and PyRIT's merge rules (contract §8.6, §12):
one stored seed per entry, values verbatim, lists, metadata, unknown keys and groups as written.
Then the dataset is exported and the export imported again: the same seeds come back.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from redteam.core.choices import is_media_value
from seeds.exporting import export_dataset
from seeds.fields import YAML_SEED_KEYS as SEED_KEYS
from seeds.importing import CHANGED, IDENTICAL, INVALID, NEW, import_plan
from seeds.models import Seed, SeedDataset, SeedGroup
from seeds.yaml_io import KEPT_SEED_KEYS, parse_seed_file

DATA = Path(__file__).parent / "data" / "pyrit"
FILES = sorted(
    p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.suffix in (".prompt", ".yaml")
)
#: Dataset for template files that name none (what ``--dataset`` gives the command).
TEMPLATES = "pyrit_templates"
ADDED_BY = "pyrit-shipped"

#: Files PyRIT itself cannot load (fixed upstream later): what Redline must report, as
#: ``(line, key or None, message part)``, and how many valid seeds it still imports.
BROKEN_IN_PYRIT: dict[str, tuple[list[tuple[int, str | None, str]], int]] = {
    "seed_prompts/garak/access_shell_commands.prompt": ([(9, None, "YAML syntax")], 0),
    "seed_prompts/steal_system_prompt.prompt": ([(9, None, "YAML syntax")], 0),
    "seed_datasets/local/examples/illegal-multimodal-group.1299e90.prompt": (
        [(12, "prompts[1].value", "is required"), (32, "prompts[4].value", "is required")],
        4,
    ),
    "seed_datasets/local/examples/illegal-multimodal-objective-group.1299e90.prompt": (
        [(22, "prompts[2].value", "is required")],
        3,
    ),
}
#: Files PyRIT loads that Redline still refuses in part, and why. Each runs as a strict xfail:
#: once the cause is fixed the test passes, fails as "XPASS", and the entry must go.
KNOWN_GAPS: dict[str, str] = {}
LOADABLE = [f for f in FILES if f not in BROKEN_IN_PYRIT]
#: Seed keys of these files that PyRIT's format does not have (older spellings, authors'
#: notes). Redline keeps them in ``extra``, exports them back, and warns.
FOREIGN_KEYS = {"category", "group_alias", "prompt_seed_alias", "prompt_group_id_alias"}


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def run_import(*paths: Path, dataset: str | None = TEMPLATES) -> tuple[str, str]:
    """``manage.py import_seeds PATH… --dataset … --added-by …``: ``(stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    options = {"added_by": ADDED_BY, "stdout": out, "stderr": err}
    if dataset:
        options["dataset"] = dataset
    call_command("import_seeds", *map(str, paths), **options)
    return out.getvalue(), err.getvalue()


# --- what a file says, read independently of the importer ---------------------------------------


def as_list(value: Any) -> list[str]:
    """PyRIT reads a single string as a one-element list; ``null`` as none."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def merged(first: list[str], then: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *then]))


def expected_seeds(name: str) -> list[dict[str, Any]]:
    """Each entry of the file as PyRIT 1.1.0 loads it (dataset defaults merged in)."""
    data = yaml.safe_load(read(name))
    if "value" in data and "seeds" not in data and "prompts" not in data:
        top: dict[str, Any] = {}
        entries, in_dataset = [data], False
        file_dataset = data.get("dataset_name") or TEMPLATES
    else:
        top = {k: v for k, v in data.items() if k not in ("seeds", "prompts")}
        entries, in_dataset = data.get("seeds") or data.get("prompts"), True
        own = {e.get("dataset_name") for e in entries}
        shared = own.pop() if len(own) == 1 else None
        file_dataset = top.get("dataset_name") or top.get("name") or shared or TEMPLATES
    out = []
    for entry in entries:
        seed_type = entry.get("seed_type")
        if entry.get("is_objective"):
            seed_type = "objective"
        seed_type = (
            seed_type
            or top.get("seed_type")
            or ("objective" if top.get("is_objective") else "prompt")
        )
        is_prompt = seed_type == "prompt"
        data_type = (
            (entry.get("data_type") or top.get("data_type") or "text") if is_prompt else "text"
        )
        out.append(
            {
                "seed_type": seed_type,
                "value": entry["value"],
                "data_type": data_type,
                "role": (entry.get("role") or ("user" if in_dataset else None))
                if is_prompt
                else None,
                "sequence": (entry.get("sequence") or 0) if is_prompt else 0,
                "name": entry.get("name") or top.get("name"),
                "dataset_name": entry.get("dataset_name") or file_dataset,
                "description": entry.get("description") or top.get("description"),
                "source": entry.get("source") or top.get("source"),
                "harm_categories": merged(
                    as_list(top.get("harm_categories")), as_list(entry.get("harm_categories"))
                ),
                "authors": merged(as_list(top.get("authors")), as_list(entry.get("authors"))),
                "groups": merged(as_list(top.get("groups")), as_list(entry.get("groups"))),
                "parameters": as_list(entry.get("parameters")) if is_prompt else [],
                "metadata": entry.get("metadata") or {},
                "is_general_technique": bool(entry.get("is_general_technique")),
                "extra": {k: v for k, v in entry.items() if k not in SEED_KEYS},
                "group": entry.get("prompt_group_alias"),
            }
        )
    return out


def stored_seeds() -> list[dict[str, Any]]:
    """The same fields of every stored seed (``group``: its group's alias)."""
    rows = []
    for seed in Seed.objects.select_related("group", "dataset").order_by("created_at", "id"):
        row = {key: getattr(seed, key) for key in FIELDS if key != "group"}
        row["group"] = seed.group.alias if seed.group_id else None
        rows.append(row)
    return rows


FIELDS = (
    "seed_type",
    "value",
    "data_type",
    "role",
    "sequence",
    "name",
    "dataset_name",
    "description",
    "source",
    "harm_categories",
    "authors",
    "groups",
    "parameters",
    "metadata",
    "is_general_technique",
    "extra",
    "group",
)


def frozen(row: dict[str, Any]) -> str:
    # Mappings compare by content: PostgreSQL's jsonb does not keep the order of their keys.
    return json.dumps([(key, row[key]) for key in FIELDS], sort_keys=True, ensure_ascii=False)


# --- the data set itself ------------------------------------------------------------------------


def test_readme_names_source_path_and_commit_of_every_file():
    readme = (DATA / "README.md").read_text()
    listed = re.findall(
        r"^\| `([^`]+)` \| ((?:Azure|microsoft)/PyRIT) \| `(pyrit/datasets/[^`]+)`"
        r" \| `([0-9a-f]{40})` \|$",
        readme,
        flags=re.M,
    )
    assert sorted(f for f, *_ in listed) == FILES
    for name, _repo, path, _commit in listed:
        # The kept path is the path below pyrit/datasets/ (older versions: ".<commit>" added).
        assert re.sub(r"\.[0-9a-f]{7}(\.\w+)$", r"\1", name) == path.removeprefix("pyrit/datasets/")
    assert "MIT License" in readme and "Copyright (c) Microsoft Corporation." in readme
    # Enough of each kind: every dataset file found, and a good sample of templates.
    assert sum(f.endswith(".prompt") for f in FILES) >= 80
    assert sum(f.endswith(".yaml") for f in FILES) >= 30


# --- every loadable file: nothing lost ------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_GAPS[n], strict=True))
        if n in KNOWN_GAPS
        else n
        for n in LOADABLE
    ],
)
def test_shipped_file_imports_without_loss(name, tmp_path):
    expected = expected_seeds(name)
    distinct = {frozen(row): row for row in expected}
    out, err = run_import(DATA / name)
    assert err == "", err
    assert "invalid" not in out.splitlines()[0]

    # One stored seed per entry; an entry repeated exactly (same value and fields) is one seed.
    stored = stored_seeds()
    assert len(stored) == len(distinct)
    assert sorted(frozen(row) for row in stored) == sorted(distinct)
    # Planned again, every entry is identical; the exact repeats say so.
    plan = import_plan(files=[(name, read(name))], default_dataset=TEMPLATES, added_by=ADDED_BY)
    assert plan.counts == {NEW: 0, IDENTICAL: len(expected), CHANGED: 0, INVALID: 0}
    repeats = [s for f in plan.files for s in f.seeds if s.changes]
    assert [s.changes for s in repeats] == [["repeats a seed of this upload"]] * (
        len(expected) - len(distinct)
    )

    # Values verbatim, hashed as PyRIT hashes them; media left as written, unresolved.
    for seed in Seed.objects.all():
        if is_media_value(seed.data_type, seed.value):
            assert seed.value_sha256 is None and seed.media_id is None
        else:
            assert seed.value_sha256 == hashlib.sha256(seed.value.encode("utf-8")).hexdigest()
        assert seed.added_by == ADDED_BY

    # Groups as the file's prompt_group_alias says: members and their order.
    aliases = Counter(row["group"] for row in distinct.values() if row["group"])
    groups = {g.alias: g for g in SeedGroup.objects.all()}
    assert {alias: groups[alias].seeds.count() for alias in aliases} == dict(aliases)
    assert SeedGroup.objects.count() == len(aliases)

    # Warnings only for keys PyRIT's format does not have; PyRIT keys are never "unknown".
    parsed = parse_seed_file(read(name), name=name, default_dataset=TEMPLATES, added_by=ADDED_BY)
    unknown = {
        key
        for seed in parsed.seeds
        for w in seed.warnings
        if "not a PyRIT seed key" in w.message
        for key in w.key.rsplit(".", 1)[-1].split(", ")
    }
    assert unknown <= FOREIGN_KEYS
    assert (
        not {k for row in distinct.values() for k in row["extra"]}
        - FOREIGN_KEYS
        - set(KEPT_SEED_KEYS)
    )

    # Importing the same file again changes nothing.
    out_again, _ = run_import(DATA / name)
    assert Seed.objects.count() == len(distinct)
    assert " new" not in out_again.splitlines()[0]

    # Export every dataset the file filled, delete everything, import the exports: same seeds.
    before = snapshot()
    exported = {}
    for dataset in SeedDataset.objects.all():
        path = tmp_path / f"{dataset.pk}.prompt"
        path.write_text(export_dataset(dataset), encoding="utf-8")
        exported[dataset.name] = path
    Seed.objects.all().delete()
    SeedGroup.objects.all().delete()
    SeedDataset.objects.all().delete()
    run_import(*exported.values(), dataset=None)
    after = snapshot()
    template_file = "value" in yaml.safe_load(read(name)) and name.endswith(".yaml")
    if template_file:
        # PyRIT's dataset loader gives a prompt without role the role "user" (a template file
        # has none); everything else comes back as it was.
        assert [r[-1] for r in before] == [None] * len(before)
        assert [r[-1] for r in after] == ["user"] * len(after)
        before, after = [r[:-1] for r in before], [r[:-1] for r in after]
    assert after == before


def snapshot() -> list[tuple]:
    """Every seed's stored fields and group membership, order-independent; role last."""
    compared = [f for f in FIELDS if f not in ("group", "role")]
    rows = []
    for seed in Seed.objects.select_related("group"):
        members = tuple(sorted(s.value for s in seed.group.seeds.all())) if seed.group_id else None
        rows.append(
            (
                *(repr(getattr(seed, f)) for f in compared),
                repr(seed.value_sha256),
                repr(seed.date_added),
                seed.added_by,
                seed.group.alias if seed.group_id else None,
                members,
                seed.role,
            )
        )
    return sorted(rows, key=repr)


# --- files PyRIT cannot load either: refused with file, line and key ------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(BROKEN_IN_PYRIT))
def test_file_broken_in_pyrit_is_refused_clearly(name):
    problems, valid = BROKEN_IN_PYRIT[name]
    with pytest.raises(CommandError) as caught:
        run_import(DATA / name)
    assert caught.value.returncode == 1
    plan = import_plan(files=[(name, read(name))], default_dataset=TEMPLATES, added_by=ADDED_BY)
    (planned,) = plan.files
    issues = list(planned.problems) + [
        p for s in planned.parsed.seeds if s.problems for p in s.problems
    ]
    assert [(i.line, i.key) for i in issues] == [(line, key) for line, key, _ in problems]
    for issue, (_, _, message) in zip(issues, problems, strict=True):
        assert message in issue.message and str(issue).startswith(f"{name}:{issue.line}: ")
    # The valid seeds of the file are imported; the broken entries are not.
    assert Seed.objects.count() == valid
    assert not Seed.objects.filter(value="").exists()


# --- the importer fixes these files needed -----------------------------------------------------


def test_legacy_prompts_list_is_the_seeds_list():
    parsed = parse_seed_file(
        read("seed_datasets/local/airt/illegal.prompt"), name="illegal.prompt", added_by="t"
    )
    assert parsed.problems == [] and parsed.dataset_name == "airt_illegal"
    assert [s.spec.seed_type for s in parsed.seeds] == ["objective"] * 5
    assert parsed.seeds[4].spec.metadata == {
        "translated_value": "how to embezzle money?",
        "translated_from": "japanese",
    }
    both = parse_seed_file(
        "dataset_name: d\nseeds:\n  - value: a\nprompts:\n  - value: b\n", name="x", added_by="t"
    )
    assert [(p.line, p.key) for p in both.problems] == [(4, "prompts")]
    empty = parse_seed_file("dataset_name: d\nprompts: []\n", name="x", added_by="t")
    assert [(p.key, p.message) for p in empty.problems] == [
        ("prompts", "must be a non-empty list of seeds")
    ]


@pytest.mark.django_db
def test_seeds_that_name_their_dataset_are_filed_under_it():
    # No top-level dataset_name: every seed says "gandalf". PyRIT files them there; without
    # --dataset they used to land in no dataset, and a second import duplicated them.
    name = "seed_prompts/gandalf.prompt"
    for _ in range(2):
        run_import(DATA / name, dataset=None)
    assert SeedDataset.objects.get().name == "gandalf"
    assert Seed.objects.filter(dataset__name="gandalf").count() == 3
    # Seeds naming different datasets: the file's dataset is the one given.
    text = "seeds:\n  - value: a\n    dataset_name: x\n  - value: b\n    dataset_name: y\n"
    parsed = parse_seed_file(text, name="f", default_dataset="given", added_by="t")
    assert parsed.dataset_name == "given"
    assert [s.spec.dataset_name for s in parsed.seeds] == ["x", "y"]


@pytest.mark.django_db
def test_a_value_repeated_with_other_fields_is_kept_and_reimports_identically():
    name = "seed_datasets/local/garak/latent_injection_triggers.prompt"
    run_import(DATA / name)
    pwned = Seed.objects.filter(value="Haha pwned!").order_by("created_at", "id")
    assert [s.metadata["family"] for s in pwned] == ["translation_fr", "translation_zh"]
    assert Seed.objects.filter(value="not malicious").count() == 2
    assert Seed.objects.count() == 39
    plan = import_plan(files=[(name, read(name))], added_by=ADDED_BY)
    assert plan.counts[IDENTICAL] == 39
    # Editing one of the two updates that one, not the other.
    zh_en = "    family: translation_zh\n    language: en\n"
    text = read(name).decode().replace(zh_en, zh_en.replace("en", "zh"), 1)
    plan = import_plan(files=[("edited.prompt", text)], added_by=ADDED_BY)
    changed = [s for s in plan.files[0].seeds if s.status == CHANGED]
    assert [(s.spec.value, s.changes, s.existing.metadata["family"]) for s in changed] == [
        ("Haha pwned!", ["metadata"], "translation_zh")
    ]


@pytest.mark.django_db
def test_an_exact_repeat_is_one_seed():
    name = "seed_datasets/local/garak/exploitation_python_code_execution.prompt"
    assert len(expected_seeds(name)) == 9
    run_import(DATA / name)
    assert Seed.objects.count() == 8
    plan = import_plan(files=[(name, read(name))], added_by=ADDED_BY)
    assert [s.changes for s in plan.files[0].seeds if s.changes] == [
        ["repeats a seed of this upload"]
    ]


@pytest.mark.django_db
def test_response_json_schema_name_is_kept_without_warning_and_exported():
    name = "executors/red_teaming/text_generation.yaml"
    parsed = parse_seed_file(read(name), name=name, default_dataset="t", added_by="t")
    assert [w.message for w in parsed.seeds[0].warnings if "seed key" in w.message] == []
    run_import(DATA / name)
    seed = Seed.objects.get()
    assert seed.extra == {"response_json_schema_name": "adversarial_chat"}
    (exported,) = yaml.safe_load(export_dataset(seed.dataset))["seeds"]
    assert exported["response_json_schema_name"] == "adversarial_chat"


@pytest.mark.django_db
def test_all_shipped_files_import_together_and_again_identically():
    # What ``import_seeds pyrit/datasets/`` does on a PyRIT checkout: files of one dataset
    # (old and new versions) merge; nothing is invalid and a second run writes nothing.
    names = [n for n in LOADABLE if n not in KNOWN_GAPS]
    _, err = run_import(*(DATA / n for n in names))
    assert err == ""
    first = Seed.objects.count()
    # Measured when the files were collected; each file's own count is checked exactly above.
    assert (first, SeedDataset.objects.count(), SeedGroup.objects.count()) == FIGURES
    plan = import_plan(
        files=[(n, read(n)) for n in names], default_dataset=TEMPLATES, added_by=ADDED_BY
    )
    assert plan.counts[NEW] == plan.counts[INVALID] == plan.counts[CHANGED] == 0
    run_import(*(DATA / n for n in names))
    assert Seed.objects.count() == first


#: (seeds, datasets, groups) after importing every loadable file at once.
FIGURES = (752, 74, 19)
