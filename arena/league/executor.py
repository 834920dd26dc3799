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

import json
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from arena.config import HumanPolicy, LlmPolicy
from arena.logs import relay
from arena.play.episode import EpisodeSetup, play_episode
from arena.play.match import Episode
from arena.record.hooks import EpisodeScope
from arena.record.replay import Replay

if TYPE_CHECKING:
    from arena.league.plan import RunPlan

__all__ = [
    "EpisodeLost", "Executor", "LocalExecutor", "Message", "RemoteExecutor", "WorkerRefused",
    "open_executor",
]  # fmt: skip

Message = tuple[str, Any, list[str]]
"""What a worker sends back of an episode it plays: kind, payload and the events logged
before it (`arena.league.worker`)."""


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


class RemoteExecutor(ABC):
    """Episodes played by another process, their hooks kept here: the driver's side of a
    cluster. An episode with a model seat is played here instead, where the run's circuit
    breakers, connection limits and response cache hold for every request; so is one with
    a person's seat, whose play page this process serves."""

    def __init__(self, plan: RunPlan, where: str) -> None:
        self.where = where
        self._models = {
            name
            for name, p in plan.config.policies.items()
            if isinstance(p, LlmPolicy | HumanPolicy)
        }

    async def play(self, setup: EpisodeSetup, episode: Episode) -> Replay:
        """The episode elsewhere, its hooks here (a card is drawn and committed here and its
        finished games kept here; the player gets only each game's own chance)."""
        match = episode.match
        if {match.first, match.second} & self._models:
            return await play_episode(setup, episode)
        with structlog.contextvars.bound_contextvars(episode=episode.id, game=match.game):
            async with setup.hooks.open(episode.id, episode.base_id, match.k, match.seed) as scope:
                chances = {i: setup.game.game_chance(scope.chance, i) for i in episode.game_indices}
                replay = await self._received(self.messages(episode, chances), scope)
        return replay.model_copy(update={"integrity": scope.integrity()})

    @abstractmethod
    def messages(self, episode: Episode, chances: dict[int, int | str]) -> AsyncIterator[Message]:
        """The messages of `episode` played elsewhere (`arena.league.worker`); EpisodeLost if
        the process playing it is lost, WorkerRefused if it cannot play it."""

    async def _received(self, messages: AsyncIterator[Message], scope: EpisodeScope) -> Replay:
        """The replay the worker sent, its events relayed and its games kept. The messages
        are read to their end: a stream left open would be cancelled, and its worker with it."""
        replay: Replay | None = None
        async for kind, payload, events in messages:
            for line in events:
                relay(json.loads(line))
            if kind == "keep":
                await scope.keep(Replay.model_validate_json(payload))
            elif kind == "replay":
                replay = Replay.model_validate_json(payload)
            elif kind == "error":
                raise RuntimeError(f"the episode failed on its worker:\n{payload}")
        if replay is None:
            raise EpisodeLost("the worker's messages ended without a replay")
        return replay


@asynccontextmanager
async def open_executor(plan: RunPlan, ray_address: str | None = None) -> AsyncIterator[Executor]:
    """The run's executor for the session (`ray_address`: the cluster to join, else
    `RAY_ADDRESS`, else a Ray instance started for the run)."""
    if plan.config.run.executor == "local":
        yield LocalExecutor()
        return
    _ray_token_mode()
    from arena.league.cluster import ray_executor

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
