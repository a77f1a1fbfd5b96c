"""The size limits on untrusted JSON: exact boundaries and the paths of what is over."""

from __future__ import annotations

import random

import pytest

from memory.transfer.ingest.limits import Limits, _within, check_payload, count_items

LIMITS = Limits(max_body_bytes=10_000, max_text_chars=5, max_depth=3, max_key_chars=20)


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
    check = check_payload(payload, LIMITS)
    assert [p.path for p in check.refused] == paths
    assert check.unstorable == []


def _random_json(rng: random.Random, depth: int = 0) -> object:
    kind = rng.random()
    if depth > 5 or kind < 0.4:
        return "x" * rng.randint(0, 7)
    if kind < 0.5:
        return rng.choice([1, 2.5, None, True])
    if kind < 0.75:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["k", "kk", "long-key", "k\udc80"]
    return {
        rng.choice(keys) + str(i): _random_json(rng, depth + 1) for i in range(rng.randint(0, 3))
    }


def test_the_fast_check_agrees_with_the_full_walk():
    rng = random.Random(11)
    outcomes = set()
    for _ in range(2000):
        payload = _random_json(rng)
        fine = _within(payload, LIMITS)
        check = check_payload(payload, LIMITS)
        assert fine == (check.refused == [] and check.unstorable == [])
        outcomes.add(fine)
    assert outcomes == {True, False}


def test_a_long_key_refuses_the_request_and_names_it():
    check = check_payload({"labels": {"a" * 50: "x", "ok": "y"}}, LIMITS)
    assert [p.message for p in check.refused] == ["key of 50 characters exceeds the limit of 20"]
    assert check.refused[0].path.startswith("labels.aaaa")


def test_a_lone_surrogate_is_a_problem_of_its_item_only():
    payload = {"message_pieces": [{"v": "fine"}, {"v": "bad \ud800"}, {"k\udfff": 1}]}
    check = check_payload(payload, LIMITS)
    assert check.refused == []
    assert [p.path for p in check.unstorable] == [
        "message_pieces[1].v",
        "message_pieces[2].k\\udfff",  # echoed escaped (printable), so the error encodes
    ]
    assert "surrogate" in check.unstorable[0].message


def test_items_are_counted_wherever_they_are_nested():
    piece = {"original_value": "x"}
    assert count_items([piece, piece]) == 2
    assert count_items({"message_pieces": [piece], "scores": [{}, {}], "seeds": [{}]}) == 4
    conversations = {
        "conversations": [
            {"conversation": {}, "messages": [{"message_pieces": [piece, piece]}, {}]},
        ]
    }
    # one conversation, two messages, two pieces
    assert count_items(conversations) == 5
