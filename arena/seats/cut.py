"""The scope an episode plays in, which a stop may cut while the game waits on people.

The run plays each episode in a `cuttable` scope; the desk (`arena.seats.desk`)
gives each table made inside it that scope (`episode_scope`), so a stop can cut
at once a game that nothing but a person's move can take further. This module
is apart from the desk so that a run without people never imports the desk.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import anyio

__all__ = ["cuttable", "episode_scope"]

_EPISODE: ContextVar[anyio.CancelScope | None] = ContextVar("episode", default=None)
"""The scope of the episode being played (`cuttable`)."""


@contextmanager
def cuttable() -> Iterator[anyio.CancelScope]:
    """The scope to play an episode in: the tables made in it (its people's seats) are of
    that episode, which a stop (`Desk.stop`) cuts while one of its games waits on people."""
    with anyio.CancelScope() as scope:
        token = _EPISODE.set(scope)
        try:
            yield scope
        finally:
            _EPISODE.reset(token)


def episode_scope() -> anyio.CancelScope | None:
    """The scope of the episode being played here, if it plays in one."""
    return _EPISODE.get()
