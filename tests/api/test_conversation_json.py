"""The conversation detail built from rows (``conversation_json``) against the serializer.

``ConversationDetailSerializer`` is the generic definition of the body; the endpoint builds
the same body from plain rows. Here every value the row path converts by itself is made
awkward on purpose: NUL and U+FFFE in text and JSON, keys kept in ``extra`` (one the body
already writes, one that is output only), media on one side, a duplicated piece sharing its
original's scores, undetermined scores, loose-content and expectation scores, null columns,
microseconds and a time zone other than UTC.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from memory.models import Conversation
from memory.transfer.api.conversation_json import conversation_json
from memory.transfer.api.serializers import ConversationDetailSerializer
from redteam.core.choices import PromptDataType, ScoreStatus, ScoreType
from tests.factories import (
    NOW,
    make_conversation,
    make_identifier,
    make_media_blob,
    make_message,
    make_piece,
    make_piece_converter,
    make_score,
)
from tests.queries import get_counted

pytestmark = pytest.mark.django_db


@pytest.fixture
def awkward(settings, tmp_path):
    """One conversation holding every case the row path converts by itself."""
    settings.MEDIA_ROOT = tmp_path
    target = make_identifier("OpenAIChatTarget", model_name="gpt-4o")
    attack = make_identifier("RedTeamingAttack")
    attack.children = {"objective_target": target.hash}
    attack.save()
    scorer = make_identifier("SelfAskRefusalScorer")
    conversation = make_conversation(
        "awkward",
        target_identifier=target,
        retries=[{"attempt": 1}],
        pyrit_version="1.2.0",
        extra={"note": "kept", "media": "stale"},
    )
    ids = {"prompt_target_identifier": target, "attack_identifier": attack}
    first = make_piece(
        make_message(conversation, 0, "user"),
        "nul \x00 and \ufffe here",
        labels={"op\x00": "v\ufffe", "operator": "alice"},
        prompt_metadata={"k": [1, 2.5, None, True]},
        targeted_harm_categories=["violence"],
        scorer_identifier=scorer,
        original_value_data_type=PromptDataType.IMAGE_PATH,
        original_media=make_media_blob(),
        extra={"custom": {"deep": "\x00"}, "role": "not this", "media": "stale"},
        timestamp=NOW + timedelta(microseconds=123456),
        **ids,
    )
    make_piece_converter(first, make_identifier("Base64Converter"), position=1)
    make_piece_converter(first, make_identifier("ROT13Converter"), position=0)
    # A copy of the first piece: PyRIT shows the original's scores on it (contract §6.4).
    make_piece(
        first.message,
        "copy",
        position=1,
        original_prompt_id=first.id,
        original_value_sha256=None,
        converted_value_sha256=None,
        pyrit_version="0.12.1",
    )
    reply = make_piece(make_message(conversation, 1, "assistant"), "no", response_error="blocked")
    make_score(first, "true", scorer_class_identifier=scorer, score_category=["a\x00"])
    make_score(
        first,
        None,
        scorer_class_identifier=scorer,
        status=ScoreStatus.UNDETERMINED,
        score_category=None,
        score_rationale="\ufffe0 is not NUL",
        timestamp=NOW - timedelta(seconds=1),
    )
    make_score(
        reply,
        "0.5",
        score_type=ScoreType.FLOAT_SCALE,
        scorer_class_identifier=scorer,
        scorable={"scorable_type": "message", "message_piece_ids": [str(reply.id)]},
        scored_expectation={"objective": "x", "conditions": []},
        extra={"later_key": 1, "id": "not this"},
        timestamp=NOW + timedelta(days=400, microseconds=1),
    )
    # A score whose piece is not stored must not appear, nor break anything.
    make_score(None, "false", scorer_class_identifier=scorer, message_piece_id=uuid.uuid4())
    return Conversation.objects.get(pk=conversation.pk)


def _generic(conversation: Conversation, request) -> bytes:
    return JSONRenderer().render(
        ConversationDetailSerializer(conversation, context={"request": request}).data
    )


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata"])
def test_body_is_the_serializers_byte_for_byte(awkward, zone):
    request = RequestFactory().get("/api/v1/conversations/awkward/")
    with timezone.override(zone):
        body = JSONRenderer().render(conversation_json(conversation=awkward, request=request))
        assert body == _generic(awkward, request)
    data = conversation_json(conversation=awkward, request=request)
    first, copy = data["messages"][0]["message_pieces"]
    # The cases are really there: the comparison above covers them.
    assert first["original_value"] == "nul \x00 and \ufffe here"
    assert first["labels"] == {"op\x00": "v\ufffe", "operator": "alice"}
    assert first["custom"] == {"deep": "\x00"} and first["role"] == "user"
    assert first["media"]["original"].startswith("http://testserver/")
    assert first["media"]["converted"] is None
    assert [s["status"] for s in copy["scores"] if "status" in s] == ["undetermined"]
    assert len(copy["scores"]) == len(first["scores"]) == 2
    assert "media" not in copy and copy["original_value_sha256"] is None
    assert data["conversation"]["note"] == "kept" and "media" not in data["conversation"]
    reply_score = data["messages"][1]["message_pieces"][0]["scores"][0]
    assert reply_score["scorable"]["scorable_type"] == "message"
    assert reply_score["later_key"] == 1 and reply_score["id"] != "not this"


def test_endpoint_sends_that_body(admin_client, awkward):
    queries, response = get_counted(admin_client, "/api/v1/conversations/awkward/")
    # 1. session, 2. user, 3. the conversation, 4. its pieces (message and media joined),
    # 5. converter links, 6. scores, 7. identifiers, 8. their children.
    assert queries == 8
    assert response.content == _generic(awkward, response.wsgi_request)
