"""Playing a run: a producer, a bounded pool of workers, a signal watcher and one writer.

The schedule is produced lazily into a zero-buffer stream, so a run of 10,000
matches holds no more in memory than one of 10; `concurrency` workers each
play one episode at a time; every finished replay flows to one writer, which
writes the replay atomically and then stores the episode in the league's
SQLite store in one transaction. Episodes the store already holds are not
played again, so a run killed at any moment resumes where it stopped.

A first SIGINT or SIGTERM stops the schedule and gives the episodes in flight
`grace_s` to finish; a second one, or the end of the grace period, discards
them (they are played again on resume). A failing episode is logged with its
error and the run goes on.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import providers
from arena.league.lock import hold_run_folder
from arena.league.plan import RunPlan
from arena.league.preflight import preflight
from arena.league.standings import GameSummary
from arena.league.store import DB_NAME, LeagueStore
from arena.league.tables import league_tables
from arena.play.episode import EpisodeSetup, play_episode
from arena.play.match import Episode
from arena.record.cards import PARTIAL
from arena.record.crash import crash_point
from arena.record.ledger import new_generation
from arena.record.replay import Replay, write_atomic, write_atomic_lines

__all__ = [
    "SUMMARY_GAMES",
    "Failure",
    "Progress",
    "RunResult",
    "execute",
    "read_summary_head",
    "start_over",
]

log = structlog.get_logger("arena.league.run")

Failure = dict[str, str]
"""An episode that failed: its id and the error, as the summary lists it."""


@dataclass
class RunResult:
    """What a run produced in this session, and the league's tables as it now stands."""

    tables: dict[str, Any] = field(default_factory=dict)
    """The league's tables over every stored game, earlier sessions' included."""
    failed: list[Failure] = field(default_factory=list)
    played: int = 0
    """Episodes finished in this session."""
    skipped: int = 0
    """Episodes a previous session had finished."""
    interrupted: bool = False
    wall_s: float = 0.0
    in_flight: int = 0
    fallbacks: int = 0
    """Fallbacks in the games finished this session."""


Progress = Callable[[RunResult], None]
"""Called whenever an episode starts or finishes, with the run's counts so far."""


def start_over(out: Path) -> None:
    """--force-new: remove the old results, replays, the viewer's pages and the cut cards'
    kept games; the ledger is append-only and stays, with a new generation begun."""
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", "summary.json"):
        (out / name).unlink(missing_ok=True)
    for folder in ("replays", "view", PARTIAL):
        shutil.rmtree(out / folder, ignore_errors=True)
    new_generation(out)


async def execute(
    plan: RunPlan,
    *,
    on_episode: Progress | None = None,
    grace_s: float = 30.0,
    handle_signals: bool = False,
    check_endpoints: bool = True,
) -> RunResult:
    """Play every episode of the plan the store does not hold yet, with bounded concurrency.

    The run folder is held for the whole session: a second run on it stops at once. Every
    model endpoint is probed first (`preflight`) unless `check_endpoints` is False."""
    with hold_run_folder(plan.out):
        async with providers.Providers() as pool:
            if check_endpoints:
                await preflight(plan, pool)
            return await _execute(plan, pool, on_episode, grace_s, handle_signals)


async def _execute(
    plan: RunPlan,
    pool: providers.Providers,
    on_episode: Progress | None,
    grace_s: float,
    handle_signals: bool,
) -> RunResult:
    if plan.resume == "new":
        start_over(plan.out)
    write_atomic(plan.out / "config.resolved.json", json.dumps(plan.resolved(), indent=2))
    store = LeagueStore.open_for_run(plan.out)
    result = RunResult()
    started = time.monotonic()
    name = plan.config.run.name
    try:
        plan.begin(store, lambda replay: _store(plan, store, replay))
        finished = store.finished_episodes()
        log.info("run_started", run=name, seed=plan.master_seed, episodes=plan.episode_count(),
                 already_finished=len(finished))  # fmt: skip
        with structlog.contextvars.bound_contextvars(run=name):
            session = _Session(plan, pool, store, finished, result, on_episode)
            await session.play(grace_s, handle_signals)
        result.tables = league_tables(store.game_summaries(), plan.config, plan.master_seed)
        store.store_ratings([(i, r) for i, r in result.tables["ratings"]["elo_history"]])
        result.wall_s = time.monotonic() - started
        _write_summary(plan, result, store.game_summaries())
    finally:
        store.close()
    log.info("run_finished", run=name, played=result.played, skipped=result.skipped,
             failed=len(result.failed), interrupted=result.interrupted,
             wall_s=round(result.wall_s, 3))  # fmt: skip
    return result


def _store(plan: RunPlan, store: LeagueStore, replay: Replay) -> list[GameSummary]:
    """The replay file first (atomic), then the store (one transaction)."""
    path = plan.out / "replays" / f"{replay.episode}.json"
    text = replay.model_dump_json()
    write_atomic(path, text)
    crash_point("replay")
    return store.record(replay, path, hashlib.sha256(text.encode()).hexdigest())


class _Session:
    """One session's episodes: the producer, the workers, the signal watcher and the writer."""

    def __init__(
        self,
        plan: RunPlan,
        pool: providers.Providers,
        store: LeagueStore,
        finished: set[str],
        result: RunResult,
        on_episode: Progress | None,
    ) -> None:
        self.plan = plan
        self.pool = pool
        self.store = store
        self.finished = finished
        self.result = result
        self.on_episode = on_episode
        self.setups: dict[str, EpisodeSetup] = {}
        self.schedule_scope = anyio.CancelScope()
        """Cancelled by the first signal: no new episode starts."""
        self.work_scope = anyio.CancelScope()
        """The workers' scope: the grace period's deadline, or a second signal, ends it."""

    async def play(self, grace_s: float, handle_signals: bool) -> None:
        """Producer and workers inside the work scope; the writer outside it, so what
        finished is written, even after a stop."""
        concurrency = self.plan.config.run.concurrency
        jobs_send, jobs_receive = anyio.create_memory_object_stream[Episode](0)
        done_send, done_receive = anyio.create_memory_object_stream[Replay | Failure](concurrency)
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._write, done_receive)
            watcher = anyio.CancelScope()
            if handle_signals:
                outer.start_soon(self._watch_signals, watcher, grace_s)
            async with done_send:
                with self.work_scope:
                    async with anyio.create_task_group() as inner:
                        inner.start_soon(self._produce, jobs_send)
                        self._start_workers(inner, concurrency, jobs_receive, done_send)
            watcher.cancel()

    def _start_workers(
        self,
        group: TaskGroup,
        count: int,
        jobs: MemoryObjectReceiveStream[Episode],
        done: MemoryObjectSendStream[Replay | Failure],
    ) -> None:
        with jobs:
            for _ in range(count):
                group.start_soon(self._work, jobs.clone(), done.clone())

    async def _produce(self, jobs: MemoryObjectSendStream[Episode]) -> None:
        """The schedule, lazily, without the episodes an earlier session finished."""
        with self.schedule_scope:
            async with jobs:
                for match in self.plan.matches():
                    for episode in match.episodes():
                        if episode.id in self.finished:
                            self.result.skipped += 1
                            continue
                        if match.game not in self.setups:
                            self.setups[match.game] = self.plan.setup_for(match.game, self.pool)
                        await jobs.send(episode)

    def _moved(self, change: int) -> None:
        self.result.in_flight += change
        if self.on_episode:
            self.on_episode(self.result)

    async def _work(
        self,
        jobs: MemoryObjectReceiveStream[Episode],
        done: MemoryObjectSendStream[Replay | Failure],
    ) -> None:
        """One worker: one episode at a time from the queue, its replay to the writer."""
        async with jobs, done:
            async for episode in jobs:
                self._moved(+1)
                try:
                    replay: Replay | Failure = await play_episode(
                        self.setups[episode.match.game], episode
                    )
                except Exception as exc:  # an engine or seat bug must not take the run down
                    log.exception("episode_failed", episode=episode.id, error=repr(exc))
                    replay = {"episode": episode.id, "error": repr(exc)}
                finally:
                    self._moved(-1)
                await done.send(replay)

    async def _watch_signals(self, watcher: anyio.CancelScope, grace_s: float) -> None:
        """First signal: stop scheduling, grace for the episodes in flight; second: stop now."""
        with watcher, anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                self.result.interrupted = True
                work = self.work_scope
                if work.deadline == float("inf"):
                    log.warning(
                        "stop_requested", signal=signal.Signals(signum).name, grace_s=grace_s
                    )
                    self.schedule_scope.cancel()
                    work.deadline = anyio.current_time() + grace_s
                else:
                    log.warning("stop_forced", signal=signal.Signals(signum).name)
                    work.cancel()

    def _store_durably(self, replay: Replay) -> list[GameSummary]:
        """Store the replay, then tell its game's hooks it is durable (a card's reveal)."""
        summaries = _store(self.plan, self.store, replay)
        crash_point("store")
        self.setups[replay.game].hooks.stored(replay)
        return summaries

    async def _write(self, done: MemoryObjectReceiveStream[Replay | Failure]) -> None:
        """The one writer: every finished replay stored in the order it finished."""
        async with done:
            async for item in done:
                if isinstance(item, dict):
                    self.result.failed.append(item)
                else:
                    try:
                        # fsync and commit run in a worker thread, one episode after another,
                        # so the event loop (and every deadline on it) never waits on the disk.
                        summaries = await anyio.to_thread.run_sync(self._store_durably, item)
                    except Exception as exc:  # one unstorable episode must not end the run
                        log.error("episode_not_stored", episode=item.episode, error=repr(exc))
                        self.result.failed.append({"episode": item.episode, "error": repr(exc)})
                    else:
                        self.result.played += 1
                        self.result.fallbacks += sum(s.fallback_count for s in summaries)
                if self.on_episode:
                    self.on_episode(self.result)


def _write_summary(plan: RunPlan, result: RunResult, games: Iterable[GameSummary]) -> None:
    """summary.json: the run, its tables and every game's result, written game by game."""
    head = {
        "run": plan.config.run.name,
        "seed": plan.master_seed,
        "episodes": plan.episode_count(),
        "played_this_session": result.played,
        "failed": result.failed,
        "interrupted": result.interrupted,
        "wall_s": round(result.wall_s, 3),
        **result.tables,
    }
    opening = json.dumps(head, indent=2)[:-2]  # the object without its closing brace
    rows = (json.dumps(g.to_json(latencies=False)) for g in games)
    write_atomic_lines(
        plan.out / "summary.json",
        itertools.chain([opening, SUMMARY_GAMES], _joined(rows, ",\n"), ["\n  ]\n}\n"]),
    )


SUMMARY_GAMES = ',\n  "games": [\n'
"""Where summary.json's list of games begins: always its last key, so a reader that wants
only the tables (`read_summary_head`) never parses thousands of games."""


def read_summary_head(path: Path) -> dict[str, Any] | None:
    """summary.json without its games (None if there is none, or it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8")
        cut = text.find(SUMMARY_GAMES)
        data = json.loads(text[:cut] + "\n}" if cut >= 0 else text)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    data.pop("games", None)
    return data


def _joined(parts: Iterable[str], separator: str) -> Iterator[str]:
    for n, part in enumerate(parts):
        yield (separator + "    " if n else "    ") + part
