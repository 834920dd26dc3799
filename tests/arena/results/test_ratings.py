"""Elo, Bradley-Terry and head to head from complete matches (docs/rules.md#standings-and-ratings)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.results.ratings import (
    MatchOutcome,
    bradley_terry,
    bt_difference,
    elo,
    elo_history,
    head_to_head,
)

M = MatchOutcome
ELO_PER_LOG = 400 / math.log(10)


# ---------------------------------------------------------------------------
# Elo

# Schedule: 0 a-b 2-0; 1 a-c 1-1; 2 b-d NC; 3 a-c same author; 4 c-b two draws.
ELO_MATCHES = [
    M(0, "a", "b", (1.0, 1.0)),
    M(1, "a", "c", (1.0, 0.0)),
    M(2, "b", "d", (None, 1.0)),
    M(3, "a", "c", (1.0, 1.0), same_author=True),
    M(4, "c", "b", (0.5, 0.5)),
]
# Match 0, all at 1500: E = 0.5, delta_a = 24(1 - .5) + 24(1 - .5) = 24 -> a 1524, b 1476.
# Match 1, a 1524 v c 1500: E_a = 1 / (1 + 10**(-24/400)) = 1 / 1.8709636 = 0.5344839;
#   delta_a = 24(1 - E) + 24(0 - E) = 24(1 - 2E) = 24 * -0.0689679 = -1.6552293
#   -> a 1522.3447707, c 1501.6552293. (Game by game, a would end at 1521.5811.)
# Match 2 (NC) and match 3 (same author) are skipped; d never plays a rated match.
# Match 4, c 1501.6552293 v b 1476: E_c = 1 / (1 + 10**(-25.6552293/400))
#   = 1 / (1 + 0.8627094) = 0.5368539; delta_c = 48(0.5 - E) = -1.7689864
#   -> c 1499.8862429, b 1477.7689864.
ELO_EXPECTED = {"a": 1522.3447707, "b": 1477.7689864, "c": 1499.8862429, "d": 1500.0}


def test_elo_matches_the_hand_computation() -> None:
    ratings = elo(ELO_MATCHES)
    assert ratings == pytest.approx(ELO_EXPECTED, abs=1e-6)
    assert list(ratings) == ["a", "b", "c", "d"]


def test_elo_one_one_match_uses_the_match_start_ratings() -> None:
    history = elo_history(ELO_MATCHES[:2])
    assert history[1][1]["a"] == pytest.approx(1522.3447707, abs=1e-6)
    assert history[1][1]["a"] != pytest.approx(1521.5811204, abs=1e-3)


def test_elo_history_has_one_entry_per_applied_match() -> None:
    history = elo_history(ELO_MATCHES)
    assert [index for index, _ in history] == [0, 1, 4]
    # Entries are snapshots: the first still holds the ratings after match 0.
    assert history[0][1] == {"a": 1524.0, "b": 1476.0, "c": 1500.0, "d": 1500.0}
    assert history[-1][1] == pytest.approx(ELO_EXPECTED, abs=1e-6)


def test_elo_ignores_input_order() -> None:
    shuffled = ELO_MATCHES[::-1]
    random.Random(3).shuffle(shuffled)
    assert elo(shuffled) == elo(ELO_MATCHES)
    assert elo_history(shuffled) == elo_history(ELO_MATCHES)


def test_elo_start_and_k_are_parameters() -> None:
    # One 2-0 match at equal ratings: delta = 2 * k * 0.5 = k.
    assert elo([M(7, "x", "y", (1.0, 1.0))], start=1000.0, k=10.0) == {"x": 1010.0, "y": 990.0}


def test_elo_of_only_excluded_matches_is_the_start() -> None:
    matches = [M(0, "a", "b", (None, None)), M(1, "a", "c", (0.0, 0.0), same_author=True)]
    assert elo(matches) == {"a": 1500.0, "b": 1500.0, "c": 1500.0}
    assert elo_history(matches) == []
    assert elo([]) == {}


# ---------------------------------------------------------------------------
# Bradley-Terry: hand values
#
# Two policies a, b: the log-likelihood is symmetric under
# (theta_a, theta_b) -> (-theta_b, -theta_a), so its single optimum has
# theta_b = -theta_a = -x. a's score equation (expected = actual, the virtual
# draw against the anchor of strength 0 included) is
#   games * sigma(2x) + sigma(x) = a's wins + 0.5.
# a 3 of 4: 4 sigma(2x) + sigma(x) = 3.5 -> x = 0.4744435 (sigma(x) = 0.6164349,
#   sigma(2x) = 0.7208913; 4 * 0.7208913 + 0.6164349 = 3.5); rating 1500 +
#   (400 / ln 10) x = 1500 + 173.7178 * 0.4744435 = 1582.4192690.
# a 4 of 4: 4 sigma(2x) + sigma(x) = 4.5 -> x = 1.2865453 (sigma(x) = 0.7835619,
#   sigma(2x) = 0.9291095); rating 1500 + 173.7178 * 1.2865453 = 1723.4958135.
# a 2 of 4: x = 0, both 1500.
THREE_OF_FOUR = 1582.4192690
FOUR_OF_FOUR = 1723.4958135


def test_bt_two_policies_match_the_score_equation() -> None:
    table = bradley_terry([M(0, "a", "b", (1.0, 1.0)), M(1, "a", "b", (1.0, 0.0))], seed=1)
    assert table["a"].rating == pytest.approx(THREE_OF_FOUR, abs=1e-6)
    assert table["b"].rating == pytest.approx(3000 - THREE_OF_FOUR, abs=1e-6)
    # Resamples of two matches: both 1-1 (prob 1/4, a 2 of 4: 1500), one each
    # (1/2, 3 of 4) or both 2-0 (1/4, 4 of 4). 25% of the mass on each end
    # puts the 2.5th and 97.5th percentiles on the extremes.
    assert table["a"].low == pytest.approx(1500.0, abs=1e-6)
    assert table["a"].high == pytest.approx(FOUR_OF_FOUR, abs=1e-6)
    assert table["b"].low == pytest.approx(3000 - FOUR_OF_FOUR, abs=1e-6)


def test_bt_draws_count_half_a_win_each() -> None:
    # Two draws (1 of 2) and a 2-0 give a 3 of 4, the same score equation as above.
    table = bradley_terry([M(0, "a", "b", (0.5, 0.5)), M(1, "a", "b", (1.0, 1.0))], seed=1)
    assert table["a"].rating == pytest.approx(THREE_OF_FOUR, abs=1e-6)


def test_bt_unbeaten_policy_stays_finite() -> None:
    table = bradley_terry([M(0, "a", "b", (1.0, 1.0)), M(1, "b", "a", (0.0, 0.0))], seed=1)
    # Every resample is a 4 of 4 too, so the interval is the point.
    a = table["a"]
    assert (a.rating, a.low, a.high) == pytest.approx((FOUR_OF_FOUR,) * 3, abs=1e-6)
    assert a.on_prior  # unbeaten
    assert table["b"].on_prior  # winless
    # One policy unbeaten among several, its games all wins.
    many = [M(i, "top", f"p{i % 3}", (1.0, 1.0)) for i in range(12)]
    many += [M(12 + i, f"p{i}", f"p{(i + 1) % 3}", (1.0, 0.0)) for i in range(3)]
    top = bradley_terry(many, seed=2, resamples=200)["top"]
    assert all(math.isfinite(v) for v in (top.rating, top.low, top.high))
    assert top.low <= top.rating <= top.high


def test_bt_marks_a_record_that_rests_on_the_prior() -> None:
    matches = [
        M(0, "top", "mid", (1.0, 1.0)),  # top wins every game it plays
        M(1, "top", "low", (1.0, 1.0)),
        M(2, "mid", "low", (1.0, 0.5)),  # low loses or draws: a draw is half a point
        M(3, "mid", "even", (0.5, 0.5)),  # even draws every game it plays
        M(4, "low", "gone", (None, 1.0)),  # gone plays only a no-contest match
        M(5, "bottom", "mid", (0.0, 0.0)),  # bottom loses every game
    ]
    table = bradley_terry(matches, seed=1, resamples=50)
    marked = {p for p, r in table.items() if r.on_prior}
    assert marked == {"top", "gone", "bottom"}
    # the mark is the actual record's, not the point's distance from the others
    assert table["top"].rating > table["mid"].rating > table["bottom"].rating


# ---------------------------------------------------------------------------
# Bradley-Terry: synthetic leagues

TRUE_THETA = np.array([-1.5, -0.7, 0.0, 0.6, 1.3, 2.0])


def simulate(seed: int, per_pair: int) -> list[MatchOutcome]:
    """Matches in schedule order between p0..p5 whose games follow BT with TRUE_THETA."""
    rng = np.random.default_rng(seed)
    matches: list[MatchOutcome] = []
    pairs = [(i, j) for i in range(len(TRUE_THETA)) for j in range(i + 1, len(TRUE_THETA))]
    for _ in range(per_pair):
        for i, j in pairs:
            p_first = 1 / (1 + math.exp(TRUE_THETA[j] - TRUE_THETA[i]))
            games = tuple(float(w) for w in rng.random(2) < p_first)
            matches.append(M(len(matches), f"p{i}", f"p{j}", games))
    return matches


def true_ratings() -> dict[str, float]:
    centred = TRUE_THETA - TRUE_THETA.mean()
    return {f"p{i}": 1500 + ELO_PER_LOG * t for i, t in enumerate(centred)}


def test_bt_recovers_the_order_of_known_strengths() -> None:
    table = bradley_terry(simulate(seed=11, per_pair=10), seed=4)
    assert sorted(table, key=lambda p: table[p].rating) == [f"p{i}" for i in range(6)]
    assert sum(r.rating for r in table.values()) / 6 == pytest.approx(1500.0)


def test_bt_intervals_cover_the_truth_in_most_leagues() -> None:
    truth = true_ratings()
    covered = cases = 0
    for league in range(20):
        table = bradley_terry(simulate(seed=100 + league, per_pair=7), seed=league + 1)
        for policy, rating in table.items():
            cases += 1
            covered += rating.low <= truth[policy] <= rating.high
    # 95% nominal; the prior's shrinkage and the percentile method cost a little.
    assert covered / cases >= 0.85, f"covered {covered} of {cases}"


def test_bt_same_seed_same_table_other_seed_other_intervals() -> None:
    matches = simulate(seed=21, per_pair=4)
    one = bradley_terry(matches, seed=8, resamples=300)
    assert bradley_terry(matches, seed=8, resamples=300) == one
    other = bradley_terry(matches, seed=9, resamples=300)
    assert all(other[p].rating == one[p].rating for p in one)
    assert any((other[p].low, other[p].high) != (one[p].low, one[p].high) for p in one)


def test_bt_ignores_input_order_bit_for_bit() -> None:
    matches = simulate(seed=22, per_pair=4)
    shuffled = matches[:]
    random.Random(1).shuffle(shuffled)
    assert bradley_terry(shuffled, seed=3, resamples=300) == bradley_terry(
        matches, seed=3, resamples=300
    )


def test_bt_leaves_out_no_contest_and_same_author_matches() -> None:
    matches = [M(2 * m.index, m.first, m.second, m.results) for m in simulate(23, 3)]
    extra = [
        M(1, "p0", "p5", (1.0, None)),  # NC: its played game is left out too
        M(3, "p0", "p1", (1.0, 1.0), same_author=True),
        M(5, "p0", "p2", (None, None)),
    ]
    assert bradley_terry(matches + extra, seed=6, resamples=200) == bradley_terry(
        matches, seed=6, resamples=200
    )


def test_bt_policy_only_in_excluded_matches_rests_on_the_prior() -> None:
    matches = [M(0, "a", "b", (1.0, 1.0)), M(1, "a", "b", (1.0, 0.0)), M(2, "a", "z", (None, 1.0))]
    table = bradley_terry(matches, seed=1, resamples=50)
    assert list(table) == ["a", "b", "z"]  # first appearance in the schedule
    # theta: a = x, b = -x, z = 0 (prior only): mean 0, so z sits at 1500 and
    # a, b are the two-policy values.
    assert table["z"].rating == pytest.approx(1500.0, abs=1e-6)
    assert table["a"].rating == pytest.approx(THREE_OF_FOUR, abs=1e-6)


def test_bt_of_nothing_is_empty_and_resamples_must_be_positive() -> None:
    assert bradley_terry([], seed=1) == {}
    with pytest.raises(ValueError, match="resamples must be at least 1, got 0"):
        bradley_terry([M(0, "a", "b", (1.0, 1.0))], seed=1, resamples=0)
    with pytest.raises(ValueError, match=r"seed must be the league's master seed \(>= 0\), got -1"):
        bradley_terry([M(0, "a", "b", (1.0, 1.0))], seed=-1)


# ---------------------------------------------------------------------------
# bt_difference


def test_bt_difference_sign_interval_and_agreement_with_the_table() -> None:
    matches = simulate(seed=31, per_pair=6)
    table = bradley_terry(matches, seed=2, resamples=400)
    diff, low, high = bt_difference(matches, "p5", "p1", seed=2, resamples=400)
    assert diff == pytest.approx(table["p5"].rating - table["p1"].rating, abs=1e-9)
    assert 0 < low < diff < high
    back, back_low, back_high = bt_difference(matches, "p1", "p5", seed=2, resamples=400)
    assert (back, back_low, back_high) == pytest.approx((-diff, -high, -low), abs=1e-9)


def test_bt_difference_two_policies_by_hand() -> None:
    matches = [M(0, "a", "b", (1.0, 1.0)), M(1, "a", "b", (1.0, 0.0))]
    # 2x in Elo points: 2 * (THREE_OF_FOUR - 1500); interval from 0 (both 1-1)
    # to 2 * (FOUR_OF_FOUR - 1500) (both 2-0), as in the two-policy table.
    diff, low, high = bt_difference(matches, "a", "b", seed=1)
    assert (diff, low, high) == pytest.approx(
        (2 * (THREE_OF_FOUR - 1500), 0.0, 2 * (FOUR_OF_FOUR - 1500)), abs=1e-6
    )


def test_bt_difference_refuses_unknown_or_equal_policies() -> None:
    matches = [M(0, "a", "b", (1.0, 1.0))]
    with pytest.raises(ValueError, match=r"'c' plays in none of the matches \(known: a, b\)"):
        bt_difference(matches, "a", "c", seed=1)
    with pytest.raises(ValueError, match="got 'a' twice"):
        bt_difference(matches, "a", "a", seed=1)


# ---------------------------------------------------------------------------
# Head to head


def test_head_to_head_counts_every_game_both_ways() -> None:
    table = head_to_head([*ELO_MATCHES, M(5, "b", "a", (0.0, 0.5))])
    # a v b: match 0 (a wins twice), match 5 from b's side (b loses, draws)
    #   -> a: 3 wins, 1 draw.
    # a v c: match 1 (win, loss) + match 3 same author (two wins) -> 3 W, 1 L.
    # b v d: match 2 (NC, b wins) -> 1 W, 1 NC.  c v b: match 4 two draws.
    assert table[("a", "b")] == (3, 1, 0, 0)
    assert table[("b", "a")] == (0, 1, 3, 0)
    assert table[("a", "c")] == (3, 0, 1, 0)
    assert table[("c", "a")] == (1, 0, 3, 0)
    assert table[("b", "d")] == (1, 0, 0, 1)
    assert table[("d", "b")] == (0, 0, 1, 1)
    assert table[("c", "b")] == table[("b", "c")] == (0, 2, 0, 0)
    assert len(table) == 8


# ---------------------------------------------------------------------------
# Input checks


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: M(0, "a", "a", (1.0,)), "'a' cannot play itself"),
        (lambda: M(4, "a", "b", ()), r"match 4 \('a' v 'b'\) has no games"),
        (lambda: M(1, "a", "b", (1.0, 0.7)), "game result 0.7 is not a score"),
    ],
)
def test_bad_matches_are_refused(build: Callable[[], MatchOutcome], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_two_matches_on_one_index_are_refused() -> None:
    matches = [M(3, "a", "b", (1.0, 1.0)), M(3, "c", "d", (0.0, 1.0))]
    for rate in (elo, head_to_head, lambda ms: bradley_terry(ms, seed=1)):
        with pytest.raises(ValueError, match="two matches share schedule index 3"):
            rate(matches)


@given(st.lists(st.integers(0, 100_000), min_size=1, max_size=200), st.floats(0, 100))
def test_a_rows_latency_percentile_is_numpys_over_every_decision(
    latencies: list[int], percentile: float
) -> None:
    from arena.results.standings import Row, SeatStats

    row = Row("p")
    row.add(SeatStats(tuple(latencies), {}))
    assert row.latency_ms(percentile) == float(np.percentile(latencies, percentile))
