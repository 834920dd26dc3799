"""The driver's side of an episode played by another process: its hooks here, its games
there (`arena.cluster.worker`), its messages relayed, kept and returned as its replay.

A backgammon card is drawn and committed to the ledger here, before its first roll; the
player is given each game's own chance, never the card seed; a card's finished games are
kept here and the episode's integrity block added here, so resume, verify and the viewer
see what a local run writes.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import assert_never

import structlog

from arena.cluster.errors import EpisodeLost
from arena.cluster.messages import Failed, Kept, Logged, Message, Plan, Played
from arena.config import HumanPolicy, LlmPolicy
from arena.logs import relay
from arena.play.episode import EpisodeSetup, play_episode
from arena.play.match import Episode
from arena.record.hooks import EpisodeScope
from arena.record.replay import Replay

__all__ = ["RemoteExecutor"]


class RemoteExecutor(ABC):
    """Episodes played by another process, their hooks kept here: the driver's side of a
    cluster. An episode with a model seat is played here instead, where the run's circuit
    breakers, connection limits and response cache hold for every request; so is one with
    a person's seat, whose play page this process serves."""

    def __init__(self, plan: Plan, where: str) -> None:
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
        """The messages of `episode` played elsewhere (`arena.cluster.worker`); EpisodeLost if
        the process playing it is lost, WorkerRefused if it cannot play it."""

    async def _received(self, messages: AsyncIterator[Message], scope: EpisodeScope) -> Replay:
        """The replay the worker sent, its events relayed and its games kept. The messages
        are read to their end: a stream left open would be cancelled, and its worker with it."""
        replay: Replay | None = None
        async for message in messages:
            for line in message.events:
                relay(json.loads(line))
            match message:
                case Kept(replay_json=kept):
                    await scope.keep(Replay.model_validate_json(kept))
                case Played(replay_json=played):
                    replay = Replay.model_validate_json(played)
                case Failed(traceback=trace):
                    raise RuntimeError(f"the episode failed on its worker:\n{trace}")
                case Logged():
                    pass  # its events, relayed above, are all it carries
                case _:
                    assert_never(message)
        if replay is None:
            raise EpisodeLost("the worker's messages ended without a replay")
        return replay
