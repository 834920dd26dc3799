"""The Ray executor: each episode one Ray task on a cluster's worker (docs/cluster.md).

What moves: an episode whose seats are scripted, mock or program seats. The
driver opens the episode's hooks (a backgammon card is drawn and committed to
the ledger here, before its first roll), gives the task each game's own chance
(`Game.game_chance`: the card seed never leaves the driver), and the worker
streams back its events, each finished game and the replay
(`arena.league.worker`). The driver relays the events to its events file,
keeps a card's finished games, adds the episode's integrity block and returns
the replay to the one writer, so resume, verify and the viewer see what a
local run writes.

What stays: an episode with a model seat is played on the driver, where the
run's circuit breakers, `max_connections`, response cache and endpoint checks
hold for every request (model seats wait on the network, not on a CPU).

Faults: a worker (or its node) lost mid-episode raises `EpisodeLost`; the task
is never retried by Ray, the run decides (`arena.league.run`). A worker that
cannot play as the run requires raises `WorkerRefused`.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
import ray
import ray.exceptions
import structlog

from arena.config import ConfigError, LlmPolicy
from arena.league.executor import EpisodeLost, WorkerRefused
from arena.league.plan import RunPlan
from arena.league.worker import Message, WorkerPlan, code_build, episode_messages
from arena.logs import relay, verbose_logging
from arena.play.episode import EpisodeSetup, play_episode
from arena.play.match import Episode
from arena.record.hooks import EpisodeScope
from arena.record.replay import Replay

__all__ = ["CONNECT_S", "RayExecutor", "ray_executor"]

log = structlog.get_logger("arena.league.cluster")

CONNECT_S = 60.0
"""The longest the driver waits to join (or start) a Ray cluster."""
_REACH_S = 5.0


@ray.remote(num_cpus=1, max_retries=0)
def _episode_task(
    plan: list[ray.ObjectRef[WorkerPlan]], key: str, episode: Episode, chances: dict[int, int | str]
) -> Iterator[Message]:
    """One episode on a worker (in a list, the plan is fetched only by a worker that has not
    cached it yet)."""
    yield from episode_messages(key, lambda: ray.get(plan[0]), episode, chances)


class RayExecutor:
    """Episodes with no model seat as Ray tasks; the others on this process's loop."""

    def __init__(
        self, plan: RunPlan, spec: ray.ObjectRef[WorkerPlan], key: str, where: str
    ) -> None:
        self.where = where
        self._spec = spec
        self._key = key
        self._models = {
            name for name, p in plan.config.policies.items() if isinstance(p, LlmPolicy)
        }

    async def play(self, setup: EpisodeSetup, episode: Episode) -> Replay:
        """The episode on a worker, its hooks here; one with a model seat here."""
        match = episode.match
        if {match.first, match.second} & self._models:
            return await play_episode(setup, episode)
        with structlog.contextvars.bound_contextvars(episode=episode.id, game=match.game):
            async with setup.hooks.open(episode.id, episode.base_id, match.k, match.seed) as scope:
                chances = {i: setup.game.game_chance(scope.chance, i) for i in episode.game_indices}
                replay = await self._remote(episode, chances, scope)
        return replay.model_copy(update={"integrity": scope.integrity()})

    async def _remote(
        self, episode: Episode, chances: dict[int, int | str], scope: EpisodeScope
    ) -> Replay:
        stream: ray.ObjectRefGenerator = _episode_task.options(name=episode.id).remote(
            [self._spec], self._key, episode, chances
        )
        replay: Replay | None = None
        try:
            async for ref in stream:
                kind, payload = await ref
                if kind == "events":
                    for line in payload:
                        relay(json.loads(line))
                elif kind == "keep":
                    await scope.keep(Replay.model_validate_json(payload))
                elif kind == "replay":
                    replay = Replay.model_validate_json(payload)
                elif kind == "error":
                    raise RuntimeError(f"the episode failed on its worker:\n{payload}")
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, WorkerRefused):
                raise exc.cause from None
            raise
        except ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise EpisodeLost(f"{type(exc).__name__}: {first}") from exc
        except BaseException:  # a stop: the task is not left playing for nobody
            ray.cancel(stream, force=True)
            raise
        if replay is None:
            raise EpisodeLost("the worker's stream ended without a replay")
        return replay


@asynccontextmanager
async def ray_executor(plan: RunPlan, address: str | None) -> AsyncIterator[RayExecutor]:
    """Join the cluster at `address` (else `RAY_ADDRESS`; else start a Ray instance on this
    machine) for the session, and leave it at the end."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    joined = not ray.is_initialized()
    if joined:
        if address is not None:
            _check_reachable(address)
        try:
            with anyio.fail_after(CONNECT_S):
                await anyio.to_thread.run_sync(
                    functools.partial(_init, address), abandon_on_cancel=True
                )
        except TimeoutError:
            raise ConfigError(
                f"Ray did not start or answer at {address or 'this machine'} within "
                f"{CONNECT_S:g} s: check `ray status`, or run with executor = 'local'"
            ) from None
    try:
        spec = WorkerPlan(uuid.uuid4().hex, code_build(), plan, verbose_logging())
        where = address or "a Ray instance on this machine"
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
        log.info("cluster_joined", address=where, cpus=resources.get("CPU"),
                 nodes=sum(1 for n in nodes if n.get("Alive")))  # fmt: skip
        yield RayExecutor(plan, ray.put(spec), spec.key, where)
    finally:
        if joined:
            ray.shutdown()


def _init(address: str | None) -> None:
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
        configure_logging=True,
    )


def _check_reachable(address: str) -> None:
    """A clear error now, instead of Ray's long wait, when nothing listens at `address`."""
    if address in ("auto", "local"):
        return
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    host, port = parts.hostname, parts.port
    if host is None or port is None:
        raise ConfigError(f"--ray-address {address!r}: write it as host:port, e.g. 10.0.0.5:6379")
    try:
        with socket.create_connection((host, port), timeout=_REACH_S):
            pass
    except OSError as exc:
        raise ConfigError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}): start one with "
            "`ray start --head` (docs/cluster.md), or fix --ray-address / RAY_ADDRESS"
        ) from None
