"""Hooks for the API fuzzer (``SCHEMATHESIS_HOOKS``): realistic ingestion bodies with the values
that used to crash the server.

The ingestion endpoint takes any JSON object, so the fuzzer's own bodies are mostly refused for
their keys. Here, bodies for ``POST /api/v1/ingest/`` are PyRIT pieces, scores and attack
results whose strings may hold NUL (``\\x00``), lone surrogates (``\\ud800``), U+FFFE and very
long ids, whose integers may be far beyond 64 bits, and whose labels may nest.
"""

from __future__ import annotations

import uuid

import schemathesis
from hypothesis import strategies as st

HOSTILE_TEXT = st.one_of(
    st.text(min_size=1, max_size=30),
    st.text(alphabet=st.sampled_from(["a", " ", "\x00", "\ud800", "\udfff", "\ufffe", "é"])),
    st.sampled_from(["\x00", "a\x00b", "\ud800", "x" * 300, "c" * 5000]),
)
HOSTILE_INT = st.one_of(
    st.integers(min_value=-2, max_value=5),
    st.sampled_from([2**31 - 1, 2**31, 2**63, 10**30, -(10**30)]),
)
LABELS = st.dictionaries(
    HOSTILE_TEXT,
    st.one_of(HOSTILE_TEXT, st.dictionaries(st.text(max_size=3), st.integers())),
    max_size=3,
)
IDS = st.uuids().map(str)


def _piece(piece_id, conversation, sequence, value, labels, role):
    return {
        "id": piece_id,
        "conversation_id": conversation,
        "sequence": sequence,
        "role": role,
        "original_value": value,
        "converted_value": value,
        "labels": labels,
        "prompt_metadata": {"note": value},
    }


PIECES = st.builds(
    _piece,
    IDS,
    st.one_of(st.just("fuzz-conversation"), HOSTILE_TEXT),
    HOSTILE_INT,
    HOSTILE_TEXT,
    LABELS,
    st.sampled_from(["user", "assistant", "system"]),
)
SCORES = st.builds(
    lambda score_id, piece_id, rationale: {
        "id": score_id,
        "score_type": "true_false",
        "score_value": "true",
        "score_rationale": rationale,
        "scorer_class_identifier": {"class_name": "SubStringScorer", "class_module": "m"},
        "message_piece_id": piece_id,
    },
    IDS,
    IDS,
    HOSTILE_TEXT,
)
ATTACKS = st.builds(
    lambda conversation, objective, turns: {
        "attack_result_id": str(uuid.uuid4()),
        "conversation_id": conversation,
        "objective": objective,
        "executed_turns": turns,
        "outcome": "success",
    },
    st.one_of(st.just("fuzz-conversation"), HOSTILE_TEXT),
    HOSTILE_TEXT,
    HOSTILE_INT,
)
BODIES = st.fixed_dictionaries(
    {
        "message_pieces": st.lists(PIECES, max_size=3),
        "scores": st.lists(SCORES, max_size=2),
        "attack_results": st.lists(ATTACKS, max_size=2),
    }
)


@schemathesis.hook
def flatmap_body(context, body):
    """Ingestion bodies: realistic items with hostile values; other bodies as generated."""
    operation = context.operation
    if operation is not None and operation.path == "/api/v1/ingest/":
        return BODIES
    return st.just(body)
