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
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import structlog

import games
from arena.config import Config
from arena.league.adaptive import pick_round_from_view, round_view
from arena.league.lineup import retire
from arena.league.schedule import match_seed
from arena.league.store import LeagueStore
from arena.play.match import Match
from arena.record.crash import crash_point
from arena.results.ratings import bradley_terry
from arena.results.standings import GameSummary
from arena.results.tables import match_outcomes

if TYPE_CHECKING:
    from arena.league.plan import RunPlan

log = structlog.get_logger("arena.league.rounds")

__all__ = ["AdaptiveRounds", "PoolRounds", "kth_match"]


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


class PoolRounds:
    """One session's schedule of a pool, a round at a time (see the module docstring); the
    same interface as the adaptive league's `AdaptiveRounds`."""

    def __init__(self, plan: RunPlan, store: LeagueStore, session: int) -> None:
        run = plan.config.run
        self.plan, self.store, self.session = plan, store, session
        self.entry = run.games[0]
        self.target = run.target
        self.k = run.round_matches
        self.cap = run.matches
        self.placement = min(run.placement_matches, run.matches)
        if not store.scheduled_matches():
            store.adopt_league()  # a league become a pool: its matches keep their places
        self._earlier = store.scheduled_matches()
        self.index = max((m.index for m in self._earlier), default=-1) + 1
        """The sequence number of the next match scheduled."""
        self.played: Counter[tuple[str, str]] = Counter((m.first, m.second) for m in self._earlier)
        self.probability = 0.0
        """The active entrants' ranking's probability of being right before the last round."""
        self.placed = 0
        """Placement matches scheduled in this session."""
        self.retired: list[str] = []
        """Entrants the roster rule retired in this session."""

    def next_round(self, stored: Iterable[GameSummary]) -> list[Match] | str:
        """The next round's matches, stored before they are returned, or why none follows.
        The first round of a session is every match scheduled before it (what a killed
        session left unplayed is played; the rest is skipped as finished)."""
        if self._earlier:
            earlier, self._earlier = self._earlier, []
            return earlier
        games_so_far = list(stored)
        order, active = self._entrants()
        placement = self._placement(list(itertools.combinations(active, 2)))
        if placement:
            self.placed += len(placement)
            return self._schedule(placement, "placement")
        crash_point("placed")
        active = self._roster(games_so_far, order, active)
        rated_elsewhere = [p for p in order if p not in active]
        view = round_view(
            match_outcomes(games_so_far), active, seed=self.plan.master_seed, others=rated_elsewhere
        )
        self.probability = view.probability
        if view.probability >= self.target:
            return (
                f"the ranking of the {len(active)} active entrants is right with probability "
                f"{view.probability:.3f} (target {self.target:g})"
            )
        played = {pair: self.played[pair] for pair in itertools.combinations(active, 2)}
        pairs = pick_round_from_view(view, played, k=self.k, cap=self.cap)
        if not pairs:
            return f"every pair of active entrants has played its {self.cap} matches (run.matches)"
        return self._schedule(pairs, "round")

    def _entrants(self) -> tuple[list[str], list[str]]:
        """Every entrant in the order the pool first stored it, and the active ones."""
        rows = self.store.entrants()
        order = [e["name"] for e in rows if e["name"] in self.plan.config.policies]
        active = [e["name"] for e in rows if e["name"] in order and e["retired"] is None]
        return order, active

    def _placement(self, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Each pair of active entrants still short of `placement` matches, topped up: by
        level (every such pair's next match, then the one after), in entrant order."""
        counts = {pair: self.played[pair] for pair in pairs}
        picks = []
        for level in range(self.placement):
            for pair in pairs:
                if counts[pair] == level:
                    picks.append(pair)
                    counts[pair] += 1
        return picks

    def _roster(self, stored: list[GameSummary], order: list[str], active: list[str]) -> list[str]:
        """The roster rule: an author past `roster_cap` active entrants loses the lowest
        rated one (ties: the earliest added; never one without a rated match)."""
        cap = self.plan.config.run.roster_cap
        if cap is None:
            return active
        outcomes = match_outcomes(stored)
        rated = {p for m in outcomes if m.rated for p in (m.first, m.second)}
        ratings = bradley_terry(outcomes, seed=self.plan.master_seed, resamples=1)
        config = self.plan.config
        authors = {
            name: self.plan.authors.get(name, spec.author) for name, spec in config.policies.items()
        }
        for author in sorted({a for n in active if (a := authors[n])}):
            mine = [n for n in active if authors[n] == author]
            while len(mine) > cap:
                candidates = [n for n in mine if n in rated and n in ratings]
                if not candidates:
                    break
                lowest = min(candidates, key=lambda n: (ratings[n].rating, order.index(n)))
                why = (
                    f"roster: author {author!r} had {len(mine)} active entrants (roster_cap = "
                    f"{cap}); {lowest!r} rated lowest ({ratings[lowest].rating:.0f})"
                )
                retire(self.plan.out, self.store, lowest, why, self.session)
                self.retired.append(lowest)
                mine.remove(lowest)
                active = [n for n in active if n != lowest]
        return active

    def _schedule(self, pairs: list[tuple[str, str]], phase: str) -> list[Match]:
        """The pairs' next matches, numbered and stored before any of them starts."""
        out = []
        for first, second in pairs:
            self.played[(first, second)] += 1
            k = self.played[(first, second)]
            out.append(kth_match(self.index, self.plan.master_seed, self.entry, k, first, second))
            self.index += 1
        self.store.schedule(out, self.session, phase)
        crash_point("scheduled")
        log.info("pool_scheduled", phase=phase, matches=len(out), first_index=out[0].index,
                 ranking_probability=round(self.probability, 4))  # fmt: skip
        return out

    def to_json(self) -> dict[str, Any]:
        """What summary.json shows: the target, the ranking's probability before the last
        round, the matches scheduled so far, this session's placement matches and the
        entrants the roster rule retired."""
        return {
            "target": self.target, "probability": self.probability, "matches": self.index,
            "placement_matches": self.placed, "retired_by_roster": self.retired,
        }  # fmt: skip
