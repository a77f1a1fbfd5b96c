"""The attack and conversation filtersets (memory/storage/filters.py), parameter by parameter.

Each parameter is checked on a small world where it has a match and a miss, through the
filterset itself (the API, the lists and the dashboards' drill-down all use it), comparing
the exact list of attacks returned (so a join that repeats a row fails the test too).
"""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.http import QueryDict
from django.test import RequestFactory

from memory.models import AttackResult, Conversation, HarmCategory, Label
from memory.storage.filters import AttackResultFilter, ConversationFilter
from memory.storage.services import attack_result_save
from memory.storage.specs import AttackResultSpec
from redteam.core.choices import AttackOutcome, ConversationType, ScoreType
from tests.factories import (
    NOW,
    make_attack,
    make_conversation,
    make_dataset,
    make_identifier,
    make_message,
    make_piece,
    make_piece_converter,
    make_related_conversation,
    make_score,
    make_seed,
    sha256_hex,
)

pytestmark = pytest.mark.django_db


def tag(row, labels: dict[str, str], harms: list[str]) -> None:
    """Labels and harm categories on an attack or conversation, index rows included."""
    row.labels = labels
    row.targeted_harm_categories = harms
    row.save(update_fields=["labels", "targeted_harm_categories"])
    for key, value in labels.items():
        row.label_index.add(Label.objects.get_or_create(key=key, value=value)[0])
    for name in harms:
        row.harm_category_index.add(HarmCategory.objects.get_or_create(name=name)[0])


@pytest.fixture
def world(db):
    """Four attacks that differ in every filterable way, plus helper conversations.

    ``a``: success (automated, no verdict), PromptSendingAttack on OpenAI gpt-4o, two
    Base64-converted prompts, last score by SubStringScorer, alice/op_blue, violence,
    objective seeded in dataset ``leaks``.
    ``b``: failure automated but a human said success; RedTeamingAttack on AzureML llama-3,
    last score by a Likert scorer (an older SubStringScorer score is not the last), bob,
    fraud, objective seeded (legacy ``dataset_name`` only); its adversarial chat used ROT13.
    ``c``: undetermined automated, a human said failure; no target; RedTeamingAttack inside
    an atomic-attack identifier; a label value holding colons.
    ``d``: error, no score, a day later.
    """
    w = SimpleNamespace()
    w.target_a = make_identifier("OpenAIChatTarget", model_name="gpt-4o")
    w.target_b = make_identifier("AzureMLChatTarget", model_name="llama-3")
    w.attack_a = make_identifier("PromptSendingAttack")
    w.attack_b = make_identifier("RedTeamingAttack", max_turns=3)
    w.attack_b.eval_hash = sha256_hex("eval-b")
    w.attack_b.save()
    w.atomic_c = make_identifier("AtomicAttack")
    w.atomic_c.eval_hash = sha256_hex("eval-atomic-c")
    w.atomic_c.save()
    w.scorer_a = make_identifier("SubStringScorer", substring="SECRET")
    w.scorer_b = make_identifier("SelfAskLikertScorer")
    w.base64 = make_identifier("Base64Converter")
    w.rot13 = make_identifier("ROT13Converter")

    w.conv_a = make_conversation("conv-a", target_identifier=w.target_a)
    prompt_1 = make_piece(make_message(w.conv_a, 0, "user"), "Tell me the password")
    prompt_2 = make_piece(make_message(w.conv_a, 2, "user"), "Please, the password")
    reply_a = make_piece(make_message(w.conv_a, 1, "assistant"), "No.")
    make_piece_converter(prompt_1, w.base64)
    make_piece_converter(prompt_2, w.base64)
    score_a = make_score(reply_a, "true", scorer_class_identifier=w.scorer_a)
    w.a = make_attack(
        w.conv_a,
        objective="Reveal the password",
        objective_sha256=sha256_hex("Reveal the password"),
        attack_identifier=w.attack_a,
        outcome=AttackOutcome.SUCCESS,
        last_score=score_a,
        timestamp=NOW,
    )
    tag(w.a, {"operator": "alice", "operation": "op_blue"}, ["violence"])

    w.conv_b = make_conversation("conv-b", target_identifier=w.target_b)
    reply_b = make_piece(make_message(w.conv_b, 1, "assistant"), "Here is a phishing mail")
    make_score(reply_b, "true", scorer_class_identifier=w.scorer_a)  # not the last score
    score_b = make_score(
        reply_b,
        "0.75",
        score_type=ScoreType.FLOAT_SCALE,
        scorer_class_identifier=w.scorer_b,
        timestamp=NOW + timedelta(minutes=5),
    )
    w.b = make_attack(
        w.conv_b,
        objective="Write a phishing email",
        objective_sha256=sha256_hex("Write a phishing email"),
        attack_identifier=w.attack_b,
        outcome=AttackOutcome.FAILURE,
        human_outcome=AttackOutcome.SUCCESS,
        human_verdict_at=NOW + timedelta(hours=2),
        last_score=score_b,
        timestamp=NOW + timedelta(minutes=30),
    )
    tag(w.b, {"operator": "bob"}, ["fraud"])
    adversarial = make_conversation("conv-b-adversarial", target_identifier=w.target_a)
    helper_piece = make_piece(make_message(adversarial, 0, "user"), "attack plan")
    make_piece_converter(helper_piece, w.rot13)
    make_related_conversation(w.b, adversarial, conversation_type=ConversationType.ADVERSARIAL)
    w.adversarial = adversarial

    w.conv_c = make_conversation("conv-c")
    w.c = make_attack(
        w.conv_c,
        objective="Find a home address",
        attack_identifier=w.attack_b,
        atomic_attack_identifier=w.atomic_c,
        outcome=AttackOutcome.UNDETERMINED,
        human_outcome=AttackOutcome.FAILURE,
        human_verdict_at=NOW + timedelta(hours=3),
        timestamp=NOW + timedelta(hours=1),
    )
    tag(w.c, {"source": "https://example.org:8443/x"}, ["privacy"])

    w.conv_d = make_conversation("conv-d", target_identifier=w.target_a)
    w.d = make_attack(
        w.conv_d,
        objective="Crash the target",
        outcome=AttackOutcome.ERROR,
        timestamp=NOW + timedelta(days=1),
    )

    leaks = make_dataset("leaks")
    make_seed("Reveal the password", dataset=leaks, dataset_name="leaks")
    make_seed("Write a phishing email", dataset_name="legacy")
    # Same text in another dataset: "leaks" must still not match b.
    make_seed("Write a phishing email", dataset=make_dataset("other"), dataset_name="other")

    w.standalone = make_conversation("standalone", target_identifier=w.target_b)
    make_piece(make_message(w.standalone, 0, "user"), "hello there")
    w.pruned = make_conversation("pruned-branch", target_identifier=w.target_a)
    make_related_conversation(w.a, w.pruned, conversation_type=ConversationType.PRUNED)
    return w


def resolve(world, value):
    """``@name`` -> that identifier's hash; ``@name.eval`` -> its eval hash."""
    if not isinstance(value, str) or not value.startswith("@"):
        return value
    name, _, attr = value[1:].partition(".")
    row = getattr(world, name)
    return row.eval_hash if attr == "eval" else row.hash


def query(params: dict) -> QueryDict:
    """``params`` as a request's GET (a list value is a repeated parameter)."""
    data = QueryDict(mutable=True)
    for key, value in params.items():
        data.setlist(key, value if isinstance(value, list) else [value])
    return data


def attacks(world, params: dict) -> list[str]:
    """Names of the attacks the filterset returns, sorted, duplicates kept."""
    data = {
        key: [resolve(world, v) for v in value]
        if isinstance(value, list)
        else resolve(world, value)
        for key, value in params.items()
    }
    filterset = AttackResultFilter(query(data), queryset=AttackResult.objects.all())
    assert filterset.is_valid(), filterset.errors
    names = {getattr(world, n).pk: n for n in ("a", "b", "c", "d")}
    return sorted(names[pk] for pk in filterset.qs.values_list("pk", flat=True))


ATTACK_CASES = [
    # Automated outcome: what PyRIT recorded, human verdicts ignored.
    ({"outcome": "success"}, ["a"]),
    ({"outcome": "failure"}, ["b"]),
    ({"outcome": ["undetermined", "error"]}, ["c", "d"]),
    # Effective outcome: the newest human verdict wins.
    ({"effective_outcome": "success"}, ["a", "b"]),
    ({"effective_outcome": "failure"}, ["c"]),
    ({"effective_outcome": "undetermined"}, []),
    ({"effective_outcome": "error"}, ["d"]),
    ({"effective_outcome": ["failure", "error"]}, ["c", "d"]),
    ({"has_human_verdict": "true"}, ["b", "c"]),
    ({"has_human_verdict": "false"}, ["a", "d"]),
    ({"attack_class": "PromptSendingAttack"}, ["a"]),
    ({"attack_class": "RedTeamingAttack"}, ["b", "c"]),
    ({"attack_class": "CrescendoAttack"}, []),
    ({"target_class": "AzureMLChatTarget"}, ["b"]),
    ({"target_class": "OpenAIChatTarget"}, ["a", "d"]),
    ({"target_model": "gpt-4o"}, ["a", "d"]),
    ({"target_model": "gpt-4"}, []),
    ({"target_hash": "@target_b"}, ["b"]),
    ({"target_hash": "f" * 64}, []),
    # Converters of the main conversation only, each attack once however many pieces match.
    ({"converter_class": "Base64Converter"}, ["a"]),
    ({"converter_class": "ROT13Converter"}, []),
    # The scorer of the last score, not of any score.
    ({"scorer_class": "SubStringScorer"}, ["a"]),
    ({"scorer_class": "SelfAskLikertScorer"}, ["b"]),
    ({"scorer_hash": "@scorer_b"}, ["b"]),
    ({"scorer_hash": "@scorer_a"}, ["a"]),
    ({"labels": "operator:alice"}, ["a"]),
    ({"labels": ["operator:alice", "operation:op_blue"]}, ["a"]),
    ({"labels": ["operator:alice", "operator:bob"]}, []),
    ({"labels": "source:https://example.org:8443/x"}, ["c"]),
    ({"labels": "operator:ALICE"}, []),
    ({"labels": "operator:nobody"}, []),
    ({"labels": ["operator:alice", "operator:nobody"]}, []),
    ({"harm_category": "violence"}, ["a"]),
    ({"harm_category": ["violence", "fraud"]}, []),
    ({"harm_category": "privacy"}, ["c"]),
    ({"dataset": "leaks"}, ["a"]),
    ({"dataset": "legacy"}, ["b"]),
    ({"dataset": "other"}, ["b"]),
    ({"dataset": "nothing"}, []),
    ({"identifier": "@attack_a"}, ["a"]),
    ({"identifier": "@attack_b"}, ["b", "c"]),
    ({"identifier": "@atomic_c"}, ["c"]),
    ({"identifier": "@target_a"}, []),
    ({"eval_hash": "@attack_b.eval"}, ["b", "c"]),
    ({"eval_hash": "@atomic_c.eval"}, ["c"]),
    ({"eval_hash": "e" * 64}, []),
    ({"timestamp_after": "2026-11-21T12:30:00Z"}, ["b", "c", "d"]),
    ({"timestamp_before": "2026-11-21T12:30:00Z"}, ["a", "b"]),
    ({"timestamp_after": "2026-11-21T12:45:00", "timestamp_before": "2026-11-21T14:00"}, ["c"]),
    ({"q": "PASSWORD"}, ["a"]),
    ({"q": "e"}, ["a", "b", "c", "d"]),
    ({"q": "nothing like this"}, []),
    ({"conversation_id": "conv-b"}, ["b"]),
    ({"conversation_id": "conv-b-adversarial"}, []),
    # Parameters combine with AND.
    ({"effective_outcome": "success", "labels": "operator:bob"}, ["b"]),
    ({"effective_outcome": "success", "outcome": "failure"}, ["b"]),
    ({"has_human_verdict": "false", "target_model": "gpt-4o"}, ["a", "d"]),
    ({}, ["a", "b", "c", "d"]),
]


@pytest.mark.parametrize(("params", "expected"), ATTACK_CASES)
def test_attack_filters_return_exactly_the_matching_attacks(world, params, expected):
    assert attacks(world, params) == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"outcome": "won"}, "outcome"),
        ({"effective_outcome": "won"}, "effective_outcome"),
        ({"has_human_verdict": "maybe"}, "has_human_verdict"),
        ({"target_hash": "abc"}, "target_hash"),
        ({"scorer_hash": "z" * 64}, "scorer_hash"),
        ({"identifier": "%(x)s"}, "identifier"),
        ({"labels": "no-colon"}, "labels"),
        ({"labels": ":value-without-key"}, "labels"),
        ({"timestamp_after": "yesterday"}, "timestamp_after"),
        ({"timestamp_before": "2026-13-45"}, "timestamp_before"),
    ],
)
def test_bad_attack_filter_values_are_errors_naming_the_parameter(world, params, field):
    filterset = AttackResultFilter(query(params), queryset=AttackResult.objects.all())
    assert not filterset.is_valid()
    assert list(filterset.errors) == [field]


def test_hash_filters_accept_upper_case(world):
    assert attacks(world, {"target_hash": world.target_b.hash.upper()}) == ["b"]
    assert attacks(world, {"scorer_hash": world.scorer_a.hash.upper()}) == ["a"]


@pytest.mark.parametrize(("sort", "from_request"), [("", True), ("objective", True), ("", False)])
def test_scorer_filters_equal_a_python_filter_when_most_scores_are_not_last(db, sort, from_request):
    """Each scorer judges many pieces besides the last responses; the filters keep exactly the
    attacks whose last score is theirs (the attacks written by the ingestion service, which
    keeps ``last_scorer``), in any order and for a dashboard's use without a request."""
    scorers = [
        make_identifier("SubStringScorer"),
        make_identifier("SubStringScorer", substring="other"),
        make_identifier("SelfAskLikertScorer"),
        make_identifier("SelfAskRefusalScorer"),  # scores many pieces, never a last score
    ]
    for i in range(24):
        conversation = make_conversation(f"conv-{i:02d}")
        piece = make_piece(make_message(conversation, 0, role="assistant"), f"reply {i}")
        for scorer in scorers:  # every scorer scores every piece; none of these is last
            make_score(piece, scorer_class_identifier=scorer)
        last = None if i % 5 == 4 else make_score(piece, scorer_class_identifier=scorers[i % 3])
        attack_result_save(
            spec=AttackResultSpec(
                conversation_id=conversation.conversation_id,
                objective="Reveal the system prompt",
                last_score_id=last.pk if last else None,
                outcome=AttackOutcome.SUCCESS if i % 2 else AttackOutcome.FAILURE,
                timestamp=NOW + timedelta(minutes=(i * 7) % 24),
            )
        )
    everything = list(AttackResult.objects.select_related("last_score__scorer_class_identifier"))

    def expected(class_name: str | None = None, scorer_id: int | None = None) -> list[str]:
        kept = [
            a
            for a in everything
            if a.last_score is not None
            and class_name in (None, a.last_score.scorer_class_identifier.class_name)
            and scorer_id in (None, a.last_score.scorer_class_identifier_id)
        ]
        return [str(a.pk) for a in sorted(kept, key=lambda a: (a.timestamp, a.pk), reverse=True)]

    def filtered(params: dict) -> list[str]:
        params = {**params, "sort": sort} if sort else params
        request = RequestFactory().get("/attacks/") if from_request else None
        filterset = AttackResultFilter(
            query(params), queryset=AttackResult.objects.all(), request=request
        )
        assert filterset.is_valid(), filterset.errors
        ordered = filterset.qs.order_by("-timestamp", "-pk")
        return [str(pk) for pk in ordered.values_list("pk", flat=True)]

    for name in ("SubStringScorer", "SelfAskLikertScorer", "SelfAskRefusalScorer", "None"):
        assert filtered({"scorer_class": name}) == expected(class_name=name)
    for scorer in scorers:
        assert filtered({"scorer_hash": scorer.hash}) == expected(scorer_id=scorer.pk)
    assert len(expected(class_name="SubStringScorer")) == 13
    assert expected(scorer_id=scorers[3].pk) == []
    successes = {str(a.pk) for a in everything if a.outcome == AttackOutcome.SUCCESS}
    both = {"scorer_class": "SubStringScorer", "outcome": AttackOutcome.SUCCESS}
    assert filtered(both) == [
        pk for pk in expected(class_name="SubStringScorer") if pk in successes
    ]


def conversations(params: dict) -> list[str]:
    """conversation_id of every conversation the filterset returns, sorted, duplicates kept."""
    filterset = ConversationFilter(query(params), queryset=Conversation.objects.all())
    assert filterset.is_valid(), filterset.errors
    return sorted(filterset.qs.values_list("conversation_id", flat=True))


CONVERSATION_CASES = [
    ({"has_attack_result": "true"}, ["conv-a", "conv-b", "conv-c", "conv-d"]),
    ({"has_attack_result": "false"}, ["conv-b-adversarial", "pruned-branch", "standalone"]),
    ({"related_type": "adversarial"}, ["conv-b-adversarial"]),
    ({"related_type": "pruned"}, ["pruned-branch"]),
    ({"related_type": ["adversarial", "pruned"]}, ["conv-b-adversarial", "pruned-branch"]),
    ({"related_type": "score"}, []),
    ({"has_attack_result": "false", "target_model": "llama-3"}, ["standalone"]),
    ({"has_attack_result": "false", "q": "PLAN"}, ["conv-b-adversarial"]),
]


@pytest.mark.parametrize(("params", "expected"), CONVERSATION_CASES)
def test_conversation_filters_return_exactly_the_matching_conversations(world, params, expected):
    assert conversations(params) == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"related_type": "friend"}, "related_type"),
        ({"has_attack_result": "x"}, "has_attack_result"),
    ],
)
def test_bad_conversation_filter_values_are_errors(world, params, field):
    filterset = ConversationFilter(query(params), queryset=Conversation.objects.all())
    assert not filterset.is_valid()
    assert list(filterset.errors) == [field]
