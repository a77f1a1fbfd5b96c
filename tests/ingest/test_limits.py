"""The size limits on untrusted JSON: exact boundaries and the paths of what is over."""

from __future__ import annotations

import random

import pytest

from memory.transfer.ingest.limits import Limits, _within, limit_problems

LIMITS = Limits(max_body_bytes=10_000, max_text_chars=5, max_depth=3)


class Text(str):
    """A str subclass, as a caller other than ``json.loads`` might pass."""


def nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("payload", "paths"),
    [
        ({"a": "12345"}, []),
        ({"a": "123456"}, ["a"]),
        ({"a": [{"b": "123456"}]}, ["a[0].b"]),
        ("123456", [""]),
        (nested(3), []),
        (nested(4), ["[0][0][0]"]),
        ({"a": ["ok", "toolong", {"c": "alsotoolong"}]}, ["a[1]", "a[2].c"]),
        ({"a": Text("123456"), "b": Text("1")}, ["a"]),
        ({"a": 1, "b": 2.5, "c": None, "d": True}, []),
    ],
)
def test_limits_report_the_path_of_each_value_over_a_limit(payload, paths):
    assert [p.path for p in limit_problems(payload, LIMITS)] == paths


def _random_json(rng: random.Random, depth: int = 0) -> object:
    kind = rng.random()
    if depth > 5 or kind < 0.4:
        return "x" * rng.randint(0, 7)
    if kind < 0.5:
        return rng.choice([1, 2.5, None, True])
    if kind < 0.75:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": _random_json(rng, depth + 1) for i in range(rng.randint(0, 3))}


def test_the_fast_check_agrees_with_the_full_walk():
    rng = random.Random(11)
    outcomes = set()
    for _ in range(2000):
        payload = _random_json(rng)
        fine = _within(payload, LIMITS)
        assert fine == (limit_problems(payload, LIMITS) == [])
        outcomes.add(fine)
    assert outcomes == {True, False}
