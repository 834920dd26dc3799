"""The adaptive schedule (`schedule = "adaptive"`): rounds picked from earlier results.

Matches are picked `round_matches` at a time. Round r is a pure function of the
master seed and the complete matches of rounds before r (`league.adaptive`:
first every pair once, then the pairs whose order in the Bradley-Terry ranking
the bootstrap is least sure of), so a resumed run picks the very same rounds.
The k-th match of a pair uses the k-th match seed of its games entry, as in a
round robin, so results stay comparable; no pair plays more than `matches`
matches, so an adaptive run never plays more than the round robin of its config.

Before each round the schedule asks whether the whole ranking is right with
probability `target` (the share of the ratings' bootstrap resamples that rank
every policy as the point estimate does); once it is, no new round starts.
A standing pool's rounds are the pool's own (`league.pool.PoolRounds`); they
share `kth_match`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import games
from arena.config import Config
from arena.league.adaptive import pick_round_from_view, round_view
from arena.league.schedule import match_seed
from arena.play.match import Match
from arena.results.standings import GameSummary
from arena.results.tables import match_outcomes

__all__ = ["AdaptiveRounds", "kth_match"]


def kth_match(index: int, master_seed: int, entry: str, k: int, first: str, second: str) -> Match:
    """The k-th match of the pair (`first`, `second`) on `entry`, at schedule position
    `index`: on the k-th match seed, so every pair's k-th match meets the same positions."""
    seed = match_seed(master_seed, entry, k)
    game = games.resolve_entry(entry, seed)
    per_episode = games.load(game).match_format.games_per_episode
    return Match(index, entry, game, k, seed, first, second, per_episode)


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
