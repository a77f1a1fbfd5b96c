"""Database constraints and model-level behaviour of the memory models (contract §1 – §7, §13).

Every check/unique constraint gets a test that a violating row raises ``IntegrityError`` (the
violating statement runs in its own ``transaction.atomic()`` so the test can go on) and a test
that the valid boundary is accepted.
"""

from __future__ import annotations

import math
import uuid
from datetime import timedelta

import pytest
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import ProtectedError

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    ComponentIdentifierChild,
    Conversation,
    HarmCategory,
    Label,
    MediaBlob,
    Message,
    MessagePiece,
    PieceConverter,
    RelatedConversation,
    ScenarioResult,
    ScorableContent,
    Score,
)
from memory.models.media import media_upload_to
from redteam.core.choices import (
    AttackOutcome,
    ChatMessageRole,
    ConversationType,
    Originator,
    PromptDataType,
    PromptResponseError,
    ScenarioRunState,
    ScoreStatus,
    ScoreType,
)
from redteam.core.scoring import score_numeric_value
from tests.factories import (
    NOW,
    make_attack,
    make_conversation,
    make_identifier,
    make_message,
    make_piece,
    make_score,
    sha256_hex,
)

pytestmark = pytest.mark.django_db

SQLITE = connection.vendor == "sqlite"
HEX = sha256_hex("redline")

#: SHA-256 column values and whether the ``null or 64 lower-case hex`` checks accept them.
SHA_CASES = [
    pytest.param(HEX, True, id="lower-hex"),
    pytest.param("0" * 64, True, id="all-zero"),
    pytest.param(HEX.upper(), False, id="upper-hex"),
    pytest.param(HEX[:63], False, id="63-chars"),
    pytest.param(HEX + "a", False, id="65-chars"),
    pytest.param("g" * 64, False, id="non-hex"),
    pytest.param("", False, id="empty"),
    pytest.param(" " + HEX[1:], False, id="leading-space"),
]
#: A 64-hex value followed by a newline: Python's ``$`` (SQLite's REGEXP) matches before it.
SHA_TRAILING_NEWLINE = pytest.param(
    HEX + "\n",
    False,
    id="trailing-newline",
)


def assert_rejected(create, *args, errors=IntegrityError, **kwargs) -> None:
    """``create(*args, **kwargs)`` violates a database constraint."""
    with pytest.raises(errors), transaction.atomic():
        create(*args, **kwargs)


def sha_errors(value: str):
    """What rejects a bad SHA-256 value: the check constraint, or PostgreSQL's varchar(64)."""
    return (IntegrityError, DataError) if len(value) > 64 else IntegrityError


# --- ComponentIdentifier ----------------------------------------------------------------------


def test_identifier_hash_is_unique():
    first = make_identifier("OpenAIChatTarget")
    assert_rejected(
        ComponentIdentifier.objects.create,
        hash=first.hash,
        class_name="OtherTarget",
        class_module="pyrit.other",
    )
    # A different hash for the very same content is a different row.
    ComponentIdentifier.objects.create(
        hash=sha256_hex("other"), class_name=first.class_name, class_module=first.class_module
    )
    assert ComponentIdentifier.objects.filter(class_name="OpenAIChatTarget").count() == 2


def test_identifier_str_short_hash_and_by_hash(django_assert_num_queries):
    ident = make_identifier("Base64Converter")
    other = make_identifier("ROT13Converter")
    assert ident.short_hash == ident.hash[:8]
    assert str(ident) == f"Base64Converter::{ident.hash[:8]}"
    with django_assert_num_queries(1):
        found = ComponentIdentifier.objects.by_hash([ident.hash, other.hash, "f" * 64])
    assert found == {ident.hash: ident, other.hash: other}


def _edge(parent, child, name="converters", position=0, is_list=True):
    return ComponentIdentifierChild.objects.create(
        parent=parent, child=child, name=name, position=position, is_list=is_list
    )


def test_identifier_child_slot_is_unique():
    parent, a, b = make_identifier("PromptSendingAttack"), make_identifier(), make_identifier()
    _edge(parent, a, position=0)
    assert_rejected(_edge, parent, b, position=0)
    # Other positions, other names and other parents are free.
    _edge(parent, b, position=1)
    _edge(parent, b, name="objective_target", position=0, is_list=False)
    _edge(make_identifier("RedTeamingAttack"), a, position=0)
    assert parent.child_edges.count() == 3


def test_identifier_child_list_may_repeat_the_same_child():
    parent, conv = make_identifier("PromptSendingAttack"), make_identifier("Base64Converter")
    _edge(parent, conv, position=0)
    _edge(parent, conv, position=1)
    assert [e.child_id for e in parent.child_edges.all()] == [conv.pk, conv.pk]


@pytest.mark.parametrize(
    ("is_list", "position", "accepted"),
    [(False, 0, True), (False, 1, False), (True, 0, True), (True, 1, True), (True, 7, True)],
)
def test_identifier_single_child_must_be_at_position_zero(is_list, position, accepted):
    parent, child = make_identifier("PromptSendingAttack"), make_identifier()
    if accepted:
        edge = _edge(parent, child, name="objective_target", position=position, is_list=is_list)
        assert edge.position == position
    else:
        assert_rejected(
            _edge, parent, child, name="objective_target", position=position, is_list=is_list
        )


def test_identifier_child_is_protected_and_parent_cascades():
    parent, child = make_identifier("PromptSendingAttack"), make_identifier()
    _edge(parent, child, name="objective_target", is_list=False)
    with pytest.raises(ProtectedError):
        child.delete()
    assert ComponentIdentifier.objects.filter(pk=child.pk).exists()
    parent.delete()
    assert not ComponentIdentifierChild.objects.exists()
    assert ComponentIdentifier.objects.filter(pk=child.pk).exists()


def test_identifier_child_edges_ordered_by_name_then_position():
    parent = make_identifier("PromptSendingAttack")
    a, b, c = make_identifier(), make_identifier(), make_identifier()
    _edge(parent, c, name="converters", position=1)
    _edge(parent, a, name="scorer", position=0, is_list=False)
    _edge(parent, b, name="converters", position=0)
    assert [(e.name, e.position) for e in parent.child_edges.all()] == [
        ("converters", 0),
        ("converters", 1),
        ("scorer", 0),
    ]


# --- Conversation -----------------------------------------------------------------------------


def test_conversation_id_is_unique():
    make_conversation("c-1")
    assert_rejected(Conversation.objects.create, conversation_id="c-1")
    make_conversation("c-2")


def test_conversation_ordered_by_start_then_id_with_nulls_last():
    def conv(cid, started_at):
        return Conversation.objects.create(conversation_id=cid, started_at=started_at)

    conv("z-null", None)
    conv("b-now", NOW)
    conv("a-null", None)
    conv("c-earlier", NOW - timedelta(hours=1))
    conv("a-now", NOW)
    conv("a-later", NOW + timedelta(seconds=1))
    assert list(Conversation.objects.ordered().values_list("conversation_id", flat=True)) == [
        "c-earlier",
        "a-now",
        "b-now",
        "a-later",
        "a-null",
        "z-null",
    ]


def test_conversation_delete_cascades_to_messages_and_pieces():
    conv = make_conversation()
    make_piece(make_message(conv, 0))
    conv.delete()
    assert not Message.objects.exists()
    assert not MessagePiece.objects.exists()


# --- Message ----------------------------------------------------------------------------------


def test_message_sequence_unique_per_conversation():
    conv, other = make_conversation(), make_conversation()
    make_message(conv, 0)
    assert_rejected(make_message, conv, 0, role="assistant")
    make_message(conv, 1)
    make_message(other, 0)
    assert Message.objects.count() == 3


@pytest.mark.parametrize(("sequence", "accepted"), [(-1, False), (-5, False), (0, True), (9, True)])
def test_message_sequence_not_negative(sequence, accepted):
    conv = make_conversation()
    if accepted:
        assert make_message(conv, sequence).sequence == sequence
    else:
        assert_rejected(make_message, conv, sequence)


@pytest.mark.parametrize("role", ChatMessageRole.values)
def test_message_role_accepts_every_chat_role(role):
    msg = make_message(make_conversation(), 0, role=role)
    msg.refresh_from_db()
    assert msg.role == role


@pytest.mark.parametrize("role", ["robot", "", "Assistant", "orchestrator"])
def test_message_role_rejects_unknown_values(role):
    assert_rejected(make_message, make_conversation(), 0, role=role)


@pytest.mark.parametrize(
    ("role", "api_role"),
    [
        ("simulated_assistant", "assistant"),
        ("assistant", "assistant"),
        ("user", "user"),
        ("system", "system"),
        ("tool", "tool"),
        ("developer", "developer"),
    ],
)
def test_message_api_role(role, api_role):
    assert Message(role=role).api_role == api_role


def test_messages_listed_in_sequence_order():
    conv = make_conversation()
    for seq in (2, 0, 1):
        make_message(conv, seq)
    assert [m.sequence for m in conv.messages.all()] == [0, 1, 2]


# --- MessagePiece -----------------------------------------------------------------------------


@pytest.fixture
def message():
    return make_message(make_conversation(), 0)


def test_piece_position_unique_per_message(message):
    make_piece(message, "caption", position=0)
    assert_rejected(make_piece, message, "image", position=0)
    make_piece(message, "image", position=1)
    make_piece(make_message(message.conversation, 1, role="assistant"), "answer", position=0)
    assert MessagePiece.objects.count() == 3


def test_piece_position_not_negative(message):
    assert_rejected(make_piece, message, position=-1)


@pytest.mark.parametrize("field", ["original_value_data_type", "converted_value_data_type"])
@pytest.mark.parametrize("data_type", PromptDataType.values)
def test_piece_accepts_every_data_type(message, field, data_type):
    piece = make_piece(message, **{field: data_type})
    piece.refresh_from_db()
    assert getattr(piece, field) == data_type


@pytest.mark.parametrize("field", ["original_value_data_type", "converted_value_data_type"])
@pytest.mark.parametrize("data_type", ["image", "jpeg", "TEXT", ""])
def test_piece_rejects_unknown_data_type(message, field, data_type):
    assert_rejected(make_piece, message, **{field: data_type})


@pytest.mark.parametrize("value", PromptResponseError.values)
def test_piece_accepts_every_response_error(message, value):
    assert make_piece(message, response_error=value).response_error == value


@pytest.mark.parametrize("value", ["refused", "BLOCKED", ""])
def test_piece_rejects_unknown_response_error(message, value):
    assert_rejected(make_piece, message, response_error=value)


@pytest.mark.parametrize("value", Originator.values)
def test_piece_accepts_every_originator(message, value):
    assert make_piece(message, originator=value).originator == value


@pytest.mark.parametrize("value", ["orchestrator", "user", ""])
def test_piece_rejects_unknown_originator(message, value):
    # 0.9.x "orchestrator" must be mapped to "attack" on ingest, never stored as such.
    assert_rejected(make_piece, message, originator=value)


@pytest.mark.parametrize("field", ["original_value_sha256", "converted_value_sha256"])
@pytest.mark.parametrize(("value", "accepted"), [*SHA_CASES, SHA_TRAILING_NEWLINE])
def test_piece_sha256_must_be_lowercase_hex(message, field, value, accepted):
    if accepted:
        assert getattr(make_piece(message, **{field: value}), field) == value
    else:
        assert_rejected(make_piece, message, errors=sha_errors(value), **{field: value})


@pytest.mark.parametrize("field", ["original_value_sha256", "converted_value_sha256"])
def test_piece_sha256_may_be_null(message, field):
    piece = make_piece(message, **{field: None})
    piece.refresh_from_db()
    assert getattr(piece, field) is None


def test_of_conversation_orders_by_sequence_then_position_in_one_query(
    django_assert_num_queries,
):
    conv = make_conversation("main")
    # Created out of order on purpose: neither insertion order nor pk order may leak through.
    m2 = make_message(conv, 2, role="user")
    m0 = make_message(conv, 0, role="system")
    m1 = make_message(conv, 1, role="assistant")
    make_piece(m2, "image", position=1)
    make_piece(m2, "caption", position=0)
    make_piece(m1, "answer", position=0)
    make_piece(m0, "be nice", position=0)
    other = make_message(make_conversation("other"), 0)
    make_piece(other, "not mine")

    with django_assert_num_queries(1):
        rows = [
            (p.message.sequence, p.position, p.message.role, p.converted_value)
            for p in MessagePiece.objects.of_conversation("main")
        ]
    assert rows == [
        (0, 0, "system", "be nice"),
        (1, 0, "assistant", "answer"),
        (2, 0, "user", "caption"),
        (2, 1, "user", "image"),
    ]
    assert list(MessagePiece.objects.of_conversation("missing")) == []


def test_piece_role_and_sequence_come_from_its_message():
    msg = make_message(make_conversation(), 3, role="simulated_assistant")
    piece = make_piece(msg)
    assert piece.role == "simulated_assistant"
    assert piece.sequence == 3


@pytest.mark.parametrize(
    ("response_error", "has_error", "is_blocked"),
    [
        ("none", False, False),
        ("blocked", True, True),
        ("processing", True, False),
        ("empty", True, False),
        ("unknown", True, False),
    ],
)
def test_piece_error_helpers(response_error, has_error, is_blocked):
    piece = MessagePiece(response_error=response_error)
    assert piece.has_error() is has_error
    assert piece.is_blocked() is is_blocked


def test_piece_is_duplicate(message):
    original = make_piece(message, "hi", position=0)
    copy_msg = make_message(make_conversation(), 0)
    copy = make_piece(copy_msg, "hi", original_prompt_id=original.id)
    assert original.is_duplicate is False
    assert copy.is_duplicate is True


@pytest.mark.parametrize(
    ("data_type", "value", "is_media"),
    [
        ("text", "hello", False),
        ("text", "/tmp/looks/like/a/path.png", False),
        ("image_path", "/home/u/.pyrit/results/img.png", True),
        ("audio_path", "C:\\results\\a.wav", True),
        ("video_path", "results/v.mp4", True),
        ("binary_path", "results/blob.bin", True),
        ("url", "https://example.org/cat.png", False),
        ("url", "http://example.org/cat.png", False),
        ("url", "/home/u/.pyrit/results/urls/cat.png", True),
        ("url", "file:///tmp/cat.png", True),
        ("reasoning", "thinking…", False),
        ("error", "boom", False),
    ],
)
def test_piece_media_helpers(data_type, value, is_media):
    original = MessagePiece(original_value_data_type=data_type, original_value=value)
    assert original.original_is_media is is_media
    converted = MessagePiece(converted_value_data_type=data_type, converted_value=value)
    assert converted.converted_is_media is is_media


def test_piece_deletion_clears_attack_last_response(message):
    piece = make_piece(message)
    attack = make_attack(message.conversation, last_response=piece)
    piece.delete()
    attack.refresh_from_db()
    assert attack.last_response is None


# --- PieceConverter ---------------------------------------------------------------------------


def test_piece_converter_position_unique_per_piece(message):
    piece, other = make_piece(message, position=0), make_piece(message, position=1)
    b64, rot = make_identifier("Base64Converter"), make_identifier("ROT13Converter")
    PieceConverter.objects.create(piece=piece, position=0, identifier=b64)
    assert_rejected(PieceConverter.objects.create, piece=piece, position=0, identifier=rot)
    PieceConverter.objects.create(piece=piece, position=1, identifier=rot)
    PieceConverter.objects.create(piece=other, position=0, identifier=rot)
    assert PieceConverter.objects.count() == 3


def test_piece_converter_chain_is_ordered_and_may_repeat(message):
    piece = make_piece(message)
    b64, rot = make_identifier("Base64Converter"), make_identifier("ROT13Converter")
    # Inserted out of order; the same converter applied twice is legitimate.
    PieceConverter.objects.create(piece=piece, position=2, identifier=b64)
    PieceConverter.objects.create(piece=piece, position=0, identifier=b64)
    PieceConverter.objects.create(piece=piece, position=1, identifier=rot)
    chain = [link.identifier.class_name for link in piece.converters.all()]
    assert chain == ["Base64Converter", "ROT13Converter", "Base64Converter"]
    ordered = piece.converter_identifiers.order_by("piece_converter_links__position")
    assert [i.class_name for i in ordered] == chain


def test_piece_converter_identifier_protected_and_piece_cascades(message):
    piece, conv = make_piece(message), make_identifier("Base64Converter")
    PieceConverter.objects.create(piece=piece, position=0, identifier=conv)
    with pytest.raises(ProtectedError):
        conv.delete()
    piece.delete()
    assert not PieceConverter.objects.exists()
    conv.delete()


# --- Score ------------------------------------------------------------------------------------


@pytest.fixture
def scorer():
    return make_identifier("SelfAskRefusalScorer")


def _score(scorer, score_type, value, **fields) -> Score:
    """An unsaved score."""
    return Score(
        score_type=score_type,
        score_value=value,
        scorer_class_identifier=scorer,
        timestamp=NOW,
        **fields,
    )


def _bulk(scorer, score_type, value, numeric, **fields) -> None:
    """Insert one score with ``bulk_create``, which bypasses ``save()`` and its derivation."""
    row = _score(scorer, score_type, value, numeric_value=numeric, **fields)
    Score.objects.bulk_create([row])


@pytest.mark.parametrize(
    ("status", "value", "accepted"),
    [
        ("complete", "true", True),
        ("undetermined", None, True),
        ("complete", None, False),
        ("undetermined", "true", False),
        ("undetermined", "", False),
    ],
)
def test_score_status_and_value_are_coupled(scorer, status, value, accepted):
    # An "unknown" type puts no rule on the value: only the status coupling can reject.
    score = _score(scorer, ScoreType.UNKNOWN, value, status=status)
    if accepted:
        score.save()
        score.refresh_from_db()
        assert (score.status, score.score_value) == (status, value)
    else:
        assert_rejected(score.save)


@pytest.mark.parametrize("score_type", ScoreType.values)
def test_undetermined_score_of_any_type_has_no_value(scorer, score_type):
    score = _score(scorer, score_type, None, status=ScoreStatus.UNDETERMINED)
    score.save()
    assert score.numeric_value is None
    assert score.get_value() is None


@pytest.mark.parametrize("status", ["pending", "COMPLETE", ""])
def test_score_rejects_unknown_status(scorer, status):
    assert_rejected(_score(scorer, ScoreType.UNKNOWN, "x", status=status).save)


@pytest.mark.parametrize("score_type", ["bogus", "TRUE_FALSE", "likert"])
def test_score_rejects_unknown_type(scorer, score_type):
    assert_rejected(_score(scorer, score_type, "x").save)


@pytest.mark.parametrize(
    ("value", "numeric"),
    [("true", 1.0), ("false", 0.0), ("True", 1.0), ("False", 0.0), ("TRUE", 1.0), ("fAlSe", 0.0)],
)
def test_true_false_save_accepts_any_case_verbatim(scorer, value, numeric):
    score = _score(scorer, ScoreType.TRUE_FALSE, value)
    score.save()
    score.refresh_from_db()
    assert score.score_value == value
    assert score.numeric_value == numeric
    assert score.get_value() is (numeric == 1.0)


@pytest.mark.parametrize("value", ["yes", "no", "1", "0", "", " true", "truee"])
def test_true_false_save_rejects_other_values(scorer, value):
    with pytest.raises(ValueError, match="true_false"):
        _score(scorer, ScoreType.TRUE_FALSE, value).save()
    assert not Score.objects.exists()


@pytest.mark.parametrize(
    ("value", "numeric"),
    [("true", 1.0), ("TRUE", 1.0), ("True", 1.0), ("false", 0.0), ("False", 0.0)],
)
def test_true_false_db_accepts_consistent_rows(scorer, value, numeric):
    _bulk(scorer, ScoreType.TRUE_FALSE, value, numeric)
    assert Score.objects.get().score_value == value


@pytest.mark.parametrize(
    ("value", "numeric"),
    [
        ("yes", 1.0),
        ("yes", 0.0),
        ("yes", None),
        ("1", 1.0),
        ("true", 0.0),
        ("false", 1.0),
        ("TRUE", 0.5),
    ],
)
def test_true_false_db_rejects_invalid_or_inconsistent_rows(scorer, value, numeric):
    assert_rejected(_bulk, scorer, ScoreType.TRUE_FALSE, value, numeric)


@pytest.mark.parametrize("value", ["true", "False"])
def test_true_false_db_rejects_value_without_numeric_value(scorer, value):
    assert_rejected(_bulk, scorer, ScoreType.TRUE_FALSE, value, None)


@pytest.mark.parametrize(
    ("value", "numeric"),
    [
        ("0", 0.0),
        ("1", 1.0),
        ("0.0", 0.0),
        ("1.0", 1.0),
        ("0.3333333333333333", 0.3333333333333333),
        ("0.75", 0.75),
        ("1e-3", 0.001),
    ],
)
def test_float_scale_save_accepts_unit_interval(scorer, value, numeric):
    score = _score(scorer, ScoreType.FLOAT_SCALE, value)
    score.save()
    score.refresh_from_db()
    assert score.score_value == value  # stored verbatim
    assert score.numeric_value == numeric
    assert score.get_value() == numeric


@pytest.mark.parametrize(
    "value", ["1.5", "-0.1", "1.0000001", "nan", "NaN", "inf", "-inf", "abc", "", "true"]
)
def test_float_scale_save_rejects_values_outside_unit_interval(scorer, value):
    with pytest.raises(ValueError):
        _score(scorer, ScoreType.FLOAT_SCALE, value).save()
    assert not Score.objects.exists()


@pytest.mark.parametrize(
    ("value", "numeric"),
    [("0", 0.0), ("1", 1.0), ("0.3333333333333333", 0.3333333333333333)],
)
def test_float_scale_db_accepts_unit_interval(scorer, value, numeric):
    _bulk(scorer, ScoreType.FLOAT_SCALE, value, numeric)
    assert Score.objects.get().numeric_value == numeric


@pytest.mark.parametrize(
    ("value", "numeric"), [("1.5", 1.5), ("-0.1", -0.1), ("2", 2.0), ("0.5", -0.5)]
)
def test_float_scale_db_rejects_out_of_range(scorer, value, numeric):
    assert_rejected(_bulk, scorer, ScoreType.FLOAT_SCALE, value, numeric)


@pytest.mark.parametrize("value", ["1.5", "-0.1", "0.5"])
def test_float_scale_db_rejects_value_without_numeric_value(scorer, value):
    assert_rejected(_bulk, scorer, ScoreType.FLOAT_SCALE, value, None)


@pytest.mark.parametrize("value", ["yes", "42", "-3", "", "anything at all", "1.5"])
def test_unknown_score_type_accepts_any_value(scorer, value):
    score = _score(scorer, ScoreType.UNKNOWN, value)
    score.save()
    score.refresh_from_db()
    assert score.numeric_value is None
    assert score.get_value() == value
    _bulk(scorer, ScoreType.UNKNOWN, value, None)
    assert Score.objects.filter(score_value=value).count() == 2


def test_score_save_with_update_fields_keeps_numeric_value_in_step(scorer):
    score = _score(scorer, ScoreType.TRUE_FALSE, "true")
    score.save()
    score.score_value = "false"
    score.save(update_fields=["score_value"])
    score.refresh_from_db()
    assert (score.score_value, score.numeric_value) == ("false", 0.0)


@pytest.mark.parametrize(
    ("score_type", "value", "expected"),
    [
        ("true_false", "true", True),
        ("true_false", "True", True),
        ("true_false", "FALSE", False),
        ("float_scale", "0.25", 0.25),
        ("float_scale", "1", 1.0),
        ("unknown", "Likert 3", "Likert 3"),
        ("true_false", None, None),
        ("float_scale", None, None),
    ],
)
def test_score_get_value(score_type, value, expected):
    result = Score(score_type=score_type, score_value=value).get_value()
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("score_type", "value", "expected"),
    [
        ("true_false", "true", 1.0),
        ("true_false", "TRUE", 1.0),
        ("true_false", "False", 0.0),
        ("float_scale", "0", 0.0),
        ("float_scale", "1", 1.0),
        ("float_scale", "0.3333333333333333", 0.3333333333333333),
        ("float_scale", " 0.5 ", 0.5),
        ("unknown", "whatever", None),
        ("true_false", None, None),
        ("float_scale", None, None),
        ("unknown", None, None),
    ],
)
def test_score_numeric_value_valid(score_type, value, expected):
    assert score_numeric_value(score_type, value) == expected


@pytest.mark.parametrize(
    ("score_type", "value"),
    [
        ("true_false", "yes"),
        ("true_false", ""),
        ("true_false", "1"),
        ("float_scale", "1.5"),
        ("float_scale", "-0.1"),
        ("float_scale", "nan"),
        ("float_scale", "NaN"),
        ("float_scale", "-nan"),
        ("float_scale", "inf"),
        ("float_scale", "not a number"),
        ("float_scale", ""),
    ],
)
def test_score_numeric_value_invalid(score_type, value):
    with pytest.raises(ValueError):
        score_numeric_value(score_type, value)


def test_score_numeric_value_never_returns_nan():
    for text in ("nan", "NAN", "+nan"):
        with pytest.raises(ValueError, match="float_scale"):
            score_numeric_value(ScoreType.FLOAT_SCALE, text)
    assert not math.isnan(score_numeric_value(ScoreType.FLOAT_SCALE, "0.0"))


def test_scores_link_by_original_prompt_id(scorer, django_assert_num_queries):
    original = make_piece(make_message(make_conversation(), 1, role="assistant"), "answer")
    dup_msg = make_message(make_conversation(), 1, role="assistant")
    duplicate = make_piece(dup_msg, "answer", original_prompt_id=original.id)
    unrelated = make_piece(make_message(make_conversation(), 0), "other")
    on_original = make_score(original, "true", scorer_class_identifier=scorer)
    make_score(unrelated, "false", scorer_class_identifier=scorer)
    dangling_id = uuid.uuid4()
    dangling = make_score(
        None, "false", message_piece_id=dangling_id, scorer_class_identifier=scorer
    )

    assert on_original.message_piece_id == original.id
    # The copy sees the original's score through its original_prompt_id…
    with django_assert_num_queries(1):
        scores = Score.objects.for_pieces([duplicate.original_prompt_id])
        seen = [(s.id, s.scorer_class_identifier.class_name) for s in scores]
    assert seen == [(on_original.id, "SelfAskRefusalScorer")]
    # …and never through its own id.
    assert list(Score.objects.for_pieces([duplicate.id])) == []
    assert set(Score.objects.for_pieces([original.original_prompt_id, dangling_id])) == {
        on_original,
        dangling,
    }
    assert list(Score.objects.for_pieces([])) == []
    # A dangling score (its piece was never stored) is kept, and stays when pieces go away.
    assert not MessagePiece.objects.filter(original_prompt_id=dangling_id).exists()
    MessagePiece.objects.all().delete()
    assert Score.objects.count() == 3


def test_score_on_loose_content(scorer):
    content = ScorableContent.objects.create(value="loose text", timestamp=NOW)
    score = _score(scorer, ScoreType.FLOAT_SCALE, "0.5", scorable_content=content)
    score.save()
    assert score.message_piece_id is None
    assert list(content.scores.all()) == [score]
    with pytest.raises(ProtectedError):
        content.delete()


def test_scorer_identifier_is_protected(scorer):
    _score(scorer, ScoreType.UNKNOWN, "x").save()
    with pytest.raises(ProtectedError):
        scorer.delete()


# --- ScorableContent --------------------------------------------------------------------------


@pytest.mark.parametrize("data_type", PromptDataType.values)
def test_scorable_content_accepts_every_data_type(data_type):
    row = ScorableContent.objects.create(value="v", data_type=data_type, timestamp=NOW)
    row.refresh_from_db()
    assert row.data_type == data_type


@pytest.mark.parametrize("data_type", ["image", "Text", ""])
def test_scorable_content_rejects_unknown_data_type(data_type):
    assert_rejected(ScorableContent.objects.create, value="v", data_type=data_type, timestamp=NOW)


@pytest.mark.parametrize(("value", "accepted"), [*SHA_CASES, pytest.param(None, True, id="null")])
def test_scorable_content_sha256(value, accepted):
    if accepted:
        assert ScorableContent.objects.create(value="v", value_sha256=value, timestamp=NOW)
    else:
        assert_rejected(
            ScorableContent.objects.create,
            value="v",
            value_sha256=value,
            timestamp=NOW,
            errors=sha_errors(value),
        )


# --- AttackResult, RelatedConversation, ScenarioResult -----------------------------------------


@pytest.mark.parametrize("outcome", AttackOutcome.values)
def test_attack_accepts_every_outcome(outcome):
    attack = make_attack(outcome=outcome)
    attack.refresh_from_db()
    assert attack.outcome == outcome


def test_attack_outcome_includes_error():
    assert "error" in AttackOutcome.values
    assert make_attack(outcome="error").outcome == AttackOutcome.ERROR


@pytest.mark.parametrize("outcome", ["won", "SUCCESS", "Success", ""])
def test_attack_rejects_unknown_outcome(outcome):
    conv = make_conversation()
    assert_rejected(make_attack, conv, outcome=outcome)


@pytest.mark.parametrize(("value", "accepted"), [*SHA_CASES, pytest.param(None, True, id="null")])
def test_attack_objective_sha256(value, accepted):
    conv = make_conversation()
    if accepted:
        assert make_attack(conv, objective_sha256=value).objective_sha256 == value
    else:
        assert_rejected(make_attack, conv, objective_sha256=value, errors=sha_errors(value))


def test_attack_counters_not_negative():
    conv = make_conversation()
    assert_rejected(make_attack, conv, executed_turns=-1)
    assert_rejected(make_attack, conv, total_retries=-1)
    assert_rejected(make_attack, conv, execution_time_ms=-1)
    assert make_attack(conv, executed_turns=0, total_retries=0).executed_turns == 0


def test_attack_result_id_is_the_primary_key():
    attack = make_attack()
    assert attack.attack_result_id == attack.pk
    assert isinstance(attack.attack_result_id, uuid.UUID)


def test_attack_with_identifiers_in_one_query(django_assert_num_queries):
    make_attack(
        attack_identifier=make_identifier("PromptSendingAttack"),
        atomic_attack_identifier=make_identifier("AtomicAttack"),
    )
    with django_assert_num_queries(1):
        [attack] = AttackResult.objects.with_identifiers()
        assert attack.conversation.conversation_id
        assert attack.attack_identifier.class_name == "PromptSendingAttack"
        assert attack.atomic_attack_identifier.class_name == "AtomicAttack"


def _related(attack, conv, conversation_type="adversarial", **fields):
    return RelatedConversation.objects.create(
        attack_result=attack, conversation=conv, conversation_type=conversation_type, **fields
    )


def test_related_conversation_unique_per_attack():
    attack, helper = make_attack(), make_conversation()
    _related(attack, helper, "adversarial")
    # PyRIT compares references by conversation id only: another type is the same reference.
    assert_rejected(_related, attack, helper, "pruned")
    _related(make_attack(), helper, "pruned")
    _related(attack, make_conversation(), "pruned")
    assert RelatedConversation.objects.count() == 3


@pytest.mark.parametrize("conversation_type", ConversationType.values)
def test_related_conversation_accepts_every_type(conversation_type):
    row = _related(make_attack(), make_conversation(), conversation_type)
    assert row.conversation_type == conversation_type


@pytest.mark.parametrize("conversation_type", ["objective", "Pruned", "adversarial_chat", ""])
def test_related_conversation_rejects_unknown_type(conversation_type):
    attack, helper = make_attack(), make_conversation()
    assert_rejected(_related, attack, helper, conversation_type)


def test_conversation_used_by_an_attack_is_protected():
    main, helper = make_conversation(), make_conversation()
    attack = make_attack(main)
    _related(attack, helper, "pruned")
    with pytest.raises(ProtectedError):
        main.delete()
    with pytest.raises(ProtectedError):
        helper.delete()
    assert Conversation.objects.count() == 2
    attack.delete()  # cascades to the related-conversation rows
    assert not RelatedConversation.objects.exists()
    main.delete()
    helper.delete()
    assert not Conversation.objects.exists()


def test_attack_last_score_set_null_on_score_delete():
    conv = make_conversation()
    piece = make_piece(make_message(conv, 0))
    score = make_score(piece)
    attack = make_attack(conv, last_score=score)
    score.delete()
    attack.refresh_from_db()
    assert attack.last_score is None


def test_label_and_harm_indexes_on_attacks_and_conversations():
    op_x = Label.objects.create(key="operation", value="op_x")
    op_y = Label.objects.create(key="operation", value="op_y")
    alice = Label.objects.create(key="operator", value="alice")
    violence = HarmCategory.objects.create(name="violence")
    hate = HarmCategory.objects.create(name="hate")

    first, second = make_attack(), make_attack()
    first.label_index.add(op_x, alice)
    first.harm_category_index.add(violence)
    second.label_index.add(op_y)
    second.harm_category_index.add(violence, hate)
    first.conversation.label_index.add(op_x)
    first.conversation.harm_category_index.add(hate)

    labelled = AttackResult.objects.filter(label_index__key="operation", label_index__value="op_x")
    assert list(labelled) == [first]
    assert set(AttackResult.objects.filter(harm_category_index__name="violence")) == {
        first,
        second,
    }
    assert list(AttackResult.objects.filter(harm_category_index=hate)) == [second]
    assert set(op_x.attack_results.all()) == {first}
    assert set(violence.attack_results.all()) == {first, second}
    assert list(Conversation.objects.filter(label_index=op_x)) == [first.conversation]
    assert list(hate.conversations.all()) == [first.conversation]
    assert [str(lbl) for lbl in first.label_index.all()] == ["operation=op_x", "operator=alice"]
    # Removing a lookup value only drops the links.
    violence.delete()
    assert list(second.harm_category_index.all()) == [hate]
    assert AttackResult.objects.count() == 2


def _scenario(**fields):
    defaults = {
        "scenario_name": "Foundry",
        "scenario_identifier": make_identifier("FoundryScenario"),
        "creation_time": NOW,
    }
    defaults.update(fields)
    return ScenarioResult.objects.create(**defaults)


@pytest.mark.parametrize("state", ScenarioRunState.values)
def test_scenario_accepts_every_run_state(state):
    scenario = _scenario(scenario_run_state=state)
    scenario.refresh_from_db()
    assert scenario.scenario_run_state == state


@pytest.mark.parametrize("state", ["completed", "DONE", "RUNNING", ""])
def test_scenario_rejects_unknown_run_state(state):
    ident = make_identifier("FoundryScenario")
    assert_rejected(_scenario, scenario_identifier=ident, scenario_run_state=state)


def test_scenario_delete_detaches_its_attacks():
    scenario = _scenario()
    attack = make_attack(attribution_parent=scenario, attribution_data={"parent_collection": "x"})
    assert list(scenario.attack_results.all()) == [attack]
    scenario.delete()
    attack.refresh_from_db()
    assert attack.attribution_parent is None
    assert attack.attribution_data == {"parent_collection": "x"}


def test_scenario_identifier_is_protected():
    scenario = _scenario()
    with pytest.raises(ProtectedError):
        scenario.scenario_identifier.delete()


# --- MediaBlob --------------------------------------------------------------------------------


def _blob(sha256: str, **fields) -> MediaBlob:
    defaults = {"file": f"blobs/{sha256[:2]}/{sha256}", "size": 3, "content_type": "image/png"}
    defaults.update(fields)
    return MediaBlob.objects.create(sha256=sha256, **defaults)


@pytest.mark.parametrize(("value", "accepted"), [*SHA_CASES, SHA_TRAILING_NEWLINE])
def test_media_blob_sha256_must_be_lowercase_hex(value, accepted):
    if accepted:
        assert _blob(value).sha256 == value
    else:
        assert_rejected(_blob, value, errors=sha_errors(value))


def test_media_blob_sha256_is_unique():
    _blob(HEX)
    assert_rejected(_blob, HEX, content_type="audio/wav")
    _blob(sha256_hex("other"))
    assert MediaBlob.objects.count() == 2


def test_media_blob_path_uses_only_the_digest():
    blob = MediaBlob(sha256=HEX)
    assert media_upload_to(blob, "../../etc/passwd") == f"blobs/{HEX[:2]}/{HEX[2:4]}/{HEX}"


def test_media_blob_deletion_unlinks_pieces(message):
    blob = _blob(HEX)
    piece = make_piece(message, original_media=blob, converted_media=blob)
    blob.delete()
    piece.refresh_from_db()
    assert piece.original_media is None
    assert piece.converted_media is None


# --- Label, HarmCategory ----------------------------------------------------------------------


def test_label_pair_is_unique():
    Label.objects.create(key="operation", value="op_x")
    assert_rejected(Label.objects.create, key="operation", value="op_x")
    Label.objects.create(key="operation", value="op_y")
    Label.objects.create(key="operator", value="op_x")
    assert Label.objects.count() == 3


def test_harm_category_name_is_unique():
    HarmCategory.objects.create(name="violence")
    assert_rejected(HarmCategory.objects.create, name="violence")
    HarmCategory.objects.create(name="hate")
    assert [str(h) for h in HarmCategory.objects.all()] == ["hate", "violence"]
