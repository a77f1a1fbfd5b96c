"""A finding's lifecycle: which status may follow which (pure, no database).

new → confirmed → reported → mitigated → retest passed / retest failed, with false positive and
won't fix as ways out, and a way back in from each. Recording a retest moves a finding to
retest passed or failed from any status but the two ways out (:data:`RETESTABLE`).
"""

from __future__ import annotations

from memory.models.findings import FindingStatus as S

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

#: Statuses from which a recorded retest moves the finding.
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
