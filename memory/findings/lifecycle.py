"""A finding's lifecycle: which status may follow which (pure, no database).

new → confirmed → reported → mitigated → retest passed / retest failed, with false positive and
won't fix as ways out, and a way back in from each. A recorded retest moves a finding to
retest passed or failed along the same moves (from mitigated, or from one retest result to the
other); from new, confirmed or reported that is a jump the lifecycle does not allow, which is
refused unless the person confirms it (it is then recorded as a confirmed jump). The two ways
out are never retested (:data:`RETESTABLE`).
"""

from __future__ import annotations

from memory.models.findings import FindingStatus as S
from redteam.core.choices import AttackOutcome

#: status → the statuses a person may move it to.
TRANSITIONS: dict[str, frozenset[str]] = {
    S.NEW: frozenset({S.CONFIRMED, S.FALSE_POSITIVE, S.WONT_FIX}),
    S.CONFIRMED: frozenset({S.REPORTED, S.MITIGATED, S.FALSE_POSITIVE, S.WONT_FIX}),
    S.REPORTED: frozenset({S.MITIGATED, S.CONFIRMED, S.WONT_FIX}),
    S.MITIGATED: frozenset({S.RETEST_PASSED, S.RETEST_FAILED, S.REPORTED}),
    S.RETEST_PASSED: frozenset({S.RETEST_FAILED, S.CONFIRMED}),
    S.RETEST_FAILED: frozenset({S.MITIGATED, S.RETEST_PASSED, S.WONT_FIX}),
    S.FALSE_POSITIVE: frozenset({S.NEW}),
    S.WONT_FIX: frozenset({S.CONFIRMED}),
}

#: Statuses of a finding a retest may be recorded for (a jump needs confirmation).
RETESTABLE = frozenset(S.values) - {S.FALSE_POSITIVE, S.WONT_FIX}

#: Statuses that need no more work.
CLOSED = frozenset({S.RETEST_PASSED, S.FALSE_POSITIVE, S.WONT_FIX})


def next_statuses(status: str) -> list[str]:
    """The statuses ``status`` may move to, in lifecycle order."""
    allowed = TRANSITIONS.get(status, frozenset())
    return [value for value in S.values if value in allowed]


def may_move(current: str, new: str) -> bool:
    """Whether a person may move a finding from ``current`` to ``new``."""
    return new in TRANSITIONS.get(current, frozenset())


def label(status: str) -> str:
    """The status as people read it ("Retest passed"); an unknown value as it is."""
    try:
        return str(S(status).label)
    except ValueError:
        return status


def labels(statuses: list[str]) -> str:
    """Statuses as people read them, joined ("Confirmed, Won't fix"); "nothing" when empty."""
    return ", ".join(label(status) for status in statuses) or "nothing"


def move_text(current: str, new: str) -> str:
    """A move as people read it ("Confirmed → Retest passed")."""
    return f"{label(current)} → {label(new)}"


def needs_confirmation(current: str, new: str) -> bool:
    """Whether moving ``current`` → ``new`` skips the lifecycle (a retest's jump)."""
    return current != new and not may_move(current, new)


def after_retest(outcome: str | None) -> str | None:
    """The status a retest with attack ``outcome`` sets: the attack failed → retest passed,
    it succeeded → retest failed; None for outcomes that prove nothing."""
    return {
        AttackOutcome.FAILURE: S.RETEST_PASSED,
        AttackOutcome.SUCCESS: S.RETEST_FAILED,
    }.get(outcome)
