"""League ratings from complete matches: Elo, Bradley-Terry, head to head.

Everything here is a pure function of a collection of `MatchOutcome`s, one per
complete match, in any order: each function puts the matches in schedule
order itself, so concurrency and resume never change a number.

- `elo` / `elo_history`: the backgammon seed's Elo: 1500 start, K = 24, per
  game, both games of a match from the ratings at match start, applied in
  schedule order; no-contest and same-author matches excluded.
- `bradley_terry` / `bt_difference`: a maximum-likelihood Bradley-Terry fit
  on the Elo scale, from each pair's sums (`strengths`), with 95% intervals:
  percentiles of a bootstrap of the matches seeded by the league's master
  seed where that is cheap, else the cluster-robust sandwich at the fit; a
  policy that won every rated game or lost every one is marked as resting on
  the prior.
- `head_to_head`: W/D/L/NC of every ordered pair, same-author matches included.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from arena.results.strengths import (
    MatchRows,
    PairCounts,
    SandwichFit,
    centre,
    fit_pairs,
    on_elo_scale,
    on_prior,
    resampled_strengths,
)

# bench.efficiency fits many simulated leagues at once with these, by these names.
from arena.results.strengths import fit_log_strengths as _fit_log_strengths  # noqa: F401
from arena.results.strengths import with_anchor_prior as _with_anchor_prior  # noqa: F401

if TYPE_CHECKING:
    import numpy.typing as npt

    _FloatArray = npt.NDArray[np.float64]

__all__ = [
    "BOOTSTRAP_MATCHES",
    "BOOTSTRAP_POLICIES",
    "ELO_K",
    "ELO_START",
    "BTRating",
    "Interval",
    "MatchOutcome",
    "bootstrap_is_cheap",
    "bradley_terry",
    "bradley_terry_from_counts",
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

_SCORES = (1.0, 0.5, 0.0)


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
    ratings = dict.fromkeys(_policies(ordered), start)
    # The same arithmetic as `elo_history`, without a copy of every rating per match.
    for match in ordered:
        if match.rated:
            expected = _expected_score(ratings[match.first], ratings[match.second])
            delta = sum(k * (score - expected) for score in match.first_scores())
            ratings[match.first] += delta
            ratings[match.second] -= delta
    return ratings


# ---------------------------------------------------------------------------
# Bradley-Terry

Interval = Literal["auto", "bootstrap", "sandwich"]
"""How `bradley_terry` takes its 95% interval: `auto` picks by size (`bootstrap_is_cheap`)."""

BOOTSTRAP_POLICIES = 100
"""`auto` bootstraps a league of at most this many policies..."""
BOOTSTRAP_MATCHES = 50_000
"""... and at most this many rated matches; a larger one takes the sandwich interval."""


def bootstrap_is_cheap(policies: int, matches: int) -> bool:
    """Whether `auto` intervals come from the bootstrap (else from the sandwich): at most
    `BOOTSTRAP_POLICIES` policies and `BOOTSTRAP_MATCHES` rated matches, where 1,000 resamples
    take a few seconds at most."""
    return policies <= BOOTSTRAP_POLICIES and matches <= BOOTSTRAP_MATCHES


@dataclass(frozen=True, slots=True)
class _League:
    """The rated matches as the fit reads them."""

    shown: list[str]
    """The policies in order of first appearance in the schedule."""
    counts: PairCounts
    """Per pair, the sums the fit needs (policies in name order)."""
    rows: MatchRows
    """Per rated match, for the bootstrap."""

    @property
    def policies(self) -> list[str]:
        """The policies in the arrays' order (by name)."""
        return list(self.counts.policies)


def _league(matches: Iterable[MatchOutcome]) -> _League:
    """Schedule order, then the rated matches as pair sums and match rows."""
    ordered = _in_schedule_order(matches)
    shown = _policies(ordered)
    # The fit runs in name order, so that which matches were left out (and
    # where a policy first appeared) cannot change the arithmetic's bits.
    policies = tuple(sorted(shown))
    position = {policy: i for i, policy in enumerate(policies)}
    rated = [match for match in ordered if match.rated]
    size = len(rated)
    one = np.fromiter((position[m.first] for m in rated), np.int64, size)
    other = np.fromiter((position[m.second] for m in rated), np.int64, size)
    # A rated match has no no-contest game, so its results are all scores.
    scored = np.fromiter((math.fsum(m.results) for m in rated), np.float64, size)  # type: ignore[arg-type]
    games = np.fromiter((len(m.results) for m in rated), np.float64, size)
    low, high = np.minimum(one, other), np.maximum(one, other)
    points = np.where(one == low, scored, games - scored)
    codes, pair = np.unique(low * max(len(policies), 1) + high, return_inverse=True)
    first, second = np.divmod(codes, max(len(policies), 1))
    rows = MatchRows(pair.astype(np.int64), points, games)
    return _League(shown, PairCounts.from_rows(policies, first, second, rows), rows)


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


def _checked(seed: int, resamples: int) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if seed < 0:
        raise ValueError(f"seed must be the league's master seed (>= 0), got {seed}")


def _bootstrap_fit(league: _League, seed: int, resamples: int) -> _BTFit:
    """Fit the data, then its bootstrap resamples a bounded batch at a time."""
    counts = league.counts
    if not counts.policies:
        return _BTFit([], [], np.zeros(0), np.zeros((resamples, 0)), [])
    theta = fit_pairs(counts)
    resampled = resampled_strengths(counts, league.rows, theta, seed, resamples)
    centred_on = centre(counts)
    return _BTFit(
        league.shown,
        league.policies,
        on_elo_scale(theta, centred_on),
        on_elo_scale(resampled, centred_on),
        on_prior(counts),
    )


def _bt_fit(matches: Iterable[MatchOutcome], seed: int, resamples: int) -> _BTFit:
    """Fit the data and `resamples` bootstrap resamples of it (whatever the size)."""
    _checked(seed, resamples)
    return _bootstrap_fit(_league(matches), seed, resamples)


def _interval(samples: _FloatArray) -> tuple[_FloatArray, _FloatArray]:
    """The 2.5th and 97.5th percentiles along the resample axis."""
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return low, high


def _wants_bootstrap(league: _League, interval: Interval) -> bool:
    if interval not in ("auto", "bootstrap", "sandwich"):
        raise ValueError(
            f"interval {interval!r} is not a method; use 'auto', 'bootstrap' or 'sandwich'"
        )
    if interval == "auto":
        return bootstrap_is_cheap(len(league.counts.policies), league.counts.matches)
    return interval == "bootstrap"


def bradley_terry(
    matches: Iterable[MatchOutcome],
    *,
    seed: int,
    resamples: int = 1000,
    interval: Interval = "auto",
) -> dict[str, BTRating]:
    """Bradley-Terry ratings on the Elo scale with 95% intervals.

    Maximum likelihood over games, a draw counting half a win for each side,
    fitted from each pair's sums (`PairCounts`). Prior: each policy draws one
    virtual game against a fixed anchor of log-strength 0, so an unbeaten (or
    winless) policy stays finite. Shown as 1500 + (400 / ln 10) * (theta -
    mean theta), the mean over the policies with a rated match (over all when
    none has one), so a policy fitted on the prior alone moves no one else.
    No-contest matches are left out entirely (their played games too, as Elo
    leaves them out), and so are same-author matches; a policy seen only in
    those is fitted on the prior alone.

    The interval (`interval="auto"`: by `bootstrap_is_cheap`):

    - `bootstrap`: the 2.5th..97.5th percentile over `resamples` bootstrap
      resamples of the rated matches (drawn with replacement, a match's games
      together) from `numpy.random.default_rng(seed)`, `seed` being the
      league's master seed;
    - `sandwich`: the fit plus or minus 1.96 standard errors from the
      cluster-robust covariance, the matches the clusters
      (`arena.results.strengths.sandwich_covariance`); `seed` and `resamples` are not used.

    Matches are taken in schedule order first, so the input's order never
    changes a bit of the table.

    `on_prior` (on every rating) marks a policy that won every rated game or
    lost every one, whose rating would be infinite without the prior, or played
    none: its rating and interval say what the prior says, not how far it is
    from the others. A draw counts half a point each way, so a record of draws
    only, or of wins and draws, is bounded and not marked (a draw-only policy
    sits among the policies it drew). The mark reads one policy's record in the
    actual matches: a record of nearly all wins can still draw resamples of all
    wins, which put the top of its interval on the prior.
    """
    _checked(seed, resamples)
    league = _league(matches)
    if not league.shown:
        return {}
    if _wants_bootstrap(league, interval):
        fit = _bootstrap_fit(league, seed, resamples)
        point, (low, high) = fit.point, _interval(fit.resampled)
    else:
        sandwich = SandwichFit.of(league.counts)
        point, (low, high) = sandwich.point, sandwich.intervals(centre(league.counts))
    column = {policy: i for i, policy in enumerate(league.policies)}
    marked = on_prior(league.counts)
    return {
        policy: BTRating(
            float(point[column[policy]]),
            float(low[column[policy]]),
            float(high[column[policy]]),
            marked[column[policy]],
        )
        for policy in league.shown
    }


def bt_difference(
    matches: Iterable[MatchOutcome],
    a: str,
    b: str,
    *,
    seed: int,
    resamples: int = 1000,
    interval: Interval = "auto",
) -> tuple[float, float, float]:
    """The Bradley-Terry rating difference a - b with its 95% interval.

    Same fit and same interval method as `bradley_terry` with the same
    arguments. From the bootstrap, the interval is taken over the
    per-resample differences (paired); from the sandwich, over the
    difference's own variance. Either is narrower than combining the two
    policies' own intervals.
    """
    if a == b:
        raise ValueError(f"bt_difference compares two policies; got {a!r} twice")
    _checked(seed, resamples)
    league = _league(matches)
    for policy in (a, b):
        if policy not in league.shown:
            raise ValueError(
                f"policy {policy!r} plays in none of the matches (known: {', '.join(league.shown)})"
            )
    i, j = league.policies.index(a), league.policies.index(b)
    if _wants_bootstrap(league, interval):
        fit = _bootstrap_fit(league, seed, resamples)
        low, high = _interval(fit.resampled[:, i] - fit.resampled[:, j])
        return float(fit.point[i] - fit.point[j]), float(low), float(high)
    return SandwichFit.of(league.counts).difference(i, j)


def bradley_terry_from_counts(counts: PairCounts) -> dict[str, BTRating]:
    """Bradley-Terry ratings of a league given by its pair sums, with sandwich intervals
    (pair sums hold no single match to resample); policies in `counts`' (name) order."""
    if not counts.policies:
        return {}
    sandwich = SandwichFit.of(counts)
    low, high = sandwich.intervals(centre(counts))
    marked = on_prior(counts)
    return {
        policy: BTRating(float(sandwich.point[k]), float(low[k]), float(high[k]), marked[k])
        for k, policy in enumerate(counts.policies)
    }


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
