"""A match: two games on one seed with the policies' seats swapped, and the episodes it is
played as (docs/rules.md#matches-and-seeds).

A game's match format says whether each game of a match is its own episode
(the board games, Stratego) or both are one (the battle, whose clock spans
both, and a backgammon card). The episode is the unit a worker plays and a
replay records.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REPLAY_MARK", "Episode", "Match", "replay_number"]

REPLAY_MARK = "~replay"
"""How the id of an episode played again (its first play a no-contest) ends: `~replay1`."""


def replay_number(episode_id: str) -> int:
    """0 for an episode's first play, n for its n-th replay (`...~replay<n>`)."""
    _, mark, number = episode_id.rpartition(REPLAY_MARK)
    return int(number) if mark and number.isdigit() else 0


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
    replay: int = 0
    """0 for the first play; n for the n-th time it is played again after a no-contest
    the infrastructure caused (docs/rules.md#validity)."""

    @property
    def base_id(self) -> str:
        """The id of the episode's first play: every replay of it shares it."""
        suffix = "" if len(self.game_indices) > 1 else f"-g{self.game_indices[0]}"
        return f"{self.match.id}{suffix}"

    @property
    def id(self) -> str:
        """Unique within a run; also the replay's file stem."""
        return self.base_id + (f"{REPLAY_MARK}{self.replay}" if self.replay else "")

    def again(self) -> Episode:
        """The same episode, to be played once more."""
        return Episode(self.match, self.game_indices, self.replay + 1)

    def seats(self, game_index: int) -> tuple[str, str]:
        """Policy names at seats 0 and 1: the match's first policy is seat 0 in game 1."""
        m = self.match
        return (m.first, m.second) if game_index == 1 else (m.second, m.first)
