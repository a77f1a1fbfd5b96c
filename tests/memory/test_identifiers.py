"""Tests of redteam.core.identifiers against PyRIT 0.12.1's identifier test vectors.

Contract §10.10.

Every vector and every case helper in ``tests/fixtures/pyrit-1.1.0-small/identifiers.json``
is a separate test id; the top-level vector fields are the contract, the ``pyrit_1_1_0``
sub-objects are ignored. No database is needed.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from types import SimpleNamespace
from typing import Any

import pytest

from redteam.core import identifiers as ids
from redteam.core.identifiers import (
    FORBIDDEN_PARAM_NAMES,
    PYRIT_VERSION,
    AtomicAttackEvaluationIdentifier,
    ChildEvalRule,
    ComponentIdentifier,
    EvaluationIdentifier,
    ScorerEvaluationIdentifier,
    build_atomic_attack_identifier,
    build_eval_dict,
    build_seed_identifier,
    canonical_json,
    canonical_seed_order,
    compute_eval_hash,
    config_hash,
    forbidden_param_names,
    validate_param_names,
)
from tests.conftest import FIXTURES_DIR

FIXTURE = FIXTURES_DIR / "pyrit-1.1.0-small" / "identifiers.json"
DATA = json.loads(FIXTURE.read_text(encoding="utf-8"))
VECTORS: list[dict[str, Any]] = DATA["vectors"]
CASE_HELPERS: list[dict[str, Any]] = DATA["case_helpers"]
PREVIOUS = {v["id"]: VECTORS[i - 1] for i, v in enumerate(VECTORS) if i > 0}

EVAL_CLASSES: dict[str, type[EvaluationIdentifier]] = {
    "scorer": ScorerEvaluationIdentifier,
    "atomic_attack": AtomicAttackEvaluationIdentifier,
}
SEED_TYPES = {
    "SeedPrompt": "prompt",
    "SeedObjective": "objective",
    "SeedSimulatedConversation": "simulated_conversation",
}


@pytest.fixture(autouse=True)
def _isolated_storage() -> None:
    """Shadow tests/conftest.py's Django-settings fixture: these tests are pure Python.

    This keeps the module runnable with ``-p no:django`` (no settings, no database).
    """


def _vectors(predicate) -> list[Any]:
    return [pytest.param(v, id=v["id"]) for v in VECTORS if predicate(v)]


# ---------------------------------------------------------------------------------------------
# Building identifiers from vector inputs
# ---------------------------------------------------------------------------------------------


def _construct(spec: dict[str, Any]) -> ComponentIdentifier:
    """Build a structured vector input ({class_name, class_module, params, children})."""
    return ComponentIdentifier(
        class_name=spec["class_name"],
        class_module=spec["class_module"],
        params=spec.get("params", {}),
        children=_construct_children(spec.get("children", {})),
    )


def _construct_children(children: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (
            None
            if child is None
            else [_construct(c) for c in child]
            if isinstance(child, list)
            else _construct(child)
        )
        for name, child in children.items()
    }


def _seed(spec: dict[str, Any]) -> SimpleNamespace:
    """Adapter with the attributes our seed models expose (seed_type instead of a class)."""
    return SimpleNamespace(
        seed_type=SEED_TYPES[spec["seed_class"]],
        value=spec["value"],
        value_sha256=spec["value_sha256"],
        dataset_name=spec["dataset_name"],
        is_general_technique=spec["is_general_technique"],
        sequence=spec.get("sequence", 0),
    )


def _build(vector: dict[str, Any]) -> ComponentIdentifier:
    op, spec = vector["op"], vector["input"]
    if op == "construct":
        return _construct(spec)
    if op == "of":
        component = type(spec["class_name"], (), {"__module__": spec["class_module"]})()
        return ComponentIdentifier.of(
            component,
            params=spec.get("params"),
            children=_construct_children(spec.get("children", {})),
        )
    if op == "from_dict":
        return ComponentIdentifier.from_dict(spec)
    if op == "build_seed_identifier":
        return build_seed_identifier(_seed(spec))
    if op == "build_atomic_attack_identifier":
        group = spec["seed_group"]
        seed_group = None if group is None else SimpleNamespace(seeds=[_seed(s) for s in group])
        return build_atomic_attack_identifier(_construct(spec["attack"]), seed_group)
    raise AssertionError(f"unknown op {op}")


def _strip_version(value: Any) -> Any:
    """Drop ``pyrit_version`` keys at every level, keeping key order."""
    if isinstance(value, dict):
        return {k: _strip_version(v) for k, v in value.items() if k != "pyrit_version"}
    if isinstance(value, list):
        return [_strip_version(v) for v in value]
    return value


def _node_hashes(identifier: ComponentIdentifier) -> list[str]:
    out = [identifier.hash]
    for child in identifier.children.values():
        for item in child if isinstance(child, list) else [child]:
            out.extend(_node_hashes(item))
    return out


# ---------------------------------------------------------------------------------------------
# Vector tests
# ---------------------------------------------------------------------------------------------


def test_fixture_inventory() -> None:
    assert DATA["meta"]["contract_pyrit_version"] == PYRIT_VERSION
    assert len(VECTORS) == 70
    assert len(CASE_HELPERS) == 45


@pytest.mark.parametrize("vector", _vectors(lambda v: True))
def test_vector_to_dict(vector: dict[str, Any]) -> None:
    ident = _build(vector)
    got = _strip_version(ident.to_dict(max_value_length=vector.get("max_value_length")))
    expected = _strip_version(vector["to_dict"])
    assert got == expected
    # Key order is part of the storage shape, and json text also tells 1 from 1.0 from true.
    assert json.dumps(got) == json.dumps(expected)


@pytest.mark.parametrize("vector", _vectors(lambda v: True))
def test_vector_hashes(vector: dict[str, Any]) -> None:
    ident = _build(vector)
    assert ident.hash == vector["hash"]
    assert ident.content_hash() == vector["content_hash"]
    assert canonical_json(ident.hash_dict()) == vector["hash_input"]
    assert config_hash(ident.hash_dict()) == vector["content_hash"]
    assert ident.short_hash == vector["hash"][:8]
    assert str(ident) == ident.unique_name == f"{ident.class_name}::{vector['hash'][:8]}"


@pytest.mark.parametrize("vector", _vectors(lambda v: v["kind"] in EVAL_CLASSES))
def test_vector_eval_hash(vector: dict[str, Any]) -> None:
    ident = _build(vector)
    eval_class = EVAL_CLASSES[vector["kind"]]
    evaluation = eval_class(ident)
    assert evaluation.identifier is ident
    assert evaluation.eval_hash == vector["eval_hash"]
    assert compute_eval_hash(ident, eval_class.CHILD_EVAL_RULES) == vector["computed_eval_hash"]
    eval_dict = build_eval_dict(ident, eval_class.CHILD_EVAL_RULES)
    assert canonical_json(eval_dict) == vector["eval_input"]
    assert config_hash(eval_dict) == vector["computed_eval_hash"]


@pytest.mark.parametrize("vector", _vectors(lambda v: "child_eval_rules" in v))
def test_vector_custom_child_eval_rules(vector: dict[str, Any]) -> None:
    ident = _build(vector)
    rules = {name: ChildEvalRule.from_dict(r) for name, r in vector["child_eval_rules"].items()}
    assert compute_eval_hash(ident, rules) == vector["eval_hash"]
    if "eval_input" in vector:
        assert canonical_json(build_eval_dict(ident, rules)) == vector["eval_input"]
    else:
        # No rules: the eval hash is the identifier's own (possibly stored) hash.
        assert rules == {}
        assert vector["eval_hash"] == vector["hash"]


@pytest.mark.parametrize("vector", _vectors(lambda v: "roundtrip" in v))
def test_vector_roundtrip(vector: dict[str, Any]) -> None:
    ident = _build(vector)
    expected = vector["roundtrip"]
    stored = ident.to_dict(max_value_length=vector.get("max_value_length"))
    back = ComponentIdentifier.from_dict(stored)
    assert back.hash == expected["hash"] == ident.hash
    assert back.content_hash() == expected["content_hash"]
    assert _strip_version(back.to_dict()) == _strip_version(expected["to_dict"])
    # Every node keeps its untruncated-content hash, not only the root.
    assert _node_hashes(back) == _node_hashes(ident)
    if "eval_hash" in expected:
        eval_class = EVAL_CLASSES[vector["kind"]]
        assert eval_class(back).eval_hash == expected["eval_hash"]
    # Through JSON text (how it is really stored) the result is the same.
    via_json = ComponentIdentifier.from_dict(json.loads(json.dumps(stored)))
    assert via_json.hash == back.hash
    assert via_json.to_dict() == back.to_dict()


@pytest.mark.parametrize("vector", _vectors(lambda v: "previous_case_hash" in v))
def test_vector_previous_case(vector: dict[str, Any]) -> None:
    """``previous_case_hash`` is the hash of the vector just before; hashes differ.

    The fixture README also says the eval hashes are equal, but the preceding vector is the
    childless scorer (eval hash == its hash), so that only holds for the generator's unlisted
    base case. The property the description names is checked on a rebuilt variant instead.
    """
    previous = PREVIOUS[vector["id"]]
    assert previous["hash"] == vector["previous_case_hash"]
    ident, prev_ident = _build(vector), _build(previous)
    assert prev_ident.hash == vector["previous_case_hash"]
    assert ident.hash != prev_ident.hash

    # "Same scorer on a different endpoint/rate limit": operational params of the
    # prompt_target do not move the eval hash but do move the hash.
    eval_class = EVAL_CLASSES[vector["kind"]]
    target = ident.get_child("prompt_target")
    assert target is not None
    moved = ComponentIdentifier(
        target.class_name,
        target.class_module,
        target.params
        | {"endpoint": "https://elsewhere.example/v1", "max_requests_per_minute": 1, "seed": 7},
    )
    variant = ComponentIdentifier(
        ident.class_name, ident.class_module, ident.params, {"prompt_target": moved}
    )
    assert variant.hash != ident.hash
    assert eval_class(variant).eval_hash == eval_class(ident).eval_hash == vector["eval_hash"]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=f"c{i + 1:02d}-{c['fn']}-{next(iter(c['args'].values()))!r}")
        for i, c in enumerate(CASE_HELPERS)
    ],
)
def test_case_helper(case: dict[str, Any]) -> None:
    fn = getattr(ids, case["fn"])
    assert fn(**case["args"]) == case["result"]


# ---------------------------------------------------------------------------------------------
# Seed ordering
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "vector",
    _vectors(lambda v: v["op"] == "build_atomic_attack_identifier" and v["input"]["seed_group"]),
)
def test_atomic_attack_seed_order_presorted_input(vector: dict[str, Any]) -> None:
    """Feeding the group already in canonical order gives the same identifier."""
    seeds = [_seed(s) for s in vector["input"]["seed_group"]]
    presorted = SimpleNamespace(seeds=canonical_seed_order(seeds))
    ident = build_atomic_attack_identifier(_construct(vector["input"]["attack"]), presorted)
    assert ident.hash == vector["hash"]
    assert canonical_seed_order(presorted.seeds) == presorted.seeds


def test_canonical_seed_order_ranks_types_and_sequences() -> None:
    def seed(seed_type: str, sequence: int | None, tag: str) -> SimpleNamespace:
        return SimpleNamespace(seed_type=seed_type, sequence=sequence, tag=tag)

    seeds = [
        seed("prompt", 2, "p2"),
        seed("prompt", None, "pnone"),
        seed("simulated_conversation", 5, "sim"),
        seed("prompt", 0, "p0"),
        seed("objective", 9, "obj"),
        seed("prompt", 2, "p2b"),
    ]
    ordered = [s.tag for s in canonical_seed_order(seeds)]
    assert ordered == ["obj", "sim", "pnone", "p0", "p2", "p2b"]


def test_build_atomic_attack_identifier_shape() -> None:
    attack = ComponentIdentifier("PromptSendingAttack", "pyrit.executor.attack", {"max_turns": 1})
    ident = build_atomic_attack_identifier(attack)
    assert ident.class_name == "AtomicAttack"
    assert ident.class_module == "pyrit.scenario.core.atomic_attack"
    assert ident.params == {}
    assert ident.get_child("attack") == attack
    assert ident.children["seeds"] == []
    assert ident.hash_dict()["children"] == {"attack": attack.hash, "seeds": []}


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------


class _SeedType(enum.Enum):
    PROMPT = "prompt"
    OBJECTIVE = "objective"


# Deliberately not StrEnum: for a (str, Enum) mixin str() is "Class.MEMBER", not the value.
class _StrSeedType(str, enum.Enum):  # noqa: UP042
    SIMULATED = "simulated_conversation"


def _seed_obj(**extra: Any) -> SimpleNamespace:
    base = {"value": "v", "value_sha256": None, "dataset_name": None, "is_general_technique": False}
    return SimpleNamespace(**(base | extra))


@pytest.mark.parametrize(
    ("seed_type", "class_name", "module"),
    [
        ("prompt", "SeedPrompt", "pyrit.models.seeds.seed_prompt"),
        ("objective", "SeedObjective", "pyrit.models.seeds.seed_objective"),
        (
            "simulated_conversation",
            "SeedSimulatedConversation",
            "pyrit.models.seeds.seed_simulated_conversation",
        ),
        (_SeedType.OBJECTIVE, "SeedObjective", "pyrit.models.seeds.seed_objective"),
        (
            _StrSeedType.SIMULATED,
            "SeedSimulatedConversation",
            "pyrit.models.seeds.seed_simulated_conversation",
        ),
    ],
)
def test_build_seed_identifier_types(seed_type: Any, class_name: str, module: str) -> None:
    ident = build_seed_identifier(_seed_obj(seed_type=seed_type))
    assert (ident.class_name, ident.class_module) == (class_name, module)
    # All four params are always there; None values kept but not hashed.
    assert ident.params == {
        "value": "v",
        "value_sha256": None,
        "dataset_name": None,
        "is_general_technique": False,
    }
    assert set(ident.hash_dict()) == {"class_name", "class_module", "value", "is_general_technique"}


def test_build_seed_identifier_falls_back_to_class_name() -> None:
    class SeedObjective:
        value = "x"
        value_sha256 = "abc"
        dataset_name = "ds"
        is_general_technique = True

    ident = build_seed_identifier(SeedObjective())
    assert ident.class_name == "SeedObjective"
    assert ident.class_module == "pyrit.models.seeds.seed_objective"
    assert ident == build_seed_identifier(
        _seed_obj(
            seed_type="objective",
            value="x",
            value_sha256="abc",
            dataset_name="ds",
            is_general_technique=True,
        )
    )


def test_build_seed_identifier_rejects_unknown_types() -> None:
    with pytest.raises(ValueError, match="seed_type"):
        build_seed_identifier(_seed_obj(seed_type="template"))
    with pytest.raises(ValueError, match="seed type"):
        build_seed_identifier(_seed_obj())


# ---------------------------------------------------------------------------------------------
# config_hash
# ---------------------------------------------------------------------------------------------


def test_config_hash_is_sha256_of_canonical_json() -> None:
    import hashlib

    d = {"b": 1, "a": [1.0, True, None], "é": "日本"}
    text = json.dumps(d, sort_keys=True, separators=(",", ":"))
    assert canonical_json(d) == text
    assert text.isascii()
    assert config_hash(d) == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_config_hash_rejects_nan_and_infinity(bad: float) -> None:
    with pytest.raises(ValueError):
        config_hash({"x": [bad]})
    with pytest.raises(ValueError):
        ComponentIdentifier("A", "m", {"x": bad})


def test_config_hash_rejects_non_json_values() -> None:
    with pytest.raises(TypeError):
        config_hash({"x": object()})


# ---------------------------------------------------------------------------------------------
# ComponentIdentifier behaviour
# ---------------------------------------------------------------------------------------------


def _target(**params: Any) -> ComponentIdentifier:
    return ComponentIdentifier("OpenAIChatTarget", "pyrit.prompt_target", params)


def test_defaults() -> None:
    ident = ComponentIdentifier("A", "m")
    assert ident.params == {} and ident.children == {} and ident.attributes == {}
    assert ident.pyrit_version == PYRIT_VERSION
    assert ident.eval_hash is None
    assert ident.to_dict() == {
        "class_name": "A",
        "class_module": "m",
        "hash": config_hash({"class_name": "A", "class_module": "m"}),
        "pyrit_version": PYRIT_VERSION,
    }


def test_identifier_is_immutable_and_isolated_from_inputs() -> None:
    params = {"nested": {"k": [1]}}
    ident = ComponentIdentifier("A", "m", params)
    before = ident.hash
    params["nested"]["k"].append(2)
    params["new"] = 1
    assert ident.params == {"nested": {"k": [1]}}
    ident.to_dict()["nested"]["k"].append(3)
    assert ident.params == {"nested": {"k": [1]}}
    assert ident.content_hash() == before
    with pytest.raises(dataclasses.FrozenInstanceError):
        ident.class_name = "B"  # type: ignore[misc]


def test_equality_ignores_hash_version_and_eval_hash() -> None:
    a = ComponentIdentifier("A", "m", {"x": 1})
    b = ComponentIdentifier("A", "m", {"x": 1}, pyrit_version="0.9.0", eval_hash="e", hash="h")
    assert a == b and hash(a) == hash(b)
    assert a.hash != b.hash
    assert a != ComponentIdentifier("A", "m", {"x": 2})
    assert a != ComponentIdentifier("A", "m", {"x": 1}, attributes={"model_version": "1"})
    assert len({a, b}) == 1


def test_stored_hash_kept_verbatim_even_empty() -> None:
    ident = ComponentIdentifier.from_dict({"class_name": "A", "class_module": "m", "hash": ""})
    assert ident.hash == ""
    assert ident.content_hash() == ComponentIdentifier("A", "m").hash
    parent = ComponentIdentifier("P", "m", children={"c": ident})
    # Parents hash the stored child hash, not a recomputed one.
    assert parent.hash_dict()["children"] == {"c": ""}


def test_from_dict_does_not_mutate_and_defaults_version() -> None:
    data = {"class_name": "A", "class_module": "m", "children": {"c": {"__type__": "B"}}, "p": 1}
    snapshot = json.loads(json.dumps(data))
    ident = ComponentIdentifier.from_dict(data)
    assert data == snapshot
    assert ident.pyrit_version == PYRIT_VERSION
    child = ident.get_child("c")
    assert child is not None
    assert (child.class_name, child.class_module) == ("B", "unknown")


def test_from_dict_non_dict_children_dropped() -> None:
    ident = ComponentIdentifier.from_dict({"class_name": "A", "class_module": "m", "children": [1]})
    assert ident.children == {}
    assert "children" not in ident.to_dict()


def test_of_drops_none_and_keeps_empty_lists() -> None:
    class Probe:
        pass

    ident = ComponentIdentifier.of(
        Probe(), params={"a": None, "b": 0}, children={"x": None, "seeds": []}
    )
    assert ident.class_name == "Probe"
    assert ident.class_module == __name__
    assert ident.params == {"b": 0}
    assert ident.children == {"seeds": []}
    # of() with no params/children at all
    assert ComponentIdentifier.of(Probe()).params == {}


def test_get_child_and_get_child_list() -> None:
    t = _target(model_name="gpt-4o")
    ident = ComponentIdentifier("S", "m", children={"prompt_target": t, "convs": [t, t]})
    assert ident.get_child("prompt_target") is t
    assert ident.get_child("missing") is None
    with pytest.raises(ValueError, match="get_child_list"):
        ident.get_child("convs")
    assert ident.get_child_list("missing") == []
    assert ident.get_child_list("prompt_target") == [t]
    assert ident.get_child_list("convs") == [t, t]


def test_constructor_rejects_malformed_children() -> None:
    with pytest.raises(TypeError):
        ComponentIdentifier("A", "m", children={"c": {"class_name": "B"}})
    with pytest.raises(TypeError):
        ComponentIdentifier("A", "m", children={"c": ["not an identifier"]})
    with pytest.raises(TypeError):
        ComponentIdentifier("A", "m", params=[("a", 1)])  # type: ignore[arg-type]


def test_normalize() -> None:
    ident = _target(model_name="x")
    assert ComponentIdentifier.normalize(ident) is ident
    assert ComponentIdentifier.normalize(ident.to_dict()).hash == ident.hash
    with pytest.raises(TypeError):
        ComponentIdentifier.normalize("nope")  # type: ignore[arg-type]


def test_with_eval_hash_preserves_stored_hash() -> None:
    ident = ComponentIdentifier.from_dict({"class_name": "A", "class_module": "m", "hash": "h1"})
    stamped = ident.with_eval_hash("e1")
    assert stamped.hash == "h1" and stamped.eval_hash == "e1"
    assert ident.eval_hash is None
    assert list(stamped.to_dict())[:5] == [
        "class_name",
        "class_module",
        "hash",
        "pyrit_version",
        "eval_hash",
    ]
    assert ScorerEvaluationIdentifier(stamped).eval_hash == "e1"
    # Rules exist, so the eval hash is built from content: a childless scorer's eval hash is
    # its *content* hash, not a stored hash that may disagree with the content.
    assert ScorerEvaluationIdentifier(ident).eval_hash == ident.content_hash()


def test_truncation_only_touches_top_level_strings() -> None:
    child = _target(endpoint="https://example.com/very/long")
    ident = ComponentIdentifier(
        "A", "m", {"s": "abcdefgh", "n": 123456789, "l": ["abcdefgh"]}, {"t": child}
    )
    out = ident.to_dict(max_value_length=4)
    assert out["s"] == "abcd..."
    assert out["n"] == 123456789 and out["l"] == ["abcdefgh"]
    assert out["children"]["t"]["endpoint"] == "http..."
    assert out["hash"] == ident.hash
    assert ident.to_dict(max_value_length=8)["s"] == "abcdefgh"


# ---------------------------------------------------------------------------------------------
# 1.x attributes bucket
# ---------------------------------------------------------------------------------------------


def test_attributes_hashed_when_non_null_and_never_in_eval_dict() -> None:
    plain = ComponentIdentifier("A", "m", {"p": 1})
    only_none = ComponentIdentifier("A", "m", {"p": 1}, attributes={"model_version": None})
    with_attr = ComponentIdentifier("A", "m", {"p": 1}, attributes={"model_version": "v2"})
    assert only_none.hash == plain.hash
    assert with_attr.hash != plain.hash
    assert with_attr.hash_dict()["attributes"] == {"model_version": "v2"}
    assert build_eval_dict(with_attr, {"x": ChildEvalRule()}) == build_eval_dict(
        plain, {"x": ChildEvalRule()}
    )
    assert "attributes" not in plain.to_dict()
    out = with_attr.to_dict()
    assert list(out)[-1] == "attributes"
    back = ComponentIdentifier.from_dict(out)
    assert back.attributes == {"model_version": "v2"}
    assert back.params == {"p": 1}
    assert back.content_hash() == with_attr.hash


# ---------------------------------------------------------------------------------------------
# Eval rules
# ---------------------------------------------------------------------------------------------


def test_child_eval_rule_from_dict() -> None:
    assert ChildEvalRule.from_dict({}) == ChildEvalRule()
    assert ChildEvalRule.from_dict({"exclude": True}).exclude is True
    rule = ChildEvalRule.from_dict({"included_params": ["a", "b"]})
    assert rule.included_params == frozenset({"a", "b"})
    rule = ChildEvalRule.from_dict({"included_item_values": {"flag": True}})
    assert rule.included_item_values == {"flag": True}


def test_base_evaluation_identifier_has_no_rules() -> None:
    ident = ComponentIdentifier("S", "m", children={"prompt_target": _target(model_name="a")})
    assert EvaluationIdentifier.CHILD_EVAL_RULES == {}
    assert EvaluationIdentifier(ident).eval_hash == ident.hash


def test_eval_rules_table() -> None:
    scorer = ScorerEvaluationIdentifier.CHILD_EVAL_RULES
    assert scorer == {
        "prompt_target": ChildEvalRule(
            included_params=frozenset({"model_name", "temperature", "top_p"})
        )
    }
    attack = AtomicAttackEvaluationIdentifier.CHILD_EVAL_RULES
    assert attack["objective_target"].included_params == frozenset({"temperature"})
    assert attack["adversarial_chat"].included_params == frozenset(
        {"model_name", "temperature", "top_p"}
    )
    assert attack["objective_scorer"].exclude is True
    assert attack["seeds"].included_item_values == {"is_general_technique": True}


def test_single_item_list_and_single_child_same_eval_dict() -> None:
    t = _target(model_name="gpt-4o", endpoint="e")
    rules = ScorerEvaluationIdentifier.CHILD_EVAL_RULES
    single = ComponentIdentifier("S", "m", children={"prompt_target": t})
    listed = ComponentIdentifier("S", "m", children={"prompt_target": [t]})
    assert build_eval_dict(single, rules) == build_eval_dict(listed, rules)
    assert single.hash != listed.hash


# ---------------------------------------------------------------------------------------------
# Forbidden param names (server policy)
# ---------------------------------------------------------------------------------------------


def test_forbidden_param_names_walks_tree() -> None:
    legacy = ComponentIdentifier.from_dict(
        {"class_name": "A", "class_module": "m", "__type__": "OldA", "ok": 1}
    )
    bad_child = ComponentIdentifier("C", "m", {"hash": "x", "params": {}})
    root = ComponentIdentifier(
        "R", "m", {"pyrit_version": "1"}, {"one": legacy, "many": [_target(), bad_child]}
    )
    assert forbidden_param_names(root) == [
        "pyrit_version",
        "one/__type__",
        "many[1]/hash",
        "many[1]/params",
    ]
    with pytest.raises(ValueError, match="many\\[1\\]/hash"):
        validate_param_names(root)


def test_validate_param_names_accepts_clean_identifiers() -> None:
    for vector in VECTORS:
        if vector["id"] in {"v0016", "v0051"}:
            # PyRIT 0.12 keeps __type__/__module__ as params; the policy flags them.
            assert forbidden_param_names(_build(vector)) == ["__type__", "__module__"]
        else:
            validate_param_names(_build(vector))
    assert {"class_name", "class_module", "__type__", "__module__"} <= FORBIDDEN_PARAM_NAMES
