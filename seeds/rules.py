"""PyRIT's seed-group rules (contract §8.5), as pure functions over seed specs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from redteam.core.choices import ChatMessageRole, SeedType
from redteam.core.errors import Problem
from redteam.core.identifiers import canonical_seed_order
from seeds.specs import SeedSpec


def group_problems(seeds: Sequence[SeedSpec]) -> list[Problem]:
    """Every way ``seeds`` break PyRIT's ``SeedGroup`` validation; empty when valid.

    Rules: not empty; one ``prompt_group_id`` at most; at most one objective and one simulated
    conversation; within a sequence all prompts share one role; in a multi-sequence group every
    sequence names a role; prompts stay out of the simulated conversation's sequence range.
    """
    if not seeds:
        return [Problem("seeds", "a seed group needs at least one seed")]
    problems: list[Problem] = []
    group_ids = {s.prompt_group_id for s in seeds if s.prompt_group_id is not None}
    if len(group_ids) > 1:
        problems.append(Problem("seeds", "seeds carry different prompt_group_id values"))
    objectives = [s for s in seeds if s.seed_type == SeedType.OBJECTIVE]
    simulations = [s for s in seeds if s.seed_type == SeedType.SIMULATED_CONVERSATION]
    if len(objectives) > 1:
        problems.append(Problem("seeds", "a seed group can hold at most one objective"))
    if len(simulations) > 1:
        problems.append(
            Problem("seeds", "a seed group can hold at most one simulated conversation")
        )
    prompts = [(i, s) for i, s in enumerate(seeds) if s.seed_type == SeedType.PROMPT]
    roles_by_sequence: dict[int, set[str]] = defaultdict(set)
    for index, seed in prompts:
        if seed.role is not None and seed.role not in ChatMessageRole.values:
            problems.append(Problem(f"seeds[{index}].role", f"unknown role {seed.role!r}"))
        roles_by_sequence[seed.sequence].update({seed.role} if seed.role else set())
    multi_sequence = len(roles_by_sequence) > 1
    for sequence, roles in sorted(roles_by_sequence.items()):
        if len(roles) > 1:
            problems.append(Problem("seeds", f"sequence {sequence} mixes roles {sorted(roles)}"))
        elif not roles and multi_sequence:
            problems.append(
                Problem("seeds", f"sequence {sequence} has no role in a multi-sequence group")
            )
    for simulation in simulations:
        turns = simulation.num_turns or 0
        if turns <= 0:
            problems.append(Problem("seeds", "a simulated conversation needs num_turns > 0"))
            continue
        last = simulation.sequence + 2 * turns - 1
        for index, seed in prompts:
            if simulation.sequence <= seed.sequence <= last:
                problems.append(
                    Problem(
                        f"seeds[{index}].sequence",
                        f"sequence {seed.sequence} lies inside the simulated conversation "
                        f"({simulation.sequence}–{last})",
                    )
                )
    return problems


def normalise_group(seeds: Sequence[SeedSpec]) -> list[SeedSpec]:
    """Fill PyRIT's defaults (a sequence without role becomes ``user``) and sort canonically.

    Call only on a group without problems.
    """
    roles: dict[int, str] = {}
    for seed in seeds:
        if seed.seed_type == SeedType.PROMPT and seed.role:
            roles[seed.sequence] = seed.role
    for seed in seeds:
        if seed.seed_type == SeedType.PROMPT and not seed.role:
            seed.role = roles.get(seed.sequence, ChatMessageRole.USER)
    return canonical_seed_order(seeds)
