"""A tree-of-attacks run read as a tree of branches, from PyRIT's own TAP run."""

from __future__ import annotations

import pytest

from memory.models import AttackResult
from memory.review.attack_tree import attack_branches
from tests.exporters.conftest import ingest_ok
from tests.ingest.conftest import EXPORT_110, load

pytestmark = pytest.mark.django_db

BEST = "763b778f-a04d-4ebe-b6cd-9922140adbae"


@pytest.fixture
def tap_attack():
    ingest_ok(load(EXPORT_110))
    return AttackResult.objects.select_related("conversation").get(
        conversation__conversation_id=BEST
    )


def _flat(branches, depth=0):
    for branch in branches:
        yield depth, branch
        yield from _flat(branch.children, depth + 1)


def test_the_best_branch_hangs_under_the_branch_it_was_copied_from(tap_attack):
    tree = attack_branches(attack=tap_attack)

    flat = {b.conversation_id: (depth, b) for depth, b in _flat(tree)}
    depth, best = flat[BEST]
    assert best.is_best and depth == 1
    parent = next(b for _, b in _flat(tree) if best in b.children)
    assert parent.conversation_id == "d3498619-27b4-4cb1-a43b-9007cce15862"
    assert parent.status == "pruned"
    assert (best.turns, best.forked_after) == (2, 1)
    assert best.last_response.startswith("Here you go, the SECRET answer is below")
    # The other pruned branch forked from a branch the attack result does not name.
    other = flat["77c76eab-8711-43db-8fdc-cc7402d41da6"][1]
    ancestor = next(b for _, b in _flat(tree) if other in b.children)
    assert ancestor.status == "ancestor"
    assert ancestor.conversation_id == "779b9480-d653-4a9e-bc0d-122342e3d8f4"
    # The tree holding the best branch comes first.
    assert tree[0] is parent


def test_the_tree_costs_three_queries_and_other_attacks_none(tap_attack, django_assert_num_queries):
    related = list(tap_attack.related_conversations.select_related("conversation"))
    with django_assert_num_queries(3):
        attack_branches(attack=tap_attack, related=related)
    plain = (
        AttackResult.objects.exclude(pk=tap_attack.pk)
        .filter(related_conversations__isnull=True)
        .first()
    )
    with django_assert_num_queries(1):
        assert attack_branches(attack=plain) == []


def test_the_attack_page_draws_the_branches(tap_attack, viewer_client):
    html = viewer_client.get(f"/attacks/{tap_attack.pk}/").content.decode()

    assert '<details class="card branch-card" open>' in html
    assert "Best branch" in html and "forked after turn 1" in html
    assert 'href="?side=d3498619-27b4-4cb1-a43b-9007cce15862"' in html
    assert 'href="/conversations/779b9480-d653-4a9e-bc0d-122342e3d8f4/"' in html


def test_an_attack_without_pruned_branches_has_no_tree_section(tap_attack, viewer_client):
    plain = AttackResult.objects.exclude(pk=tap_attack.pk).first()

    html = viewer_client.get(f"/attacks/{plain.pk}/").content.decode()

    assert "branch-card" not in html
