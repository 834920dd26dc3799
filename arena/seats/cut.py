"""The scope an episode plays in, which a stop may cut while the game waits on people.

The run plays each episode in a `cuttable` scope; the desk (`arena.seats.desk`)
gives each table made inside it that episode (`current_episode`: its id and its
scope), so a stop can cut at once a game that nothing but a person's move can
take further. This module is apart from the desk so that a run without people
never imports the desk.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import anyio

__all__ = ["CuttableEpisode", "current_episode", "cuttable"]


@dataclass(frozen=True, eq=False)
class CuttableEpisode:
    """An episode in play: its id (as the events name it) and the scope that cuts it."""

    id: str
    scope: anyio.CancelScope


_EPISODE: ContextVar[CuttableEpisode | None] = ContextVar("episode", default=None)
"""The episode being played here (`cuttable`)."""


@contextmanager
def cuttable(episode_id: str) -> Iterator[anyio.CancelScope]:
    """The scope to play episode `episode_id` in: the tables made in it (its people's seats)
    are of that episode, which a stop (`Desk.stop`) cuts while one of its games waits on
    people."""
    with anyio.CancelScope() as scope:
        token = _EPISODE.set(CuttableEpisode(episode_id, scope))
        try:
            yield scope
        finally:
            _EPISODE.reset(token)


def current_episode() -> CuttableEpisode | None:
    """The episode being played here, if it plays in a `cuttable` scope."""
    return _EPISODE.get()
