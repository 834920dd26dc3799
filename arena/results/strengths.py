"""Bradley-Terry strengths from pair counts: the fit, its bootstrap and its sandwich.

The likelihood of a Bradley-Terry model depends on the games only through what
each pair of policies scored against each other, so everything here works from
per-pair sums (`PairCounts`, one row per pair that played) and, for the
bootstrap, per-match rows; never from a matrix per match.

- `fit_log_strengths`: damped Newton on a batch of dense wins matrices
  (policies + the anchor), memory bounded by the batch the caller passes.
- `fit_pairs`: the one fit of a league's pair counts.
- `resampled_strengths`: the match bootstrap, drawn exactly as
  `numpy.random.default_rng(seed)` always drew it, fitted a bounded batch at a
  time and warm-started from the fit.
- `sandwich_covariance`: the cluster-robust (by match) covariance at the fit,
  from five sums per pair: what large leagues use for their intervals.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

if TYPE_CHECKING:
    import numpy.typing as npt

    _FloatArray = npt.NDArray[np.float64]
    _IntArray = npt.NDArray[np.int64]
    _BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "ELO_CENTRE",
    "ELO_PER_LOG_STRENGTH",
    "Z95",
    "MatchRows",
    "PairCounts",
    "SandwichFit",
    "centre",
    "fit_log_strengths",
    "fit_pairs",
    "on_elo_scale",
    "on_prior",
    "resampled_strengths",
    "sandwich_covariance",
    "with_anchor_prior",
]

ELO_PER_LOG_STRENGTH = 400.0 / math.log(10.0)
"""One natural-log unit of strength in Elo points: Elo's expected score
1/(1 + 10**(-d/400)) equals BT's 1/(1 + e**-theta) when d = theta * this."""

# Newton on the log-strengths stops once no strength moves by more than this
# (1e-8 Elo points): far below anything a table shows, far above rounding noise.
_NEWTON_TOLERANCE = 1e-10
_NEWTON_MAX_STEPS = 200
_RESAMPLES_AT_ONCE = 64
"""Bootstrap resamples drawn by one call of the generator (the draws every version of the
arena has made: changing it would change every interval)."""
_THREADED_SIZE = 256
"""Below this many policies a Newton system is solved on one BLAS thread: a batch of small
systems runs tens of times slower threaded on a busy machine (measured: 1,000 resamples of
100 policies, 24 s of CPU threaded against 1.5 s on one thread, load 12 on 2 cores)."""
_BATCH_CELLS = 1 << 21
"""At most this many cells of dense (policies + 1)^2 wins matrices are fitted together
(16 MB a matrix of them): a large league fits its resamples a few at a time."""


@dataclass(frozen=True, slots=True)
class MatchRows:
    """The rated matches as rows: which pair (an index into `PairCounts`' rows), the pair's
    first policy's points, and the games."""

    pair: _IntArray
    points: _FloatArray
    games: _FloatArray


@dataclass(frozen=True, slots=True)
class PairCounts:
    """A league's sufficient statistics: per pair of policies that met in rated matches
    (`first` < `second`, indices into the sorted policies), five sums over its matches, r
    being `first`'s points in a match and n its games."""

    policies: tuple[str, ...]
    """Every policy of the league, sorted by name (the fit's order)."""
    first: _IntArray
    second: _IntArray
    points: _FloatArray
    """Sum of r: `first`'s points against `second`, a draw half a point."""
    games: _FloatArray
    """Sum of n."""
    points_sq: _FloatArray
    """Sum of r * r."""
    points_games: _FloatArray
    """Sum of r * n."""
    games_sq: _FloatArray
    """Sum of n * n."""
    matches: int
    """Rated matches over all pairs."""

    @classmethod
    def from_rows(
        cls, policies: tuple[str, ...], first: _IntArray, second: _IntArray, rows: MatchRows
    ) -> PairCounts:
        """The sums of `rows`, whose `pair` indexes (`first`, `second`)."""
        size = len(first)

        def total(weights: _FloatArray) -> _FloatArray:
            summed = np.bincount(rows.pair, weights=weights, minlength=size)
            return summed.astype(np.float64)

        r, n = rows.points, rows.games
        return cls(
            policies,
            first,
            second,
            total(r),
            total(n),
            total(r * r),
            total(r * n),
            total(n * n),
            len(rows.pair),
        )

    @property
    def rated(self) -> _BoolArray:
        """Per policy: it played at least one rated game."""
        played = np.zeros(len(self.policies), dtype=bool)
        played[self.first[self.games > 0]] = True
        played[self.second[self.games > 0]] = True
        return played

    def wins(self) -> _FloatArray:
        """The dense wins matrix, shape (1, n, n), n = policies + the anchor, prior added."""
        n = len(self.policies) + 1
        wins = np.zeros((1, n, n))
        np.add.at(wins[0], (self.first, self.second), self.points)
        np.add.at(wins[0], (self.second, self.first), self.games - self.points)
        return with_anchor_prior(wins)


def with_anchor_prior(wins: _FloatArray) -> _FloatArray:
    """Add the prior: each policy draws one virtual game against the anchor (last index)."""
    wins = wins.copy()
    wins[:, :-1, -1] += 0.5
    wins[:, -1, :-1] += 0.5
    return wins


def _newton_step(theta: _FloatArray, wins: _FloatArray, games: _FloatArray) -> _FloatArray:
    """The Newton step of the log-likelihood in the policies' log-strengths (anchor fixed).

    Shapes: theta (batch, n) with the anchor's 0 last, wins and games (batch, n, n).
    """
    policies = theta.shape[1] - 1
    beats = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
    gradient = (wins - games * beats).sum(axis=2)[:, :policies]
    curvature = games * beats * (1.0 - beats)
    # Fisher information = weighted graph Laplacian restricted to the policies;
    # the anchor's virtual games put weight on its diagonal, so it is positive
    # definite and the log-likelihood strictly concave: one optimum, always finite.
    information = -curvature[:, :policies, :policies]
    diagonal = np.arange(policies)
    information[:, diagonal, diagonal] += curvature.sum(axis=2)[:, :policies]
    step: _FloatArray = np.linalg.solve(information, gradient[:, :, None])[:, :, 0]
    return step


def fit_log_strengths(wins: _FloatArray, start: _FloatArray | None = None) -> _FloatArray:
    """Maximum-likelihood log-strengths, shape (batch, policies), from wins (batch, n, n)
    with the anchor last (prior included), Newton starting at `start` (else 0).

    Damped Newton: a step whose largest coordinate is m is scaled by
    1 / (1 + 2m). The pairwise logistic terms' curvature changes by at most a
    factor e**(2m) along such a step, so every damped step climbs (global
    convergence from any start) and near the optimum the damping vanishes
    (quadratic convergence). Deterministic: same wins, same start, same bits.
    """
    games = wins + wins.transpose(0, 2, 1)
    theta = np.zeros(wins.shape[:2])
    if start is not None:
        theta[:, :-1] = start
    for _ in range(_NEWTON_MAX_STEPS):
        step = _newton_step(theta, wins, games)
        largest = np.abs(step).max(axis=1, initial=0.0)
        theta[:, :-1] += step / (1.0 + 2.0 * largest[:, None])
        if largest.max(initial=0.0) < _NEWTON_TOLERANCE:
            return theta[:, :-1]
    raise RuntimeError(
        f"Bradley-Terry fit did not converge in {_NEWTON_MAX_STEPS} Newton steps "
        f"(largest step {largest.max():.3g}); this is a bug, please report the matches"
    )


def _blas_threads(policies: int) -> contextlib.AbstractContextManager[object]:
    """One BLAS thread for systems of fewer than `_THREADED_SIZE` policies, else as set."""
    if policies < _THREADED_SIZE:
        limits: contextlib.AbstractContextManager[object] = threadpool_limits(1, user_api="blas")
        return limits
    return contextlib.nullcontext()


def fit_pairs(counts: PairCounts) -> _FloatArray:
    """The maximum-likelihood log-strengths of `counts` (prior included), shape (policies,)."""
    if not counts.policies:
        return np.zeros(0)
    with _blas_threads(len(counts.policies)):
        fitted: _FloatArray = fit_log_strengths(counts.wins())[0]
    return fitted


def _resample_counts(rows: MatchRows, seed: int, resamples: int) -> Iterator[_FloatArray]:
    """How often each match is drawn in each resample, `_RESAMPLES_AT_ONCE` resamples at a
    time, shape (resamples of the batch, matches)."""
    matches = len(rows.pair)
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, _RESAMPLES_AT_ONCE):
        batch = min(_RESAMPLES_AT_ONCE, resamples - start)
        if matches == 0:
            yield np.zeros((batch, 0))
            continue
        draws = rng.integers(0, matches, size=(batch, matches))
        # Offsetting row r by r * matches lets one bincount count every row at once.
        flat = (draws + np.arange(batch)[:, None] * matches).ravel()
        yield np.bincount(flat, minlength=batch * matches).reshape(batch, matches).astype(float)


def _resampled_wins(counts: PairCounts, rows: MatchRows, drawn: _FloatArray) -> _FloatArray:
    """The dense wins matrices (prior added) of resamples whose matches were drawn `drawn`
    times each (shape (batch, matches))."""
    batch, pairs, n = drawn.shape[0], len(counts.first), len(counts.policies) + 1
    offset = (np.arange(batch)[:, None] * pairs + rows.pair[None, :]).ravel()

    def per_pair(weights: _FloatArray) -> _FloatArray:
        summed = np.bincount(offset, weights=(drawn * weights).ravel(), minlength=batch * pairs)
        return summed.astype(np.float64).reshape(batch, pairs)

    scored = per_pair(rows.points)
    conceded = per_pair(rows.games - rows.points)
    wins = np.zeros((batch, n * n))
    wins[:, counts.first * n + counts.second] = scored
    wins[:, counts.second * n + counts.first] = conceded
    return with_anchor_prior(wins.reshape(batch, n, n))


def resampled_strengths(
    counts: PairCounts, rows: MatchRows, point: _FloatArray, seed: int, resamples: int
) -> _FloatArray:
    """The log-strengths of `resamples` bootstrap resamples of the matches (drawn with
    replacement, a match's games together, by `default_rng(seed)`), shape (resamples,
    policies); each fit starts from `point`, the fit to the matches as given."""
    n = len(counts.policies) + 1
    at_once = max(1, min(_RESAMPLES_AT_ONCE, _BATCH_CELLS // (n * n)))
    fitted = np.empty((resamples, n - 1))
    row = 0
    with _blas_threads(n - 1):
        for drawn in _resample_counts(rows, seed, resamples):
            for start in range(0, drawn.shape[0], at_once):
                part = drawn[start : start + at_once]
                wins = _resampled_wins(counts, rows, part)
                fitted[row : row + len(part)] = fit_log_strengths(wins, point)
                row += len(part)
    return fitted


def sandwich_covariance(counts: PairCounts, theta: _FloatArray) -> tuple[_FloatArray, _FloatArray]:
    """The cluster-robust covariance of the log-strengths at the fit `theta`, as the pair
    (A, B) with covariance A B A: A the inverse of the information (prior included), B the
    sum over matches of each match's score vector times itself.

    A match between i and j scores (r - n p)(e_i - e_j), p = P(i beats j) at `theta`; the
    squares of a pair's matches sum to S_rr - 2 p S_rn + p^2 S_nn from the pair's sums, so
    B is a weighted graph Laplacian built from the pairs. Matches are the clusters: the
    games of one match may depend on each other (same seed, swapped seats), and a draw
    lowers a game's variance below the model's; the sandwich reads both from the data.
    """
    size = len(counts.policies)
    i, j = counts.first, counts.second
    p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
    spread = counts.points_sq - 2.0 * p * counts.points_games + p * p * counts.games_sq
    curvature = counts.games * p * (1.0 - p)
    # The prior's virtual game against the anchor (strength 0) adds to the information only:
    # it is the same in every sample, so it has no spread.
    anchored = 1.0 / (1.0 + np.exp(-theta))
    information = _laplacian(size, i, j, curvature)
    information[np.arange(size), np.arange(size)] += anchored * (1.0 - anchored)
    inverse = np.linalg.inv(information).astype(np.float64)
    return inverse, _laplacian(size, i, j, spread)


def _laplacian(size: int, i: _IntArray, j: _IntArray, weight: _FloatArray) -> _FloatArray:
    """The dense graph Laplacian of pairs (i, j) with these weights."""
    matrix = np.zeros((size, size))
    np.add.at(matrix, (i, j), -weight)
    np.add.at(matrix, (j, i), -weight)
    np.add.at(matrix, (i, i), weight)
    np.add.at(matrix, (j, j), weight)
    return matrix


# ---------------------------------------------------------------------------
# On the Elo scale

ELO_CENTRE = 1500.0
"""The mean rating of the policies the scale centres on."""
Z95 = 1.959963984540054
"""The standard normal's 97.5th percentile."""


def centre(counts: PairCounts) -> _BoolArray:
    """The policies whose mean the scale centres on: those with a rated game (a policy
    fitted on the prior alone would move everyone else's number), or all when none has."""
    rated = counts.rated
    return rated if rated.any() else np.ones(len(rated), dtype=bool)


def on_elo_scale(theta: _FloatArray, centred_on: _BoolArray) -> _FloatArray:
    """Log-strengths (last axis: policies) as Elo-scale ratings: mean `ELO_CENTRE` over the
    `centred_on` policies."""
    centred = theta - theta[..., centred_on].mean(axis=-1, keepdims=True)
    scaled: _FloatArray = ELO_CENTRE + ELO_PER_LOG_STRENGTH * centred
    return scaled


def on_prior(counts: PairCounts) -> list[bool]:
    """Per policy: no point conceded or no point scored (or no game), where the likelihood
    alone would push its rating to plus or minus infinity (or anywhere). A draw is half a
    point each way, so a record with a draw in it is bounded."""
    size = len(counts.policies)
    scored = np.bincount(counts.first, counts.points, size) + np.bincount(
        counts.second, counts.games - counts.points, size
    )
    games = np.bincount(counts.first, counts.games, size) + np.bincount(
        counts.second, counts.games, size
    )
    return [bool(s == 0 or s == g) for s, g in zip(scored, games, strict=True)]


@dataclass(frozen=True, slots=True)
class SandwichFit:
    """Elo-scale ratings at the fit and what their covariance is made of."""

    point: _FloatArray
    """The ratings, policies in name order."""
    inverse: _FloatArray
    """The inverse information of the log-strengths (prior included)."""
    spread: _FloatArray
    """The sum over matches of each match's score vector times itself."""

    @classmethod
    def of(cls, counts: PairCounts) -> SandwichFit:
        """Fit `counts` and take the sandwich's two parts at the fit."""
        theta = fit_pairs(counts)
        inverse, spread = sandwich_covariance(counts, theta)
        return cls(on_elo_scale(theta, centre(counts)), inverse, spread)

    def intervals(self, centred_on: _BoolArray) -> tuple[_FloatArray, _FloatArray]:
        """Every rating's 95% interval (low, high): the rating plus or minus `Z95` standard
        errors of the centred rating (its gradient in theta times A, squared through B)."""
        toward = ELO_PER_LOG_STRENGTH * (
            self.inverse - self.inverse[centred_on].mean(axis=0, keepdims=True)
        )
        variance = np.einsum("ij,ij->i", toward @ self.spread, toward)
        error = Z95 * np.sqrt(np.maximum(variance, 0.0))
        return self.point - error, self.point + error

    def difference(self, i: int, j: int) -> tuple[float, float, float]:
        """Rating i - rating j with its 95% interval, from the difference's own variance."""
        toward = ELO_PER_LOG_STRENGTH * (self.inverse[i] - self.inverse[j])
        error = Z95 * math.sqrt(max(float(toward @ self.spread @ toward), 0.0))
        diff = float(self.point[i] - self.point[j])
        return diff, diff - error, diff + error
