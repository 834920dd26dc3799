"""Where a run's episodes are played: in this process, or on a Ray cluster.

`[run] executor = "local"` (the default) plays every episode on the run's own
event loop, `concurrency` at a time. `"ray"` sends each episode whose seats
are scripted, mock or program seats to a Ray cluster as one task
(`arena.cluster.on_ray`, imported only then: Ray is an optional extra), and
plays those with a model seat here, where the run's circuit breakers,
connection limits and response cache hold for every request. Either way the
schedule, the one writer, the store, the backgammon ledger, the ratings and
the console stay in this process, and a replay is the same document.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from arena.play.episode import EpisodeSetup, play_episode
from arena.play.match import Episode
from arena.record.replay import Replay

if TYPE_CHECKING:
    from arena.cluster.messages import Plan

__all__ = ["Executor", "LocalExecutor", "open_executor"]


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
async def open_executor(plan: Plan, ray_address: str | None = None) -> AsyncIterator[Executor]:
    """The run's executor for the session (`ray_address`: the cluster to join, else
    `RAY_ADDRESS`, else a Ray instance started for the run)."""
    if plan.config.run.executor == "local":
        yield LocalExecutor()
        return
    _ray_token_mode()
    from arena.cluster.on_ray import ray_executor  # ray is an optional extra

    async with ray_executor(plan, ray_address) as executor:
        yield executor


def _ray_token_mode() -> None:
    """A cluster `ray start` made asks for its token; Ray sends the token it finds (in
    `RAY_AUTH_TOKEN`, or the file `ray start` wrote) only in token mode, which it reads
    when it is imported. A token sent to a cluster without tokens does no harm."""
    token_file = Path(os.environ.get("RAY_AUTH_TOKEN_PATH", "~/.ray/auth_token")).expanduser()
    has_token = bool(os.environ.get("RAY_AUTH_TOKEN")) or token_file.is_file()
    if "RAY_AUTH_MODE" not in os.environ and has_token:
        os.environ["RAY_AUTH_MODE"] = "token"
