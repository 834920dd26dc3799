"""The adaptive schedule (`schedule = "adaptive"`): how sure the ranking is, which pairs
play next, and the rounds of a run (`AdaptiveRounds`).

An adaptive league plays in rounds. Before each round the run loop asks two
questions of the complete matches so far, both answered from one set of samples
of the strengths: where the bootstrap is cheap (`ratings.bootstrap_is_cheap`),
the bootstrap `ratings.bradley_terry` draws with the league's master seed; beyond,
draws from a normal around the fit with the by-match sandwich covariance (the
interval `bradley_terry` gives at that size), so a round costs seconds at 1,000
policies where 1,000 refits would cost minutes:

- `ranking_probability`: the share of samples whose whole ranking (every
  policy ordered by Bradley-Terry rating) is the point estimate's ranking. The
  league stops once this reaches its target.
- `pick_round`: the next round's pairs. First a round robin in config order,
  every pair once; then the pairs whose order the samples agree on least.

`round_view` draws the samples once and `pick_round_from_view` picks from
it, so a loop that asks both questions each round fits the league once.

Matches are picked `round_matches` at a time. Round r is a pure function of the
master seed and the complete matches of rounds before r, so a resumed run picks
the very same rounds. The k-th match of a pair uses the k-th match seed of its
games entry, as in a round robin (`schedule.kth_match`), so results stay
comparable; no pair plays more than `matches` matches, so an adaptive run never
plays more than the round robin of its config. A standing pool's rounds are the
pool's own (`league.pool.PoolRounds`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from arena.league.schedule import kth_match
from arena.play.match import Match
from arena.results.ratings import (
    Interval,
    MatchOutcome,
    _bootstrap_fit,
    _checked,
    _League,
    _league,
    _wants_bootstrap,
)
from arena.results.strengths import fit_pairs, sandwich_covariance
from arena.results.tables import match_outcomes

if TYPE_CHECKING:
    import numpy.typing as npt

    from arena.config import Config
    from arena.results.standings import GameSummary

    _FloatArray = npt.NDArray[np.float64]
    _IntArray = npt.NDArray[np.int64]
    _BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "AdaptiveRounds",
    "Pair",
    "RoundView",
    "pick_round",
    "pick_round_from_view",
    "ranking_probability",
    "round_view",
]

Pair = tuple[str, str]
"""Two policies in config order."""


@dataclass(frozen=True, slots=True)
class RoundView:
    """What one set of samples of the strengths (bootstrap or sandwich; see `round_view`)
    says about the ranking."""

    policies: tuple[str, ...]
    """The league's policies in config order."""
    ranking: tuple[str, ...]
    """The policies by point-estimate Bradley-Terry rating, best first (ties: config order)."""
    probability: float
    """The share of samples ranking every policy as `ranking` does (0.0 while any policy
    has no rated match)."""
    uncertainty: Mapping[Pair, float]
    """Per pair (config order): min(P(first above second), P(second above first)): over
    the bootstrap resamples, a tie counting half each way, or the sandwich normal's own;
    0.5 when either has no rated match."""


def _check_policies(
    matches: Sequence[MatchOutcome], policies: Sequence[str], others: Sequence[str] = ()
) -> None:
    """Refuse duplicate policies and matches naming a policy the league does not have."""
    if len(set(policies)) != len(policies):
        raise ValueError(f"a policy is listed twice in {list(policies)}: list each once")
    if len(policies) < 2:
        raise ValueError(f"a league ranks at least two policies, got {list(policies)}")
    known = {*policies, *others}
    for match in matches:
        for policy in (match.first, match.second):
            if policy not in known:
                raise ValueError(
                    f"match {match.index} names policy {policy!r}, which is not in the "
                    f"league (known: {', '.join(policies)}); pass the league's own matches"
                )


class _PairTable(Mapping[Pair, float]):
    """Per pair of policies (config order), one float: `combinations(policies, 2)` as one
    array, read as a mapping without a dict of every pair."""

    def __init__(self, policies: Sequence[str], values: _FloatArray) -> None:
        self._position = {policy: i for i, policy in enumerate(policies)}
        self._size = len(policies)
        self.array = values
        """Shape (pairs,), in `itertools.combinations` order."""

    def _index(self, pair: Pair) -> int:
        i, j = self._position[pair[0]], self._position[pair[1]]
        if i >= j:
            raise KeyError(pair)
        return i * self._size - i * (i + 1) // 2 + (j - i - 1)

    def __getitem__(self, pair: Pair) -> float:
        return float(self.array[self._index(pair)])

    def __iter__(self) -> Iterator[Pair]:
        return itertools.combinations(self._position, 2)

    def __len__(self) -> int:
        return len(self.array)


_PAIRS_AT_ONCE = 1 << 14
"""Pairs compared over every resample at once (a bounded (resamples, pairs) array)."""
_DRAWN_CELLS = 1 << 20
"""At most this many strengths drawn from the sandwich's normal at once."""


def _shares_from_resamples(resampled: _FloatArray) -> _FloatArray:
    """Per pair i < j (combinations order): the share of resamples with i above j, a tie
    counting half."""
    first, second = np.triu_indices(resampled.shape[1], 1)
    shares = np.empty(len(first))
    for start in range(0, len(first), _PAIRS_AT_ONCE):
        i, j = first[start : start + _PAIRS_AT_ONCE], second[start : start + _PAIRS_AT_ONCE]
        a, b = resampled[:, i], resampled[:, j]
        # Halves and ones sum exactly in any order: the shares are the loop's to the bit.
        shares[start : start + len(i)] = np.mean((a > b) + 0.5 * (a == b), axis=0)
    return shares


def _in_order(drawn: _FloatArray, order: _IntArray) -> _BoolArray:
    """Per row of `drawn`: a stable descending sort of it gives `order`."""
    upper, lower = drawn[:, order[:-1]], drawn[:, order[1:]]
    tie_ok = order[:-1] < order[1:]
    return np.all((upper > lower) | ((upper == lower) & tie_ok), axis=1)  # type: ignore[no-any-return]


def _bootstrap_view(
    league: _League, columns: list[int], seed: int, resamples: int
) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    """The point ratings, the pair shares and the per-resample ranking agreement, from
    `resamples` bootstrap resamples (`bradley_terry`'s with `seed`)."""
    fit = _bootstrap_fit(league, seed, resamples)
    point = fit.point[columns]
    resampled = fit.resampled[:, columns]
    order = np.argsort(-point, kind="stable")
    orders = np.argsort(-resampled, axis=1, kind="stable")
    return point, _shares_from_resamples(resampled), np.all(orders == order, axis=1)


def _normal_cdf(z: _FloatArray) -> _FloatArray:
    """The standard normal's distribution function at each of `z` (NaN stays NaN)."""
    erf = np.fromiter((math.erf(x) for x in (z / math.sqrt(2.0)).tolist()), np.float64, len(z))
    return 0.5 * (1.0 + erf)


def _sandwich_view(
    league: _League, columns: list[int], seed: int, resamples: int
) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    """As `_bootstrap_view`, the strengths drawn from N(fit, sandwich covariance) instead:
    each pair's share is the normal's own P(i above j); the ranking's agreement is read
    from `resamples` draws by `default_rng(seed)`, a bounded batch at a time."""
    counts = league.counts
    theta = fit_pairs(counts)
    inverse, spread = sandwich_covariance(counts, theta)
    full = inverse @ spread @ inverse
    covariance = 0.5 * (full + full.T)[np.ix_(columns, columns)]
    point = theta[columns]
    first, second = np.triu_indices(len(columns), 1)
    variance = covariance[first, first] + covariance[second, second] - 2 * covariance[first, second]
    gap = point[first] - point[second]
    spread_of_gap = np.sqrt(np.maximum(variance, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(
            spread_of_gap > 0, _normal_cdf(gap / spread_of_gap), 0.5 + 0.5 * np.sign(gap)
        )
    values, vectors = np.linalg.eigh(covariance)
    factor = vectors * np.sqrt(np.maximum(values, 0.0))
    order = np.argsort(-point, kind="stable")
    rng = np.random.default_rng(seed)
    at_once = max(1, _DRAWN_CELLS // max(len(columns), 1))
    agree = np.empty(resamples, dtype=bool)
    for start in range(0, resamples, at_once):
        batch = min(at_once, resamples - start)
        drawn = point + rng.standard_normal((batch, len(columns))) @ factor.T
        agree[start : start + batch] = _in_order(drawn, order)
    return point, shares, agree


def round_view(
    matches: Sequence[MatchOutcome],
    policies: Sequence[str],
    *,
    seed: int,
    resamples: int = 1000,
    others: Sequence[str] = (),
    interval: Interval = "auto",
) -> RoundView:
    """Fit the matches once and draw `resamples` samples of the strengths; see `RoundView`.

    Where the bootstrap is cheap (`ratings.bootstrap_is_cheap`, or `interval="bootstrap"`)
    the samples are `bradley_terry`'s bootstrap resamples with the same seed and count.
    Beyond (or `interval="sandwich"`) they are drawn from a normal around the fit with the
    by-match sandwich covariance, and each pair's probability is that normal's own. Either
    way the answer is deterministic: same matches, seed and resamples, same view.
    `others` are policies whose matches take part in the fit but which are
    neither ranked nor picked (a pool's retired entrants).
    """
    _check_policies(matches, policies, others)
    _checked(seed, resamples)
    league = _league(matches)
    rated = {p for match in matches if match.rated for p in (match.first, match.second)}
    size = len(policies)
    if not rated:
        halves = np.full(size * (size - 1) // 2, 0.5)
        return RoundView(tuple(policies), tuple(policies), 0.0, _PairTable(policies, halves))
    draw = _bootstrap_view if _wants_bootstrap(league, interval) else _sandwich_view
    # Columns in config order: a stable sort then breaks exact ties by config order. A
    # policy with no match at all takes any column; it is unrated, so never read.
    fitted = {policy: c for c, policy in enumerate(league.policies)}
    columns = [fitted.get(p, 0) for p in policies]
    point, shares, agree = draw(league, columns, seed, resamples)
    unrated = np.array([p not in rated for p in policies])
    point = np.where([p in fitted for p in policies], point, np.nan)
    ranking = tuple(policies[i] for i in np.argsort(-point, kind="stable"))
    probability = 0.0 if unrated.any() else float(np.mean(agree))
    first, second = np.triu_indices(size, 1)
    uncertainty = np.where(unrated[first] | unrated[second], 0.5, np.minimum(shares, 1.0 - shares))
    return RoundView(tuple(policies), ranking, probability, _PairTable(policies, uncertainty))


def ranking_probability(
    matches: Sequence[MatchOutcome], policies: Sequence[str], *, seed: int, resamples: int = 1000
) -> float:
    """The probability that the whole Bradley-Terry ranking is right.

    The share of `round_view`'s `resamples` samples (where the bootstrap is cheap, those
    `bradley_terry` draws with `seed`) whose ranking of all `policies` equals the point
    estimate's. 0.0 with no rated match, or while any policy has none.
    """
    return round_view(matches, policies, seed=seed, resamples=resamples).probability


def _check_round(k: int, cap: int) -> None:
    if k < 0:
        raise ValueError(f"k is the matches of a round, >= 0, got {k}")
    if cap < 1:
        raise ValueError(f"cap is the most matches a pair plays, >= 1, got {cap}")


def _played_array(played: Mapping[Pair, int], policies: Sequence[str]) -> _IntArray:
    """Matches per pair (combinations order); a key in the other order counts for its pair."""
    position = {policy: i for i, policy in enumerate(policies)}
    size = len(policies)
    counts = np.zeros(size * (size - 1) // 2, dtype=np.int64)
    for (a, b), n in played.items():
        if a not in position or b not in position or a == b:
            raise ValueError(
                f"played counts pair ({a!r}, {b!r}), which is not a pair of the league "
                f"(policies: {', '.join(policies)})"
            )
        if n < 0:
            raise ValueError(f"played[({a!r}, {b!r})] = {n}: a count of matches is >= 0")
        i, j = sorted((position[a], position[b]))
        counts[i * size - i * (i + 1) // 2 + (j - i - 1)] += n
    return counts


def _uncertainty_array(view: RoundView) -> _FloatArray:
    if isinstance(view.uncertainty, _PairTable):
        return view.uncertainty.array
    pairs = itertools.combinations(view.policies, 2)
    return np.array([view.uncertainty[pair] for pair in pairs], dtype=np.float64)


def pick_round_from_view(
    view: RoundView, played: Mapping[Pair, int], *, k: int, cap: int
) -> list[Pair]:
    """The next round's pairs from an already drawn `view`; see `pick_round`."""
    _check_round(k, cap)
    counts = _played_array(played, view.policies)
    first, second = np.triu_indices(len(view.policies), 1)
    picks = np.zeros_like(counts)
    # A round robin first: every pair once, in config order.
    chosen = [int(n) for n in np.flatnonzero(counts == 0)[:k]]
    picks[chosen] = 1
    left = k - len(chosen)
    if left > 0:
        # Greedy by weight u / (1 + picks): only the `left` best pairs by today's key can be
        # picked (one of them unpicked would beat any other), so a heap of those decides.
        uncertainty = _uncertainty_array(view)
        open_pairs = np.flatnonzero(counts + picks < cap)
        weight = -uncertainty[open_pairs] / (1 + picks[open_pairs])
        taken = counts[open_pairs] + picks[open_pairs]
        best = open_pairs[np.lexsort((open_pairs, taken, weight))[:left]]
        heap = [
            (float(-uncertainty[n] / (1 + picks[n])), int(counts[n] + picks[n]), int(n))
            for n in best
        ]
        heapq.heapify(heap)
        while left > 0 and heap:
            _, _, n = heapq.heappop(heap)
            chosen.append(n)
            picks[n] += 1
            left -= 1
            if counts[n] + picks[n] < cap:
                entry = (float(-uncertainty[n] / (1 + picks[n])), int(counts[n] + picks[n]), n)
                heapq.heappush(heap, entry)
    policies = view.policies
    return [(policies[first[n]], policies[second[n]]) for n in chosen]


def pick_round(
    matches: Sequence[MatchOutcome],
    policies: Sequence[str],
    played: Mapping[Pair, int],
    *,
    k: int,
    cap: int,
    seed: int,
    resamples: int = 1000,
) -> list[Pair]:
    """The next round: at most `k` pairs (first, second in config order), a pure function.

    `played[(a, b)]` is the matches the pair has played (or started) so far; no
    pair is picked beyond `cap` matches, so a round holds fewer than `k` pairs
    once the caps run out, and none when every pair is at its cap.

    Criterion. While some pair has never played, those pairs come first, in
    config order, so the first rounds are a round robin. The rest of the round
    goes by uncertainty: each pair's weight is u = min(P(a above b), P(b above
    a)) over the samples of `ranking_probability` (0.5 when either
    has no rated match), largest for the neighbours in the ranking whose order
    is open, near 0 for settled ones. Picks go greedily to the largest weight,
    a pair's weight divided by (1 + its picks this round), so a very uncertain
    pair can take several matches of a round while a round spreads over
    pairs of similar doubt. Ties: fewer matches (played and picked) first,
    then config order. The pairs come in pick order.
    """
    _check_round(k, cap)
    _check_policies(matches, policies)
    counts = _played_array(played, policies)
    unplayed = np.flatnonzero(counts == 0)
    if len(unplayed) >= k:
        # The round robin fills the round: no fit needed.
        first, second = np.triu_indices(len(policies), 1)
        return [(policies[first[n]], policies[second[n]]) for n in unplayed[:k]]
    view = round_view(matches, policies, seed=seed, resamples=resamples)
    return pick_round_from_view(view, played, k=k, cap=cap)


class AdaptiveRounds:
    """The rounds of one adaptive run, picked one after the other."""

    def __init__(self, config: Config, master_seed: int) -> None:
        run = config.run
        self.entry = run.games[0]
        self.policies = list(config.policies)
        self.master_seed = master_seed
        self.k = run.round_matches
        self.cap = run.matches
        self.target = run.target
        self.index = 0
        """The schedule index the next round starts at."""
        self.played: Counter[tuple[str, str]] = Counter()
        self.probability = 0.0
        """The ranking's probability of being right before the last round picked."""

    def next_round(self, stored: Iterable[GameSummary]) -> list[Match] | str:
        """The next round's matches, from the stored games of earlier rounds (later ones are
        left out, so a resumed run picks as the first session did), or why none follows."""
        earlier = [g for g in stored if g.match_index < self.index]
        view = round_view(match_outcomes(earlier), self.policies, seed=self.master_seed)
        self.probability = view.probability
        if view.probability >= self.target:
            return (
                f"the ranking is right with probability {view.probability:.3f} "
                f"(target {self.target:g}) after {self.index} matches"
            )
        pairs = pick_round_from_view(view, self.played, k=self.k, cap=self.cap)
        if not pairs:
            return f"every pair has played its {self.cap} matches (run.matches)"
        out = []
        for first, second in pairs:
            self.played[(first, second)] += 1
            k = self.played[(first, second)]
            out.append(kth_match(self.index, self.master_seed, self.entry, k, first, second))
            self.index += 1
        return out

    def to_json(self) -> dict[str, float | int]:
        """What summary.json shows: the target, the ranking's probability before the last
        round picked (or at the stop), and the matches scheduled."""
        return {"target": self.target, "probability": self.probability, "matches": self.index}
