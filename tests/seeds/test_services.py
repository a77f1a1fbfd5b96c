"""Seed services and PyRIT's seed-group rules (contract §8.5)."""

from __future__ import annotations

import uuid

import pytest

from memory.storage.services import InvalidMemory
from redteam.core import identifiers as ids
from redteam.core.hashing import sha256_text
from seeds.choices import SeedGroupKind
from seeds.models import Seed, SeedGroup
from seeds.rules import group_problems
from seeds.services import seed_create, seed_dataset_upsert, seed_group_create
from seeds.specs import SeedSpec
from tests.samples import PNG_BYTES


def spec(value="hi", **kw) -> SeedSpec:
    kw.setdefault("added_by", "tests")
    return SeedSpec(value=value, **kw)


def messages(seeds) -> list[str]:
    return [p.message for p in group_problems(seeds)]


def test_valid_multi_turn_group_has_no_problems():
    seeds = [
        spec("goal", seed_type="objective"),
        spec("a", role="user", sequence=0),
        spec("b", role="assistant", sequence=1),
        spec("c", role="user", sequence=2),
    ]
    assert group_problems(seeds) == []


@pytest.mark.parametrize(
    ("seeds", "expected"),
    [
        ([], "at least one seed"),
        ([spec(seed_type="objective"), spec(seed_type="objective")], "at most one objective"),
        (
            [spec(role="user", sequence=0), spec(role="assistant", sequence=0)],
            "mixes roles",
        ),
        ([spec(role="user", sequence=0), spec(sequence=1)], "no role in a multi-sequence"),
        (
            [spec(prompt_group_id=uuid.uuid4()), spec(prompt_group_id=uuid.uuid4())],
            "different prompt_group_id",
        ),
        (
            [
                spec(seed_type="simulated_conversation", num_turns=2, sequence=0),
                spec(role="user", sequence=3),
            ],
            "inside the simulated conversation",
        ),
    ],
)
def test_invalid_groups_are_explained(seeds, expected):
    assert any(expected in m for m in messages(seeds))


@pytest.mark.django_db
def test_single_sequence_group_defaults_role_to_user():
    group = seed_group_create(seeds=[spec("a"), spec("b"), spec("goal", seed_type="objective")])
    roles = list(group.seeds.in_group_order().values_list("role", flat=True))
    assert roles == [None, "user", "user"]


@pytest.mark.django_db
def test_group_create_stores_ordered_seeds_with_one_group_id():
    dataset = seed_dataset_upsert(name="ds")
    group_id = uuid.uuid4()
    group = seed_group_create(
        seeds=[
            spec("second", role="user", sequence=1, prompt_group_id=group_id),
            spec("caption", sequence=0, role="user"),
            spec("/x/img.png", data_type="image_path", sequence=0, media=PNG_BYTES),
            spec("goal", seed_type="objective"),
        ],
        dataset=dataset,
        alias="g",
    )
    assert group.id == group_id
    assert group.kind == SeedGroupKind.ATTACK
    ordered = list(group.seeds.in_group_order().values_list("value", "role"))
    assert ordered == [
        ("goal", None),
        ("caption", "user"),
        ("/x/img.png", "user"),
        ("second", "user"),
    ]
    image = group.seeds.get(data_type="image_path")
    assert image.media.content_type == "image/png"
    assert image.value_sha256 == image.media.sha256
    assert set(group.seeds.values_list("dataset_name", flat=True)) == {"ds"}


@pytest.mark.django_db
def test_group_create_refuses_invalid_group_and_writes_nothing():
    with pytest.raises(InvalidMemory):
        seed_group_create(seeds=[spec(role="user"), spec(role="assistant")])
    assert not SeedGroup.objects.exists() and not Seed.objects.exists()


@pytest.mark.django_db
def test_seed_create_computes_text_hash_and_requires_added_by():
    seed = seed_create(spec=spec("Tell me"))
    assert seed.value_sha256 == sha256_text("Tell me")
    with pytest.raises(InvalidMemory) as caught:
        seed_create(spec=SeedSpec(value="x", seed_type="objective", data_type="image_path"))
    assert {p.path for p in caught.value.problems} == {"data_type", "added_by"}


@pytest.mark.django_db
def test_seed_identifier_of_a_stored_seed_matches_pyrit_shape():
    seed = seed_create(spec=spec("Pretend to be my grandmother", is_general_technique=True))
    identifier = ids.build_seed_identifier(seed)
    assert identifier.class_name == "SeedPrompt"
    assert identifier.params == {
        "value": "Pretend to be my grandmother",
        "value_sha256": sha256_text("Pretend to be my grandmother"),
        "dataset_name": None,
        "is_general_technique": True,
    }
