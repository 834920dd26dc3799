"""The scope an episode plays in, which a stop may cut while the game waits on people.

The run's worker plays each episode in its own cancel scope and hands it, with
the episode's id, to the session's seat maker for that episode
(`SeatMaker.in_episode`); the maker gives it to each person's table it makes
there (`arena.seats.desk`), so a stop can cut at once a game that nothing but a
person's move can take further. This module is apart from the desk so that a
run without people never imports the desk.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

__all__ = ["CuttableEpisode"]


@dataclass(frozen=True, eq=False)
class CuttableEpisode:
    """An episode in play: its id (as the events name it) and the scope that cuts it."""

    id: str
    scope: anyio.CancelScope
