"""League ratings from complete matches: Elo, Bradley-Terry, head to head.

Everything here is a pure function of a collection of `MatchOutcome`s, one per
complete match, in any order: each function puts the matches in schedule
order itself, so concurrency and resume never change a number.

- `elo` / `elo_history`: the backgammon seed's Elo: 1500 start, K = 24, per
  game, both games of a match from the ratings at match start, applied in
  schedule order; no-contest and same-author matches excluded.
- `bradley_terry` / `bt_difference`: a maximum-likelihood Bradley-Terry fit
  on the Elo scale with 95% percentile intervals from a bootstrap of the
  matches, seeded by the league's master seed; a policy that won every rated
  game or lost every one is marked as resting on the prior.
- `head_to_head`: W/D/L/NC of every ordered pair, same-author matches included.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    _FloatArray = npt.NDArray[np.float64]

__all__ = [
    "ELO_K",
    "ELO_START",
    "BTRating",
    "MatchOutcome",
    "bradley_terry",
    "bt_difference",
    "elo",
    "elo_history",
    "head_to_head",
    "pair_tallies",
]

ELO_START = 1500.0
"""Every policy's Elo before its first rated match."""
ELO_K = 24.0
"""The Elo K factor, per game."""

# One natural-log unit of Bradley-Terry strength in Elo points: Elo's expected
# score 1/(1 + 10**(-d/400)) equals BT's 1/(1 + e**-theta) when d = theta * this.
_ELO_PER_LOG_STRENGTH = 400.0 / math.log(10.0)
_SCORES = (1.0, 0.5, 0.0)
# Newton on the log-strengths stops once no strength moves by more than this
# (1e-8 Elo points): far below anything a table shows, far above rounding noise.
_NEWTON_TOLERANCE = 1e-10
_NEWTON_MAX_STEPS = 200


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """One complete match as the ratings see it.

    `results` holds one entry per game, from `first`'s point of view: 1.0 win,
    0.5 draw, 0.0 loss, None no contest. Seats do not matter to ratings.
    """

    index: int
    """Position of the match in the league's schedule (ratings follow it)."""
    first: str
    second: str
    results: tuple[float | None, ...]
    same_author: bool = False

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError(
                f"match {self.index}: policy {self.first!r} cannot play itself; "
                "name two different policies"
            )
        if not self.results:
            raise ValueError(
                f"match {self.index} ({self.first!r} v {self.second!r}) has no games; "
                "pass only complete matches"
            )
        for result in self.results:
            if result is not None and result not in _SCORES:
                raise ValueError(
                    f"match {self.index}: game result {result!r} is not a score; "
                    "use 1.0 (first wins), 0.5 (draw), 0.0 (first loses) or None (no contest)"
                )

    @property
    def no_contest(self) -> bool:
        """True when any game of the match is a no contest."""
        return any(result is None for result in self.results)

    @property
    def rated(self) -> bool:
        """True when the match counts for Elo and Bradley-Terry."""
        return not self.no_contest and not self.same_author

    def first_scores(self) -> list[float]:
        """`first`'s score in every game that has one."""
        return [result for result in self.results if result is not None]


@dataclass(frozen=True, slots=True)
class BTRating:
    """A Bradley-Terry rating on the Elo scale with its 95% bootstrap interval."""

    rating: float
    low: float
    high: float
    on_prior: bool = False
    """The policy won every rated game or lost every one (its maximum-likelihood rating is
    unbounded), or played none: the rating and the interval rest on the prior."""


def _in_schedule_order(matches: Iterable[MatchOutcome]) -> list[MatchOutcome]:
    """The matches sorted by schedule index; two matches on one index are refused."""
    ordered = sorted(matches, key=lambda match: match.index)
    for before, after in itertools.pairwise(ordered):
        if before.index == after.index:
            raise ValueError(
                f"two matches share schedule index {before.index} "
                f"({before.first!r} v {before.second!r} and {after.first!r} v {after.second!r}); "
                "pass each match once, indexed by its position in the schedule"
            )
    return ordered


def _policies(ordered: list[MatchOutcome]) -> list[str]:
    """Every policy named by a match, in order of first appearance in the schedule."""
    seen: dict[str, None] = {}
    for match in ordered:
        seen.setdefault(match.first)
        seen.setdefault(match.second)
    return list(seen)


# ---------------------------------------------------------------------------
# Elo


def _expected_score(rating: float, other: float) -> float:
    """Elo's expected score of a player rated `rating` against one rated `other`."""
    return 1.0 / (1.0 + math.pow(10.0, (other - rating) / 400.0))


def elo_history(
    matches: Iterable[MatchOutcome], *, start: float = ELO_START, k: float = ELO_K
) -> list[tuple[int, dict[str, float]]]:
    """Every policy's Elo after each applied match, as (schedule index, ratings).

    Matches are applied in ascending `index` whatever the input order. Both
    games of a match are scored against the ratings at match start and their
    deltas applied together (delta_A = K(S1 - E) + K(S2 - E)).
    No-contest and same-author matches are skipped and leave no entry; a
    policy seen only in skipped matches keeps `start` in every entry.
    """
    ordered = _in_schedule_order(matches)
    ratings = dict.fromkeys(_policies(ordered), start)
    history: list[tuple[int, dict[str, float]]] = []
    for match in ordered:
        if not match.rated:
            continue
        expected = _expected_score(ratings[match.first], ratings[match.second])
        delta = sum(k * (score - expected) for score in match.first_scores())
        ratings[match.first] += delta
        ratings[match.second] -= delta
        history.append((match.index, dict(ratings)))
    return history


def elo(
    matches: Iterable[MatchOutcome], *, start: float = ELO_START, k: float = ELO_K
) -> dict[str, float]:
    """Every policy's Elo after all rated matches (see `elo_history` for the rules).

    Policies appear in order of first appearance in the schedule; one seen
    only in no-contest or same-author matches is rated `start`.
    """
    ordered = _in_schedule_order(matches)
    history = elo_history(ordered, start=start, k=k)
    if history:
        return history[-1][1]
    return dict.fromkeys(_policies(ordered), start)


# ---------------------------------------------------------------------------
# Bradley-Terry


@dataclass(frozen=True, slots=True)
class _BTFit:
    """Elo-scale Bradley-Terry ratings of the data and of every bootstrap resample."""

    shown: list[str]
    """The policies in order of first appearance in the schedule."""
    policies: list[str]
    """The policies in the arrays' order (by name)."""
    point: _FloatArray
    """Shape (policies,): the fit to the matches as given."""
    resampled: _FloatArray
    """Shape (resamples, policies): the fit to each bootstrap resample."""
    on_prior: list[bool]
    """Per policy (the arrays' order): it scored every point of its rated games or none."""


def _match_cells(rated: list[MatchOutcome], policies: list[str]) -> _FloatArray:
    """Each match's wins as a flat (n x n) wins matrix, n = policies + the anchor.

    Cell i*n + j of row m holds what policy i scored against j in match m;
    draws count half a win for each side.
    """
    position = {policy: i for i, policy in enumerate(policies)}
    n = len(policies) + 1
    cells = np.zeros((len(rated), n * n))
    for row, match in enumerate(rated):
        i, j = position[match.first], position[match.second]
        scores = match.first_scores()
        cells[row, i * n + j] = sum(scores)
        cells[row, j * n + i] = len(scores) - sum(scores)
    return cells


_RESAMPLES_AT_ONCE = 64
"""Bootstrap resamples drawn together: memory stays a few MB however many matches a league
has (the draws are the same as drawing every resample at once)."""


def _bootstrap_wins(cells: _FloatArray, seed: int, resamples: int) -> Iterator[_FloatArray]:
    """Each resample's wins (rows of `cells`' shape), `_RESAMPLES_AT_ONCE` rows at a time:
    how often each match is drawn in the resample, times that match's cells."""
    matches = cells.shape[0]
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, _RESAMPLES_AT_ONCE):
        rows = min(_RESAMPLES_AT_ONCE, resamples - start)
        if matches == 0:
            yield np.zeros((rows, cells.shape[1]))
            continue
        draws = rng.integers(0, matches, size=(rows, matches))
        # Offsetting row r by r * matches lets one bincount count every row at once.
        flat = (draws + np.arange(rows)[:, None] * matches).ravel()
        counts = np.bincount(flat, minlength=rows * matches).reshape(rows, matches)
        yield counts.astype(np.float64) @ cells


def _with_anchor_prior(wins: _FloatArray) -> _FloatArray:
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


def _fit_log_strengths(wins: _FloatArray) -> _FloatArray:
    """Maximum-likelihood log-strengths, shape (batch, policies), from wins (batch, n, n).

    Damped Newton: a step whose largest coordinate is m is scaled by
    1 / (1 + 2m). The pairwise logistic terms' curvature changes by at most a
    factor e**(2m) along such a step, so every damped step climbs (global
    convergence from 0) and near the optimum the damping vanishes (quadratic
    convergence). Deterministic: same wins, same bits.
    """
    games = wins + wins.transpose(0, 2, 1)
    theta = np.zeros(wins.shape[:2])
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


def _on_elo_scale(theta: _FloatArray) -> _FloatArray:
    """Log-strengths as Elo-scale ratings: mean 1500 over the real policies."""
    centred = theta - theta.mean(axis=-1, keepdims=True)
    scaled: _FloatArray = ELO_START + _ELO_PER_LOG_STRENGTH * centred
    return scaled


def _bt_fit(matches: Iterable[MatchOutcome], seed: int, resamples: int) -> _BTFit:
    """Fit the data and its bootstrap resamples in one batch."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if seed < 0:
        raise ValueError(f"seed must be the league's master seed (>= 0), got {seed}")
    ordered = _in_schedule_order(matches)
    shown = _policies(ordered)
    # The fit runs in name order, so that which matches were left out (and
    # where a policy first appeared) cannot change the arithmetic's bits.
    policies = sorted(shown)
    if not policies:
        return _BTFit([], [], np.zeros(0), np.zeros((resamples, 0)), [])
    rated = [match for match in ordered if match.rated]
    cells = _match_cells(rated, policies)
    observed = np.ones((1, len(rated))) @ cells
    n = len(policies) + 1
    rows = np.vstack([observed, *_bootstrap_wins(cells, seed, resamples)])
    wins = _with_anchor_prior(rows.reshape(-1, n, n))
    ratings = _on_elo_scale(_fit_log_strengths(wins))
    return _BTFit(shown, policies, ratings[0], ratings[1:], _unbounded(observed.reshape(n, n)))


def _unbounded(wins: _FloatArray) -> list[bool]:
    """Per policy of a wins matrix (the anchor last): no point conceded or no point scored,
    where the likelihood alone would push its rating to plus or minus infinity. A draw is
    half a point each way, so a record with a draw in it is bounded."""
    scored, conceded = wins[:-1, :].sum(axis=1), wins[:, :-1].sum(axis=0)
    return [bool(s == 0 or c == 0) for s, c in zip(scored, conceded, strict=True)]


def _interval(samples: _FloatArray) -> tuple[_FloatArray, _FloatArray]:
    """The 2.5th and 97.5th percentiles along the resample axis."""
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return low, high


def bradley_terry(
    matches: Iterable[MatchOutcome], *, seed: int, resamples: int = 1000
) -> dict[str, BTRating]:
    """Bradley-Terry ratings on the Elo scale with 95% bootstrap intervals.

    Maximum likelihood over games, a draw counting half a win for each side.
    Prior: each policy draws one virtual game against a fixed anchor of
    log-strength 0, so an unbeaten (or winless) policy stays finite. Shown as
    1500 + (400 / ln 10) * (theta - mean theta), the mean over the real
    policies only. No-contest matches are left out entirely (their played
    games too, as Elo leaves them out), and so are same-author matches; a
    policy seen only in those is fitted on the prior alone.

    The interval is the 2.5th..97.5th percentile over `resamples` bootstrap
    resamples of the rated matches (drawn with replacement, a match's games
    together) from `numpy.random.default_rng(seed)`, `seed` being the league's
    master seed. Matches are taken in schedule order first, so the input's
    order never changes a bit of the table.

    `on_prior` (on every rating) marks a policy that won every rated game or
    lost every one, whose rating would be infinite without the prior, or played
    none: its rating and interval say what the prior says, not how far it is
    from the others. A draw counts half a point each way, so a record of draws
    only, or of wins and draws, is bounded and not marked (a draw-only policy
    sits among the policies it drew). The mark reads one policy's record in the
    actual matches: a record of nearly all wins can still draw resamples of all
    wins, which put the top of its interval on the prior.
    """
    fit = _bt_fit(matches, seed, resamples)
    low, high = _interval(fit.resampled)
    column = {policy: i for i, policy in enumerate(fit.policies)}
    return {
        policy: BTRating(
            float(fit.point[column[policy]]),
            float(low[column[policy]]),
            float(high[column[policy]]),
            fit.on_prior[column[policy]],
        )
        for policy in fit.shown
    }


def bt_difference(
    matches: Iterable[MatchOutcome], a: str, b: str, *, seed: int, resamples: int = 1000
) -> tuple[float, float, float]:
    """The Bradley-Terry rating difference a - b with its 95% bootstrap interval.

    Same fit and same resamples as `bradley_terry` with the same seed; the
    interval is taken over the per-resample differences (paired), which is
    narrower than combining the two policies' own intervals.
    """
    if a == b:
        raise ValueError(f"bt_difference compares two policies; got {a!r} twice")
    fit = _bt_fit(matches, seed, resamples)
    for policy in (a, b):
        if policy not in fit.policies:
            raise ValueError(
                f"policy {policy!r} plays in none of the matches (known: {', '.join(fit.shown)})"
            )
    i, j = fit.policies.index(a), fit.policies.index(b)
    low, high = _interval(fit.resampled[:, i] - fit.resampled[:, j])
    return float(fit.point[i] - fit.point[j]), float(low), float(high)


# ---------------------------------------------------------------------------
# Head to head

# Where a game result lands in (wins, draws, losses, no_contests), for the
# match's first policy and, mirrored, for its second.
_TALLY_SLOT: dict[float | None, tuple[int, int]] = {
    1.0: (0, 2),
    0.5: (1, 1),
    0.0: (2, 0),
    None: (3, 3),
}


def head_to_head(
    matches: Iterable[MatchOutcome],
    also: Iterable[tuple[str, str, float | None]] = (),
) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(wins, draws, losses, no_contests) of `pair[0]` against `pair[1]`, per game.

    Counts every game of every match, same-author and no-contest matches
    included (they are shown head to head), and the games `also` gives as
    `pair_tallies` takes them (the no-contests a later play replaced). Both
    orders of every pair that met are present, one the mirror of the other.
    """
    played = (
        (match.first, match.second, result)
        for match in _in_schedule_order(matches)
        for result in match.results
    )
    return pair_tallies(itertools.chain(played, also))


def pair_tallies(
    games: Iterable[tuple[str, str, float | None]],
) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(wins, draws, losses, no_contests) of each policy against each other, from games as
    (one policy, the other, the first's result: 1, 0.5, 0, or None for a no-contest)."""
    tallies: dict[tuple[str, str], list[int]] = {}
    for first, second, result in games:
        ours = tallies.setdefault((first, second), [0, 0, 0, 0])
        theirs = tallies.setdefault((second, first), [0, 0, 0, 0])
        our_slot, their_slot = _TALLY_SLOT[result]
        ours[our_slot] += 1
        theirs[their_slot] += 1
    return {pair: (won, drawn, lost, nc) for pair, (won, drawn, lost, nc) in tallies.items()}
