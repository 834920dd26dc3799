"""Who plays whom, on which seed, in which order (SPEC 1).

The k-th match of every pair on a game entry uses the same seed, so every pair
faces the same positions; the schedule order is the order ratings are applied
in, whatever order the matches happen to finish in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import games

__all__ = ["Episode", "Match", "aliases", "match_seed", "resolve_entry", "schedule"]

# Games whose two games of a match form one episode (one replay, one job).
PAIRED_EPISODES = frozenset({"battle", "backgammon"})


def match_seed(master: int, entry: str, k: int) -> int:
    """SPEC 1: the seed of the k-th match of every pair on game entry `entry`."""
    digest = hashlib.sha256(f"{master}:{entry}:{k}".encode()).hexdigest()
    return int(digest[:8], 16) % 2**31 or 1


def resolve_entry(entry: str, seed: int) -> str:
    """The concrete game an entry stands for under `seed` (`rotate` resolves by seed)."""
    return games.resolve_rotation(seed) if entry == "rotate" else entry


@dataclass(frozen=True, slots=True)
class Match:
    """Two games on one seed with the policies' seats swapped."""

    index: int
    """Position in the schedule, from 0; ratings follow it."""
    entry: str
    game: str
    k: int
    seed: int
    first: str
    second: str

    @property
    def id(self) -> str:
        """Stable, readable and unique within a run."""
        return f"{self.entry}-k{self.k}-{self.first}-vs-{self.second}"

    def episodes(self) -> tuple[Episode, ...]:
        """The jobs this match is played as: one per game, or one for both."""
        if self.game in PAIRED_EPISODES:
            return (Episode(self, (1, 2)),)
        return (Episode(self, (1,)), Episode(self, (2,)))


@dataclass(frozen=True, slots=True)
class Episode:
    """One job for a worker: the games of a match that share one replay."""

    match: Match
    game_indices: tuple[int, ...]

    @property
    def id(self) -> str:
        """Unique within a run; also the replay's file stem."""
        suffix = "" if len(self.game_indices) > 1 else f"-g{self.game_indices[0]}"
        return f"{self.match.id}{suffix}"

    def seats(self, game_index: int) -> tuple[str, str]:
        """Policy names at seats 0 and 1: the match's first policy is seat 0 in game 1."""
        m = self.match
        return (m.first, m.second) if game_index == 1 else (m.second, m.first)


def schedule(master: int, entries: list[str], matches: int, policies: list[str]) -> Iterator[Match]:
    """SPEC 1's order: per entry, per k, per pair (i < j, config order), policy i first."""
    index = 0
    for entry in entries:
        for k in range(1, matches + 1):
            seed = match_seed(master, entry, k)
            game = resolve_entry(entry, seed)
            for i, first in enumerate(policies):
                for second in policies[i + 1 :]:
                    yield Match(index, entry, game, k, seed, first, second)
                    index += 1


def aliases(game: str, seed: int, game_index: int = 1) -> tuple[str, str]:
    """The names of seats 0 and 1 inside game `game_index` of a match (SPEC 1).

    Board games: `cog-XXXX` from the seed. The battle's Alpha follows the
    match's first policy, and backgammon's colour swaps, so both swap seats in
    game 2; Stratego's Red is always seat 0.
    """
    swapped = game_index == 2
    if game == "battle":
        return ("Bravo", "Alpha") if swapped else ("Alpha", "Bravo")
    if game == "backgammon":
        return ("WHITE", "BLACK") if swapped else ("BLACK", "WHITE")
    if game == "stratego":
        return ("Red", "Blue")
    first = hashlib.sha256(f"{seed}:0".encode()).hexdigest()[:4]
    digest = hashlib.sha256(f"{seed}:1".encode()).hexdigest()
    second = digest[:4] if digest[:4] != first else digest[4:8]
    return (f"cog-{first}", f"cog-{second}")
