"""Who plays whom, on which seed, in which order (docs/rules.md#matches-and-seeds).

The k-th match of every pair on a game entry uses the same seed, so every pair
faces the same positions; the schedule order is the order ratings are applied
in, whatever order the matches happen to finish in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import games
from arena.play.match import Match

__all__ = ["kth_match", "match_seed", "schedule"]


def match_seed(master: int, entry: str, k: int) -> int:
    """The seed of the k-th match of every pair on game entry `entry`."""
    digest = hashlib.sha256(f"{master}:{entry}:{k}".encode()).hexdigest()
    return int(digest[:8], 16) % 2**31 or 1


def schedule(master: int, entries: list[str], matches: int, policies: list[str]) -> Iterator[Match]:
    """The schedule's order: per entry, per k, per pair (i < j, config order), policy i first."""
    index = 0
    for entry in entries:
        for k in range(1, matches + 1):
            seed = match_seed(master, entry, k)
            game = games.resolve_entry(entry, seed)
            per_episode = games.load(game).match_format.games_per_episode
            for i, first in enumerate(policies):
                for second in policies[i + 1 :]:
                    yield Match(index, entry, game, k, seed, first, second, per_episode)
                    index += 1


def kth_match(index: int, master_seed: int, entry: str, k: int, first: str, second: str) -> Match:
    """The k-th match of the pair (`first`, `second`) on `entry`, at schedule position
    `index`: on the k-th match seed, so every pair's k-th match meets the same positions."""
    seed = match_seed(master_seed, entry, k)
    game = games.resolve_entry(entry, seed)
    per_episode = games.load(game).match_format.games_per_episode
    return Match(index, entry, game, k, seed, first, second, per_episode)
