"""The pentanomial GSPRT: LLR against hand-worked values, bounds, estimates, and the
sequential test fed in schedule order."""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena.config import SprtTable
from arena.league.sprt import (
    NELO_PER_T,
    Estimate,
    SequentialTest,
    bounds,
    decide,
    elo_estimate,
    elo_from_score,
    expected_score,
    llr,
    llr_many,
    nelo_estimate,
    pair_outcome,
    score_estimate,
)

S0 = 0.5  # L(0)
S1 = 1 / (1 + 10 ** (-20 / 400))  # L(20) = 0.5287505638922686
SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _settings(**changes: float) -> SimpleNamespace:
    values: dict[str, float] = {"elo0": 0.0, "elo1": 20.0, "alpha": 0.05, "beta": 0.05}
    values["max_matches"] = 100_000
    return SimpleNamespace(**(values | changes))


def _golden_max(f: Callable[[float], float], low: float, high: float) -> float:
    """The maximum of a concave `f` on [low, high], by golden-section search."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    for _ in range(200):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(c) >= f(d):
            b = d
        else:
            a = c
    return max(f((a + b) / 2), f(low), f(high))


def _safe_log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


# ---------------------------------------------------------------------------
# Scores, bounds, pair outcomes


def test_expected_score_and_its_inverse() -> None:
    assert expected_score(0) == 0.5
    assert expected_score(20) == pytest.approx(S1, abs=1e-15)
    # s = 0.75: -400 log10(1/0.75 - 1) = -400 log10(1/3) = 400 * 0.4771213 = 190.8485
    assert elo_from_score(0.75) == pytest.approx(190.8485, abs=1e-4)
    assert elo_from_score(expected_score(-123.4)) == pytest.approx(-123.4, abs=1e-9)
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(0.0) == -math.inf


def test_bounds_for_five_percent_errors_are_log_19() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19), abs=1e-12)
    assert upper == pytest.approx(math.log(19), abs=1e-12)
    # Unequal rates: log(0.1 / 0.95) and log(0.9 / 0.05).
    assert bounds(0.05, 0.1) == pytest.approx((math.log(0.1 / 0.95), math.log(18)))


def test_decide_counts_a_bound_itself_as_crossed() -> None:
    assert decide(2.0, -2.0, 2.0) == "H1"
    assert decide(-2.0, -2.0, 2.0) == "H0"
    assert decide(1.999, -2.0, 2.0) is None


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ((1.0, 1.0), 2.0),
        ((1.0, 0.5), 1.5),
        ((0.0, 1.0), 1.0),
        ((0.5, 0.5), 1.0),
        ((0.5, 0.0), 0.5),
        ((0.0, 0.0), 0.0),
        ((None, 1.0), None),
        ((0.5, None), None),
    ],
)
def test_pair_outcome(results: tuple[float | None, float | None], expected: float | None) -> None:
    assert pair_outcome(results) == expected


@pytest.mark.parametrize("results", [(1.0,), (1.0, 1.0, 0.0), (2.0, 0.0), (0.25, 0.5)])
def test_pair_outcome_refuses_what_is_not_two_game_results(results: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match=r"game|two"):
        pair_outcome(results)


# ---------------------------------------------------------------------------
# The LLR against hand-worked values


def test_llr_two_extreme_classes_is_binomial() -> None:
    # Counts [3, 0, 0, 0, 7]: only 0-2 and 2-0 matches. The only distribution on {0, 1}
    # with mean s is (1 - s, s); theta = (p4 / s - 1) / (1 - s) lies in [-1/(1-s), 1/s]
    # for any p4 in [0, 1], so no mass goes to the unseen middle outcomes. Hence
    # LLR = 7 log(s1 / s0) + 3 log((1 - s1) / (1 - s0))
    #     = 7 log(1.0575011) + 3 log(0.9424989)
    #     = 7 * 0.0559087 + 3 * -0.0592206 = 0.3913609 - 0.1776617 = 0.2136992.
    assert llr([3, 0, 0, 0, 7], 0, 20) == pytest.approx(0.2136992, abs=1e-7)
    expected = 7 * math.log(S1 / S0) + 3 * math.log((1 - S1) / (1 - S0))
    assert llr([3, 0, 0, 0, 7], 0, 20) == pytest.approx(expected, abs=1e-12)


def test_llr_two_inner_classes_has_a_closed_form() -> None:
    # Counts [0, 4, 0, 6, 0]: outcomes 0.5 (a = 0.25) and 1.5 (a = 0.75). On those two
    # points the mean fixes the distribution: q3 = 2s - 0.5, q1 = 1.5 - 2s.
    #   s0 = 0.5:       q = (0.5, 0.5)
    #   s1 = 0.5287506: q3 = 0.5575011, q1 = 0.4424989
    # It is the MLE over all five outcomes if 1 + theta (a - s) >= 0 at the unseen a = 0
    # and a = 1, with theta from q3 = p3 / (1 + theta (0.75 - s)):
    #   theta1 = (0.6 / 0.5575011 - 1) / 0.2212494 = 0.3445478, inside
    #   [-1 / (1 - s1), 1 / s1] = [-2.1220185, 1.8912509]; theta0 = (0.6/0.5 - 1)/0.25 = 0.8,
    #   inside [-2, 2].
    # LLR = 6 log(0.5575011 / 0.5) + 4 log(0.4424989 / 0.5)
    #     = 6 * 0.1088564 + 4 * -0.1221702 = 0.6531386 - 0.4886807 = 0.1644578.
    q3, q1 = 2 * S1 - 0.5, 1.5 - 2 * S1
    theta1 = (0.6 / q3 - 1) / (0.75 - S1)
    assert -1 / (1 - S1) <= theta1 <= 1 / S1
    expected = 6 * math.log(q3 / 0.5) + 4 * math.log(q1 / 0.5)
    assert expected == pytest.approx(0.1644578, abs=1e-7)
    assert llr([0, 4, 0, 6, 0], 0, 20) == pytest.approx(expected, abs=1e-12)


def test_llr_three_classes_matches_a_direct_maximisation() -> None:
    # Counts [2, 0, 5, 0, 3] at a = 0, 0.5, 1 (both extremes seen, so the unseen 0.25 and
    # 0.75 get no mass: 1 + theta (a - s) is linear in a and positive at both ends).
    # Distributions on {0, 0.5, 1} with mean s: q4 = t, q2 = 2 (s - t), q0 = 1 - 2s + t,
    # t in [max(0, 2s - 1), s]. The log-likelihood 2 log q0 + 5 log q2 + 3 log q4 is
    # concave in t; its stationary point solves 2/q0 - 5/(s - t) + 3/t = 0, i.e.
    # -10 t^2 + (15 s - 8) t + 3 s (1 - 2s) = 0:
    #   s0 = 0.5: t = 0.25 -> q = (0.25, 0.5, 0.25) (theta0 = 0.4: 0.2/0.8, 0.5/1, 0.3/1.2)
    #   s1:       t = 0.2775082 (the other root, 0.0328679, is below 2 s1 - 1 = 0.0575011)
    # Here the maximum is found by golden-section search instead, independently.
    counts = (2, 5, 3)

    def best(s: float) -> float:
        def loglik(t: float) -> float:
            q = (1 - 2 * s + t, 2 * (s - t), t)
            return sum(n * _safe_log(x) for n, x in zip(counts, q, strict=True))

        return _golden_max(loglik, max(0.0, 2 * s - 1), s)

    expected = best(S1) - best(S0)
    by_hand = (
        2 * math.log((1 - 2 * S1 + 0.2775082) / 0.25)
        + 5 * math.log(2 * (S1 - 0.2775082) / 0.5)
        + 3 * math.log(0.2775082 / 0.25)
    )
    assert expected == pytest.approx(by_hand, abs=1e-6)
    assert llr([2, 0, 5, 0, 3], 0, 20) == pytest.approx(expected, abs=1e-9)


def test_llr_with_every_outcome_on_one_side_puts_the_rest_on_the_far_extreme() -> None:
    # All N matches 2-0: the mean can reach s only with mass at a = 0, so the MLE is
    # (1 - s, 0, 0, 0, s) and LLR = N log(s1 / s0) = 5 * 0.0559087 = 0.2795435.
    assert llr([0, 0, 0, 0, 5], 0, 20) == pytest.approx(5 * math.log(S1 / S0), abs=1e-12)
    # All N matches 1-1 (a = 0.5): s0 = 0.5 is the point mass; for s1 the MLE adds the
    # missing mean at a = 1: q4 = (s1 - 0.5) / 0.5, q2 = 2 - 2 s1, LLR = N log(2 - 2 s1).
    assert llr([0, 0, 9, 0, 0], 0, 20) == pytest.approx(9 * math.log(2 - 2 * S1), abs=1e-12)
    # All 0-2 losses against H0 = -20, H1 = 0: LLR = N log((1 - s(0)) / (1 - s(-20))).
    assert llr([4, 0, 0, 0, 0], -20, 0) == pytest.approx(4 * math.log(0.5 / S1), abs=1e-12)


@pytest.mark.parametrize("counts", [[0, 0, 0, 0, 5], [0, 0, 9, 0, 0], [0, 3, 0, 1, 0]])
def test_the_zero_count_rule_is_the_limit_of_fishtests_epsilon(counts: list[int]) -> None:
    # fishtest replaces a zero count by a small epsilon; as epsilon -> 0 its LLR tends to
    # this module's exact one.
    exact = llr(counts, 0, 20)
    for epsilon in (1e-6, 1e-9):
        regularised = [c if c else epsilon for c in counts]
        assert llr(regularised, 0, 20) == pytest.approx(exact, abs=100 * epsilon)


def test_no_matches_no_evidence() -> None:
    assert llr([0, 0, 0, 0, 0], 0, 20) == 0.0


def test_llr_many_is_llr_row_by_row() -> None:
    rows = np.array([[3, 0, 0, 0, 7], [2, 0, 5, 0, 3], [0, 0, 0, 0, 0], [10, 20, 40, 25, 5]])
    many = llr_many(rows.reshape(2, 2, 5), 0, 20)
    assert many.shape == (2, 2)
    assert many.ravel().tolist() == pytest.approx([llr(r.tolist(), 0, 20) for r in rows])


@pytest.mark.parametrize("counts", [[1, 2, 3], [1, -1, 0, 0, 0], [0, math.nan, 0, 0, 1]])
def test_llr_refuses_what_is_not_pentanomial_counts(counts: list[float]) -> None:
    with pytest.raises(ValueError, match="pentanomial counts"):
        llr(counts, 0, 20)


COUNTS = st.lists(st.integers(0, 40), min_size=5, max_size=5).filter(lambda c: sum(c) > 0)
ELO_PAIRS = st.tuples(st.floats(-300, 300), st.floats(1, 200)).map(lambda p: (p[0], p[0] + p[1]))


@given(COUNTS, ELO_PAIRS)
# A Newton step from 0 that lands, within rounding, on the end of the interval where a
# seen outcome's weight is 1/0 (found by hypothesis in CI's fast tier).
@example([0, 35, 0, 1, 4], (0.0, 1.0))
def test_llr_matches_the_dual_maximised_directly(
    counts: list[int], elos: tuple[float, float]
) -> None:
    # By convex duality, max over q with mean s of sum p log q is
    # sum p log p - max over theta in [-1/(1-s), 1/s] of h(theta) = sum p log(1 + theta (a - s)),
    # h concave; so LLR = N (max h0 - max h1). Golden-section search finds each maximum,
    # at an end of the interval as readily as inside, with no root finding and no case
    # analysis of unseen outcomes.
    total = sum(counts)
    p = [c / total for c in counts]

    def best(s: float) -> float:
        def h(theta: float) -> float:
            return sum(
                pi * _safe_log(1 + theta * (a - s)) for pi, a in zip(p, SCORES, strict=True) if pi
            )

        return _golden_max(h, -1 / (1 - s), 1 / s)

    s0, s1 = (expected_score(e) for e in elos)
    expected = total * (best(s0) - best(s1))
    assert llr(counts, *elos) == pytest.approx(expected, abs=1e-6 * max(1.0, abs(expected)))


@given(COUNTS, st.floats(1, 200))
def test_swapping_the_policies_mirrors_the_llr(counts: list[int], elo: float) -> None:
    # The second policy's view reverses the counts (its points are 2 minus the first's);
    # for hypotheses symmetric about 0 the evidence for H1 becomes evidence for H0.
    assert llr(counts[::-1], -elo, elo) == pytest.approx(-llr(counts, -elo, elo), abs=1e-8)


@given(COUNTS, ELO_PAIRS)
def test_swapping_the_policies_mirrors_the_hypotheses(
    counts: list[int], elos: tuple[float, float]
) -> None:
    elo0, elo1 = elos
    assert llr(counts[::-1], elo0, elo1) == pytest.approx(
        -llr(counts, -elo1, -elo0), abs=1e-8 * max(1.0, abs(llr(counts, elo0, elo1)))
    )


# ---------------------------------------------------------------------------
# Estimates


def test_estimates_for_a_three_quarter_score() -> None:
    # Counts [1, 2, 3, 4, 10] (N = 20) at a = 0, .25, .5, .75, 1:
    #   mean s = (0 + 0.5 + 1.5 + 3 + 10) / 20 = 0.75 -> 190.8485 Elo
    #   E[a^2] = (2 * 0.0625 + 3 * 0.25 + 4 * 0.5625 + 10) / 20 = 0.65625, var = 0.09375
    #   half width 1.96 * sqrt(0.09375 / 20) = 1.959964 * 0.0684653 = 0.1341895
    #   score interval [0.6158105, 0.8841895] -> Elo [81.9606, 353.1191]
    counts = [1, 2, 3, 4, 10]
    score = score_estimate(counts)
    assert (score.value, score.low, score.high) == pytest.approx(
        (0.75, 0.6158105, 0.8841895), abs=1e-7
    )
    elo = elo_estimate(counts)
    assert (elo.value, elo.low, elo.high) == pytest.approx((190.8485, 81.9606, 353.1191), abs=1e-4)
    # nElo = (s - 0.5) / sqrt(2 var) * 800 / ln 10 = 0.25 / 0.4330127 * 347.4355855 = 200.5920.
    # Its interval (fishtest's delta method): t = 0.25 / sqrt(0.09375) = 0.8164966,
    # central moments m3 = -0.028125, m4 = 0.0246094 -> skewness -0.9797959, kurtosis 2.8;
    # N var(t) = 1 - t * skew + t^2 (kurt - 1) / 4 = 1 + 0.8 + 0.3 = 2.1;
    # half width = 347.4355855 / sqrt(2) * 1.959964 * sqrt(2.1 / 20) = 156.0278.
    nelo = nelo_estimate(counts)
    assert pytest.approx(347.4355855, abs=1e-7) == NELO_PER_T
    assert (nelo.value, nelo.low, nelo.high) == pytest.approx(
        (200.5920, 200.5920 - 156.0278, 200.5920 + 156.0278), abs=1e-3
    )


def test_estimates_at_the_edges() -> None:
    nothing = elo_estimate([0, 0, 0, 0, 0])
    assert all(math.isnan(x) for x in (nothing.value, nothing.low, nothing.high))
    assert nelo_estimate([0, 0, 0, 0, 0]).to_json() == {"value": None, "low": None, "high": None}
    # All 2-0: score 1, every Elo end unbounded (JSON null).
    assert elo_estimate([0, 0, 0, 0, 3]).to_json() == {"value": None, "low": None, "high": None}
    # The score interval reaching 1 leaves the Elo interval open above.
    assert elo_estimate([0, 0, 1, 0, 1]).high == math.inf
    # All 1-1: no variance; nElo undefined at a mean of exactly 0.5.
    assert math.isnan(nelo_estimate([0, 0, 6, 0, 0]).value)
    assert Estimate(1.0, -math.inf, 2.0).to_json() == {"value": 1.0, "low": None, "high": 2.0}


# ---------------------------------------------------------------------------
# The sequential test

# n straight 2-0 wins: LLR = n log(s1 / s0) = 0.0559087 n reaches log 19 = 2.9444390 at
# n = 53 (52.67): the verdict falls at index 52. n straight 1-1 draws: LLR = n log(2 - 2 s1)
# = -0.0592206 n reaches -log 19 at n = 50 (49.72): index 49.


def test_verdict_falls_at_the_first_crossing_and_stays() -> None:
    test = SequentialTest(_settings())
    for i in range(52):
        test.add(i, 2.0)
    assert (test.verdict, test.status) == (None, "running")
    test.add(52, 2.0)
    assert (test.verdict, test.decided_at) == ("H1", 52)
    assert test.llr == pytest.approx(53 * math.log(S1 / S0))
    for i in range(53, 300):
        test.add(i, 0.0)  # a long run of losses would pull the LLR far below H0's bound
    assert (test.verdict, test.decided_at, test.status) == ("H1", 52, "H1")
    assert (test.counts, test.matches) == ((0, 0, 0, 0, 53), 53)
    assert test.counts_after == (247, 0, 0, 0, 0)


def test_draws_accept_h0() -> None:
    test = SequentialTest(_settings())
    for i in range(60):
        test.add(i, 1.0)
    assert (test.verdict, test.decided_at, test.matches) == ("H0", 49, 50)
    assert test.bounds == pytest.approx((-math.log(19), math.log(19)))


def test_results_wait_for_every_earlier_index() -> None:
    test = SequentialTest(_settings())
    test.add(2, 2.0)
    test.add(1, 2.0)
    assert (test.matches, test.next_index) == (0, 0)
    test.add(0, 0.0)
    assert (test.matches, test.next_index, test.counts) == (3, 3, (1, 0, 0, 0, 2))


_RNG = random.Random(7)
ARRIVING = [
    None if _RNG.random() < 0.05 else _RNG.choice([0.5, 1.0, 1.5, 2.0, 2.0, 1.5])
    for _ in range(120)
]
"""A run whose verdict falls mid-way (H1 at index 52), with no-contests and matches after it."""


def _fed(order: list[int]) -> SequentialTest:
    test = SequentialTest(_settings())
    for i in order:
        test.add(i, ARRIVING[i])
    return test


IN_ORDER = _fed(list(range(len(ARRIVING))))


def test_the_arrival_run_has_a_verdict_mid_way() -> None:
    assert (IN_ORDER.status, IN_ORDER.decided_at) == ("H1", 52)
    assert IN_ORDER.no_contests > 0
    assert sum(IN_ORDER.counts_after) > 0


@settings(max_examples=20, deadline=None)  # an LLR per counted match, about 1 ms each
@given(st.permutations(range(len(ARRIVING))))
def test_arrival_order_does_not_matter(order: list[int]) -> None:
    assert _fed(order).to_json() == IN_ORDER.to_json()


def test_no_contests_count_for_nothing() -> None:
    test = SequentialTest(_settings())
    plain = SequentialTest(_settings())
    outcomes = [2.0, None, 1.5, None, None, 0.5, 1.0]
    for i, outcome in enumerate(outcomes):
        test.add(i, outcome)
    for i, outcome in enumerate(o for o in outcomes if o is not None):
        plain.add(i, outcome)
    assert (test.matches, test.no_contests, test.next_index) == (4, 3, 7)
    assert test.counts == plain.counts == (0, 1, 1, 1, 1)
    assert test.llr == plain.llr


def test_the_match_cap_ends_the_test_inconclusive() -> None:
    test = SequentialTest(_settings(max_matches=10))
    for i, outcome in enumerate([2.0, 0.0] * 8):
        test.add(i, outcome)
    assert (test.verdict, test.status, test.stopped) == (None, "inconclusive", True)
    assert (test.matches, test.counts) == (10, (5, 0, 0, 0, 5))
    assert test.counts_after == (3, 0, 0, 0, 3)
    assert test.llr == pytest.approx(llr([5, 0, 0, 0, 5], 0, 20))


def test_a_crossing_on_the_last_allowed_match_is_a_verdict() -> None:
    test = SequentialTest(_settings(max_matches=53))
    for i in range(60):
        test.add(i, 2.0)
    assert (test.status, test.decided_at, test.counts_after) == ("H1", 52, (0, 0, 0, 0, 7))


def test_to_json_is_plain_json() -> None:
    test = SequentialTest(SprtTable(elo0=0, elo1=20, max_matches=500))
    for i, outcome in enumerate([2.0] * 60 + [None, 1.0]):
        test.add(i, outcome)
    data = json.loads(json.dumps(test.to_json(), allow_nan=False))
    assert (data["status"], data["decided_at"], data["matches"]) == ("H1", 52, 53)
    assert (data["pentanomial"], data["no_contests"]) == ([0, 0, 0, 0, 53], 1)
    assert data["after"] == {"matches": 8, "pentanomial": [0, 0, 1, 0, 7]}
    assert data["elo"] == {"value": None, "low": None, "high": None}  # a perfect score
    assert data["upper"] == pytest.approx(math.log(19))
    assert set(data) >= {"elo0", "elo1", "alpha", "beta", "max_matches", "llr", "lower", "nelo"}


def test_each_index_is_added_once() -> None:
    test = SequentialTest(_settings())
    test.add(0, 2.0)
    test.add(3, 2.0)
    for index in (0, 3):
        with pytest.raises(ValueError, match=f"match {index} was already added"):
            test.add(index, 1.0)
    with pytest.raises(ValueError, match="negative"):
        test.add(-1, 1.0)


@pytest.mark.parametrize("outcome", [3.0, 0.25, -0.5, True])
def test_a_pair_outcome_must_be_points_over_two_games(outcome: float) -> None:
    with pytest.raises(ValueError, match=re.escape("is not one of 0, 0.5, 1, 1.5, 2")):
        SequentialTest(_settings()).add(0, outcome)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"elo1": 0.0}, "not above elo0"),
        ({"alpha": 0.0}, "alpha = 0.0"),
        ({"beta": 0.7}, "beta = 0.7"),
        ({"max_matches": 0}, "max_matches = 0"),
    ],
)
def test_settings_are_checked(changes: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SequentialTest(_settings(**changes))
