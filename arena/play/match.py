"""A match: two games on one seed with the policies' seats swapped, and the episodes it is
played as (docs/rules.md#matches-and-seeds).

A game's match format says whether each game of a match is its own episode
(the board games, Stratego) or both are one (the battle, whose clock spans
both, and a backgammon card). The episode is the unit a worker plays and a
replay records.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Episode", "Match"]


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
    games_per_episode: int = 1
    """From the game's match format: 1, each game its own episode; 2, both in one."""

    @property
    def id(self) -> str:
        """Stable, readable and unique within a run."""
        return f"{self.entry}-k{self.k}-{self.first}-vs-{self.second}"

    def episodes(self) -> tuple[Episode, ...]:
        """The jobs this match is played as: one per game, or one for both."""
        if self.games_per_episode == 2:
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
