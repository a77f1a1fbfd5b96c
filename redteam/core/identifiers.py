"""Component identifiers: a pure-Python re-implementation of PyRIT 0.12's identifier module.

PyRIT describes every component it runs (targets, scorers, converters, attacks, seeds) with a
*component identifier*: class name and module, behavioural params, named child identifiers and
a SHA-256 content hash over all of that (contract §10). Redline stores identifiers written by PyRIT
and must compute exactly the same hashes, so this module follows PyRIT 0.12.1 to the letter,
including its quirks (see the docstrings of :meth:`ComponentIdentifier.from_dict` and
:func:`compute_eval_hash`). It has no Django or model imports on purpose: the hashing rules are
a wire contract that ingestion, importers and tests share.

Where PyRIT 0.12 is more permissive than our server should be (params whose names collide with
the structural keys), the data classes stay faithful and the policy lives in a separate
function, :func:`validate_param_names`, which the ingestion layer calls on client input.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "FORBIDDEN_PARAM_NAMES",
    "PYRIT_VERSION",
    "AtomicAttackEvaluationIdentifier",
    "ChildEvalRule",
    "ComponentIdentifier",
    "EvaluationIdentifier",
    "ScorerEvaluationIdentifier",
    "build_atomic_attack_identifier",
    "build_eval_dict",
    "build_seed_identifier",
    "canonical_json",
    "canonical_seed_order",
    "class_name_to_snake_case",
    "compute_eval_hash",
    "config_hash",
    "forbidden_param_names",
    "snake_case_to_class_name",
    "validate_param_names",
]

#: The PyRIT release whose identifier contract this module implements. Used as the default
#: ``pyrit_version`` of identifiers built here; it is informational and never hashed.
PYRIT_VERSION = "0.12.1"

#: Param names that collide with structural keys of the flat storage shape (contract §10.3).
#: PyRIT 1.x raises on them; 0.12 silently produces a broken record. ``class_module`` is not in
#: the contract's list (contract §10.3) but collides in exactly the same way, so it is rejected too.
FORBIDDEN_PARAM_NAMES = frozenset(
    {
        "class_name",
        "class_module",
        "hash",
        "children",
        "eval_hash",
        "pyrit_version",
        "attributes",
        "params",
        "__type__",
        "__module__",
    }
)

_KEY_CLASS_NAME = "class_name"
_KEY_CLASS_MODULE = "class_module"
_KEY_HASH = "hash"
_KEY_PYRIT_VERSION = "pyrit_version"
_KEY_EVAL_HASH = "eval_hash"
_KEY_CHILDREN = "children"
_KEY_ATTRIBUTES = "attributes"
_LEGACY_KEY_TYPE = "__type__"
_LEGACY_KEY_MODULE = "__module__"


# --------------------------------------------------------------------------------------------
# Canonical JSON and hashing
# --------------------------------------------------------------------------------------------


def canonical_json(d: Mapping[str, Any]) -> str:
    """Return the canonical JSON text PyRIT hashes (contract §10.2).

    ``json.dumps(d, sort_keys=True, separators=(",", ":"))`` with Python's other defaults kept,
    because they are part of the contract: ``ensure_ascii=True`` (non-ASCII as ``\\uXXXX``),
    floats in ``repr`` form, ints exact. ``NaN``/``Infinity`` raise :class:`ValueError`
    (PyRIT never produces them and they are not JSON); non-JSON values raise
    :class:`TypeError`.
    """
    return json.dumps(d, sort_keys=True, separators=(",", ":"), allow_nan=False)


def config_hash(d: Mapping[str, Any]) -> str:
    """Return the lower-case hex SHA-256 of :func:`canonical_json` of ``d`` (contract §10.2)."""
    return hashlib.sha256(canonical_json(d).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------
# ComponentIdentifier
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class ComponentIdentifier:
    """Immutable description of a component's behaviour (contract §10.1), PyRIT 0.12 semantics.

    Construct with ``ComponentIdentifier(class_name, class_module, params, children, *,
    pyrit_version=PYRIT_VERSION, eval_hash=None, attributes=None, hash=None)``.

    * ``params``: behavioural parameters (JSON values). ``None`` values are kept (and appear
      as ``null`` in :meth:`to_dict`) but do not contribute to the hash.
    * ``children``: name -> identifier, or name -> ordered list of identifiers.
    * ``hash``: computed from the content (:meth:`hash_dict`) unless a stored hash is passed,
      which is then kept verbatim; :meth:`from_dict` relies on this because stored params may
      have been truncated.
    * ``attributes``: PyRIT 1.x's identity-bearing runtime state; hashed when it holds a
      non-``None`` value, never part of the eval hash, emitted by :meth:`to_dict` only when
      non-empty.

    Equality follows the 0.12 dataclass: class name, module, params and children are compared
    (children recursively, by the same rule) plus ``attributes`` (empty for all 0.12 data);
    ``hash``, ``pyrit_version`` and ``eval_hash`` are ignored. Two identifiers that compare
    equal can therefore carry different stored hashes; compare ``.hash`` explicitly when you
    mean "same identity". ``hash(identifier)`` uses only class name and module so that it is
    consistent with that equality.

    Inputs are deep-copied at construction and :meth:`to_dict` returns copies, so the hash
    cannot go stale through aliasing; the attributes themselves are plain dicts/lists and must
    be treated as read-only.
    """

    class_name: str
    class_module: str
    params: dict[str, Any]
    children: dict[str, ComponentIdentifier | list[ComponentIdentifier]]
    attributes: dict[str, Any]
    hash: str = field(compare=False)
    pyrit_version: str = field(compare=False)
    eval_hash: str | None = field(compare=False)

    def __init__(
        self,
        class_name: str,
        class_module: str,
        params: Mapping[str, Any] | None = None,
        children: Mapping[str, ComponentIdentifier | Sequence[ComponentIdentifier]] | None = None,
        *,
        pyrit_version: str = PYRIT_VERSION,
        eval_hash: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        hash: str | None = None,  # same name as the stored key, so from_dict reads naturally
    ) -> None:
        """Build an identifier; ``hash=None`` means "compute it from the content"."""
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping, got {type(params).__name__}")
        if attributes is not None and not isinstance(attributes, Mapping):
            raise TypeError(f"attributes must be a mapping, got {type(attributes).__name__}")
        object.__setattr__(self, "class_name", class_name)
        object.__setattr__(self, "class_module", class_module)
        object.__setattr__(self, "params", copy.deepcopy(dict(params or {})))
        object.__setattr__(self, "children", _copy_children(children or {}))
        object.__setattr__(self, "attributes", copy.deepcopy(dict(attributes or {})))
        object.__setattr__(self, "pyrit_version", pyrit_version)
        object.__setattr__(self, "eval_hash", eval_hash)
        # PyRIT 0.12 keeps any stored hash that is not None, even "" or one that no longer
        # matches the (possibly truncated) content: the stored hash is the identity.
        object.__setattr__(self, "hash", self.content_hash() if hash is None else hash)

    def __hash__(self) -> int:
        """Hash on class name and module only, consistent with the content-based ``==``."""
        return hash((self.class_name, self.class_module))

    # -- hashing --------------------------------------------------------------------------

    def hash_dict(self) -> dict[str, Any]:
        """Return the dict whose :func:`config_hash` is the content hash (contract §10.3).

        Non-``None`` params are inlined next to ``class_name``/``class_module``; children
        contribute only their (stored) ``hash``, list children as a list of hashes in order,
        an empty list child as ``[]``. ``hash``, ``pyrit_version`` and ``eval_hash`` never
        enter it.
        """
        hash_dict: dict[str, Any] = {
            _KEY_CLASS_NAME: self.class_name,
            _KEY_CLASS_MODULE: self.class_module,
        }
        for key, value in self.params.items():
            if value is not None:
                hash_dict[key] = value
        non_null_attributes = {k: v for k, v in self.attributes.items() if v is not None}
        if non_null_attributes:
            hash_dict[_KEY_ATTRIBUTES] = non_null_attributes
        if self.children:
            hash_dict[_KEY_CHILDREN] = {
                name: ([c.hash for c in child] if isinstance(child, list) else child.hash)
                for name, child in self.children.items()
            }
        return hash_dict

    def content_hash(self) -> str:
        """Return the hash recomputed from the content, ignoring any stored hash.

        Equal to :attr:`hash` unless a stored hash was supplied (e.g. by :meth:`from_dict`
        after truncation). Children still contribute their *stored* hashes, as in PyRIT.
        """
        return config_hash(self.hash_dict())

    # -- display --------------------------------------------------------------------------

    @property
    def short_hash(self) -> str:
        """First 8 hex characters of :attr:`hash`."""
        return self.hash[:8]

    @property
    def unique_name(self) -> str:
        """Display name ``"{class_name}::{short_hash}"``."""
        return f"{self.class_name}::{self.short_hash}"

    def __str__(self) -> str:
        """Same as :attr:`unique_name`."""
        return self.unique_name

    # -- construction helpers -------------------------------------------------------------

    @classmethod
    def of(
        cls,
        obj: object,
        params: Mapping[str, Any] | None = None,
        children: Mapping[str, ComponentIdentifier | Sequence[ComponentIdentifier] | None]
        | None = None,
    ) -> ComponentIdentifier:
        """Build an identifier for a live object (contract §10.6).

        Class name and module come from ``type(obj)``; ``None`` params and ``None`` children
        are dropped (empty lists are kept), which is how PyRIT components build identifiers.
        """
        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        clean_children = {k: v for k, v in (children or {}).items() if v is not None}
        return cls(
            class_name=type(obj).__name__,
            class_module=type(obj).__module__,
            params=clean_params,
            children=clean_children,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComponentIdentifier:
        """Rebuild an identifier from its stored flat dict (contract §10.5, PyRIT 0.12 contract).

        1. The input is not mutated.
        2. ``class_name`` is popped; only if it is falsy is ``__type__`` popped, then
           ``"Unknown"`` is used. Likewise ``class_module`` / ``__module__`` / ``"unknown"``.
           The short-circuit is deliberate: with a truthy ``class_name`` a ``__type__`` key
           stays behind as an ordinary (hashed) param, exactly like PyRIT 0.12.
        3. ``hash``, ``eval_hash`` and ``pyrit_version`` are popped (the version defaults to
           :data:`PYRIT_VERSION` when the key is absent).
        4. ``children``: dict values become identifiers, list values keep only their dict
           items; anything else (and a non-dict ``children``) is dropped.
        5. A dict-valued ``attributes`` key is read as the 1.x attributes bucket (our
           extension, so that 1.x ``model_dump`` output round-trips; 0.12 never writes it).
        6. Every remaining key is a param, ``None`` values included.
        7. A stored hash that is not ``None`` is kept verbatim, even ``""`` and even when it
           does not match the content; otherwise the hash is computed. ``eval_hash`` is kept
           verbatim.

        No param-name policy is applied here (see :func:`validate_param_names`).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"Expected a dict, got {type(data).__name__}")
        remaining = dict(data)

        class_name = (
            remaining.pop(_KEY_CLASS_NAME, None)
            or remaining.pop(_LEGACY_KEY_TYPE, None)
            or "Unknown"
        )
        class_module = (
            remaining.pop(_KEY_CLASS_MODULE, None)
            or remaining.pop(_LEGACY_KEY_MODULE, None)
            or "unknown"
        )
        stored_hash = remaining.pop(_KEY_HASH, None)
        eval_hash = remaining.pop(_KEY_EVAL_HASH, None)
        pyrit_version = remaining.pop(_KEY_PYRIT_VERSION, PYRIT_VERSION)

        children: dict[str, ComponentIdentifier | list[ComponentIdentifier]] = {}
        raw_children = remaining.pop(_KEY_CHILDREN, None)
        if isinstance(raw_children, Mapping):
            for name, value in raw_children.items():
                if isinstance(value, Mapping):
                    children[name] = cls.from_dict(value)
                elif isinstance(value, list):
                    children[name] = [cls.from_dict(x) for x in value if isinstance(x, Mapping)]

        attributes: dict[str, Any] = {}
        if isinstance(remaining.get(_KEY_ATTRIBUTES), Mapping):
            attributes = dict(remaining.pop(_KEY_ATTRIBUTES))

        return cls(
            class_name=class_name,
            class_module=class_module,
            params=remaining,
            children=children,
            pyrit_version=pyrit_version,
            eval_hash=eval_hash,
            attributes=attributes,
            hash=stored_hash,
        )

    @classmethod
    def normalize(cls, value: ComponentIdentifier | Mapping[str, Any]) -> ComponentIdentifier:
        """Return ``value`` if it is an identifier, ``from_dict(value)`` for a dict.

        Anything else raises :class:`TypeError`.
        """
        if isinstance(value, ComponentIdentifier):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        raise TypeError(f"Expected ComponentIdentifier or dict, got {type(value).__name__}")

    def with_eval_hash(self, eval_hash: str | None) -> ComponentIdentifier:
        """Return a copy carrying ``eval_hash``; the (possibly stored) hash is preserved."""
        return type(self)(
            class_name=self.class_name,
            class_module=self.class_module,
            params=self.params,
            children=self.children,
            pyrit_version=self.pyrit_version,
            eval_hash=eval_hash,
            attributes=self.attributes,
            hash=self.hash,
        )

    # -- serialisation --------------------------------------------------------------------

    def to_dict(self, max_value_length: int | None = None) -> dict[str, Any]:
        """Return the flat storage shape (contract §10.4).

        Key order: ``class_name``, ``class_module``, ``hash``, ``pyrit_version``,
        ``eval_hash`` (only when not ``None``), the params in insertion order, ``children``
        (only when non-empty), ``attributes`` (only when non-empty, as 1.x ``model_dump``).

        With an int ``max_value_length``, a *top-level* ``str`` param longer than the limit
        becomes ``value[:limit] + "..."``; nested strings, other types and structural keys
        are untouched, and the limit is passed on to children. ``hash`` stays the hash of
        the untruncated content.
        """
        out: dict[str, Any] = {
            _KEY_CLASS_NAME: self.class_name,
            _KEY_CLASS_MODULE: self.class_module,
            _KEY_HASH: self.hash,
            _KEY_PYRIT_VERSION: self.pyrit_version,
        }
        if self.eval_hash is not None:
            out[_KEY_EVAL_HASH] = self.eval_hash
        for key, value in self.params.items():
            out[key] = _truncate(copy.deepcopy(value), max_value_length)
        if self.children:
            out[_KEY_CHILDREN] = {
                name: (
                    [c.to_dict(max_value_length=max_value_length) for c in child]
                    if isinstance(child, list)
                    else child.to_dict(max_value_length=max_value_length)
                )
                for name, child in self.children.items()
            }
        if self.attributes:
            out[_KEY_ATTRIBUTES] = copy.deepcopy(self.attributes)
        return out

    # -- children -------------------------------------------------------------------------

    def get_child(self, name: str) -> ComponentIdentifier | None:
        """Return the single child ``name`` or ``None``; a list child raises ValueError."""
        child = self.children.get(name)
        if child is None:
            return None
        if isinstance(child, list):
            raise ValueError(
                f"Child {name!r} is a list of {len(child)} components; use get_child_list()"
            )
        return child

    def get_child_list(self, name: str) -> list[ComponentIdentifier]:
        """Return child ``name`` as a list: ``[]`` if missing, ``[child]`` for a single one."""
        child = self.children.get(name)
        if child is None:
            return []
        if isinstance(child, ComponentIdentifier):
            return [child]
        return list(child)


def _copy_children(
    children: Mapping[str, ComponentIdentifier | Sequence[ComponentIdentifier]],
) -> dict[str, ComponentIdentifier | list[ComponentIdentifier]]:
    """Copy and type-check a children mapping.

    PyRIT silently skips malformed children when hashing; a server should fail loudly on a
    programming error instead, and from_dict already filters stored junk before we get here.
    """
    if not isinstance(children, Mapping):
        raise TypeError(f"children must be a mapping, got {type(children).__name__}")
    copied: dict[str, ComponentIdentifier | list[ComponentIdentifier]] = {}
    for name, child in children.items():
        if isinstance(child, ComponentIdentifier):
            copied[name] = child
        elif isinstance(child, Sequence) and not isinstance(child, str | bytes):
            items = list(child)
            for item in items:
                if not isinstance(item, ComponentIdentifier):
                    raise TypeError(
                        f"child list {name!r} holds a {type(item).__name__}, "
                        "expected ComponentIdentifier"
                    )
            copied[name] = items
        else:
            raise TypeError(
                f"child {name!r} must be a ComponentIdentifier or a list of them, "
                f"got {type(child).__name__}"
            )
    return copied


def _truncate(value: Any, max_length: int | None) -> Any:
    """Cut a long top-level string param the way PyRIT 0.12's ``to_dict`` does."""
    if max_length is not None and isinstance(value, str) and len(value) > max_length:
        return value[:max_length] + "..."
    return value


# --------------------------------------------------------------------------------------------
# Param-name policy (server side, not part of PyRIT's data model)
# --------------------------------------------------------------------------------------------


def forbidden_param_names(identifier: ComponentIdentifier) -> list[str]:
    """List the params, anywhere in the tree, whose names collide with structural keys.

    Each entry is a path: child names joined by ``/`` (list items as ``name[i]``) followed by
    the param name, e.g. ``"hash"`` at the root or ``"attack/objective_target/__type__"``.
    The list is empty for a clean identifier. See :func:`validate_param_names`.
    """
    found: list[str] = []
    _collect_forbidden(identifier, "", found)
    return found


def _collect_forbidden(node: ComponentIdentifier, prefix: str, found: list[str]) -> None:
    """Depth-first walk for :func:`forbidden_param_names`, children in stored order."""
    found.extend(f"{prefix}{key}" for key in node.params if key in FORBIDDEN_PARAM_NAMES)
    for name, child in node.children.items():
        if isinstance(child, list):
            for index, item in enumerate(child):
                _collect_forbidden(item, f"{prefix}{name}[{index}]/", found)
        else:
            _collect_forbidden(child, f"{prefix}{name}/", found)


def validate_param_names(identifier: ComponentIdentifier) -> None:
    """Raise ValueError if any param in the tree uses a forbidden name (contract §10.3).

    The contract says the server MUST reject such params, yet PyRIT 0.12's ``from_dict`` turns a
    stray ``__type__``/``__module__`` next to a truthy ``class_name`` into a hashed param and
    the test vectors pin that behaviour (hashes must match). So the constructor and
    :meth:`ComponentIdentifier.from_dict` stay faithful and accept anything, and the ingestion
    layer calls this function on client-supplied identifiers to enforce the policy. Importers
    of existing PyRIT databases may choose not to call it, to keep legacy records intact.
    """
    bad = forbidden_param_names(identifier)
    if bad:
        raise ValueError(
            "identifier params use reserved names: "
            + ", ".join(bad)
            + f" (reserved: {', '.join(sorted(FORBIDDEN_PARAM_NAMES))})"
        )


# --------------------------------------------------------------------------------------------
# Eval hash
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChildEvalRule:
    """How one named child is treated when building the eval hash (contract §10.7, 0.12).

    * ``exclude``: drop the child entirely.
    * ``included_params``: keep only these param keys *of this child* (not of its own
      children, whatever PyRIT's docstring says); ``None`` keeps all.
    * ``included_item_values``: keep only child items whose params equal all these pairs
      (``==`` comparison, so ``1 == True`` matches as in PyRIT); ``None``/empty keeps all.
    """

    exclude: bool = False
    included_params: frozenset[str] | None = None
    included_item_values: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChildEvalRule:
        """Build a rule from its JSON form (``included_params`` as a list of names)."""
        included = data.get("included_params")
        item_values = data.get("included_item_values")
        return cls(
            exclude=bool(data.get("exclude", False)),
            included_params=None if included is None else frozenset(included),
            included_item_values=None if item_values is None else dict(item_values),
        )


def build_eval_dict(
    identifier: ComponentIdentifier,
    child_eval_rules: Mapping[str, ChildEvalRule],
    included_params: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Return the dict whose :func:`config_hash` is the eval hash (contract §10.7 pseudo-code).

    Rules are looked up by child *name* at every depth. A child's entry is the list of the
    config hashes of its (filtered) items' eval dicts, written as a single string when
    exactly one item remains. Eval hashes are built from content, never from stored
    ``hash``/``eval_hash`` values; ``attributes`` never enter.
    """
    allowed = None if included_params is None else frozenset(included_params)
    eval_dict: dict[str, Any] = {
        _KEY_CLASS_NAME: identifier.class_name,
        _KEY_CLASS_MODULE: identifier.class_module,
    }
    for key, value in identifier.params.items():
        if value is not None and (allowed is None or key in allowed):
            eval_dict[key] = value

    eval_children: dict[str, Any] = {}
    for name in sorted(identifier.children):
        rule = child_eval_rules.get(name)
        if rule and rule.exclude:
            continue
        items = identifier.get_child_list(name)
        if rule and rule.included_item_values:
            required = rule.included_item_values
            items = [c for c in items if all(c.params.get(k) == v for k, v in required.items())]
        sub_params = rule.included_params if rule else None
        hashes = [config_hash(build_eval_dict(c, child_eval_rules, sub_params)) for c in items]
        eval_children[name] = hashes[0] if len(hashes) == 1 else hashes
    if eval_children:
        eval_dict[_KEY_CHILDREN] = eval_children
    return eval_dict


def compute_eval_hash(
    identifier: ComponentIdentifier, child_eval_rules: Mapping[str, ChildEvalRule]
) -> str:
    """Return the behavioural-equivalence hash of ``identifier`` (contract §10.7).

    With no rules the result is ``identifier.hash`` itself (the stored one, if any), as in
    PyRIT; otherwise it is the config hash of :func:`build_eval_dict`.
    """
    if not child_eval_rules:
        return identifier.hash
    return config_hash(build_eval_dict(identifier, child_eval_rules))


class EvaluationIdentifier:
    """An identifier seen through a domain's eval rules (PyRIT 0.12 semantics).

    :attr:`eval_hash` is the identifier's stored ``eval_hash`` when it is not ``None`` (0.12
    trusts it; 1.1.0 always recomputes), else :func:`compute_eval_hash` with the class's
    :attr:`CHILD_EVAL_RULES`. The base class has no rules, so its eval hash is the hash.
    """

    CHILD_EVAL_RULES: ClassVar[dict[str, ChildEvalRule]] = {}

    def __init__(self, identifier: ComponentIdentifier) -> None:
        """Wrap ``identifier`` and settle its eval hash eagerly, as PyRIT does."""
        self._identifier = identifier
        if identifier.eval_hash is not None:
            self._eval_hash = identifier.eval_hash
        else:
            self._eval_hash = compute_eval_hash(identifier, self.CHILD_EVAL_RULES)

    @property
    def identifier(self) -> ComponentIdentifier:
        """The wrapped component identifier."""
        return self._identifier

    @property
    def eval_hash(self) -> str:
        """The stored eval hash if any, else the one computed with :attr:`CHILD_EVAL_RULES`."""
        return self._eval_hash


class ScorerEvaluationIdentifier(EvaluationIdentifier):
    """Scorer eval identity: a ``prompt_target`` counts only by model, temperature, top_p."""

    CHILD_EVAL_RULES: ClassVar[dict[str, ChildEvalRule]] = {
        "prompt_target": ChildEvalRule(
            included_params=frozenset({"model_name", "temperature", "top_p"})
        ),
    }


class AtomicAttackEvaluationIdentifier(EvaluationIdentifier):
    """Atomic-attack eval identity (0.12 rules).

    ``objective_target`` keeps only ``temperature``; ``adversarial_chat`` keeps model,
    temperature and top_p; ``objective_scorer`` is excluded; ``seeds`` keeps only general
    technique seeds. Other children (converters, the attack itself) count in full.
    """

    CHILD_EVAL_RULES: ClassVar[dict[str, ChildEvalRule]] = {
        "objective_target": ChildEvalRule(included_params=frozenset({"temperature"})),
        "adversarial_chat": ChildEvalRule(
            included_params=frozenset({"model_name", "temperature", "top_p"})
        ),
        "objective_scorer": ChildEvalRule(exclude=True),
        "seeds": ChildEvalRule(included_item_values={"is_general_technique": True}),
    }


# --------------------------------------------------------------------------------------------
# Seed and atomic-attack identifiers
# --------------------------------------------------------------------------------------------

#: seed_type value -> (PyRIT class name, PyRIT module).
_SEED_CLASSES: dict[str, tuple[str, str]] = {
    "objective": ("SeedObjective", "pyrit.models.seeds.seed_objective"),
    "simulated_conversation": (
        "SeedSimulatedConversation",
        "pyrit.models.seeds.seed_simulated_conversation",
    ),
    "prompt": ("SeedPrompt", "pyrit.models.seeds.seed_prompt"),
}
_SEED_TYPE_KEYS = {seed_type: seed_type for seed_type in _SEED_CLASSES}
_SEED_TYPE_BY_CLASS = {
    class_name: seed_type for seed_type, (class_name, _) in _SEED_CLASSES.items()
}
#: Canonical position of each seed type inside a group: objective, simulated, prompts.
_SEED_RANK = {"objective": 0, "simulated_conversation": 1, "prompt": 2}


def _seed_type(seed: object) -> str:
    """Resolve a seed's type from ``seed_type`` or, failing that, its PyRIT class name."""
    raw = getattr(seed, "seed_type", None)
    if raw is not None:
        # TextChoices members are str subclasses; plain enums expose the str as .value.
        value = raw if isinstance(raw, str) else getattr(raw, "value", raw)
        if isinstance(value, str) and value in _SEED_CLASSES:
            # Hand back our own plain-str key, not an enum member whose str() may differ.
            return _SEED_TYPE_KEYS[value]
        raise ValueError(f"unknown seed_type {raw!r}")
    class_name = type(seed).__name__
    if class_name in _SEED_TYPE_BY_CLASS:
        return _SEED_TYPE_BY_CLASS[class_name]
    raise ValueError(f"cannot tell the seed type of a {class_name} (no seed_type attribute)")


def build_seed_identifier(seed: object) -> ComponentIdentifier:
    """Build a seed's identifier as PyRIT 0.12 does (contract §10.8).

    ``seed`` is any object with ``value``, ``value_sha256``, ``dataset_name``,
    ``is_general_technique`` and either ``seed_type`` (``"prompt"``, ``"objective"``,
    ``"simulated_conversation"``) or a class named ``SeedPrompt``/``SeedObjective``/
    ``SeedSimulatedConversation``. Class name and module are PyRIT's, whatever the Python
    class of ``seed`` is. All four params are always present; ``None`` values are kept (and
    therefore not hashed), so an unsaved seed's ``value_sha256: null`` is common.
    """
    class_name, class_module = _SEED_CLASSES[_seed_type(seed)]
    return ComponentIdentifier(
        class_name=class_name,
        class_module=class_module,
        params={
            "value": seed.value,  # type: ignore[attr-defined]
            "value_sha256": seed.value_sha256,  # type: ignore[attr-defined]
            "dataset_name": seed.dataset_name,  # type: ignore[attr-defined]
            "is_general_technique": seed.is_general_technique,  # type: ignore[attr-defined]
        },
    )


def canonical_seed_order(seeds: Iterable[object]) -> list[object]:
    """Return seeds in PyRIT's SeedGroup order: objective, simulated conversation, prompts.

    Prompts are ordered by ``sequence`` (missing/``None`` counts as 0); the sort is stable,
    so equal keys keep their input order and an already canonical list is unchanged.
    """

    def key(seed: object) -> tuple[int, int]:
        seed_type = _seed_type(seed)
        sequence = (getattr(seed, "sequence", 0) or 0) if seed_type == "prompt" else 0
        return (_SEED_RANK[seed_type], sequence)

    return sorted(seeds, key=key)


def build_atomic_attack_identifier(
    attack_identifier: ComponentIdentifier, seed_group: object | None = None
) -> ComponentIdentifier:
    """Build the 0.12 ``AtomicAttack`` identifier: children ``attack`` and ``seeds``.

    ``seed_group`` is any object with a ``seeds`` iterable, or ``None`` (then ``seeds`` is an
    empty list, which still changes the hash compared to no child). PyRIT gets the canonical
    order from its SeedGroup constructor; our groups come from the database in any order, so
    the seeds are put into :func:`canonical_seed_order` here. The test vectors feed unsorted
    groups and expect the canonical order, and sorting an already canonical group is a no-op.
    """
    seeds: list[ComponentIdentifier] = []
    if seed_group is not None:
        seeds = [
            build_seed_identifier(s)
            for s in canonical_seed_order(seed_group.seeds)  # type: ignore[attr-defined]
        ]
    return ComponentIdentifier(
        class_name="AtomicAttack",
        class_module="pyrit.scenario.core.atomic_attack",
        params={},
        children={"attack": attack_identifier, "seeds": seeds},
    )


# --------------------------------------------------------------------------------------------
# Registry-name helpers
# --------------------------------------------------------------------------------------------

_FIRST_CAP_RE = re.compile(r"(.)([A-Z][a-z]+)")
_ALL_CAP_RE = re.compile(r"([a-z0-9])([A-Z])")


def class_name_to_snake_case(class_name: str, suffix: str = "") -> str:
    """Convert a class name to PyRIT's snake-case registry name (contract §10.9).

    One trailing ``suffix`` is removed first. Only ASCII ``A-Z`` count as upper case while
    ``lower()`` is Unicode-aware, so ``"ÄpfelBaum"`` becomes ``"äpfel_baum"``.
    """
    name = class_name
    if suffix and name.endswith(suffix):
        name = name[: -len(suffix)]
    name = _FIRST_CAP_RE.sub(r"\1_\2", name)
    return _ALL_CAP_RE.sub(r"\1_\2", name).lower()


def snake_case_to_class_name(snake_case_name: str, suffix: str = "") -> str:
    """Convert a snake-case name to a class name and append ``suffix`` (contract §10.9).

    Each ``_``-separated part is ``capitalize()``-d (the rest lower-cased); empty parts
    vanish. Not the inverse of :func:`class_name_to_snake_case`.
    """
    return "".join(part.capitalize() for part in snake_case_name.split("_")) + suffix


def attack_strategy_identifier(
    *,
    attack_identifier: ComponentIdentifier | None,
    atomic_attack_identifier: ComponentIdentifier | None,
) -> ComponentIdentifier | None:
    """The attack strategy, wherever the PyRIT version put it (contract §9.2).

    0.10–0.14 store it as ``attack_identifier``; 0.12 nests it as ``children.attack`` of the
    atomic identifier; 0.13+ as ``children.attack_technique.children.attack``.
    """
    if attack_identifier is not None or atomic_attack_identifier is None:
        return attack_identifier
    direct = atomic_attack_identifier.get_child("attack")
    if direct is not None:
        return direct
    technique = atomic_attack_identifier.get_child("attack_technique")
    return technique.get_child("attack") if technique is not None else None
