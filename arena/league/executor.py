"""Where a run's episodes are played: in this process, or on a Ray cluster.

`[run] executor = "local"` (the default) plays every episode on the run's own
event loop, `concurrency` at a time. `"ray"` sends each episode whose seats
are scripted, mock or program seats to a Ray cluster as one task
(`arena.league.cluster`, imported only then: Ray is an optional extra), and
plays those with a model seat here, where the run's circuit breakers,
connection limits and response cache hold for every request. Either way the
schedule, the one writer, the store, the backgammon ledger, the ratings and
the console stay in this process, and a replay is the same document.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from arena.play.episode import EpisodeSetup, play_episode
from arena.play.match import Episode
from arena.record.replay import Replay

if TYPE_CHECKING:
    from arena.league.plan import RunPlan

__all__ = ["EpisodeLost", "Executor", "LocalExecutor", "WorkerRefused", "open_executor"]


class EpisodeLost(Exception):
    """The process playing an episode was lost (a cluster's worker died, its node left):
    nothing of the episode was stored. It is played again; a card is cancelled and
    replaced, keeping the games it finished."""


class WorkerRefused(Exception):
    """A worker cannot play the run's episodes as the run requires (other code than the
    driver's, no sandbox for program seats): the run stops, resumable, with the reason."""


class Executor(Protocol):
    """Plays one episode and returns its replay."""

    @property
    def where(self) -> str:
        """`local`, or the cluster's address, for the run's first event."""
        ...

    async def play(self, setup: EpisodeSetup, episode: Episode) -> Replay:
        """Play `episode` (`setup`: this process's setup of its game) to its replay; raise
        EpisodeLost when the process playing it was lost."""
        ...


class LocalExecutor:
    """Every episode on this process's event loop."""

    where = "local"

    async def play(self, setup: EpisodeSetup, episode: Episode) -> Replay:
        """The episode, here."""
        return await play_episode(setup, episode)


@asynccontextmanager
async def open_executor(plan: RunPlan, ray_address: str | None = None) -> AsyncIterator[Executor]:
    """The run's executor for the session (`ray_address`: the cluster to join, else
    `RAY_ADDRESS`, else a Ray instance started for the run)."""
    if plan.config.run.executor == "local":
        yield LocalExecutor()
        return
    from arena.league.cluster import ray_executor

    async with ray_executor(plan, ray_address) as executor:
        yield executor
