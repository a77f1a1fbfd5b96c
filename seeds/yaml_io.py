"""PyRIT seed YAML files (contract §12): safe parsing into seed specs, and export (pure: no Django).

Parsing follows PyRIT 1.1.0's loaders:

* dataset files (``SeedDataset.from_yaml_file``): top-level defaults plus a ``seeds`` list; the
  defaults are merged into every seed as PyRIT merges them (contract §8.6);
* single-template files (``SeedPrompt.from_yaml_file``): one mapping with the seed's keys.

Values are stored raw: ``{{ datasets_path }}``-style placeholders stay verbatim (PyRIT renders
them on the user's machine at load time), and media values are reported as unresolved until
their file is uploaded. Every problem names the file, the line and the key.

YAML is read with PyYAML's safe loader (as PyRIT does), after three guards: a size limit, a
node limit that counts alias expansion (a "billion laughs" document is refused before anything
walks it) and a refusal of recursive aliases.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

import yaml

from redteam.core.choices import ChatMessageRole, PromptDataType, SeedType, is_media_value
from redteam.core.constraints import INT_MAX
from seeds.fields import (
    COMMON_LIST_FIELDS,
    JSON_ONLY_KEYS,
    SIMULATION_FIELDS,
    YAML_DATASET_KEYS,
    YAML_SEED_KEYS,
)
from seeds.specs import SeedSpec
from seeds.templating import PYRIT_PATH_VARIABLES, analyse

#: Largest YAML file accepted, bytes.
MAX_FILE_BYTES = 2 * 1024 * 1024
#: Most nodes a document may have once aliases are expanded.
MAX_NODES = 200_000
#: Most seeds in one file.
MAX_SEEDS = 20_000

#: PyRIT seed keys Redline stores verbatim in ``extra`` without interpreting them (and exports
#: back): ``response_json_schema_name`` names a schema in PyRIT's registry, resolved on load.
KEPT_SEED_KEYS = ("response_json_schema_name",)


# --- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class YamlIssue:
    """One problem or warning: which file, which line, which key, and what."""

    file: str
    line: int | None
    key: str | None
    message: str

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


@dataclass
class ParsedSeed:
    """One seed of a file, merged with the file's defaults; ``alias`` names its group."""

    spec: SeedSpec
    line: int | None
    index: int
    alias: str | None = None
    problems: list[YamlIssue] = field(default_factory=list)
    warnings: list[YamlIssue] = field(default_factory=list)
    #: A media value whose bytes Redline does not have (a path or ``{{ datasets_path }}``).
    unresolved_media: bool = False
    #: Keys the file set for this seed, on the seed or as a dataset default.
    given: frozenset[str] = frozenset()
    file: str = ""

    @property
    def valid(self) -> bool:
        return not self.problems


@dataclass
class ParsedFile:
    """What one YAML file holds: dataset defaults, seeds, and every problem found."""

    name: str
    kind: str = "dataset"  # "dataset" or "template"
    dataset_name: str | None = None
    #: Dataset-level keys as read (for ``SeedDataset`` defaults), lists normalised.
    defaults: dict[str, Any] = field(default_factory=dict)
    seeds: list[ParsedSeed] = field(default_factory=list)
    problems: list[YamlIssue] = field(default_factory=list)
    warnings: list[YamlIssue] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """True when the file itself could be read (seeds may still be invalid one by one)."""
        return not self.problems

    def groups(self) -> dict[str, list[ParsedSeed]]:
        """Seeds sharing a ``prompt_group_alias``, by alias, in file order."""
        out: dict[str, list[ParsedSeed]] = {}
        for seed in self.seeds:
            if seed.alias is not None:
                out.setdefault(seed.alias, []).append(seed)
        return out


# --- safe loading -------------------------------------------------------------------------------


# libyaml's parser when PyYAML was built with it (about 10x faster); the same safe constructor.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumperBase = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Refused(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _expanded_size(root: yaml.Node) -> int:
    """Nodes of ``root`` with every alias expanded; refuses cycles and oversize trees.

    Memoised per node, so a small document whose aliases would expand to billions of nodes
    is measured in time linear in its own size.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def visit(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise _Refused(node.start_mark.line + 1, "a recursive alias is not allowed")
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += visit(child)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += visit(k) + visit(v)
        active.discard(key)
        if total > MAX_NODES:
            raise _Refused(
                node.start_mark.line + 1,
                f"the document expands to more than {MAX_NODES} nodes (alias bomb?)",
            )
        sizes[key] = total
        return total

    # Iterative depth is bounded by the composer's own recursion; deep nesting fails there.
    return visit(root)


def load_yaml(data: bytes | str, *, name: str) -> tuple[Any, yaml.Node | None, list[YamlIssue]]:
    """Safely load one YAML document: ``(data, node tree, problems)``."""
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > MAX_FILE_BYTES:
        message = f"the file has {size} bytes; the limit is {MAX_FILE_BYTES}"
        return None, None, [YamlIssue(name, None, None, message)]
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            message = f"not UTF-8 text (byte {exc.start})"
            return None, None, [YamlIssue(name, None, None, message)]
    loader = _SafeLoader(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None, [YamlIssue(name, None, None, "the file is empty")]
        _expanded_size(node)
        value = loader.construct_document(node)
    except _Refused as exc:
        return None, None, [YamlIssue(name, exc.line, None, exc.message)]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        message = " ".join(filter(None, [exc.context, exc.problem]))
        return None, None, [YamlIssue(name, line, None, f"YAML syntax: {message}")]
    except yaml.YAMLError as exc:
        return None, None, [YamlIssue(name, None, None, f"YAML: {exc}")]
    except RecursionError:
        return None, None, [YamlIssue(name, None, None, "the document is nested too deeply")]
    finally:
        loader.dispose()
    return value, node, []


def _key_lines(node: yaml.Node | None) -> tuple[int | None, dict[str, int]]:
    """The line of a mapping node and of each of its keys."""
    if not isinstance(node, yaml.MappingNode):
        return (node.start_mark.line + 1 if node else None), {}
    lines = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            lines[str(key_node.value)] = key_node.start_mark.line + 1
    return node.start_mark.line + 1, lines


def _mapping_value(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node
    return None


# --- field readers ------------------------------------------------------------------------------


class _Fields:
    """Reads typed keys of one mapping, recording issues with file, line and key."""

    def __init__(
        self,
        data: Mapping[str, Any],
        *,
        file: str,
        line: int | None,
        lines: dict[str, int],
        prefix: str = "",
    ) -> None:
        self.data = data
        self.file = file
        self.line = line
        self.lines = lines
        self.prefix = prefix
        self.problems: list[YamlIssue] = []
        self.warnings: list[YamlIssue] = []

    def issue(self, key: str | None, message: str, *, warning: bool = False) -> None:
        line = self.lines.get(key, self.line) if key else self.line
        where = f"{self.prefix}{key}" if key else (self.prefix.rstrip(".") or None)
        (self.warnings if warning else self.problems).append(
            YamlIssue(self.file, line, where, message)
        )

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.issue(key, f"must be text, not {_type_name(value)}")
            return None
        return str(value)

    def strict_text(self, key: str) -> str | None:
        """Text that must be written as a string (numbers would lose their spelling)."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.issue(key, f"must be a string, not {_type_name(value)} (quote it)")
            return None
        return value

    def strings(self, key: str) -> list[str]:
        """A list of strings; a single string is a one-element list (as PyRIT reads it)."""
        value = self.data.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            self.issue(key, f"must be a list of strings or one string, not {_type_name(value)}")
            return []
        out = []
        for item in value:
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                self.issue(key, f"items must be strings, not {_type_name(item)}")
                continue
            out.append(str(item))
        return out

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.issue(key, f"must be true or false, not {value!r}")
            return default
        return value

    def integer(self, key: str, *, default: int | None, minimum: int = 0) -> int | None:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.issue(key, f"must be a whole number, not {value!r}")
            return default
        if value < minimum:
            self.issue(key, f"must be at least {minimum}")
            return default
        if value > INT_MAX:
            self.issue(key, f"must be at most {INT_MAX:,}")
            return default
        return value

    def choice(self, key: str, choices: Iterable[str]) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        allowed = list(choices)
        if value not in allowed:
            self.issue(key, f"unknown value {value!r}; one of {', '.join(allowed)}")
            return None
        return value

    def timestamp(self, key: str) -> datetime | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime.combine(value, time())
        elif isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                self.issue(key, f"not a date or date-time: {value!r}")
                return None
        else:
            self.issue(key, f"must be a date-time, not {_type_name(value)}")
            return None
        # PyRIT treats naive times as UTC.
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.issue(key, f"must be a mapping, not {_type_name(value)}")
            return {}
        try:
            return _json_safe(value)
        except ValueError as exc:
            self.issue(key, str(exc))
            return {}


def _type_name(value: Any) -> str:
    return {list: "a list", dict: "a mapping", bool: "true/false"}.get(
        type(value), type(value).__name__
    )


def _json_safe(value: Any) -> Any:
    """``value`` as JSON-storable data: dates become ISO strings, keys strings."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ValueError(f"holds a value that cannot be stored ({type(value).__name__})")


def _combine(first: Sequence[str], then: Sequence[str]) -> list[str]:
    """``first`` then the new items of ``then``, de-duplicated in order (PyRIT's merge)."""
    return list(dict.fromkeys([*first, *then]))


# --- parsing ------------------------------------------------------------------------------------


def parse_seed_file(
    data: bytes | str,
    *,
    name: str,
    default_dataset: str | None = None,
    added_by: str | None = None,
) -> ParsedFile:
    """Parse one PyRIT YAML file into merged seed specs (nothing is stored).

    ``default_dataset`` is the dataset of seeds the file names none for (PyRIT leaves them
    without one); ``added_by`` fills seeds the file does not credit (PyRIT's memory refuses
    seeds without it).
    """
    parsed = ParsedFile(name=name)
    value, node, problems = load_yaml(data, name=name)
    if problems:
        parsed.problems = problems
        return parsed
    line, lines = _key_lines(node)
    if not isinstance(value, Mapping):
        parsed.problems.append(
            YamlIssue(name, line, None, f"the top level must be a mapping, not {_type_name(value)}")
        )
        return parsed
    if "seeds" in value or "prompts" in value:
        _parse_dataset(parsed, value, node, lines, default_dataset, added_by)
    elif "value" in value:
        parsed.kind = "template"
        _parse_template(parsed, value, node, lines, default_dataset, added_by)
    else:
        parsed.problems.append(
            YamlIssue(
                name,
                line,
                None,
                "neither a dataset file (a 'seeds' or 'prompts' list) "
                "nor a template file (a 'value')",
            )
        )
    return parsed


def _parse_dataset(
    parsed: ParsedFile,
    data: Mapping[str, Any],
    node: yaml.Node | None,
    lines: dict[str, int],
    default_dataset: str | None,
    added_by: str | None,
) -> None:
    top = _Fields(data, file=parsed.name, line=1, lines=lines)
    for key in data:
        if key not in YAML_DATASET_KEYS:
            # PyRIT passes every top-level key to SeedDataset(...), which refuses unknown ones.
            top.issue(str(key), "unknown dataset key (PyRIT's loader refuses it)")
    # Older PyRIT files (some still shipped with it) call the list ``prompts``.
    list_key = "seeds" if "seeds" in data else "prompts"
    if "seeds" in data and "prompts" in data:
        top.issue("prompts", "a file has either 'seeds' or 'prompts' (the old name), not both")
    raw_seeds = data.get(list_key)
    seeds_node = _mapping_value(node, list_key)
    if not isinstance(raw_seeds, list) or not raw_seeds:
        top.issue(list_key, "must be a non-empty list of seeds")
    elif len(raw_seeds) > MAX_SEEDS:
        top.issue(list_key, f"has {len(raw_seeds)} seeds; the limit is {MAX_SEEDS}")
    defaults: dict[str, Any] = {
        "dataset_name": top.text("dataset_name"),
        "name": top.text("name"),
        "description": top.text("description"),
        "source": top.text("source"),
        "harm_categories": top.strings("harm_categories"),
        "authors": top.strings("authors"),
        "groups": top.strings("groups"),
        "data_type": top.choice("data_type", PromptDataType.values),
        "seed_type": top.choice("seed_type", SeedType.values),
        "date_added": top.timestamp("date_added"),
        "added_by": top.text("added_by"),
    }
    if top.boolean("is_objective"):
        if defaults["seed_type"] not in (None, SeedType.OBJECTIVE):
            top.issue("is_objective", "conflicts with seed_type")
        defaults["seed_type"] = SeedType.OBJECTIVE
    parsed.defaults = defaults
    parsed.dataset_name = (
        defaults["dataset_name"]
        or defaults["name"]
        or _shared_dataset_name(raw_seeds)
        or default_dataset
    )
    parsed.problems.extend(top.problems)
    parsed.warnings.extend(top.warnings)
    if parsed.problems:
        return
    item_nodes = seeds_node.value if isinstance(seeds_node, yaml.SequenceNode) else []
    for index, item in enumerate(raw_seeds):
        item_node = item_nodes[index] if index < len(item_nodes) else None
        parsed.seeds.append(
            _parse_seed(
                item,
                item_node,
                file=parsed.name,
                index=index,
                prefix=f"{list_key}[{index}].",
                defaults=defaults,
                dataset_name=parsed.dataset_name,
                added_by=added_by,
                in_dataset=True,
            )
        )


def _shared_dataset_name(raw_seeds: Any) -> str | None:
    """The ``dataset_name`` every seed of a file names, when the file names none itself.

    Older PyRIT files put ``dataset_name`` on each seed only; PyRIT files those seeds under it
    (its memory keys seeds by their own ``dataset_name``), so Redline does too rather than
    leaving them without a dataset (where a re-import could not recognise them).
    """
    if not isinstance(raw_seeds, list):
        return None
    names = {item.get("dataset_name") if isinstance(item, Mapping) else None for item in raw_seeds}
    if len(names) != 1:
        return None
    (name,) = names
    return name if isinstance(name, str) and name else None


def _parse_template(
    parsed: ParsedFile,
    data: Mapping[str, Any],
    node: yaml.Node | None,
    lines: dict[str, int],
    default_dataset: str | None,
    added_by: str | None,
) -> None:
    seed = _parse_seed(
        data,
        node,
        file=parsed.name,
        index=0,
        prefix="",
        defaults={},
        dataset_name=default_dataset,
        added_by=added_by,
        in_dataset=False,
    )
    parsed.dataset_name = seed.spec.dataset_name
    parsed.seeds.append(seed)


def _parse_seed(
    data: Any,
    node: yaml.Node | None,
    *,
    file: str,
    index: int,
    prefix: str,
    defaults: Mapping[str, Any],
    dataset_name: str | None,
    added_by: str | None,
    in_dataset: bool,
) -> ParsedSeed:
    line, lines = _key_lines(node)
    if not isinstance(data, Mapping):
        spec = SeedSpec(value="")
        issue = YamlIssue(file, line, prefix.rstrip("."), "a seed must be a mapping")
        return ParsedSeed(spec=spec, line=line, index=index, problems=[issue], file=file)
    f = _Fields(data, file=file, line=line, lines=lines, prefix=prefix)
    value = f.strict_text("value")
    if value is None and "value" not in data:
        f.issue("value", "is required")

    # seed_type: the seed's, else the legacy is_objective, else the dataset's, else prompt.
    seed_type = f.choice("seed_type", SeedType.values)
    if f.boolean("is_objective"):
        if seed_type not in (None, SeedType.OBJECTIVE):
            f.issue("is_objective", "conflicts with seed_type")
        seed_type = SeedType.OBJECTIVE
    seed_type = seed_type or defaults.get("seed_type") or SeedType.PROMPT
    is_prompt = seed_type == SeedType.PROMPT
    is_simulation = seed_type == SeedType.SIMULATED_CONVERSATION

    if "prompt_group_id" in data:
        f.issue("prompt_group_id", "must not be set in a YAML file; use prompt_group_alias")
    alias = f.text("prompt_group_alias")

    data_type = f.choice("data_type", PromptDataType.values) or defaults.get("data_type")
    role = f.choice("role", ChatMessageRole.values)
    general = f.boolean("is_general_technique", default=is_simulation)
    if seed_type == SeedType.OBJECTIVE and general:
        f.issue("is_general_technique", "an objective cannot be a general technique")
    schema = data.get("response_json_schema")
    if schema is not None and not isinstance(schema, Mapping):
        f.issue("response_json_schema", "must be a mapping")
        schema = None
    sha = f.text("value_sha256")
    if sha is not None and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
        f.issue("value_sha256", "must be 64 lower-case hex digits")
        sha = None

    spec = SeedSpec(
        value=value or "",
        seed_type=seed_type,
        data_type=(data_type or PromptDataType.TEXT) if is_prompt else PromptDataType.TEXT,
        value_sha256=sha,
        # name, description, source: the seed's unless empty, else the dataset's (PyRIT's "or").
        name=f.text("name") or defaults.get("name"),
        dataset_name=f.text("dataset_name") or dataset_name,
        harm_categories=_combine(defaults.get("harm_categories", []), f.strings("harm_categories")),
        description=f.text("description") or defaults.get("description"),
        authors=_combine(defaults.get("authors", []), f.strings("authors")),
        groups=_combine(defaults.get("groups", []), f.strings("groups")),
        source=f.text("source") or defaults.get("source"),
        date_added=f.timestamp("date_added") or defaults.get("date_added"),
        added_by=f.text("added_by") or defaults.get("added_by") or added_by,
        metadata=f.mapping("metadata"),
        is_general_technique=general,
        pyrit_version=f.text("pyrit_version") or "",
    )
    if is_prompt:
        # Prompts loaded from a dataset file get role "user"; a template file leaves it unset.
        spec.role = role or (ChatMessageRole.USER if in_dataset else None)
        spec.sequence = f.integer("sequence", default=0) or 0
        spec.parameters = f.strings("parameters")
        spec.response_json_schema = _json_safe(dict(schema)) if schema is not None else None
    if is_simulation:
        spec.sequence = f.integer("sequence", default=0) or 0
        spec.num_turns = f.integer("num_turns", default=3, minimum=1)
        for key in SIMULATION_FIELDS[1:]:
            setattr(spec, key, f.text(key))
        if not value:
            spec.value = _simulation_value(spec)
    kept = {str(k): v for k, v in data.items() if k not in YAML_SEED_KEYS}
    unknown = [k for k in kept if k not in KEPT_SEED_KEYS]
    if kept:
        try:
            spec.extra = _json_safe(kept)
        except ValueError as exc:
            f.issue(next(iter(kept)), str(exc))
        else:
            if unknown:
                f.issue(
                    ", ".join(unknown),
                    "not a PyRIT seed key; kept and exported back",
                    warning=True,
                )

    given = {str(k) for k in data} | {k for k, v in defaults.items() if v not in (None, [], "")}
    seed = ParsedSeed(
        spec=spec, line=line, index=index, alias=alias, given=frozenset(given), file=file
    )
    _check_value(seed, f)
    seed.problems, seed.warnings = f.problems, f.warnings
    return seed


def _simulation_value(spec: SeedSpec) -> str:
    """PyRIT 1.x derives a simulated conversation's value from its settings (contract §8.4)."""
    settings = {
        "num_turns": spec.num_turns,
        "sequence": spec.sequence,
        "adversarial_chat_system_prompt_path": spec.adversarial_chat_system_prompt_path,
        "simulated_target_system_prompt_path": spec.simulated_target_system_prompt_path,
        "next_message_system_prompt_path": spec.next_message_system_prompt_path,
    }
    return json.dumps(settings, sort_keys=True, separators=(",", ":"))


def _check_value(seed: ParsedSeed, f: _Fields) -> None:
    """Template and media checks of a seed's value (warnings, or an error for a template)."""
    spec = seed.spec
    report = analyse(spec.value, spec.parameters)
    if report.syntax_error:
        if spec.parameters:
            f.issue("value", f"template syntax error, {report.syntax_error}")
        else:
            f.issue("value", f"not valid Jinja2 ({report.syntax_error})", warning=True)
    for message in report.warnings if spec.parameters or report.undeclared else ():
        f.issue("value", message, warning=True)
    if is_media_value(spec.data_type, spec.value):
        seed.unresolved_media = True
        placeholders = [f"{{{{ {n} }}}}" for n in report.path_variables]
        how = f"placeholder {', '.join(placeholders)} kept verbatim" if placeholders else "a path"
        f.issue("value", f"unresolved media ({how}); upload the file in the admin", warning=True)


# --- export -------------------------------------------------------------------------------------


class _Dumper(_SafeDumperBase):
    """Block style, multi-line strings as ``|`` literals, no anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not _has_trailing_space(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _has_trailing_space(value: str) -> bool:
    # A literal block cannot carry trailing spaces on a line or leading spaces on line one.
    return any(line != line.rstrip(" \t") for line in value.split("\n")) or value[:1] in " \t"


_Dumper.add_representer(str, _str_representer)


def export_seed_file(
    *,
    dataset_name: str | None,
    seeds: Sequence[Mapping[str, Any]],
    description: str | None = None,
) -> str:
    """A PyRIT dataset file (``SeedDataset.from_yaml_file``) holding ``seeds``.

    ``seeds`` are dicts with the keys of :data:`YAML_SEED_KEYS` (plus ``extra``), already in group
    order, with ``prompt_group_alias`` set for grouped seeds. Every seed carries its own values
    explicitly: dataset-level keys other than ``dataset_name`` would be merged into every seed
    on the way back in, so they are written as a comment only.
    """
    document: dict[str, Any] = {}
    if dataset_name:
        document["dataset_name"] = dataset_name
    document["seeds"] = [_export_seed(seed, dataset_name) for seed in seeds]
    header = "# PyRIT seed dataset exported by Redline.\n"
    if description:
        header += "".join(f"# {line}\n" for line in description.splitlines())
    body = yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return header + body


def _export_seed(seed: Mapping[str, Any], dataset_name: str | None) -> dict[str, Any]:
    seed_type = seed["seed_type"]
    out: dict[str, Any] = {"value": seed["value"], "seed_type": seed_type}
    if seed_type == SeedType.PROMPT:
        out["data_type"] = seed["data_type"]
        if seed.get("role"):
            out["role"] = seed["role"]
        out["sequence"] = seed.get("sequence") or 0
    if seed_type == SeedType.SIMULATED_CONVERSATION:
        out["sequence"] = seed.get("sequence") or 0
        for key in SIMULATION_FIELDS:
            if seed.get(key) is not None:
                out[key] = seed[key]
    if seed.get("prompt_group_alias"):
        out["prompt_group_alias"] = seed["prompt_group_alias"]
    if seed.get("value_sha256") and is_media_value(seed["data_type"], seed["value"]):
        # The hash of a media file's bytes: it links the file again on re-import.
        out["value_sha256"] = seed["value_sha256"]
    for key in ("name", "description", "source", "added_by"):
        if seed.get(key):
            out[key] = seed[key]
    if seed.get("dataset_name") and seed["dataset_name"] != dataset_name:
        out["dataset_name"] = seed["dataset_name"]
    for key in (*COMMON_LIST_FIELDS, "parameters"):
        if seed.get(key):
            out[key] = list(seed[key])
    if seed.get("metadata"):
        out["metadata"] = dict(seed["metadata"])
    if seed.get("is_general_technique"):
        out["is_general_technique"] = True
    elif seed_type == SeedType.SIMULATED_CONVERSATION:
        out["is_general_technique"] = False
    if seed.get("response_json_schema") is not None and seed_type == SeedType.PROMPT:
        out["response_json_schema"] = seed["response_json_schema"]
    if seed.get("pyrit_version"):
        out["pyrit_version"] = seed["pyrit_version"]
    if seed.get("date_added"):
        moment = seed["date_added"]
        out["date_added"] = moment.astimezone(UTC) if isinstance(moment, datetime) else moment
    for key, value in (seed.get("extra") or {}).items():
        if key not in out and key not in (*YAML_SEED_KEYS, *YAML_DATASET_KEYS, *JSON_ONLY_KEYS):
            out[key] = value
    return out


def new_alias() -> str:
    """A fresh group alias for a group that has none."""
    return f"group-{uuid.uuid4().hex[:8]}"


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "PYRIT_PATH_VARIABLES",
    "ParsedFile",
    "ParsedSeed",
    "YamlIssue",
    "export_seed_file",
    "load_yaml",
    "parse_seed_file",
]
