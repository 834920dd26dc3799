"""The Ray executor: each episode one Ray task on a cluster's worker (docs/cluster.md).

What moves: an episode whose seats are scripted, mock or program seats. The
driver opens the episode's hooks (a backgammon card is drawn and committed to
the ledger here, before its first roll), gives the task each game's own chance
(`Game.game_chance`: the card seed never leaves the driver), and the worker
streams back its events, each finished game and the replay
(`arena.cluster.worker`). The driver relays the events to its events file,
keeps a card's finished games, adds the episode's integrity block and returns
the replay to the one writer (`RemoteExecutor`), so resume, verify and the
viewer see what a local run writes.

What stays: an episode with a model seat is played on the driver, where the
run's circuit breakers, `max_connections`, response cache and endpoint checks
hold for every request (model seats wait on the network, not on a CPU).

Faults: a worker (or its node) lost mid-episode raises `EpisodeLost`; the task
is never retried by Ray, the run decides (`arena.league.run`). A worker that
cannot play as the run requires raises `WorkerRefused`.
"""

from __future__ import annotations

import functools
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

from arena.cluster.errors import EpisodeLost, WorkerRefused
from arena.cluster.messages import Message, Plan, WorkerPlan
from arena.cluster.remote import RemoteExecutor
from arena.cluster.worker import code_build, episode_messages
from arena.config import ConfigError
from arena.logs import verbose_logging
from arena.play.match import Episode

__all__ = ["CONNECT_S", "RayExecutor", "ray_executor"]

log = structlog.get_logger("arena.cluster")

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


class RayExecutor(RemoteExecutor):
    """Episodes with no model seat as Ray tasks (`RemoteExecutor`)."""

    def __init__(self, plan: Plan, spec: ray.ObjectRef[WorkerPlan], key: str, where: str) -> None:
        super().__init__(plan, where)
        self._spec = spec
        self._key = key

    async def messages(
        self, episode: Episode, chances: dict[int, int | str]
    ) -> AsyncIterator[Message]:
        """The episode's Ray task's messages as they come; never retried by Ray."""
        stream: ray.ObjectRefGenerator = _episode_task.options(name=episode.id).remote(
            [self._spec], self._key, episode, chances
        )
        try:
            async for ref in stream:
                yield await ref
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, WorkerRefused):
                raise exc.cause from None
            raise
        except ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise EpisodeLost(f"{type(exc).__name__}: {first}") from exc
        except BaseException:  # a stop, or the driver gave up: the task is not left playing
            ray.cancel(stream, force=True)
            raise


@asynccontextmanager
async def ray_executor(plan: Plan, address: str | None) -> AsyncIterator[RayExecutor]:
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
        log.info(
            "cluster_joined",
            address=where,
            cpus=resources.get("CPU"),
            nodes=sum(1 for n in nodes if n.get("Alive")),
        )
        yield RayExecutor(plan, ray.put(spec), spec.key, where)
    finally:
        if joined:
            ray.shutdown()


def _init(address: str | None) -> None:
    # Ray is joined from a thread (its wait is bounded): it says it sets no SIGTERM handler
    # there, which is as it should be: the run handles SIGTERM itself.
    logging.getLogger("ray._private.worker").addFilter(_NoSigtermNote())
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
        configure_logging=True,
    )


class _NoSigtermNote(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


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
