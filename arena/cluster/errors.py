"""How an episode played elsewhere fails, as the run sees it:

    Exception
    ├── EpisodeLost     the process playing it was lost: it is played again
    └── WorkerRefused   a worker cannot play as the run requires: the run stops, resumable

A worker raises `WorkerRefused` (Ray hands it to the driver as its task's cause); the
driver's side raises `EpisodeLost` (`arena.cluster.remote`, `arena.cluster.on_ray`);
the run decides what follows (`arena.league.run`).
"""

from __future__ import annotations

__all__ = ["EpisodeLost", "WorkerRefused"]


class EpisodeLost(Exception):
    """The process playing an episode was lost (a cluster's worker died, its node left):
    nothing of the episode was stored. It is played again; a card is cancelled and
    replaced, keeping the games it finished."""


class WorkerRefused(Exception):
    """A worker cannot play the run's episodes as the run requires (other code than the
    driver's, no sandbox for program seats): the run stops, resumable, with the reason."""
