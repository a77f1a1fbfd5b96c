"""Write services: content-addressed identifiers, messages, scores, attack results."""

from __future__ import annotations

import uuid

import pytest

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    ComponentIdentifierChild,
    Conversation,
    MediaBlob,
    MessagePiece,
)
from memory.models.media import media_store
from memory.storage.identifiers import identifier_store, identifiers_store
from memory.storage.selectors import identifiers_load
from memory.storage.services import InvalidMemory, attack_result_save, message_add, score_add
from memory.storage.specs import AttackResultSpec, ConversationReferenceSpec, PieceSpec, ScoreSpec
from redteam.core import identifiers as ids
from redteam.core.choices import AttackOutcome, ConversationType, PromptDataType
from redteam.core.hashing import sha256_text
from redteam.core.identifiers import attack_strategy_identifier
from tests.samples import PNG_BYTES

pytestmark = pytest.mark.django_db


def target(
    model: str = "gpt-4o", endpoint: str = "https://a.example.org"
) -> ids.ComponentIdentifier:
    return ids.ComponentIdentifier(
        class_name="OpenAIChatTarget",
        class_module="pyrit.prompt_target.openai.openai_chat_target",
        params={"model_name": model, "endpoint": endpoint, "top_p": None},
    )


def converter(name: str) -> ids.ComponentIdentifier:
    return ids.ComponentIdentifier(class_name=name, class_module=f"pyrit.prompt_converter.{name}")


def attack(**children) -> ids.ComponentIdentifier:
    return ids.ComponentIdentifier(
        class_name="PromptSendingAttack",
        class_module="pyrit.executor.attack.single_turn.prompt_sending",
        params={"max_turns": 1},
        children=children,
    )


def scorer() -> ids.ComponentIdentifier:
    return ids.ComponentIdentifier(
        class_name="SubStringScorer",
        class_module="pyrit.score.true_false.substring_scorer",
        params={"substring": "SECRET"},
    )


def test_identifier_tree_is_stored_once_and_round_trips():
    tree = attack(
        objective_target=target(),
        request_converters=[converter("Base64Converter"), converter("ROT13Converter")],
    )
    root = identifier_store(identifier=tree)
    assert root.hash == tree.hash
    assert ComponentIdentifier.objects.count() == 4
    assert root.children == {
        "objective_target": target().hash,
        "request_converters": [converter("Base64Converter").hash, converter("ROT13Converter").hash],
    }
    edges = list(root.child_edges.order_by("name", "position").values_list("name", "position"))
    assert edges == [("objective_target", 0), ("request_converters", 0), ("request_converters", 1)]

    # A second tree sharing the target reuses its row.
    identifier_store(identifier=attack(objective_target=target()))
    assert ComponentIdentifier.objects.filter(class_name="OpenAIChatTarget").count() == 1

    loaded = identifiers_load(hashes=[tree.hash])[tree.hash]
    assert loaded.to_dict() == tree.to_dict()
    assert loaded.hash == tree.hash


def test_stored_hash_is_kept_verbatim_even_when_content_differs():
    stored = ids.ComponentIdentifier.from_dict(
        {"class_name": "X", "class_module": "m", "hash": "f" * 64, "long": "trunc..."}
    )
    row = identifier_store(identifier=stored)
    assert row.hash == "f" * 64
    assert row.content_hash == stored.content_hash() != row.hash


def test_identifiers_store_uses_three_queries_for_any_number_of_trees(django_assert_num_queries):
    trees = [attack(objective_target=target(model=f"m{i}")) for i in range(5)]
    # SELECT existing hashes, INSERT identifiers, SELECT rows, INSERT edges (+ savepoint pair)
    with django_assert_num_queries(6):
        rows = identifiers_store(identifiers=trees)
    assert len(rows) == 10
    assert ComponentIdentifierChild.objects.count() == 5


def test_message_add_assigns_sequences_positions_and_hashes():
    conversation_id = str(uuid.uuid4())
    system = message_add(
        conversation_id=conversation_id, role="system", pieces=[PieceSpec(original_value="Be nice")]
    )
    caption = PieceSpec(
        original_value="Look at this",
        converted_value="Ybbx ng guvf",
        converter_identifiers=[converter("ROT13Converter")],
        prompt_target_identifier=target(),
        labels={"operator": "alice"},
        targeted_harm_categories=["violence"],
    )
    image = PieceSpec(
        original_value="/home/alice/dbdata/prompt-memory-entries/images/1.png",
        original_value_data_type=PromptDataType.IMAGE_PATH,
        original_media=PNG_BYTES,
    )
    user = message_add(conversation_id=conversation_id, role="user", pieces=[caption, image])
    assert (system.sequence, user.sequence) == (0, 1)
    pieces = list(MessagePiece.objects.of_conversation(conversation_id))
    assert [(p.sequence, p.position, p.role) for p in pieces] == [
        (0, 0, "system"),
        (1, 0, "user"),
        (1, 1, "user"),
    ]
    first, second = pieces[1], pieces[2]
    assert first.original_value_sha256 == sha256_text("Look at this")
    assert first.converted_value_sha256 == sha256_text("Ybbx ng guvf")
    assert [c.identifier.class_name for c in first.converters.all()] == ["ROT13Converter"]
    assert second.converted_value == second.original_value
    assert second.converted_value_data_type == PromptDataType.IMAGE_PATH
    assert second.original_media.content_type == "image/png"
    assert second.original_value_sha256 == second.original_media.sha256
    assert second.original_prompt_id == second.id
    conversation = Conversation.objects.get(conversation_id=conversation_id)
    assert conversation.target_identifier.hash == target().hash
    assert conversation.labels == {"operator": "alice"}
    assert list(conversation.harm_category_index.values_list("name", flat=True)) == ["violence"]


def test_message_add_keeps_empty_converted_value_and_given_hashes():
    given = "a" * 64
    message = message_add(
        conversation_id="c1",
        role="assistant",
        pieces=[PieceSpec(original_value="x", converted_value="", original_value_sha256=given)],
    )
    piece = message.pieces.get()
    assert piece.converted_value == ""
    assert piece.original_value_sha256 == given


def test_message_add_reports_every_problem_and_writes_nothing():
    with pytest.raises(InvalidMemory) as caught:
        message_add(
            conversation_id="c1",
            role="robot",
            pieces=[PieceSpec(original_value="x", original_value_data_type="hologram")],
        )
    paths = {p.path for p in caught.value.problems}
    assert paths == {"role", "pieces[0].original_value_data_type"}
    assert not Conversation.objects.exists()
    with pytest.raises(InvalidMemory):
        message_add(conversation_id="c1", role="user", pieces=[])


def test_media_store_is_content_addressed():
    first = media_store(data=PNG_BYTES, original_name="/etc/passwd")
    second = media_store(data=PNG_BYTES, original_name="other.png")
    assert first.pk == second.pk
    assert MediaBlob.objects.count() == 1
    assert first.file.name.endswith(first.sha256)
    assert "passwd" not in first.file.name


@pytest.mark.parametrize(
    ("score_type", "value", "ok"),
    [
        ("true_false", "True", True),
        ("true_false", "maybe", False),
        ("float_scale", "0.5", True),
        ("float_scale", "1.01", False),
        ("float_scale", "nan", False),
        ("unknown", "whatever", True),
    ],
)
def test_score_add_validates_value_for_type(score_type, value, ok):
    spec = ScoreSpec(
        score_type=score_type,
        score_value=value,
        scorer_class_identifier=scorer(),
        message_piece_id=uuid.uuid4(),
    )
    if ok:
        assert score_add(spec=spec).score_value == value
    else:
        with pytest.raises(InvalidMemory):
            score_add(spec=spec)


def test_score_add_requires_null_value_exactly_when_undetermined():
    base = {
        "score_type": "true_false",
        "scorer_class_identifier": scorer(),
        "message_piece_id": None,
    }
    assert (
        score_add(spec=ScoreSpec(score_value=None, status="undetermined", **base)).numeric_value
        is None
    )
    with pytest.raises(InvalidMemory):
        score_add(spec=ScoreSpec(score_value=None, status="complete", **base))


def test_attack_strategy_found_in_every_nesting_style():
    strategy = attack(objective_target=target())
    atomic_012 = ids.build_atomic_attack_identifier(strategy)
    technique = ids.ComponentIdentifier(
        class_name="AttackTechnique",
        class_module="pyrit.scenario.core.attack_technique",
        children={"attack": strategy},
    )
    atomic_013 = ids.ComponentIdentifier(
        class_name="AtomicAttack",
        class_module="pyrit.scenario.core.atomic_attack",
        children={"attack_technique": technique, "seed_identifiers": []},
    )
    for atomic in (atomic_012, atomic_013):
        found = attack_strategy_identifier(attack_identifier=None, atomic_attack_identifier=atomic)
        assert found.hash == strategy.hash
    assert attack_strategy_identifier(attack_identifier=None, atomic_attack_identifier=None) is None


def test_attack_result_upsert_replaces_outcome_and_keeps_references():
    message = message_add(
        conversation_id="main", role="assistant", pieces=[PieceSpec(original_value="no")]
    )
    piece = message.pieces.get()
    spec = AttackResultSpec(
        conversation_id="main",
        objective="Get the secret",
        atomic_attack_identifier=ids.build_atomic_attack_identifier(attack()),
        last_response_id=piece.id,
        related_conversations=[
            ConversationReferenceSpec(
                conversation_id="adv", conversation_type=ConversationType.ADVERSARIAL
            )
        ],
        labels={"operation": "op_x"},
        targeted_harm_categories=["leakage"],
    )
    result, created = attack_result_save(spec=spec)
    assert created and result.outcome == AttackOutcome.UNDETERMINED
    assert result.attack_identifier.class_name == "PromptSendingAttack"
    assert result.objective_sha256 == sha256_text("Get the secret")
    spec.outcome = AttackOutcome.SUCCESS
    again, created = attack_result_save(spec=spec)
    assert not created and again.pk == result.pk
    assert AttackResult.objects.get().outcome == AttackOutcome.SUCCESS
    assert again.related_conversations.get().conversation.conversation_id == "adv"
    assert Conversation.objects.get(conversation_id="main").labels == {"operation": "op_x"}
    assert list(again.label_index.values_list("key", "value")) == [("operation", "op_x")]


def test_attack_result_refuses_unknown_last_response():
    spec = AttackResultSpec(conversation_id="c", objective="o", last_response_id=uuid.uuid4())
    with pytest.raises(InvalidMemory) as caught:
        attack_result_save(spec=spec)
    assert caught.value.problems[0].path == "last_response"
    assert not AttackResult.objects.exists()


def test_media_store_survives_a_concurrent_insert_of_the_same_bytes(monkeypatch):
    """The existence check can miss a blob another writer inserts a moment later."""
    existing = media_store(data=PNG_BYTES)
    real_filter = MediaBlob.objects.filter

    class MissOnce:
        def __call__(self, *args, **kwargs):
            monkeypatch.setattr(MediaBlob.objects, "filter", real_filter)
            return real_filter(pk=None)  # pretend nothing was found

    monkeypatch.setattr(MediaBlob.objects, "filter", MissOnce())
    again = media_store(data=PNG_BYTES)
    assert again.pk == existing.pk
    assert MediaBlob.objects.count() == 1
    # The loser's copy is removed; the winner's file is untouched.
    assert existing.file.storage.exists(existing.file.name)
    assert existing.file.storage.listdir(existing.file.name.rsplit("/", 1)[0])[1] == [
        existing.sha256
    ]


def test_tagging_many_labels_costs_a_fixed_number_of_queries(django_assert_max_num_queries):
    from memory.models import Label
    from memory.storage.write import label_rows

    label_rows({("operator", "alice")})
    labels = {(f"k{i}", f"v{i}") for i in range(20)} | {("operator", "alice")}
    with django_assert_max_num_queries(2):  # INSERT … ON CONFLICT DO NOTHING, SELECT
        rows = label_rows(labels)
    assert set(rows) == labels
    assert Label.objects.count() == 21
