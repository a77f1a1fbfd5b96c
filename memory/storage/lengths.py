"""Every text of a batch that does not fit its column (``redteam.core.lengths``): the specs'
own fields, and the values that become rows of their own (conversation ids, labels, harm
categories, identifiers)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    HarmCategory,
    Label,
    MessagePiece,
    PyritRecord,
    ScenarioResult,
    ScorableContent,
    Score,
)
from memory.storage.batch import NormalizedBatch
from redteam.core import identifiers as ids
from redteam.core.errors import Problem
from redteam.core.lengths import (
    HARM_CATEGORIES_MAX_ITEMS,
    char_limits,
    spec_problems,
    too_many_items,
    value_problems,
)


def label_problems(labels: dict[str, Any], path: str) -> Iterator[Problem]:
    """Label names too long for Redline's label index (a value may be any length: it is
    indexed by its hash), each named ``<path>.<key>``."""
    for key in labels:
        yield from value_problems(key, Label, "key", f"{path}.{key}")


def harm_problems(categories: Collection[Any], path: str) -> Iterator[Problem]:
    """More harm categories than a list may hold, or names too long for the harm category
    index (every write path, whatever read the list)."""
    if len(categories) > HARM_CATEGORIES_MAX_ITEMS:
        yield Problem(path, too_many_items(len(categories), HARM_CATEGORIES_MAX_ITEMS))
        return
    for index, name in enumerate(categories):
        yield from value_problems(name, HarmCategory, "name", f"{path}[{index}]")


def identifier_problems(identifier: ids.ComponentIdentifier | None, path: str) -> Iterator[Problem]:
    """An identifier (and its children) with a class name, module or version too long."""
    if identifier is None:
        return
    yield from spec_problems(identifier, ComponentIdentifier, path)
    for name, child in identifier.children.items():
        for index, node in enumerate(child if isinstance(child, list) else [child]):
            where = f"{path}.children.{name}" + (f"[{index}]" if isinstance(child, list) else "")
            yield from identifier_problems(node, where)


def batch_problems(batch: NormalizedBatch) -> list[Problem]:
    """Every text of ``batch`` (seeds aside: ``seeds_write`` checks those) too long for its
    column."""
    problems: list[Problem] = []
    add = problems.extend
    # A batch names a few identifiers many times (the reader parses each distinct one once):
    # one that fits is not measured again. Paths are spelled out only for what is measured.
    fits: set[int] = set()

    def identifier(
        found: ids.ComponentIdentifier | None, path: str, name: str, index: int | None = None
    ) -> None:
        if found is None or id(found) in fits:
            return
        where = f"{path}.{name}" if index is None else f"{path}.{name}[{index}]"
        over = list(identifier_problems(found, where))
        if over:
            add(over)
        else:
            fits.add(id(found))

    conversation_limit = char_limits(Conversation)["conversation_id"]
    for piece in batch.pieces:
        spec, path = piece.spec, piece.path
        cid = piece.conversation_id
        if isinstance(cid, str) and len(cid) > conversation_limit:
            add(value_problems(cid, Conversation, "conversation_id", f"{path}.conversation_id"))
        add(spec_problems(spec, MessagePiece, path))
        if spec.labels:
            add(label_problems(spec.labels, f"{path}.labels"))
        if spec.targeted_harm_categories:
            add(harm_problems(spec.targeted_harm_categories, f"{path}.targeted_harm_categories"))
        for index, converter in enumerate(spec.converter_identifiers):
            identifier(converter, path, "converter_identifiers", index)
        identifier(spec.prompt_target_identifier, path, "prompt_target_identifier")
        identifier(spec.attack_identifier, path, "attack_identifier")
        identifier(spec.scorer_identifier, path, "scorer_identifier")
    for conversation in batch.conversations:
        path = batch.path_of(conversation)
        add(spec_problems(conversation, Conversation, path))
        identifier(conversation.target_identifier, path, "target_identifier")
    for score in batch.scores:
        path = batch.path_of(score)
        add(spec_problems(score, Score, path))
        identifier(score.scorer_class_identifier, path, "scorer_class_identifier")
    for content in batch.scorable_contents:
        add(spec_problems(content, ScorableContent, batch.path_of(content)))
    for attack in batch.attack_results:
        path = batch.path_of(attack)
        add(
            value_problems(
                attack.conversation_id, Conversation, "conversation_id", f"{path}.conversation_id"
            )
        )
        add(spec_problems(attack, AttackResult, path))
        add(label_problems(attack.labels, f"{path}.labels"))
        add(harm_problems(attack.targeted_harm_categories, f"{path}.targeted_harm_categories"))
        for index, related in enumerate(attack.related_conversations):
            add(
                value_problems(
                    related.conversation_id,
                    Conversation,
                    "conversation_id",
                    f"{path}.related_conversations[{index}].conversation_id",
                )
            )
        for name in ("attack_identifier", "atomic_attack_identifier"):
            add(identifier_problems(getattr(attack, name), f"{path}.{name}"))
    for scenario in batch.scenario_results:
        path = batch.path_of(scenario)
        add(spec_problems(scenario, ScenarioResult, path))
        add(label_problems(scenario.labels, f"{path}.labels"))
        for name in (
            "scenario_identifier",
            "objective_target_identifier",
            "objective_scorer_identifier",
        ):
            add(identifier_problems(getattr(scenario, name), f"{path}.{name}"))
    for record in batch.pyrit_records:
        path = batch.path_of(record)
        add(value_problems(record.pk, PyritRecord, "pk_text", f"{path}.pk"))
        add(spec_problems(record, PyritRecord, path))
    return problems
