"""The adaptive schedule (`schedule = "adaptive"`): how sure the ranking is, which pairs
play next, and the rounds of a run (`AdaptiveRounds`).

An adaptive league plays in rounds. Before each round the run loop asks two
questions of the complete matches so far, both answered from one bootstrap,
the one `ratings.bradley_terry` draws with the league's master seed:

- `ranking_probability`: the share of bootstrap resamples whose whole ranking
  (every policy ordered by Bradley-Terry rating) is the point estimate's
  ranking. The league stops once this reaches its target.
- `pick_round`: the next round's pairs. First a round robin in config order,
  every pair once; then the pairs whose order the resamples agree on least.

`round_view` draws the bootstrap once and `pick_round_from_view` picks from
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

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from arena.league.schedule import kth_match
from arena.play.match import Match
from arena.results.ratings import MatchOutcome, _bt_fit
from arena.results.tables import match_outcomes

if TYPE_CHECKING:
    from arena.config import Config
    from arena.results.standings import GameSummary

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
    """What one bootstrap of the complete matches says about the ranking."""

    policies: tuple[str, ...]
    """The league's policies in config order."""
    ranking: tuple[str, ...]
    """The policies by point-estimate Bradley-Terry rating, best first (ties: config order)."""
    probability: float
    """The share of resamples ranking every policy as `ranking` does (0.0 while any policy
    has no rated match)."""
    uncertainty: Mapping[Pair, float]
    """Per pair (config order): min(P(first above second), P(second above first)) over
    the resamples, a tie counting half each way; 0.5 when either has no rated match."""


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


def round_view(
    matches: Sequence[MatchOutcome],
    policies: Sequence[str],
    *,
    seed: int,
    resamples: int = 1000,
    others: Sequence[str] = (),
) -> RoundView:
    """Fit the matches and `resamples` bootstrap resamples once; see `RoundView`.

    The resamples are `bradley_terry`'s with the same seed and count, so the
    answer is deterministic: same matches, seed and resamples, same view.
    `others` are policies whose matches take part in the fit but which are
    neither ranked nor picked (a pool's retired entrants).
    """
    _check_policies(matches, policies, others)
    fit = _bt_fit(matches, seed, resamples)
    rated = {p for match in matches if match.rated for p in (match.first, match.second)}
    pairs = list(itertools.combinations(policies, 2))
    if not rated:
        return RoundView(tuple(policies), tuple(policies), 0.0, dict.fromkeys(pairs, 0.5))
    # Columns in config order: a stable sort then breaks exact ties by config order.
    columns = [fit.policies.index(p) if p in fit.policies else -1 for p in policies]
    point = np.array([fit.point[c] if c >= 0 else np.nan for c in columns])
    resampled = np.stack(
        [fit.resampled[:, c] if c >= 0 else np.full(resamples, np.nan) for c in columns], axis=1
    )
    order = np.argsort(-point, kind="stable")
    ranking = tuple(policies[i] for i in order)
    everyone_rated = all(p in rated for p in policies)
    if everyone_rated:
        orders = np.argsort(-resampled, axis=1, kind="stable")
        probability = float(np.mean(np.all(orders == order, axis=1)))
    else:
        probability = 0.0
    uncertainty: dict[Pair, float] = {}
    for (i, a), (j, b) in itertools.combinations(enumerate(policies), 2):
        if a not in rated or b not in rated:
            uncertainty[(a, b)] = 0.5
            continue
        above = resampled[:, i] > resampled[:, j]
        tied = resampled[:, i] == resampled[:, j]
        share = float(np.mean(above + 0.5 * tied))
        uncertainty[(a, b)] = min(share, 1.0 - share)
    return RoundView(tuple(policies), ranking, probability, uncertainty)


def ranking_probability(
    matches: Sequence[MatchOutcome], policies: Sequence[str], *, seed: int, resamples: int = 1000
) -> float:
    """The probability that the whole Bradley-Terry ranking is right, by the bootstrap.

    The share of `resamples` bootstrap resamples (those `bradley_terry` draws
    with `seed`) whose ranking of all `policies` equals the point estimate's.
    0.0 with no rated match, or while any policy has none.
    """
    return round_view(matches, policies, seed=seed, resamples=resamples).probability


def _played(played: Mapping[Pair, int], policies: Sequence[str]) -> dict[Pair, int]:
    """Matches per pair in config order; a key in the other order counts for its pair."""
    position = {policy: i for i, policy in enumerate(policies)}
    counts = dict.fromkeys(itertools.combinations(policies, 2), 0)
    for (a, b), n in played.items():
        if a not in position or b not in position or a == b:
            raise ValueError(
                f"played counts pair ({a!r}, {b!r}), which is not a pair of the league "
                f"(policies: {', '.join(policies)})"
            )
        if n < 0:
            raise ValueError(f"played[({a!r}, {b!r})] = {n}: a count of matches is >= 0")
        pair = (a, b) if position[a] < position[b] else (b, a)
        counts[pair] += n
    return counts


def _check_round(k: int, cap: int) -> None:
    if k < 0:
        raise ValueError(f"k is the matches of a round, >= 0, got {k}")
    if cap < 1:
        raise ValueError(f"cap is the most matches a pair plays, >= 1, got {cap}")


def pick_round_from_view(
    view: RoundView, played: Mapping[Pair, int], *, k: int, cap: int
) -> list[Pair]:
    """The next round's pairs from an already drawn `view`; see `pick_round`."""
    _check_round(k, cap)
    counts = _played(played, view.policies)
    pairs = list(counts)
    picks: dict[Pair, int] = dict.fromkeys(pairs, 0)
    chosen: list[Pair] = []
    # A round robin first: every pair once, in config order.
    for pair in pairs:
        if len(chosen) == k:
            return chosen
        if counts[pair] == 0:
            chosen.append(pair)
            picks[pair] += 1
    while len(chosen) < k:
        open_pairs = [(n, pair) for n, pair in enumerate(pairs) if counts[pair] + picks[pair] < cap]
        if not open_pairs:
            break
        _, best = min(
            open_pairs,
            key=lambda entry: (
                -view.uncertainty[entry[1]] / (1 + picks[entry[1]]),
                counts[entry[1]] + picks[entry[1]],
                entry[0],
            ),
        )
        chosen.append(best)
        picks[best] += 1
    return chosen


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
    a)) over the bootstrap resamples of `ranking_probability` (0.5 when either
    has no rated match), largest for the neighbours in the ranking whose order
    is open, near 0 for settled ones. Picks go greedily to the largest weight,
    a pair's weight divided by (1 + its picks this round), so a very uncertain
    pair can take several matches of a round while a round spreads over
    pairs of similar doubt. Ties: fewer matches (played and picked) first,
    then config order. The pairs come in pick order.
    """
    _check_round(k, cap)
    _check_policies(matches, policies)
    counts = _played(played, policies)
    if sum(1 for n in counts.values() if n == 0) >= k:
        # The round robin fills the round: no bootstrap needed.
        return [pair for pair, n in counts.items() if n == 0][:k]
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
