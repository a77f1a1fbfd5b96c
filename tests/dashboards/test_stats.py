"""The dashboard's statistics, checked against independent computations."""

from __future__ import annotations

import math

import pytest

from redteam.core.stats import (
    Z_95,
    OutcomeCounts,
    agreement,
    bin_bounds,
    histogram_bin,
    wilson_interval,
)


def wilson_by_bisection(successes: int, n: int, z: float = 1.959963984540054):
    """The Wilson interval as its definition: the p with |p̂ − p| = z·sqrt(p(1−p)/n).

    Solved numerically on each side of p̂, so it shares no algebra with the closed form.
    """
    observed = successes / n

    def gap(p: float) -> float:
        return abs(observed - p) - z * math.sqrt(p * (1 - p) / n)

    def solve(lo: float, hi: float) -> float:
        # gap(lo) and gap(hi) have opposite signs (or one is zero).
        for _ in range(200):
            mid = (lo + hi) / 2
            if (gap(lo) > 0) == (gap(mid) > 0):
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if successes == 0 else solve(0.0, observed)
    high = 1.0 if successes == n else solve(observed, 1.0)
    return low, high


@pytest.mark.parametrize(
    ("successes", "n"),
    [
        (0, 1),
        (1, 1),
        (0, 10),
        (10, 10),
        (1, 10),
        (5, 10),
        (81, 263),
        (3, 7),
        (499, 1000),
        (1, 100_000),
    ],
)
def test_wilson_interval_matches_its_definition(successes, n):
    low, high = wilson_interval(successes, n)
    expected_low, expected_high = wilson_by_bisection(successes, n)
    assert low == pytest.approx(expected_low, abs=1e-9)
    assert high == pytest.approx(expected_high, abs=1e-9)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_wilson_interval_published_example():
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3: 81/263 -> 0.2553–0.3662.
    low, high = wilson_interval(81, 263)
    assert round(low, 4) == 0.2553
    assert round(high, 4) == 0.3662


def test_wilson_interval_edges_and_bad_input():
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 4)[0] == 0.0
    assert wilson_interval(4, 4)[1] == 1.0
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        wilson_interval(-1, 4)
    assert pytest.approx(1.959963984540054) == Z_95


def test_outcome_counts_rate_is_pyrits_and_keeps_the_rest_apart():
    counts = OutcomeCounts(successes=3, failures=9, undetermined=5, errors=2)
    assert counts.attacks == 19
    assert counts.n == 12
    assert counts.asr == 0.25
    assert (counts.ci_low, counts.ci_high) == wilson_interval(3, 12)
    assert counts.low_n is False
    assert OutcomeCounts(undetermined=4).asr is None
    assert OutcomeCounts(undetermined=4).ci_low is None
    assert OutcomeCounts(successes=1, failures=8).low_n is True
    summed = counts + OutcomeCounts(1, 1, 1, 1)
    assert (summed.successes, summed.failures, summed.undetermined, summed.errors) == (4, 10, 6, 3)
    left = summed - OutcomeCounts(4, 2, 1, 0)
    assert (left.successes, left.failures, left.undetermined, left.errors) == (0, 8, 5, 3)
    assert counts.with_outcome("error", 3).errors == 5
    # Each of PyRIT's outcomes adds to its own count and to no other.
    assert counts.with_outcome("success", 2) == OutcomeCounts(5, 9, 5, 2)
    assert counts.with_outcome("failure", 2) == OutcomeCounts(3, 11, 5, 2)
    assert counts.with_outcome("undetermined", 2) == OutcomeCounts(3, 9, 7, 2)
    assert counts.with_outcome("error", 2) == OutcomeCounts(3, 9, 5, 4)
    with pytest.raises(ValueError):
        counts.with_outcome("maybe", 1)
    body = counts.as_dict()
    assert body["asr"] == 0.25 and body["n"] == 12 and body["attacks"] == 19


def test_outcome_counts_of_a_mapping_equal_the_same_additions_one_by_one():
    per_outcome = {"error": 2, "success": 3, "undetermined": 5, "failure": 9}
    one_by_one = OutcomeCounts()
    for outcome, count in per_outcome.items():
        one_by_one = one_by_one.with_outcome(outcome, count)
    assert OutcomeCounts.of(per_outcome) == one_by_one == OutcomeCounts(3, 9, 5, 2)
    assert OutcomeCounts.of({}) == OutcomeCounts()
    with pytest.raises(ValueError, match="maybe"):
        OutcomeCounts.of({"success": 1, "maybe": 1})


def test_cohens_kappa_textbook_example():
    # Wikipedia "Cohen's kappa", first worked example: 50 proposals, κ = 0.4.
    a = agreement(
        [("yes", "yes", 20), ("yes", "no", 5), ("no", "yes", 10), ("no", "no", 15)], ["yes", "no"]
    )
    assert a.n == 50
    assert a.observed == pytest.approx(0.7)
    assert a.expected == pytest.approx(0.5)
    assert a.kappa == pytest.approx(0.4)
    assert a.matrix == ((20, 5), (10, 15))


def test_cohens_kappa_against_the_pairwise_definition():
    # κ from the list of rated items, computed the long way.
    items = (
        [("s", "s")] * 7
        + [("s", "f")] * 2
        + [("f", "f")] * 9
        + [("f", "s")] * 1
        + [("u", "f")] * 3
        + [("u", "u")] * 2
    )
    n = len(items)
    labels = sorted({x for pair in items for x in pair})
    p_o = sum(1 for m, h in items if m == h) / n
    p_e = sum(
        (sum(1 for m, _ in items if m == k) / n) * (sum(1 for _, h in items if h == k) / n)
        for k in labels
    )
    expected = (p_o - p_e) / (1 - p_e)
    counts: dict = {}
    for pair in items:
        counts[pair] = counts.get(pair, 0) + 1
    a = agreement([(m, h, c) for (m, h), c in counts.items()])
    assert a.kappa == pytest.approx(expected)
    assert set(a.categories) == set(labels)


def test_kappa_undefined_when_chance_agreement_is_certain():
    assert agreement([("true", "true", 5)], ["true", "false"]).kappa is None
    assert agreement([], ["true", "false"]).kappa is None
    # Perfect disagreement on two balanced categories is κ = −1.
    assert agreement([("a", "b", 5), ("b", "a", 5)]).kappa == pytest.approx(-1.0)


def test_histogram_bins_close_the_last_bin():
    assert histogram_bin(0.0) == 0
    assert histogram_bin(0.0999) == 0
    assert histogram_bin(0.1) == 1
    assert histogram_bin(0.55) == 5
    assert histogram_bin(1.0) == 9
    with pytest.raises(ValueError):
        histogram_bin(1.01)
    assert bin_bounds(9) == (0.9, 1.0)
