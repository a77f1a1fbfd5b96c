"""A tree-of-attacks run as a tree: which branch grew from which, where each ended, which won.

PyRIT's ``TreeOfAttacksWithPruningAttack`` keeps one target conversation per branch. A new
branch starts as a copy of its parent's conversation (PyRIT duplicates the pieces, and each
copy's ``original_prompt_id`` names the piece it copies), then goes on alone. The attack
result names the winning branch (its main conversation) and the pruned ones. So the tree is
in the data: a branch's parent is the conversation that owns the originals of the last turn
it copied, and the turn after it is where the branch forked.

Three queries, whatever the size of the tree (the attack page hands in the related
conversations it read): the branches' pieces, the conversations their copied pieces came
from, and the last responses' scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from memory.models import AttackResult, MessagePiece, RelatedConversation, Score
from memory.review.lists import shorten
from redteam.core.choices import ChatMessageRole, ConversationType, ScoreType, choice_label

__all__ = ["Branch", "BranchWording", "attack_branches", "branch_wording"]

#: Characters of a prompt or response shown per branch.
PREVIEW = 160


@dataclass
class Branch:
    """One target conversation of the tree and the branches that forked from it."""

    conversation_id: str
    status: str  # "best", "pruned" or "ancestor" (not named by the attack result)
    turns: int
    forked_after: int  # turns copied from the parent (0 for a root)
    last_prompt: str = ""
    last_response: str = ""
    last_score: str = ""  # rounded, for people ("0.44", "True")
    last_score_title: str = ""  # the stored value and its type ("0.4444444444444444 · Float scale")
    children: list[Branch] = field(default_factory=list)

    @property
    def is_best(self) -> bool:
        """The branch the attack result names as its main conversation."""
        return self.status == "best"


@dataclass(frozen=True)
class BranchWording:
    """What the panel of an attack's pruned conversations is called: only a tree of attacks
    has branches. PyRIT also records as pruned the attempts a ``PromptSendingAttack``
    retried (``max_attempts_on_failure``) and the turns ``CrescendoAttack`` backtracked."""

    title: str
    note: str
    main: str  # the attack result's own conversation
    pruned: str
    ancestor: str  # an earlier conversation the attack result does not name


_TREE = BranchWording(
    title="Branches",
    note="of this tree of attacks: where each branch forked, how it ended, which one won",
    main="Best branch",
    pruned="Pruned",
    ancestor="Earlier branch",
)


def branch_wording(attack_class: str | None) -> BranchWording:
    """The wording for the pruned conversations of an attack of ``attack_class``."""
    if attack_class and ("TreeOfAttacks" in attack_class or attack_class == "TAPAttack"):
        return _TREE
    name = attack_class or "attack"
    return BranchWording(
        title="Earlier attempts",
        note=f"of this {name}: the conversations PyRIT recorded as pruned (attempts it gave up"
        " and started again, or turns it backtracked), how each ended, and the one it kept",
        main="Kept",
        pruned="Earlier attempt",
        ancestor="Earlier conversation",
    )


def attack_branches(
    *, attack: AttackResult, related: Iterable[RelatedConversation] | None = None
) -> list[Branch]:
    """The tree of ``attack``'s branches (roots first), or ``[]`` when it has no pruned
    branches (it is not a tree-of-attacks run). ``related``: its related conversations with
    their conversation, when the caller has them already (saves a query)."""
    if related is None:
        related = RelatedConversation.objects.filter(attack_result=attack).select_related(
            "conversation"
        )
    pruned = [
        (r.conversation_id, r.conversation.conversation_id)
        for r in related
        if r.conversation_type == ConversationType.PRUNED
    ]
    if not pruned:
        return []
    status = {pk: "pruned" for pk, _ in pruned}
    status[attack.conversation_id] = "best"
    names = {pk: name for pk, name in pruned}
    names[attack.conversation_id] = attack.conversation.conversation_id

    rows = list(
        MessagePiece.objects.filter(message__conversation_id__in=list(status))
        .order_by("message__conversation_id", "message__sequence", "position")
        .values_list(
            "id",
            "original_prompt_id",
            "message__conversation_id",
            "message__role",
            "converted_value",
        )
    )
    copied_from = dict(
        MessagePiece.objects.filter(
            pk__in=[original for pk, original, *_ in rows if original != pk]
        ).values_list("pk", "message__conversation__conversation_id")
    )
    by_conversation: dict[int, list[tuple]] = defaultdict(list)
    for row in rows:
        by_conversation[row[2]].append(row)

    branches: dict[str, Branch] = {}
    parents: dict[str, tuple[str, int]] = {}
    last_originals: dict[str, object] = {}
    for pk, pieces in by_conversation.items():
        branch, parent, last_original = _branch(names[pk], status[pk], pieces, copied_from)
        branches[branch.conversation_id] = branch
        last_originals[branch.conversation_id] = last_original
        if parent is not None:
            parents[branch.conversation_id] = parent
    _score_leaves(branches, last_originals)

    roots = []
    for name, branch in list(branches.items()):
        parent = parents.get(name)
        if parent is None:
            roots.append(branch)
            continue
        parent_name, _ = parent
        if parent_name not in branches:
            # An ancestor the attack result does not name: shown by its id, to keep the shape.
            branches[parent_name] = Branch(
                conversation_id=parent_name, status="ancestor", turns=0, forked_after=0
            )
            roots.append(branches[parent_name])
        branches[parent_name].children.append(branch)
    for branch in branches.values():
        branch.children.sort(key=lambda b: (not b.is_best, b.conversation_id))
    return sorted(roots, key=lambda b: (not _holds_best(b), b.conversation_id))


def _branch(
    name: str, status: str, pieces: list[tuple], copied_from: dict
) -> tuple[Branch, tuple[str, int] | None, object]:
    """One branch from its pieces in order: its turns, where it forked, its last exchange."""
    turns = copied_turns = 0
    parent = None
    prompt = response = ""
    last_original = None
    for pk, original, _conversation, role, value in pieces:
        if role == ChatMessageRole.USER:
            turns += 1
            prompt = value
        elif role in (ChatMessageRole.ASSISTANT, ChatMessageRole.SIMULATED_ASSISTANT):
            response = value
            last_original = original
        if original != pk and original in copied_from:
            parent = copied_from[original]
            copied_turns = turns
    branch = Branch(
        conversation_id=name,
        status=status,
        turns=turns,
        forked_after=copied_turns,
        last_prompt=shorten(prompt, PREVIEW),
        last_response=shorten(response, PREVIEW),
    )
    return branch, ((parent, copied_turns) if parent else None), last_original


def _score_leaves(branches: dict[str, Branch], last_originals: dict[str, object]) -> None:
    """Each branch's newest score of its last response (one query)."""
    wanted = {original: name for name, original in last_originals.items() if original}
    scores = Score.objects.filter(message_piece_id__in=list(wanted)).order_by("timestamp", "pk")
    for piece_id, value, score_type in scores.values_list(
        "message_piece_id", "score_value", "score_type"
    ):
        branch = branches[wanted[piece_id]]
        branch.last_score = score_text(value, score_type)
        branch.last_score_title = (
            f"{value} · {choice_label(ScoreType, score_type)}" if branch.last_score else ""
        )


def score_text(value: str | None, score_type: str) -> str:
    """A stored score value for people: a float scale value to two decimals (the stored
    text has PyRIT's full repr, ``0.4444444444444444``), true/false capitalised, anything
    else as stored; "" for no value."""
    if not value:
        return ""
    if score_type == ScoreType.FLOAT_SCALE:
        try:
            return f"{float(value):.2f}"
        except ValueError:
            return value
    if score_type == ScoreType.TRUE_FALSE and value.lower() in ("true", "false"):
        return value.capitalize()
    return value


def _holds_best(branch: Branch) -> bool:
    return branch.is_best or any(_holds_best(child) for child in branch.children)
