"""The adaptive schedule: how sure the ranking is, and which pairs play next."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.league.adaptive import (
    pick_round,
    pick_round_from_view,
    ranking_probability,
    round_view,
)
from arena.results.ratings import MatchOutcome

M = MatchOutcome
ABC = ["A", "B", "C"]


def league(results: dict[tuple[str, str], list[tuple[float, float]]]) -> list[MatchOutcome]:
    """Matches in schedule order from per-pair game results (first's point of view)."""
    matches: list[MatchOutcome] = []
    for (a, b), games in results.items():
        for game in games:
            matches.append(M(len(matches), a, b, game))
    return matches


def played_of(matches: list[MatchOutcome]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for m in matches:
        counts[(m.first, m.second)] = counts.get((m.first, m.second), 0) + 1
    return counts


# A beats B and C every game; B and C split every match.
SETTLED_A = league(
    {
        ("A", "B"): [(1.0, 1.0)] * 10,
        ("A", "C"): [(1.0, 1.0)] * 10,
        ("B", "C"): [(1.0, 0.0)] * 10,
    }
)


def simulated(elos: list[float], per_pair: int, seed: int) -> list[MatchOutcome]:
    """A round robin of `per_pair` matches per pair, games drawn from logistic Elo."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(len(elos))]
    matches: list[MatchOutcome] = []
    for _ in range(per_pair):
        for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
            win = 1 / (1 + 10 ** ((elos[j] - elos[i]) / 400))
            games = tuple(1.0 if rng.random() < win else 0.0 for _ in range(2))
            matches.append(M(len(matches), a, b, games))
    return matches


def test_same_inputs_give_the_same_answers() -> None:
    played = played_of(SETTLED_A)
    first = pick_round(SETTLED_A, ABC, played, k=5, cap=100, seed=3)
    assert first == pick_round(SETTLED_A, ABC, played, k=5, cap=100, seed=3)
    p = ranking_probability(SETTLED_A, ABC, seed=3, resamples=200)
    assert p == ranking_probability(list(reversed(SETTLED_A)), ABC, seed=3, resamples=200)


def test_no_rated_match_gives_probability_zero() -> None:
    assert ranking_probability([], ABC, seed=1) == 0.0
    no_contest = [M(0, "A", "B", (None, 1.0)), M(1, "B", "C", (1.0, 1.0), same_author=True)]
    assert ranking_probability(no_contest, ABC, seed=1) == 0.0


def test_a_policy_without_a_rated_match_leaves_the_ranking_open() -> None:
    matches = league({("A", "B"): [(1.0, 1.0)] * 10})
    view = round_view(matches, ABC, seed=1, resamples=100)
    assert view.probability == 0.0
    assert view.uncertainty[("A", "C")] == view.uncertainty[("B", "C")] == 0.5


def test_first_rounds_are_the_round_robin_in_config_order() -> None:
    policies = ["A", "B", "C", "D"]
    everyone = list(itertools.combinations(policies, 2))
    matches: list[MatchOutcome] = []
    played: dict[tuple[str, str], int] = {}
    picked: list[tuple[str, str]] = []
    while len(picked) < len(everyone):
        chosen = pick_round(matches, policies, played, k=4, cap=10, seed=1)
        assert len(chosen) == 4
        for a, b in chosen:
            assert policies.index(a) < policies.index(b)
            matches.append(M(len(matches), a, b, (1.0, 0.0)))
            played[(a, b)] = played.get((a, b), 0) + 1
        picked += chosen
    assert picked[: len(everyone)] == everyone


def test_an_unfinished_round_robin_is_filled_by_uncertainty() -> None:
    matches = SETTLED_A[:10] + SETTLED_A[20:]  # A-C never played
    chosen = pick_round(matches, ABC, played_of(matches), k=3, cap=100, seed=1)
    assert chosen[0] == ("A", "C")
    assert len(chosen) == 3


def test_separated_league_is_near_certain_and_equal_league_is_not() -> None:
    separated = simulated([0, 400, 800, 1200], per_pair=20, seed=1)
    equal = simulated([0, 0, 0, 0], per_pair=20, seed=1)
    names = ["p0", "p1", "p2", "p3"]
    assert ranking_probability(separated, names, seed=7, resamples=300) >= 0.95
    # Four equal policies: 24 orders, the bootstrap agrees with any one of them rarely.
    assert ranking_probability(equal, names, seed=7, resamples=300) <= 0.3


def test_the_uncertain_pair_is_picked_over_settled_ones() -> None:
    view = round_view(SETTLED_A, ABC, seed=1, resamples=300)
    assert view.ranking[0] == "A"
    assert view.uncertainty[("B", "C")] > 0.2
    assert view.uncertainty[("A", "B")] == view.uncertainty[("A", "C")] == 0.0
    chosen = pick_round(SETTLED_A, ABC, played_of(SETTLED_A), k=2, cap=100, seed=1)
    assert chosen == [("B", "C"), ("B", "C")]


def test_a_round_spreads_over_pairs_of_similar_doubt() -> None:
    # Four equal policies: every pair is uncertain, so eight picks cover several pairs.
    names = ["p0", "p1", "p2", "p3"]
    equal = simulated([0, 0, 0, 0], per_pair=5, seed=2)
    played = played_of(equal)
    chosen = pick_round(equal, names, played, k=8, cap=100, seed=1)
    assert len(chosen) == 8
    assert len(set(chosen)) >= 3


def test_caps_are_respected() -> None:
    played = played_of(SETTLED_A)
    chosen = pick_round(SETTLED_A, ABC, played, k=5, cap=12, seed=1)
    # B-C is the uncertain pair, but it may take only two more matches.
    assert chosen.count(("B", "C")) == 2
    assert len(chosen) == 5
    total = {pair: played[pair] + chosen.count(pair) for pair in played}
    assert max(total.values()) <= 12


def test_k_larger_than_the_caps_allow() -> None:
    played = played_of(SETTLED_A)
    chosen = pick_round(SETTLED_A, ABC, played, k=50, cap=11, seed=1)
    assert sorted(chosen) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert pick_round(SETTLED_A, ABC, played, k=5, cap=10, seed=1) == []
    # Round robin: fewer unplayed pairs than k, and a cap of one.
    assert pick_round([], ABC, {}, k=8, cap=1, seed=1) == [("A", "B"), ("A", "C"), ("B", "C")]


def test_view_and_pick_round_agree() -> None:
    played = played_of(SETTLED_A)
    view = round_view(SETTLED_A, ABC, seed=4, resamples=1000)
    assert view.probability == ranking_probability(SETTLED_A, ABC, seed=4)
    assert pick_round_from_view(view, played, k=6, cap=100) == pick_round(
        SETTLED_A, ABC, played, k=6, cap=100, seed=4
    )


@pytest.mark.parametrize(
    ("policies", "played", "message"),
    [
        (["A", "A", "B"], {}, "listed twice"),
        (["A", "B"], {("A", "D"): 1}, "not a pair"),
        (["A", "B"], {("A", "B"): -1}, ">= 0"),
    ],
)
def test_bad_inputs_are_refused(
    policies: list[str], played: dict[tuple[str, str], int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        pick_round([], policies, played, k=2, cap=3, seed=1)


def test_a_match_outside_the_league_is_refused() -> None:
    with pytest.raises(ValueError, match="not in the league"):
        ranking_probability([M(0, "A", "Z", (1.0, 0.0))], ABC, seed=1)
