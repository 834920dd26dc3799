"""What a cluster's worker does with one episode (`arena.cluster.on_ray` sends it).

The worker is given the run's plan (once per process: it is cached by its key),
the episode, and each game's own chance: the match seed, or for a backgammon
card the two game seeds derived from the card seed, never the card seed
itself, which stays with the driver's ledger. It plays the games as a local
run does (`play_games`, its deadlines on this worker's monotonic clock, its
program seats' sandboxes started here), and streams back its messages
(`arena.cluster.messages`): `Kept` after each game but the last, `Played` (or
`Failed`) at the end, and `Logged` while a game goes on, at most `FLUSH_S`
apart. Each carries the events logged before it, so a short episode is one
message.

Before its first episode a worker checks that it runs the driver's code (the
same engines give the same games) and, for program seats, that it can start a
sandbox; if not, it refuses with the reason (`WorkerRefused`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import queue
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import structlog

from arena.cluster.errors import WorkerRefused
from arena.cluster.messages import Failed, Kept, Logged, Message, Plan, Played, WorkerPlan
from arena.config import ProgramPolicy
from arena.logs import forward_logging
from arena.play.collector import tune_collector
from arena.play.episode import EpisodeSetup, episode_replay, play_games
from arena.play.match import Episode
from arena.play.protocol import MakesSeats
from arena.record.replay import Replay

if TYPE_CHECKING:  # the sandbox: a worker asked about programs only
    from arena.programs.bwrap import SandboxMode

__all__ = ["FLUSH_S", "code_build", "episode_messages", "worker_id"]

FLUSH_S = 0.25
"""The longest a worker holds an event before it sends it on."""


def worker_id() -> str:
    """`host:pid`, as the events a worker logs name it."""
    return f"{socket.gethostname()}:{os.getpid()}"


_PACKAGES = ("arena", "games", "providers")


def code_build() -> str:
    """SHA-256 over the source of the packages that play a game (file names and bytes)."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[2]
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class _Loaded:
    """A run's plan on this worker, the one maker of its seats, each game's setup."""

    plan: Plan
    seat_maker: MakesSeats
    setups: dict[str, EpisodeSetup] = dataclasses.field(default_factory=dict)


_cache: dict[str, _Loaded] = {}
_build: list[str] = []
_verbose = [False]
_Item = str | Kept | Played | Failed
"""What the episode's thread puts in its outbox: an event (a JSON line), or a message, the
events before it added when it is sent."""
_outbox: list[queue.Queue[_Item | None]] = []
"""The queue the episode in play sends its events to (one episode at a time per worker)."""


def _to_outbox(line: str) -> None:
    """An event logged here, to the outbox of the episode in play (none between episodes)."""
    if _outbox:
        _outbox[0].put(line)


def _checked(key: str, load: Callable[[], WorkerPlan]) -> _Loaded:
    """The run's plan on this worker, fetched and checked once: the driver's code, a
    sandbox if needed."""
    cached = _cache.get(key)
    if cached is not None:
        return cached
    spec = load()
    if not _build:
        _build.append(code_build())
    if _build[0] != spec.build:
        raise WorkerRefused(
            f"the worker {worker_id()} runs other cog-arena code than the driver (build "
            f"{_build[0][:12]}, the driver's {spec.build[:12]}): install the driver's version "
            "on every worker (docs/cluster.md)"
        )
    if any(isinstance(p, ProgramPolicy) for p in spec.plan.config.policies.values()):
        trusted = all(info.trusted for info in spec.plan.programs.values())
        problem = _sandbox_problem(spec.plan.config.run.sandbox, trusted)
        if problem:
            raise WorkerRefused(
                f"the worker {worker_id()} cannot start program seats' sandboxes: {problem} "
                "(docs/cluster.md#what-each-worker-needs)"
            )
    _cache.clear()  # one run's plan at a time
    _cache[key] = _Loaded(spec.plan, spec.plan.seat_maker())
    _verbose[:] = [spec.verbose]
    return _cache[key]


def _sandbox_problem(sandbox: SandboxMode, trusted: bool = True) -> str:
    """What keeps this worker from confining a program seat as a local run does, or ''
    (`sandbox`: the run's `[run] sandbox`; bwrap is probed here, once per process;
    `trusted`: whether every program may run outside it)."""
    # the sandbox: a worker asked about programs only
    from arena.programs.bwrap import SandboxUnavailable, choose_sandbox
    from arena.programs.sandbox import CHILD_PATH

    if not sys.platform.startswith("linux"):
        return f"program seats need Linux (rlimits, prctl, namespaces), this is {sys.platform}"
    if not sys.executable or not os.access(sys.executable, os.X_OK):
        return "no Python interpreter to start the child with (sys.executable)"
    if not CHILD_PATH.is_file():
        return f"the child runtime {CHILD_PATH} is missing"
    try:
        choose_sandbox(sandbox, trusted=trusted)
    except SandboxUnavailable as exc:
        return str(exc)
    return ""


def episode_messages(
    key: str,
    load: Callable[[], WorkerPlan],
    episode: Episode,
    chances: dict[int, int | str],
    *,
    capture_events: bool = True,
) -> Iterator[Message]:
    """Play `episode` here, yielding its messages (module doc) as they come; `load` fetches
    the run's plan when this worker has not cached the plan `key` yet. Without
    `capture_events` this process's logging is left as it is (a worker played in the
    driver's own process, in tests)."""
    loaded = _checked(key, load)
    if capture_events:  # a worker process of its own
        forward_logging(_to_outbox, verbose=_verbose[0])
        tune_collector()
    outbox: queue.Queue[_Item | None] = queue.Queue()
    _outbox[:] = [outbox]

    def play() -> None:
        try:
            replay = anyio.run(_play, loaded, episode, chances, outbox)
            outbox.put(Played(replay.model_dump_json()))
        except BaseException:  # the driver logs it as the episode's failure
            outbox.put(Failed(traceback.format_exc()))
        finally:
            outbox.put(None)

    player = threading.Thread(target=play, name=f"episode {episode.id}", daemon=True)
    player.start()
    try:
        yield from _batched(outbox)
    finally:
        _outbox.clear()
        player.join(timeout=1.0)


def _batched(outbox: queue.Queue[_Item | None]) -> Iterator[Message]:
    """The outbox's messages in order, each carrying the events logged before it; events
    alone at most `FLUSH_S` apart while nothing else comes (a short episode sends one
    message in all)."""
    events: list[str] = []
    while True:
        try:
            item = outbox.get(timeout=FLUSH_S)
        except queue.Empty:
            if events:
                yield Logged(tuple(events))
                events = []
            continue
        if item is None:
            if events:
                yield Logged(tuple(events))
            return
        if isinstance(item, str):
            events.append(item)
            continue
        yield dataclasses.replace(item, events=tuple(events))
        events = []


async def _play(
    loaded: _Loaded,
    episode: Episode,
    chances: dict[int, int | str],
    outbox: queue.Queue[_Item | None],
) -> Replay:
    plan, setups, game = loaded.plan, loaded.setups, episode.match.game
    if game not in setups:
        setups[game] = plan.setup_for(game, loaded.seat_maker)
    setup = setups[game]

    async def keep(replay: Replay) -> None:
        outbox.put(Kept(replay.model_dump_json()))

    with structlog.contextvars.bound_contextvars(run=plan.config.run.name, worker=worker_id()):
        records = await play_games(setup, episode, chances, keep)
    return episode_replay(setup, episode, records, {})
