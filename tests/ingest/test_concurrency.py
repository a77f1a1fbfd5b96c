"""Four processes ingesting overlapping batches into one database lose nothing and never fail.

Issue 3. Each worker is a real OS process (forked, so it inherits the configured test database;
it opens its own connection) calling :func:`memory.storage.write.ingest` while the others write
the same conversations, messages, pieces, scores, attack results and labels. On SQLite the
IMMEDIATE transactions must queue on the busy timeout ("database is locked" is a failure); on
PostgreSQL the conflict handling of the inserts must still keep every row exactly once.
"""

from __future__ import annotations

import multiprocessing
import traceback
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, connections

from memory.models import (
    AttackResult,
    Conversation,
    Label,
    Message,
    MessagePiece,
    RelatedConversation,
    Score,
)
from memory.transfer.ingest.service import ingest

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 4
#: Each round writes a fresh generation of data: a re-sent batch would quietly restore a row
#: an earlier round lost, so every round must be a first write.
ROUNDS = 3
CONVERSATIONS = 8
MESSAGES = 6  # user / assistant alternating: sequences 1, 3 and 5 are answers
#: Seconds a worker waits for the others at a round's start before giving up.
BARRIER_TIMEOUT = 60

NAMESPACE = uuid.UUID("6f1d2c3b-4a59-4e68-9d7c-8b0a1f2e3d4c")
STARTED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
OPERATION = ("operation", "op_concurrency")
OPERATORS = ("alice", "bob", "carol", "dave")
HARMS = ("violence", "malware", "fraud", "hate", "self_harm", "privacy", "misinformation", "cbrn")
TARGET = {"class_name": "OpenAIChatTarget", "class_module": "pyrit.prompt_target"}
ATTACK = {"class_name": "RedTeamingAttack", "class_module": "pyrit.executor.attack"}
REFUSAL = {"class_name": "SelfAskRefusalScorer", "class_module": "pyrit.score"}
LIKERT = {"class_name": "SelfAskLikertScorer", "class_module": "pyrit.score"}


# --- the data: ROUNDS generations of CONVERSATIONS conversations, fixed ids ------------------


def _id(*parts: Any) -> str:
    return str(uuid.uuid5(NAMESPACE, "/".join(map(str, parts))))


def _conversation_id(g: int, c: int) -> str:
    return _id(g, "conversation", c)


def _partner(c: int) -> int:
    """The conversation that is a pruned branch of conversation ``c``'s attack.

    ``c`` and its partner share an operator, so the merged labels do not depend on which
    attack is written first, while their harm categories differ and must both survive.
    """
    return (c + CONVERSATIONS // 2) % CONVERSATIONS


def _labels(c: int) -> dict[str, str]:
    return dict([OPERATION, ("operator", OPERATORS[c % len(OPERATORS)])])


def _role(sequence: int) -> str:
    return "user" if sequence % 2 == 0 else "assistant"


def _parts(c: int, sequence: int) -> int:
    """Every conversation's second prompt, and even conversations' last answer, have two."""
    return 2 if sequence == 2 or (sequence == MESSAGES - 1 and c % 2 == 0) else 1


def _piece(g: int, c: int, sequence: int, k: int) -> dict[str, Any]:
    piece_id = _id(g, "piece", c, sequence, k)
    value = f"generation {g}, conversation {c}, turn {sequence}, part {k}"
    return {
        "id": piece_id,
        "role": _role(sequence),
        "conversation_id": _conversation_id(g, c),
        "sequence": sequence,
        "timestamp": (STARTED + timedelta(minutes=c, seconds=sequence)).isoformat(),
        "original_value": value,
        "original_value_data_type": "text",
        "converted_value": value,
        "converted_value_data_type": "text",
        "response_error": "none",
        "original_prompt_id": piece_id,
        "prompt_metadata": {},
        "converter_identifiers": [],
        # explicit, so the copy of an attack's labels onto bare pieces (§9.2) cannot depend on
        # which attacks a batch happens to carry
        "labels": _labels(c),
        "targeted_harm_categories": [HARMS[c]],
    }


def _scores(g: int, c: int, sequence: int, k: int) -> list[dict[str, Any]]:
    """A refusal score on every answer; a Likert score on the last one."""
    common = {
        "message_piece_id": _id(g, "piece", c, sequence, k),
        "timestamp": (STARTED + timedelta(minutes=c, seconds=sequence + 1)).isoformat(),
        "objective": f"objective {c}",
    }
    scores = [
        {
            "id": _id(g, "refusal", c, sequence, k),
            "score_value": "true" if (c + sequence + k) % 3 == 0 else "false",
            "score_type": "true_false",
            "score_category": ["refusal"],
            "scorer_class_identifier": REFUSAL,
            **common,
        }
    ]
    if sequence == MESSAGES - 1 and k == 0:
        scores.append(
            {
                "id": _id(g, "likert", c),
                "score_value": str(c / (CONVERSATIONS - 1)),
                "score_type": "float_scale",
                "score_category": [HARMS[c]],
                "scorer_class_identifier": LIKERT,
                **common,
            }
        )
    return scores


def _conversation_scores(g: int, c: int) -> list[dict[str, Any]]:
    return [
        score
        for sequence in range(1, MESSAGES, 2)
        for k in range(_parts(c, sequence))
        for score in _scores(g, c, sequence, k)
    ]


def _attack(g: int, c: int) -> dict[str, Any]:
    return {
        "attack_result_id": _id(g, "attack", c),
        "conversation_id": _conversation_id(g, c),
        "objective": f"objective {c}",
        "attack_identifier": ATTACK,
        "last_response": _id(g, "piece", c, MESSAGES - 1, 0),
        "last_score": _id(g, "likert", c),
        "executed_turns": MESSAGES // 2,
        "outcome": "success" if c % 2 else "failure",
        "timestamp": (STARTED + timedelta(minutes=c, seconds=30)).isoformat(),
        "related_conversations": [
            {"conversation_id": _conversation_id(g, _partner(c)), "conversation_type": "pruned"}
        ],
        "labels": _labels(c),
        "targeted_harm_categories": [HARMS[c]],
    }


def _payload(g: int, conversations: list[int], **loose: list[dict]) -> dict[str, Any]:
    """Whole conversations in PyRIT 1.1.0 shape with their scores and attack results."""
    payload: dict[str, Any] = {
        "pyrit_version": "1.1.0",
        "conversations": [
            {
                "conversation": {
                    "conversation_id": _conversation_id(g, c),
                    "target_identifier": TARGET,
                },
                "messages": [
                    {"message_pieces": [_piece(g, c, s, k) for k in range(_parts(c, s))]}
                    for s in range(MESSAGES)
                ],
            }
            for c in conversations
        ],
        "scores": [score for c in conversations for score in _conversation_scores(g, c)],
        "attack_results": [_attack(g, c) for c in conversations],
    }
    for key, items in loose.items():
        payload[key] = payload.get(key, []) + items
    return payload


def _batches(g: int) -> list[dict[str, Any]]:
    """Four overlapping batches of one generation: each conversation is in two or three.

    The last one also carries items of other batches on their own: the scores of
    conversations 1 and 5 (a score need not wait for its piece) and only the second piece of
    conversation 1's two-piece prompt, so two writers add pieces to one message at once.
    """
    return [
        _payload(g, [0, 1, 2, 3]),
        _payload(g, [2, 3, 4, 5]),
        _payload(g, [4, 5, 6, 7]),
        _payload(
            g,
            [0, 3, 6],
            scores=[*_conversation_scores(g, 1), *_conversation_scores(g, 5)],
            message_pieces=[_piece(g, 1, 2, 1)],
        ),
    ]


# --- the workers ------------------------------------------------------------------------------


def _worker(number: int, rounds: list[list[dict]], start, results) -> None:
    """Each round, post one of that round's batches; all workers start a round together."""
    outcome: dict[str, Any] = {"worker": number, "errors": [], "exceptions": [], "created": []}
    try:
        for round_, batches in enumerate(rounds):
            start.wait(BARRIER_TIMEOUT)
            report = ingest(payload=batches[(number + round_) % len(batches)])
            outcome["errors"].extend(report.errors)
            outcome["created"].append({kind: c["created"] for kind, c in report.counts.items()})
    except BaseException:  # any failure is the finding
        outcome["exceptions"].append(traceback.format_exc())
        start.abort()
    finally:
        connections.close_all()
        results.put(outcome)


def _run_workers(rounds: list[list[dict]]) -> list[dict[str, Any]]:
    context = multiprocessing.get_context("fork")
    start = context.Barrier(WORKERS)
    results = context.Queue()
    # A forked child must not share the parent's socket or SQLite handle.
    connections.close_all()
    processes = [
        context.Process(target=_worker, args=(n, rounds, start, results)) for n in range(WORKERS)
    ]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=BARRIER_TIMEOUT * 2) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
    assert [p.exitcode for p in processes] == [0] * WORKERS
    return outcomes


# --- the test ---------------------------------------------------------------------------------


def test_four_processes_ingesting_overlapping_batches_lose_nothing():
    outcomes = _run_workers([_batches(g) for g in range(ROUNDS)])

    exceptions = [text for o in outcomes for text in o["exceptions"]]
    assert exceptions == [], "\n".join(exceptions)  # e.g. "database is locked"
    assert [o["errors"] for o in outcomes] == [[]] * WORKERS

    everything = [(g, c) for g in range(ROUNDS) for c in range(CONVERSATIONS)]
    conversations = {_conversation_id(g, c): c for g, c in everything}
    pieces = {
        _id(g, "piece", c, s, k): (_conversation_id(g, c), s, _role(s))
        for g, c in everything
        for s in range(MESSAGES)
        for k in range(_parts(c, s))
    }
    scores = {score["id"] for g, c in everything for score in _conversation_scores(g, c)}
    attacks = {_id(g, "attack", c): (g, c) for g, c in everything}

    assert set(Conversation.objects.values_list("conversation_id", flat=True)) == set(conversations)
    assert Message.objects.count() == len(everything) * MESSAGES
    # Every piece once, in the right message, which has the right role.
    stored = {
        str(pk): (conversation_id, sequence, role)
        for pk, conversation_id, sequence, role in MessagePiece.objects.values_list(
            "id", "message__conversation__conversation_id", "message__sequence", "message__role"
        )
    }
    assert stored == pieces
    positions = Counter(MessagePiece.objects.values_list("message_id", "position"))
    assert [key for key, seen in positions.items() if seen > 1] == []
    assert {str(pk) for pk in Score.objects.values_list("id", flat=True)} == scores
    assert {
        (str(pk), str(response), str(score))
        for pk, response, score in AttackResult.objects.values_list(
            "id", "last_response_id", "last_score_id"
        )
    } == {
        (pk, _id(g, "piece", c, MESSAGES - 1, 0), _id(g, "likert", c))
        for pk, (g, c) in attacks.items()
    }
    assert sorted(
        (str(pk), conversation_id, kind)
        for pk, conversation_id, kind in RelatedConversation.objects.values_list(
            "attack_result_id", "conversation__conversation_id", "conversation_type"
        )
    ) == sorted((pk, _conversation_id(g, _partner(c)), "pruned") for pk, (g, c) in attacks.items())

    # Labels: one row per pair, linked once to each conversation and each attack result.
    assert sorted(Label.objects.values_list("key", "value")) == sorted(
        {OPERATION} | {("operator", o) for o in OPERATORS}
    )
    conversation_labels = Conversation.label_index.through.objects.values_list(
        "conversation__conversation_id", "label__key", "label__value"
    )
    assert sorted(conversation_labels) == sorted(
        (cid, *pair) for cid, c in conversations.items() for pair in _labels(c).items()
    )
    attack_labels = AttackResult.label_index.through.objects.values_list(
        "attackresult_id", "label__key", "label__value"
    )
    assert sorted((str(pk), key, value) for pk, key, value in attack_labels) == sorted(
        (pk, *pair) for pk, (_, c) in attacks.items() for pair in _labels(c).items()
    )
    # A conversation's harm categories are its own plus those of the attack it is a pruned
    # branch of, merged into one row by two writers: neither merge may be lost, and its start
    # is its earliest piece whichever writer created the row.
    merged = {
        row.conversation_id: (row.labels, set(row.targeted_harm_categories), row.started_at)
        for row in Conversation.objects.all()
    }
    assert merged == {
        cid: (_labels(c), {HARMS[c], HARMS[_partner(c)]}, STARTED + timedelta(minutes=c))
        for cid, c in conversations.items()
    }
    harm_links = Conversation.harm_category_index.through.objects.values_list(
        "conversation__conversation_id", "harmcategory__name"
    )
    assert sorted(harm_links) == sorted(
        (cid, harm) for cid, c in conversations.items() for harm in (HARMS[c], HARMS[_partner(c)])
    )

    # SQLite runs the transactions one after another, so exactly one report created each row.
    # PostgreSQL's concurrent transactions may each find a row missing and report it created.
    created = Counter()
    for outcome in outcomes:
        for counts in outcome["created"]:
            created.update(counts)
    expected = Counter(message_pieces=len(pieces), scores=len(scores), attack_results=len(attacks))
    for kind, count in expected.items():
        if connection.vendor == "sqlite":
            assert created[kind] == count, kind
        else:
            assert created[kind] >= count, kind
