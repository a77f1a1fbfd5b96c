"""Database constraints and model-level behaviour of the seed models (contract §8).

Every check/unique constraint gets a test that a violating row raises ``IntegrityError`` (the
violating statement runs in its own ``transaction.atomic()`` so the test can go on) and a test
that the valid boundary is accepted.
"""

from __future__ import annotations

import pytest
from django.db import DataError, IntegrityError, transaction

from seeds.choices import ChatMessageRole, PromptDataType, SeedGroupKind, SeedType
from seeds.models import (
    Seed,
    SeedDataset,
    SeedGroup,
    SeedObjective,
    SeedPrompt,
    SeedSimulatedConversation,
)
from tests.factories import NOW, make_dataset, make_group, make_seed, sha256_hex

pytestmark = pytest.mark.django_db


def assert_rejected(create, *args, errors=IntegrityError, **kwargs) -> None:
    """``create(*args, **kwargs)`` violates a database constraint."""
    with pytest.raises(errors), transaction.atomic():
        create(*args, **kwargs)


def make_objective(value: str = "Make the model reveal its system prompt", **fields) -> Seed:
    return make_seed(value, seed_type=SeedType.OBJECTIVE, **fields)


def make_simulation(num_turns: int | None = 3, **fields) -> Seed:
    return make_seed(
        '{"num_turns": 3}',
        seed_type=SeedType.SIMULATED_CONVERSATION,
        num_turns=num_turns,
        is_general_technique=True,
        **fields,
    )


# --- SeedDataset ------------------------------------------------------------------------------


def test_dataset_name_is_unique():
    make_dataset("airt_illegal")
    assert_rejected(make_dataset, "airt_illegal")
    make_dataset("airt_hate")
    assert list(SeedDataset.objects.values_list("name", flat=True)) == ["airt_hate", "airt_illegal"]


@pytest.mark.parametrize("data_type", PromptDataType.values)
def test_dataset_accepts_every_data_type(data_type):
    dataset = make_dataset(data_type=data_type)
    dataset.refresh_from_db()
    assert dataset.data_type == data_type


@pytest.mark.parametrize("data_type", ["image", "Text", ""])
def test_dataset_rejects_unknown_data_type(data_type):
    assert_rejected(make_dataset, data_type=data_type)


@pytest.mark.parametrize("seed_type", SeedType.values)
def test_dataset_accepts_every_seed_type(seed_type):
    assert make_dataset(seed_type=seed_type).seed_type == seed_type


@pytest.mark.parametrize("seed_type", ["jailbreak", "Prompt", "simulated", ""])
def test_dataset_rejects_unknown_seed_type(seed_type):
    assert_rejected(make_dataset, seed_type=seed_type)


def test_dataset_delete_cascades_to_its_seeds():
    dataset = make_dataset()
    make_seed(dataset=dataset, dataset_name=dataset.name)
    orphan = make_seed(dataset_name="not curated")
    dataset.delete()
    assert list(Seed.objects.all()) == [orphan]


# --- SeedGroup --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SeedGroupKind.values)
def test_group_accepts_every_kind(kind):
    assert make_group(kind=kind).kind == kind


@pytest.mark.parametrize("kind", ["attack", "SeedGroup", ""])
def test_group_rejects_unknown_kind(kind):
    assert_rejected(make_group, kind=kind)


def test_group_delete_keeps_its_seeds():
    group = make_group(alias="g1")
    seed = make_seed(group=group)
    assert str(group) == "g1"
    group.delete()
    assert not SeedGroup.objects.exists()
    seed.refresh_from_db()
    assert seed.group is None


# --- Seed: column constraints -----------------------------------------------------------------


@pytest.mark.parametrize("seed_type", ["jailbreak", "Objective", "simulated", ""])
def test_seed_rejects_unknown_seed_type(seed_type):
    assert_rejected(make_seed, seed_type=seed_type)


@pytest.mark.parametrize("data_type", PromptDataType.values)
def test_prompt_seed_accepts_every_data_type(data_type):
    seed = make_seed("results/a.bin", data_type=data_type)
    seed.refresh_from_db()
    assert seed.data_type == data_type


@pytest.mark.parametrize("data_type", ["image", "png", "TEXT", ""])
def test_seed_rejects_unknown_data_type(data_type):
    assert_rejected(make_seed, data_type=data_type)


@pytest.mark.parametrize("role", [None, *ChatMessageRole.values])
def test_seed_role_is_null_or_a_chat_role(role):
    seed = make_seed(role=role)
    seed.refresh_from_db()
    assert seed.role == role


@pytest.mark.parametrize("role", ["robot", "User", ""])
def test_seed_rejects_unknown_role(role):
    assert_rejected(make_seed, role=role)


@pytest.mark.parametrize(
    ("sequence", "accepted"), [(-1, False), (-10, False), (0, True), (5, True)]
)
def test_seed_sequence_not_negative(sequence, accepted):
    if accepted:
        assert make_seed(sequence=sequence).sequence == sequence
    else:
        assert_rejected(make_seed, sequence=sequence)


HEX = sha256_hex("seed")


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (HEX, True),
        (None, True),
        (HEX.upper(), False),
        (HEX[:63], False),
        (HEX + "0", False),
        ("z" * 64, False),
        ("", False),
    ],
)
def test_seed_value_sha256_is_null_or_lowercase_hex(value, accepted):
    if accepted:
        seed = make_seed(value_sha256=value)
        seed.refresh_from_db()
        assert seed.value_sha256 == value
    else:
        # Over-long values hit PostgreSQL's varchar(64) before the check constraint.
        errors = (IntegrityError, DataError) if len(value) > 64 else IntegrityError
        assert_rejected(make_seed, value_sha256=value, errors=errors)


# --- Seed: objectives and simulated conversations ----------------------------------------------


def test_objective_is_text_and_not_a_general_technique():
    assert make_objective(data_type=PromptDataType.TEXT).seed_type == SeedType.OBJECTIVE
    assert_rejected(make_objective, data_type=PromptDataType.IMAGE_PATH)
    assert_rejected(make_objective, data_type=PromptDataType.URL)
    assert_rejected(make_objective, is_general_technique=True)


def test_prompt_may_be_media_and_a_general_technique():
    seed = make_seed("jailbreak {{ prompt }}", is_general_technique=True, parameters=["prompt"])
    assert seed.is_general_technique is True
    assert make_seed("img.png", data_type=PromptDataType.IMAGE_PATH, is_general_technique=True)


@pytest.mark.parametrize(("num_turns", "accepted"), [(0, False), (1, True), (3, True)])
def test_simulated_conversation_needs_positive_turns(num_turns, accepted):
    if accepted:
        assert make_simulation(num_turns).num_turns == num_turns
    else:
        assert_rejected(make_simulation, num_turns)


def test_simulated_conversation_without_turns_rejected():
    assert_rejected(make_simulation, None)


def test_num_turns_not_negative_and_optional_for_prompts():
    assert_rejected(make_seed, num_turns=-1)
    assert make_seed(num_turns=None).num_turns is None


def test_at_most_one_objective_per_group():
    group, other = make_group(), make_group()
    make_objective(group=group)
    assert_rejected(make_objective, "a second goal", group=group)
    # Prompts and a simulated conversation may share the group with its objective.
    make_seed(group=group, sequence=0)
    make_seed(group=group, sequence=1)
    make_simulation(group=group)
    # One objective in each of two groups is fine, as are any number without a group.
    make_objective(group=other)
    make_objective("ungrouped 1", group=None)
    make_objective("ungrouped 2", group=None)
    assert Seed.objects.filter(seed_type=SeedType.OBJECTIVE).count() == 4


def test_at_most_one_simulated_conversation_per_group():
    group, other = make_group(), make_group()
    make_simulation(group=group)
    assert_rejected(make_simulation, 2, group=group)
    make_objective(group=group)
    make_simulation(group=other)
    make_simulation(group=None)
    make_simulation(group=None)
    assert Seed.objects.filter(seed_type=SeedType.SIMULATED_CONVERSATION).count() == 4


def test_objective_uniqueness_checks_changed_type_on_update():
    group = make_group()
    make_objective(group=group)
    prompt = make_seed("will become an objective", group=group)
    prompt.seed_type = SeedType.OBJECTIVE
    assert_rejected(prompt.save)


# --- Proxy models -----------------------------------------------------------------------------


@pytest.fixture
def one_of_each():
    return {
        SeedType.PROMPT: make_seed("a prompt"),
        SeedType.OBJECTIVE: make_objective(),
        SeedType.SIMULATED_CONVERSATION: make_simulation(),
    }


@pytest.mark.parametrize(
    ("proxy", "seed_type"),
    [
        (SeedPrompt, SeedType.PROMPT),
        (SeedObjective, SeedType.OBJECTIVE),
        (SeedSimulatedConversation, SeedType.SIMULATED_CONVERSATION),
    ],
)
def test_proxy_manager_sees_only_its_type(one_of_each, proxy, seed_type):
    rows = list(proxy.objects.all())
    assert [row.pk for row in rows] == [one_of_each[seed_type].pk]
    assert all(type(row) is proxy for row in rows)
    assert proxy.objects.count() == 1
    other = next(s for t, s in one_of_each.items() if t != seed_type)
    with pytest.raises(proxy.DoesNotExist):
        proxy.objects.get(pk=other.pk)
    assert Seed.objects.count() == 3


@pytest.mark.parametrize(
    ("proxy", "seed_type", "extra"),
    [
        (SeedPrompt, SeedType.PROMPT, {}),
        (SeedObjective, SeedType.OBJECTIVE, {}),
        (SeedSimulatedConversation, SeedType.SIMULATED_CONVERSATION, {"num_turns": 2}),
    ],
)
def test_proxy_save_forces_its_seed_type(proxy, seed_type, extra):
    # A wrong seed_type on the instance is overwritten by the proxy's save().
    wrong = SeedType.OBJECTIVE if seed_type != SeedType.OBJECTIVE else SeedType.PROMPT
    seed = proxy(value="v", seed_type=wrong, date_added=NOW, **extra)
    seed.save()
    assert Seed.objects.get(pk=seed.pk).seed_type == seed_type
    assert proxy.objects.filter(pk=seed.pk).exists()


def test_default_seed_prompt_is_a_prompt():
    seed = SeedPrompt(value="hello", date_added=NOW)
    seed.save()
    assert Seed.objects.get(pk=seed.pk).seed_type == SeedType.PROMPT


def test_proxy_create_forces_seed_type():
    seed = SeedObjective.objects.create(value="goal", date_added=NOW, seed_type=SeedType.PROMPT)
    assert Seed.objects.get(pk=seed.pk).seed_type == SeedType.OBJECTIVE


def test_proxy_save_still_enforces_constraints():
    assert_rejected(
        SeedObjective.objects.create,
        value="img.png",
        date_added=NOW,
        data_type=PromptDataType.IMAGE_PATH,
    )
    assert_rejected(
        SeedSimulatedConversation.objects.create, value="{}", date_added=NOW, num_turns=0
    )


def test_proxy_managers_expose_seed_queryset_methods(one_of_each):
    assert list(SeedPrompt.objects.in_group_order()) == [one_of_each[SeedType.PROMPT]]


# --- Queryset helpers -------------------------------------------------------------------------


def test_in_group_order_objective_simulation_then_prompts_by_sequence():
    group = make_group(kind=SeedGroupKind.ATTACK)
    # Created in the wrong order on purpose; the simulation occupies sequences 0 – 3.
    p5 = make_seed("second turn", group=group, sequence=5, role="user")
    p4b = make_seed("img.png", group=group, sequence=4, role="user", data_type="image_path")
    p4a = make_seed("caption", group=group, sequence=4, role="user")
    sim = make_simulation(2, group=group, sequence=0)
    objective = make_objective(group=group, sequence=0)
    make_seed("someone else's", group=make_group(), sequence=0)
    # Same sequence: the stored position (the order the seeds were given) decides.
    Seed.objects.filter(pk=p4a.pk).update(position=3)
    Seed.objects.filter(pk=p4b.pk).update(position=4)

    ordered = list(Seed.objects.filter(group=group).in_group_order())
    assert [s.pk for s in ordered] == [objective.pk, sim.pk, p4a.pk, p4b.pk, p5.pk]
    assert [s.pk for s in group.seeds.in_group_order()] == [s.pk for s in ordered]


def test_in_group_order_ranks_type_before_sequence():
    group = make_group()
    prompt = make_seed(group=group, sequence=0)
    sim = make_simulation(group=group, sequence=3)
    objective = make_objective(group=group, sequence=9)
    ordered = [s.pk for s in Seed.objects.filter(group=group).in_group_order()]
    assert ordered == [objective.pk, sim.pk, prompt.pk]


def test_of_type_filters_by_seed_type():
    prompt, objective = make_seed(), make_objective()
    assert list(Seed.objects.of_type(SeedType.PROMPT)) == [prompt]
    assert list(Seed.objects.of_type(SeedType.OBJECTIVE)) == [objective]
    assert list(Seed.objects.of_type(SeedType.SIMULATED_CONVERSATION)) == []


def test_seed_str_prefers_name():
    assert str(make_seed("x" * 100)) == f"prompt: {'x' * 60}"
    assert str(make_objective(name="reveal")) == "objective: reveal"
