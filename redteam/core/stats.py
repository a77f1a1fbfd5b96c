"""Attack statistics shared by the dashboards, the scenario pages and the review queues: pure
math, no Django.

Attack success rate is PyRIT's: successes / (successes + failures). Undetermined and errored
attacks are counted and shown beside it, never folded into either side. Each rate carries a
95 % Wilson score interval, which stays inside [0, 1] and behaves at 0 % and 100 % where the
normal approximation collapses to a zero-width interval.

Agreement between raters: Cohen's κ for two raters (:class:`Agreement`, built by
:func:`agreement` or :func:`paired_agreement`) and Fleiss' κ for a fixed number of raters per
item (:class:`FleissAgreement`, built by :func:`fleiss_agreement`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: Two-sided 95 % standard normal quantile (Φ⁻¹(0.975)).
Z_95 = 1.959963984540054

#: Below this many decided attacks (successes + failures) a rate is marked "low n".
LOW_N = 10


def wilson_interval(successes: int, n: int, *, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for ``successes`` out of ``n`` trials; ``None`` when n is 0.

    Wilson (1927): the set of p for which the observed proportion lies within ``z`` standard
    errors of p, i.e. the roots of (p̂ − p)² = z² p (1 − p) / n.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # At p̂ = 0 the lower root is exactly 0, at p̂ = 1 the upper one exactly 1; floating point
    # lands a hair off, which would put the observed rate outside its own interval.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


#: The position of each of PyRIT's attack outcomes among :class:`OutcomeCounts`' fields.
_OUTCOME_INDEX = {"success": 0, "failure": 1, "undetermined": 2, "error": 3}


def _outcome_index(outcome: str) -> int:
    try:
        return _OUTCOME_INDEX[outcome]
    except KeyError:
        raise ValueError(f"unknown attack outcome {outcome!r}") from None


@dataclass(frozen=True)
class OutcomeCounts:
    """Attack outcomes of one group, with PyRIT's success rate and its Wilson interval."""

    successes: int = 0
    failures: int = 0
    undetermined: int = 0
    errors: int = 0

    @property
    def attacks(self) -> int:
        """Every attack in the group, whatever its outcome."""
        return self.successes + self.failures + self.undetermined + self.errors

    @property
    def n(self) -> int:
        """Decided attacks: the denominator of the success rate."""
        return self.successes + self.failures

    @property
    def asr(self) -> float | None:
        """successes / (successes + failures); ``None`` when nothing was decided."""
        return self.successes / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """95 % Wilson interval of the success rate."""
        return wilson_interval(self.successes, self.n)

    @property
    def ci_low(self) -> float | None:
        return self.ci[0] if self.n else None

    @property
    def ci_high(self) -> float | None:
        return self.ci[1] if self.n else None

    @property
    def low_n(self) -> bool:
        """Too few decided attacks for the rate to mean much (marked, never hidden)."""
        return self.n < LOW_N

    def __add__(self, other: OutcomeCounts) -> OutcomeCounts:
        return OutcomeCounts(
            self.successes + other.successes,
            self.failures + other.failures,
            self.undetermined + other.undetermined,
            self.errors + other.errors,
        )

    def __sub__(self, other: OutcomeCounts) -> OutcomeCounts:
        """What is left of these counts without ``other`` (e.g. "no label": all minus labelled)."""
        return OutcomeCounts(
            self.successes - other.successes,
            self.failures - other.failures,
            self.undetermined - other.undetermined,
            self.errors - other.errors,
        )

    @classmethod
    def of(cls, per_outcome: Mapping[str, int]) -> OutcomeCounts:
        """The counts of ``{outcome: attacks}`` (PyRIT's outcome values): one object for a
        group summed as plain integers, where :meth:`with_outcome` makes one per addend."""
        values = [0, 0, 0, 0]
        for outcome, count in per_outcome.items():
            values[_outcome_index(outcome)] += count
        return cls(*values)

    @classmethod
    def total(cls, items: Iterable[OutcomeCounts]) -> OutcomeCounts:
        """The sum of ``items``, made as one object (``sum(items, OutcomeCounts())`` makes one
        per addend)."""
        successes = failures = undetermined = errors = 0
        for item in items:
            successes += item.successes
            failures += item.failures
            undetermined += item.undetermined
            errors += item.errors
        return cls(successes, failures, undetermined, errors)

    def with_outcome(self, outcome: str, count: int) -> OutcomeCounts:
        """A copy with ``count`` more attacks of ``outcome`` (PyRIT's outcome values)."""
        values = [self.successes, self.failures, self.undetermined, self.errors]
        values[_outcome_index(outcome)] += count
        return OutcomeCounts(*values)

    def as_dict(self) -> dict[str, int | float | None]:
        """The shape the stats API returns for a group."""
        return {
            "successes": self.successes,
            "failures": self.failures,
            "undetermined": self.undetermined,
            "errors": self.errors,
            "attacks": self.attacks,
            "n": self.n,
            "asr": self.asr,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "low_n": self.low_n,
        }


def counts_from_rows(rows: Iterable[tuple[str, int]]) -> OutcomeCounts:
    """Sum ``(outcome, count)`` pairs into one :class:`OutcomeCounts`."""
    total = OutcomeCounts()
    for outcome, count in rows:
        total = total.with_outcome(outcome, count)
    return total


@dataclass(frozen=True)
class Agreement:
    """Two raters' labels of the same items: confusion matrix and Cohen's κ.

    ``matrix[i][j]`` counts items the first rater put in ``categories[i]`` and the second in
    ``categories[j]`` (the dashboards: the machine first, the human second; the review queues:
    two reviewers, or the automated outcome and one reviewer).
    """

    categories: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]

    @property
    def n(self) -> int:
        return sum(sum(row) for row in self.matrix)

    @property
    def observed(self) -> float | None:
        """Share of items both raters labelled the same."""
        n = self.n
        if not n:
            return None
        return sum(self.matrix[i][i] for i in range(len(self.categories))) / n

    @property
    def expected(self) -> float | None:
        """Agreement expected by chance from each rater's marginal distribution."""
        n = self.n
        if not n:
            return None
        size = len(self.categories)
        rows = [sum(self.matrix[i]) for i in range(size)]
        cols = [sum(self.matrix[i][j] for i in range(size)) for j in range(size)]
        return sum(rows[k] * cols[k] for k in range(size)) / (n * n)

    @property
    def kappa(self) -> float | None:
        """Cohen's κ = (p_o − p_e) / (1 − p_e); ``None`` when undefined.

        Undefined when there are no items, or when chance agreement is certain (both raters
        used one and the same category for everything), where κ is 0/0.
        """
        observed, expected = self.observed, self.expected
        if observed is None or expected is None or math.isclose(expected, 1.0):
            return None
        return (observed - expected) / (1 - expected)


def agreement(
    pairs: Iterable[tuple[str, str, int]], categories: Sequence[str] | None = None
) -> Agreement:
    """Build an :class:`Agreement` from ``(first_label, second_label, count)`` triples.

    ``categories`` fixes the order (and may add unused ones); labels not in it are appended
    in sorted order.
    """
    pairs = list(pairs)
    order = list(categories or [])
    for first, second, _ in pairs:
        for label in (first, second):
            if label not in order:
                order.append(label)
    index = {label: i for i, label in enumerate(order)}
    matrix = [[0] * len(order) for _ in order]
    for first, second, count in pairs:
        matrix[index[first]][index[second]] += count
    return Agreement(tuple(order), tuple(tuple(row) for row in matrix))


def paired_agreement(
    pairs: Iterable[tuple[str, str]], categories: Sequence[str] | None = None
) -> Agreement:
    """An :class:`Agreement` of ``(first_label, second_label)`` pairs, one per item."""
    return agreement(
        ((first, second, count) for (first, second), count in Counter(pairs).items()), categories
    )


@dataclass(frozen=True)
class FleissAgreement:
    """Fleiss' κ (Fleiss 1971): agreement of a fixed number of raters per item.

    ``table[i][j]`` is how many raters put item ``i`` in ``categories[j]``; every row sums to
    the same number of raters ``raters`` (at least 2). The raters may differ from item to item:
    Fleiss' κ asks how often two ratings of one item agree, beyond what the overall category
    shares would give by chance.
    """

    categories: tuple[str, ...]
    table: tuple[tuple[int, ...], ...]
    raters: int

    @property
    def items(self) -> int:
        return len(self.table)

    @property
    def shares(self) -> tuple[float, ...] | None:
        """p_j: the share of all ratings in each category."""
        total = self.items * self.raters
        if not total:
            return None
        return tuple(sum(row[j] for row in self.table) / total for j in range(len(self.categories)))

    @property
    def observed(self) -> float | None:
        """P̄: the mean over items of P_i = (Σ_j n_ij² − n) / (n (n − 1))."""
        if not self.items:
            return None
        n = self.raters
        per_item = [(sum(c * c for c in row) - n) / (n * (n - 1)) for row in self.table]
        return sum(per_item) / self.items

    @property
    def expected(self) -> float | None:
        """P̄_e = Σ_j p_j²: agreement expected by chance."""
        shares = self.shares
        return None if shares is None else sum(p * p for p in shares)

    @property
    def kappa(self) -> float | None:
        """κ = (P̄ − P̄_e) / (1 − P̄_e); ``None`` with no items or when every rating is one
        category (0/0)."""
        observed, expected = self.observed, self.expected
        if observed is None or expected is None or math.isclose(expected, 1.0):
            return None
        return (observed - expected) / (1 - expected)


def fleiss_agreement(
    ratings: Iterable[Sequence[str]], categories: Sequence[str] | None = None
) -> FleissAgreement:
    """A :class:`FleissAgreement` of items given as their raters' labels (``["success",
    "failure"]`` per item).

    Every item needs the same number of ratings, at least two (``ValueError`` otherwise): the
    caller picks which items take part. ``categories`` fixes the order (and may add unused
    ones); other labels are appended in sorted order.
    """
    items = [list(labels) for labels in ratings]
    sizes = {len(labels) for labels in items}
    if len(sizes) > 1:
        raise ValueError(f"every item needs the same number of ratings, got {sorted(sizes)}")
    raters = sizes.pop() if sizes else 2
    if raters < 2:
        raise ValueError("Fleiss' kappa needs at least two ratings per item")
    order = list(categories or [])
    order += sorted({label for labels in items for label in labels} - set(order))
    index = {label: j for j, label in enumerate(order)}
    table = []
    for labels in items:
        row = [0] * len(order)
        for label in labels:
            row[index[label]] += 1
        table.append(tuple(row))
    return FleissAgreement(tuple(order), tuple(table), raters)


#: Float-scale scores fall into ten bins of width 0.1; 1.0 belongs to the last bin.
HISTOGRAM_BINS = 10


def histogram_bin(value: float) -> int:
    """The bin of a float-scale score in [0, 1] (the last bin is closed on the right)."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"float_scale values lie in [0, 1], not {value!r}")
    return min(math.floor(value * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)


def bin_bounds(index: int) -> tuple[float, float]:
    """Lower and upper edge of histogram bin ``index``."""
    return index / HISTOGRAM_BINS, (index + 1) / HISTOGRAM_BINS


def percent_text(value: float | None) -> str:
    """A rate as a percentage with one decimal ("41.2 %"), or an en dash for no rate."""
    return "–" if value is None else f"{value * 100:.1f} %"


def rate_text(counts: OutcomeCounts) -> dict[str, str]:
    """A success rate for people: the rate, its 95 % interval, and how many decided it."""
    if not counts.n:
        return {"rate": "–", "interval": "", "basis": "no decided attack"}
    low, high = counts.ci  # type: ignore[misc]  # n > 0: an interval exists
    return {
        "rate": percent_text(counts.asr),
        "interval": f"{percent_text(low)} – {percent_text(high)}",
        "basis": f"{counts.successes} of {counts.n} decided",
    }
