"""Bradley-Terry from pair sums: the same numbers as the dense per-match fit it replaced,
the scale centred on the policies with a rated match, the sandwich interval checked
against a direct computation, and (slow tier) the intervals' coverage by simulation."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from arena.config import load_config
from arena.results import ratings
from arena.results.ratings import (
    BTRating,
    MatchOutcome,
    bradley_terry,
    bradley_terry_from_counts,
    bt_difference,
)
from arena.results.strengths import MatchRows, PairCounts

M = MatchOutcome
ELO_PER_LOG = 400 / math.log(10)
ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted([*ROOT.glob("configs/*.toml"), *ROOT.glob("configs/pool/*.toml")])
Floats = npt.NDArray[np.float64]


# ---------------------------------------------------------------------------
# The fit as it was: dense arrays of every match and every resample at once, kept
# here only as the reference the pair-sum fit must agree with.


def _reference(
    matches: list[MatchOutcome], seed: int, resamples: int
) -> dict[str, tuple[float, float, float]]:
    """(rating, low, high) per policy from the dense per-match fit, centred on every
    policy (as it was: the leagues compared here give every policy a rated match)."""
    ordered = sorted(matches, key=lambda m: m.index)
    policies = sorted({p for m in ordered for p in (m.first, m.second)})
    position = {p: i for i, p in enumerate(policies)}
    rated = [m for m in ordered if m.rated]
    n = len(policies) + 1
    cells = np.zeros((len(rated), n * n))
    for row, match in enumerate(rated):
        i, j = position[match.first], position[match.second]
        scores = match.first_scores()
        cells[row, i * n + j] = sum(scores)
        cells[row, j * n + i] = len(scores) - sum(scores)
    observed = np.ones((1, len(rated))) @ cells
    rows = np.vstack([observed, *_reference_resamples(cells, seed, resamples)])
    wins = rows.reshape(-1, n, n).copy()
    wins[:, :-1, -1] += 0.5
    wins[:, -1, :-1] += 0.5
    theta = _reference_fit(wins)
    elo = 1500 + ELO_PER_LOG * (theta - theta.mean(axis=1, keepdims=True))
    low, high = np.percentile(elo[1:], [2.5, 97.5], axis=0)
    return {p: (elo[0, k], low[k], high[k]) for p, k in position.items()}


def _reference_resamples(cells: Floats, seed: int, resamples: int) -> Iterator[Floats]:
    matches = cells.shape[0]
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, 64):
        rows = min(64, resamples - start)
        draws = rng.integers(0, matches, size=(rows, matches))
        flat = (draws + np.arange(rows)[:, None] * matches).ravel()
        counts = np.bincount(flat, minlength=rows * matches).reshape(rows, matches)
        yield counts.astype(np.float64) @ cells


def _reference_fit(wins: Floats) -> Floats:
    games = wins + wins.transpose(0, 2, 1)
    theta = np.zeros(wins.shape[:2])
    policies = theta.shape[1] - 1
    for _ in range(200):
        beats = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
        gradient = (wins - games * beats).sum(axis=2)[:, :policies]
        curvature = games * beats * (1.0 - beats)
        information = -curvature[:, :policies, :policies]
        diagonal = np.arange(policies)
        information[:, diagonal, diagonal] += curvature.sum(axis=2)[:, :policies]
        step = np.linalg.solve(information, gradient[:, :, None])[:, :, 0]
        largest = np.abs(step).max(axis=1)
        theta[:, :-1] += step / (1.0 + 2.0 * largest[:, None])
        if largest.max() < 1e-10:
            return theta[:, :-1]
    raise AssertionError("the reference fit did not converge")


# ---------------------------------------------------------------------------
# Leagues


def _game(rng: np.random.Generator, p: float, draw: float, no_contest: float) -> float | None:
    """One game of a first policy that scores `p` in expectation, drawing `draw` of games."""
    if rng.random() < no_contest:
        return None
    draw = min(draw, 2 * min(p, 1 - p))
    u = rng.random()
    return 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0


def random_league(
    rng: np.random.Generator,
    names: list[str],
    per_pair: int,
    *,
    no_contest: float = 0.0,
    same_author: frozenset[tuple[str, str]] = frozenset(),
    spread: float = 1.5,
) -> list[MatchOutcome]:
    """A round robin of `per_pair` matches of two games, strengths drawn N(0, spread), in a
    shuffled schedule; each policy plays at least one rated match."""
    theta = dict(zip(names, rng.normal(0, spread, len(names)), strict=True))
    draw = float(rng.choice([0.0, 0.1, 0.4]))
    matches: list[MatchOutcome] = []
    for _ in range(per_pair):
        for a, b in itertools.combinations(names, 2):
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            p = 1 / (1 + math.exp(theta[second] - theta[first]))
            games = (_game(rng, p, draw, no_contest), _game(rng, p, draw, no_contest))
            matches.append(M(0, first, second, games, (a, b) in same_author))
    order = rng.permutation(len(matches))
    return [
        M(int(k), m.first, m.second, m.results, m.same_author)
        for k, m in zip(order, matches, strict=True)
    ]


def _everyone_rated(matches: list[MatchOutcome]) -> bool:
    policies = {p for m in matches for p in (m.first, m.second)}
    return policies == {p for m in matches if m.rated for p in (m.first, m.second)}


def _assert_same(
    matches: list[MatchOutcome], seed: int, resamples: int, *, intervals: bool = True
) -> None:
    new = bradley_terry(matches, seed=seed, resamples=resamples, interval="bootstrap")
    old = _reference(matches, seed, resamples)
    assert set(new) == set(old)
    for policy, (rating, low, high) in old.items():
        assert new[policy].rating == pytest.approx(rating, abs=1e-6), policy
        if intervals:
            assert (new[policy].low, new[policy].high) == pytest.approx((low, high), abs=1e-6)


# ---------------------------------------------------------------------------
# The same numbers as before


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_configs_rate_as_before(path: Path) -> None:
    """Every shipped config's league shape (its policies, its matches per pair, its
    same-author pairs), results drawn at random: points and bootstrap intervals agree with
    the dense fit within 1e-6 Elo."""
    config = load_config(path, keys=False)
    names = list(config.policies)
    authors = {n: getattr(p, "author", None) for n, p in config.policies.items()}
    same = frozenset(
        (a, b)
        for a, b in itertools.combinations(names, 2)
        if authors[a] and authors[a] == authors[b]
    )
    rng = np.random.default_rng(len(names) * 1000 + config.run.matches)
    checked = 0
    for _ in range(6):
        matches = random_league(rng, names, config.run.matches, no_contest=0.05, same_author=same)
        if _everyone_rated(matches):
            _assert_same(matches, seed=int(rng.integers(0, 2**31)), resamples=1000)
            checked += 1
    assert checked >= 3


def test_many_random_leagues_rate_as_before() -> None:
    rng = np.random.default_rng(2026)
    compared = 0
    for _ in range(150):
        names = [f"p{k}" for k in range(int(rng.integers(2, 13)))]
        matches = random_league(
            rng, names, int(rng.integers(1, 6)), no_contest=0.03, spread=float(rng.uniform(0.2, 3))
        )
        if _everyone_rated(matches):
            _assert_same(matches, seed=int(rng.integers(0, 1000)), resamples=120)
            compared += 1
    assert compared >= 120


def test_unbeaten_and_winless_records_rate_as_before() -> None:
    matches = [M(i, "top", f"p{i % 3}", (1.0, 1.0)) for i in range(12)]
    matches += [M(12 + i, f"p{i}", f"p{(i + 1) % 3}", (1.0, 0.0)) for i in range(3)]
    matches += [M(20, "p0", "bottom", (1.0, 1.0)), M(21, "bottom", "p2", (0.0, 0.0))]
    _assert_same(matches, seed=4, resamples=500)


def test_point_ratings_of_the_sandwich_are_the_bootstraps() -> None:
    matches = random_league(np.random.default_rng(3), [f"p{k}" for k in range(7)], 3)
    boot = bradley_terry(matches, seed=1, interval="bootstrap")
    sandwich = bradley_terry(matches, seed=1, interval="sandwich")
    assert {p: r.rating for p, r in sandwich.items()} == {p: r.rating for p, r in boot.items()}
    assert {p: r.on_prior for p, r in sandwich.items()} == {p: r.on_prior for p, r in boot.items()}


# ---------------------------------------------------------------------------
# Centred on the policies with a rated match


def test_a_policy_of_only_no_contests_moves_no_one() -> None:
    # Three policies whose strengths do not sum to 0: top wins 7 and draws 1 of its 8 games
    # against each of the others, who split theirs.
    league = [M(k, "top", "b" if k < 4 else "c", (1.0, 1.0 if k % 4 else 0.5)) for k in range(8)]
    league += [M(8, "b", "c", (1.0, 0.0)), M(9, "c", "b", (1.0, 0.0))]
    before = bradley_terry(league, seed=1, resamples=200)
    with_ghost = [*league, M(10, "ghost", "top", (None, None)), M(11, "b", "ghost", (1.0, None))]
    after = bradley_terry(with_ghost, seed=1, resamples=200)
    for policy in before:
        assert after[policy] == before[policy]
    assert sum(r.rating for r in before.values()) / 3 == pytest.approx(1500.0, abs=1e-9)
    # The ghost sits at theta 0, the anchor: 1500 minus the rated policies' mean strength.
    ghost = after["ghost"]
    assert ghost.on_prior
    # As it was (centred on all four), the ghost would have shifted the others.
    old_top = _reference(with_ghost, 1, 200)["top"][0]
    assert abs(old_top - before["top"].rating) > 1.0
    # The ghost's distance to a rated policy is the same either way: only the centre moved.
    assert ghost.rating - after["top"].rating == pytest.approx(
        _reference(with_ghost, 1, 200)["ghost"][0] - old_top, abs=1e-6
    )


# ---------------------------------------------------------------------------
# The sandwich, against a direct computation from the matches


def _log_likelihood(theta: Floats, matches: list[MatchOutcome], position: dict[str, int]) -> float:
    total = 0.0
    for m in matches:
        d = theta[position[m.first]] - theta[position[m.second]]
        for s in m.first_scores():
            total += s * -math.log1p(math.exp(-d)) + (1 - s) * -math.log1p(math.exp(d))
    # The prior: one drawn game against the anchor at 0.
    return total + sum(
        -0.5 * math.log1p(math.exp(-t)) - 0.5 * math.log1p(math.exp(t)) for t in theta
    )


def test_sandwich_interval_is_the_by_match_covariance() -> None:
    """Information by finite differences of the log-likelihood, scores match by match: the
    same variances as the pair sums give."""
    matches = random_league(np.random.default_rng(8), ["a", "b", "c", "d"], 3)
    table = bradley_terry(matches, seed=1, interval="sandwich")
    policies = sorted(table)
    position = {p: k for k, p in enumerate(policies)}
    theta = np.array([(table[p].rating - 1500) / ELO_PER_LOG for p in policies])
    # The fit's theta is the centred one plus a constant: find it from the score equation.
    shift = _solve_shift(theta, matches, position)
    theta = theta + shift
    size, h = len(policies), 1e-4
    hessian = np.zeros((size, size))
    for i, j in itertools.product(range(size), repeat=2):
        e_i, e_j = np.eye(size)[i] * h, np.eye(size)[j] * h
        hessian[i, j] = (
            _log_likelihood(theta + e_i + e_j, matches, position)
            - _log_likelihood(theta + e_i - e_j, matches, position)
            - _log_likelihood(theta - e_i + e_j, matches, position)
            + _log_likelihood(theta - e_i - e_j, matches, position)
        ) / (4 * h * h)
    meat = np.zeros((size, size))
    for m in (m for m in matches if m.rated):
        i, j = position[m.first], position[m.second]
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        score = np.zeros(size)
        residual = sum(m.first_scores()) - len(m.results) * p
        score[i], score[j] = residual, -residual
        meat += np.outer(score, score)
    inverse = np.linalg.inv(-hessian)
    centring = ELO_PER_LOG * (np.eye(size) - 1 / size)
    covariance = centring @ inverse @ meat @ inverse @ centring.T
    for p, k in position.items():
        half = (table[p].high - table[p].low) / 2
        assert half == pytest.approx(1.959964 * math.sqrt(covariance[k, k]), rel=1e-4)
    diff, low, high = bt_difference(matches, "a", "d", seed=1, interval="sandwich")
    a, d = position["a"], position["d"]
    contrast = ELO_PER_LOG * (inverse[a] - inverse[d])
    assert (high - low) / 2 == pytest.approx(
        1.959964 * math.sqrt(contrast @ meat @ contrast), rel=1e-4
    )
    assert diff == pytest.approx(table["a"].rating - table["d"].rating, abs=1e-9)


def _solve_shift(centred: Floats, matches: list[MatchOutcome], position: dict[str, int]) -> float:
    """The constant c whose theta = centred + c has a zero derivative along (1, ..., 1): only
    the prior's terms depend on c."""
    del matches, position
    low, high = -10.0, 10.0
    for _ in range(200):
        c = (low + high) / 2
        # d/dc of the prior's terms: sum over policies of 0.5 - sigmoid(theta).
        slope = sum(0.5 - 1 / (1 + math.exp(-(t + c))) for t in centred)
        low, high = (c, high) if slope > 0 else (low, c)
    return (low + high) / 2


def test_counts_entry_point_gives_the_sandwich_table() -> None:
    matches = random_league(np.random.default_rng(9), ["x", "y", "z"], 4)
    rated = [m for m in matches if m.rated]
    policies = ("x", "y", "z")
    pairs = [(0, 1), (0, 2), (1, 2)]
    pair, points, games = [], [], []
    for m in rated:
        i, j = policies.index(m.first), policies.index(m.second)
        scored = sum(m.first_scores())
        pair.append(pairs.index((min(i, j), max(i, j))))
        points.append(scored if i < j else len(m.results) - scored)
        games.append(len(m.results))
    rows = MatchRows(np.array(pair), np.array(points, float), np.array(games, float))
    counts = PairCounts.from_rows(policies, np.array([0, 0, 1]), np.array([1, 2, 2]), rows)
    table = bradley_terry(matches, seed=1, interval="sandwich")
    from_counts = bradley_terry_from_counts(counts)
    for p in policies:
        assert (from_counts[p].rating, from_counts[p].low, from_counts[p].high) == pytest.approx(
            (table[p].rating, table[p].low, table[p].high), abs=1e-9
        )


def test_auto_takes_the_sandwich_beyond_the_bootstraps_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    matches = random_league(np.random.default_rng(10), [f"p{k}" for k in range(5)], 2)
    rated = sum(m.rated for m in matches)
    assert bradley_terry(matches, seed=3) == bradley_terry(matches, seed=3, interval="bootstrap")
    monkeypatch.setattr(ratings, "BOOTSTRAP_MATCHES", rated - 1)
    assert bradley_terry(matches, seed=3) == bradley_terry(matches, seed=3, interval="sandwich")
    assert bt_difference(matches, "p0", "p1", seed=3) == bt_difference(
        matches, "p0", "p1", seed=3, interval="sandwich"
    )
    with pytest.raises(ValueError, match="interval 'wald' is not a method; use 'auto'"):
        bradley_terry(matches, seed=3, interval="wald")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Coverage (slow tier)

POLICIES = 12
LEAGUES = 200


def _simulated(rng: np.random.Generator) -> tuple[list[MatchOutcome], dict[str, float]]:
    """A round robin of 12 policies 600 Elo apart top to bottom, evenly spaced, 6 matches a
    pair of two games, 20% draws (fewer where a side scores near 0 or 1); the true ratings
    on the displayed scale (mean 1500)."""
    elos = np.linspace(-300, 300, POLICIES)
    names = [f"p{k:02d}" for k in range(POLICIES)]
    theta = dict(zip(names, elos / ELO_PER_LOG, strict=True))
    matches: list[MatchOutcome] = []
    for _ in range(6):
        for a, b in itertools.combinations(names, 2):
            p = 1 / (1 + math.exp(theta[b] - theta[a]))
            games = (_game(rng, p, 0.2, 0.0), _game(rng, p, 0.2, 0.0))
            matches.append(M(len(matches), a, b, games))
    return matches, {n: 1500 + e for n, e in zip(names, elos, strict=True)}


def _contradictions(table: dict[str, BTRating]) -> list[tuple[str, str]]:
    """Pairs the standings order one above the other whose intervals say the opposite."""
    ranked = sorted(table, key=lambda p: -table[p].rating)
    return [
        (above, below)
        for k, above in enumerate(ranked)
        for below in ranked[k + 1 :]
        if table[above].high < table[below].low
    ]


@pytest.mark.slow
@pytest.mark.parametrize("interval", ["bootstrap", "sandwich"])
def test_intervals_cover_the_true_strengths(interval: ratings.Interval) -> None:
    rng = np.random.default_rng(37)
    covered = cases = 0
    for league in range(LEAGUES):
        matches, truth = _simulated(rng)
        table = bradley_terry(matches, seed=league, interval=interval)
        assert not _contradictions(table)
        for policy, rating in table.items():
            assert rating.low <= rating.rating <= rating.high
            cases += 1
            covered += rating.low <= truth[policy] <= rating.high
    assert 0.93 <= covered / cases <= 0.97, f"{interval}: covered {covered} of {cases}"
