"""Hypothesis property tests of redteam.core.identifiers (hash invariants and round trips)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redteam.core.identifiers import (
    FORBIDDEN_PARAM_NAMES,
    AtomicAttackEvaluationIdentifier,
    ComponentIdentifier,
    EvaluationIdentifier,
    ScorerEvaluationIdentifier,
)

# Modest example counts keep the file at a few seconds; no example database is written into
# the checkout.
PROPERTY_SETTINGS = settings(max_examples=100, deadline=None, database=None)

EVAL_CLASSES: list[type[EvaluationIdentifier]] = [
    ScorerEvaluationIdentifier,
    AtomicAttackEvaluationIdentifier,
]

# Child names include the ones the real eval rules key on, so those rules get exercised.
CHILD_NAMES = st.sampled_from(
    [
        "prompt_target",
        "objective_target",
        "adversarial_chat",
        "objective_scorer",
        "seeds",
        "request_converters",
        "attack",
        "inner",
    ]
)
PARAM_KEYS = st.one_of(
    st.sampled_from(["model_name", "temperature", "top_p", "endpoint", "is_general_technique"]),
    st.text(max_size=8),
).filter(lambda k: k not in FORBIDDEN_PARAM_NAMES)

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
    ),
    max_leaves=6,
)
NON_NULL_VALUES = JSON_VALUES.filter(lambda v: v is not None)
PARAMS = st.dictionaries(PARAM_KEYS, JSON_VALUES, max_size=4)


@st.composite
def identifiers(draw: st.DrawFn, depth: int = 2) -> ComponentIdentifier:
    """A random identifier tree with single and list children (possibly empty lists)."""
    children: dict[str, Any] = {}
    if depth > 0:
        # Narrow trees: depth matters for the properties, width mostly costs time.
        for name in draw(st.lists(CHILD_NAMES, max_size=2, unique=True)):
            if draw(st.booleans()):
                children[name] = draw(identifiers(depth=depth - 1))
            else:
                children[name] = draw(st.lists(identifiers(depth=depth - 1), max_size=2))
    return ComponentIdentifier(
        class_name=draw(st.text(min_size=1, max_size=12)),
        class_module=draw(st.text(min_size=1, max_size=20)),
        params=draw(PARAMS),
        children=children,
    )


def _all_hashes(identifier: ComponentIdentifier) -> list[str]:
    out = [identifier.hash]
    for child in identifier.children.values():
        for item in child if isinstance(child, list) else [child]:
            out.extend(_all_hashes(item))
    return out


def _rebuild(
    identifier: ComponentIdentifier,
    params: dict[str, Any] | None = None,
    children: dict[str, Any] | None = None,
) -> ComponentIdentifier:
    return ComponentIdentifier(
        identifier.class_name,
        identifier.class_module,
        identifier.params if params is None else params,
        identifier.children if children is None else children,
    )


@pytest.fixture(autouse=True)
def _isolated_storage() -> None:
    """Shadow tests/conftest.py's Django-settings fixture: these tests are pure Python."""


@PROPERTY_SETTINGS
@given(identifiers(), st.randoms(use_true_random=False))
def test_hash_ignores_param_and_child_order(ident: ComponentIdentifier, rnd: Any) -> None:
    params = list(ident.params.items())
    children = list(ident.children.items())
    rnd.shuffle(params)
    rnd.shuffle(children)
    shuffled = _rebuild(ident, dict(params), dict(children))
    assert shuffled.hash == ident.hash
    assert shuffled == ident


@PROPERTY_SETTINGS
@given(identifiers(depth=1), PARAM_KEYS)
def test_none_params_do_not_change_hash_but_are_kept(ident: ComponentIdentifier, key: str) -> None:
    with_none = _rebuild(ident, ident.params | {key: None})
    if ident.params.get(key) is None:
        assert with_none.hash == ident.hash
    assert key in with_none.to_dict()
    assert with_none.to_dict()[key] is None
    # of() drops them again.
    assert key not in ComponentIdentifier.of(object(), params=with_none.params).params


@PROPERTY_SETTINGS
@given(identifiers(depth=1), PARAM_KEYS, NON_NULL_VALUES)
def test_adding_a_non_null_param_changes_hash(
    ident: ComponentIdentifier, key: str, value: Any
) -> None:
    if key in ident.params:
        return
    assert _rebuild(ident, ident.params | {key: value}).hash != ident.hash


@PROPERTY_SETTINGS
@given(identifiers(), st.booleans())
def test_to_dict_from_dict_round_trip(ident: ComponentIdentifier, via_json: bool) -> None:
    stored = ident.to_dict()
    if via_json:
        stored = json.loads(json.dumps(stored))
    back = ComponentIdentifier.from_dict(stored)
    assert back == ident
    assert back.hash == ident.hash
    assert back.content_hash() == ident.hash
    assert _all_hashes(back) == _all_hashes(ident)
    assert back.to_dict() == ident.to_dict()
    for eval_class in EVAL_CLASSES:
        assert eval_class(back).eval_hash == eval_class(ident).eval_hash


@PROPERTY_SETTINGS
@given(identifiers(), st.integers(min_value=0, max_value=12))
def test_truncation_preserves_hashes(ident: ComponentIdentifier, limit: int) -> None:
    eval_hash = ScorerEvaluationIdentifier(ident).eval_hash
    stamped = ident.with_eval_hash(eval_hash)
    back = ComponentIdentifier.from_dict(
        json.loads(json.dumps(stamped.to_dict(max_value_length=limit)))
    )
    assert back.hash == ident.hash
    assert _all_hashes(back) == _all_hashes(ident)
    # A stamped eval hash survives even though the truncated content would hash differently.
    assert ScorerEvaluationIdentifier(back).eval_hash == eval_hash
    for value in back.params.values():
        if isinstance(value, str):
            assert len(value) <= limit + 3


def _bump_deepest(ident: ComponentIdentifier) -> ComponentIdentifier:
    """Add a param to the node reached by always following the first child."""
    for name in sorted(ident.children):
        child = ident.children[name]
        if isinstance(child, ComponentIdentifier):
            return _rebuild(ident, children=ident.children | {name: _bump_deepest(child)})
        if child:
            bumped = [_bump_deepest(child[0]), *child[1:]]
            return _rebuild(ident, children=ident.children | {name: bumped})
    # Drawn keys are at most 8 characters long, so this key is always new.
    return _rebuild(ident, ident.params | {"bumped_param": "bumped"})


@PROPERTY_SETTINGS
@given(identifiers(depth=3))
def test_nested_change_propagates_to_root(ident: ComponentIdentifier) -> None:
    bumped = _bump_deepest(ident)
    assert bumped.hash != ident.hash
    assert bumped != ident
