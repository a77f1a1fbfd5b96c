"""Cohen's and Fleiss' κ (``redteam.core.stats``) against values computed by hand."""

from __future__ import annotations

import math

import pytest

from redteam.core.stats import fleiss_agreement, paired_agreement


def test_cohens_kappa_of_two_reviewers_by_hand():
    """Ten attacks, two reviewers, success (s) / failure (f):

    ============  ======  ======  =====
    A \\ B         s       f       total
    ============  ======  ======  =====
    s             4       1       5
    f             2       3       5
    total         6       4       10
    ============  ======  ======  =====

    p_o = (4 + 3) / 10 = 0.7; p_e = (5·6 + 5·4) / 100 = 0.5; κ = (0.7 − 0.5) / 0.5 = 0.4.
    """
    pairs = (
        [("success", "success")] * 4
        + [("success", "failure")]
        + [("failure", "success")] * 2
        + [("failure", "failure")] * 3
    )
    result = paired_agreement(pairs, ("success", "failure", "undetermined"))
    assert result.matrix == ((4, 1, 0), (2, 3, 0), (0, 0, 0))
    assert result.n == 10
    assert math.isclose(result.observed, 0.7)
    assert math.isclose(result.expected, 0.5)
    assert math.isclose(result.kappa, 0.4)


#: The worked example of Fleiss' κ (Wikipedia, after Fleiss 1971): 10 items, 14 raters each,
#: 5 categories; P̄ = 0.378, P̄_e = 0.213, κ = 0.210.
FLEISS_TABLE = [
    (0, 0, 0, 0, 14),
    (0, 2, 6, 4, 2),
    (0, 0, 3, 5, 6),
    (0, 3, 9, 2, 0),
    (2, 2, 8, 1, 1),
    (7, 7, 0, 0, 0),
    (3, 2, 6, 3, 0),
    (2, 5, 3, 2, 2),
    (6, 5, 2, 1, 0),
    (0, 2, 2, 3, 7),
]


def test_fleiss_kappa_of_the_classic_example():
    categories = ("1", "2", "3", "4", "5")
    ratings = [
        [category for category, count in zip(categories, row, strict=True) for _ in range(count)]
        for row in FLEISS_TABLE
    ]
    result = fleiss_agreement(ratings, categories)
    assert result.table == tuple(FLEISS_TABLE)
    assert (result.items, result.raters) == (10, 14)
    assert [round(p, 3) for p in result.shares] == [0.143, 0.200, 0.279, 0.150, 0.229]
    assert round(result.observed, 3) == 0.378
    assert round(result.expected, 3) == 0.213
    assert round(result.kappa, 3) == 0.210


def test_fleiss_kappa_of_three_items_by_hand():
    """Two reviewers, three attacks: (s, s), (s, f), (f, f).

    P_i = (Σ n_ij² − 2) / 2: 1, 0, 1, so P̄ = 2/3; p_s = p_f = 3/6, so P̄_e = 1/2;
    κ = (2/3 − 1/2) / (1/2) = 1/3. Cohen's κ of the same pairs differs: it keeps each
    reviewer's own marginals (A: 2 s, 1 f; B: 1 s, 2 f), p_e = (2·1 + 1·2) / 9 = 4/9 and
    κ = (2/3 − 4/9) / (5/9) = 0.4.
    """
    result = fleiss_agreement([["success", "success"], ["success", "failure"], ["failure"] * 2])
    assert result.categories == ("failure", "success")
    assert math.isclose(result.observed, 2 / 3)
    assert math.isclose(result.expected, 1 / 2)
    assert math.isclose(result.kappa, 1 / 3)
    cohen = paired_agreement([("success", "success"), ("success", "failure"), ("failure",) * 2])
    assert math.isclose(cohen.kappa, 0.4)


def test_fleiss_kappa_is_undefined_without_items_or_without_variety():
    assert fleiss_agreement([]).kappa is None
    assert fleiss_agreement([["failure", "failure"]] * 3).kappa is None
    perfect = fleiss_agreement([["success"] * 3, ["failure"] * 3])
    assert perfect.kappa == 1.0


def test_fleiss_kappa_needs_equal_numbers_of_ratings_of_at_least_two():
    with pytest.raises(ValueError, match="same number of ratings"):
        fleiss_agreement([["success", "failure"], ["success"]])
    with pytest.raises(ValueError, match="at least two"):
        fleiss_agreement([["success"], ["failure"]])
