"""Playing a run: a bounded pool of workers fed from a queue, one writer, resumable.

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

import json
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import providers
from arena.cards import LEDGER, append_line, cancelled_cards, read_lines, reveal_interrupted
from arena.episode import EpisodeSetup, cancelled_card_replay, play_episode
from arena.league import league_tables
from arena.plan import RunPlan, plan_run
from arena.replay import Replay, load_replay, write_atomic
from arena.schedule import Episode
from arena.standings import GameSummary
from arena.store import DB_NAME, LeagueStore

__all__ = ["Progress", "RunPlan", "RunResult", "execute", "plan_run"]

log = structlog.get_logger("arena.run")

Failure = dict[str, str]


@dataclass
class RunResult:
    """What a run produced; `games` holds every stored game, earlier sessions' included."""

    games: list[GameSummary] = field(default_factory=list)
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


def _start_over(out: Path) -> None:
    """--force-new: remove the old results (the ledger is append-only and stays)."""
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", "summary.json"):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "replays", ignore_errors=True)


async def execute(
    plan: RunPlan,
    *,
    on_episode: Progress | None = None,
    grace_s: float = 30.0,
    handle_signals: bool = False,
) -> RunResult:
    """Play every episode of the plan the store does not hold yet, with bounded concurrency."""
    plan.out.mkdir(parents=True, exist_ok=True)
    if plan.resume == "new":
        _start_over(plan.out)
    write_atomic(plan.out / "config.resolved.json", json.dumps(plan.resolved(), indent=2))
    store = LeagueStore.open_for_run(plan.out)
    result = RunResult()
    started = time.monotonic()
    name = plan.config.run.name
    try:
        store.begin_run(name, plan.master_seed, plan.resolved(), plan.policy_records())
        finished = store.finished_episodes()
        _register_programs(plan)
        for card in reveal_interrupted(plan.out):
            log.warning("card_cancelled", card=card, reason="the run stopped mid-card")
        _store_cancelled_cards(plan, store)
        log.info("run_started", run=name, seed=plan.master_seed, episodes=plan.episode_count(),
                 already_finished=len(finished))  # fmt: skip
        with structlog.contextvars.bound_contextvars(run=name):
            async with providers.Providers() as pool:
                await _play_all(
                    plan, pool, store, finished, result, on_episode, grace_s, handle_signals
                )
        result.games = store.game_summaries()
        tables = league_tables(result.games, plan.config, plan.master_seed)
        store.store_ratings([(i, r) for i, r in tables["ratings"]["elo_history"]])
    finally:
        store.close()
    result.wall_s = time.monotonic() - started
    _write_summary(plan, result, tables)
    log.info("run_finished", run=name, played=result.played, skipped=result.skipped,
             failed=len(result.failed), interrupted=result.interrupted,
             wall_s=round(result.wall_s, 3))  # fmt: skip
    return result


def _store_cancelled_cards(plan: RunPlan, store: LeagueStore) -> None:
    """SPEC 7: a card cut short keeps its finished games, the cut one no-contest, so the
    card is out of Elo; the card itself is played again with a new seed."""
    for path, reveal in cancelled_cards(plan.out):
        replay = cancelled_card_replay(load_replay(path), reveal)
        target = plan.out / "replays" / f"{replay.episode}.json"
        write_atomic(target, replay.model_dump_json())
        store.record(replay, target)
        path.unlink()
        log.warning("card_kept_cancelled", card=replay.episode, games=len(replay.games))


def _register_programs(plan: RunPlan) -> None:
    """SPEC 10: each program's SHA-256 goes to the ledger when it is registered, once per
    program and run; the source stays private while the hash commits to it."""
    ledger = plan.out / LEDGER
    known = {
        (e.get("policy"), e.get("sha256"))
        for e in read_lines(ledger)
        if e.get("event") == "program_registered"
    }
    for name, info in plan.programs.items():
        if (name, info.sha256) not in known:
            append_line(ledger, {
                "event": "program_registered", "policy": name, "path": str(info.path),
                "sha256": info.sha256, "time": time.time(),
            })  # fmt: skip


async def _play_all(
    plan: RunPlan,
    pool: providers.Providers,
    store: LeagueStore,
    finished: set[str],
    result: RunResult,
    on_episode: Progress | None,
    grace_s: float,
    handle_signals: bool,
) -> None:
    """Producer and workers inside a cancel scope the grace period can end; the writer outside it."""
    setups: dict[str, EpisodeSetup] = {}
    jobs_send, jobs_receive = anyio.create_memory_object_stream[Episode](0)
    done_send, done_receive = anyio.create_memory_object_stream[Replay | Failure](
        plan.config.run.concurrency
    )

    schedule_scope = anyio.CancelScope()

    async def produce() -> None:
        with schedule_scope:
            await _produce()

    async def _produce() -> None:
        async with jobs_send:
            for match in plan.matches():
                for episode in match.episodes():
                    if episode.id in finished:
                        result.skipped += 1
                        continue
                    if match.game not in setups:
                        setups[match.game] = plan.setup_for(match.game, pool)
                    await jobs_send.send(episode)

    watch_scope = anyio.CancelScope()

    async def watch(work: anyio.CancelScope) -> None:
        with watch_scope:
            await _watch_signals(schedule_scope, work, grace_s, result)

    async with anyio.create_task_group() as outer:
        # The writer sits outside the work scope: what finished is written, even after a stop.
        outer.start_soon(_writer, plan, store, done_receive, result, on_episode)
        async with done_send:
            with anyio.CancelScope() as work:
                async with anyio.create_task_group() as inner:
                    if handle_signals:
                        outer.start_soon(watch, work)
                    inner.start_soon(produce)
                    for _ in range(plan.config.run.concurrency):
                        worker = _Worker(setups, result, on_episode)
                        inner.start_soon(worker.run, jobs_receive.clone(), done_send.clone())
                    jobs_receive.close()
        watch_scope.cancel()


async def _watch_signals(
    schedule_scope: anyio.CancelScope, work: anyio.CancelScope, grace_s: float, result: RunResult
) -> None:
    """First signal: stop scheduling, grace for the episodes in flight; second: stop now."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            result.interrupted = True
            if work.deadline == float("inf"):
                log.warning("stop_requested", signal=signal.Signals(signum).name, grace_s=grace_s)
                schedule_scope.cancel()
                work.deadline = anyio.current_time() + grace_s
            else:
                log.warning("stop_forced", signal=signal.Signals(signum).name)
                work.cancel()


class _Worker:
    """Plays one episode at a time from the queue and hands its replay to the writer."""

    def __init__(
        self, setups: dict[str, EpisodeSetup], result: RunResult, on_episode: Progress | None
    ) -> None:
        self.setups = setups
        self.result = result
        self.on_episode = on_episode

    def _moved(self, change: int) -> None:
        self.result.in_flight += change
        if self.on_episode:
            self.on_episode(self.result)

    async def run(
        self,
        jobs: MemoryObjectReceiveStream[Episode],
        done: MemoryObjectSendStream[Replay | Failure],
    ) -> None:
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


async def _writer(
    plan: RunPlan,
    store: LeagueStore,
    done: MemoryObjectReceiveStream[Replay | Failure],
    result: RunResult,
    on_episode: Progress | None,
) -> None:
    """The one writer: replay file first (atomic), then the store (one transaction)."""
    replays = plan.out / "replays"
    async with done:
        async for item in done:
            if isinstance(item, dict):
                result.failed.append(item)
            else:
                path = replays / f"{item.episode}.json"
                write_atomic(path, item.model_dump_json())
                summaries = store.record(item, path)
                result.played += 1
                result.fallbacks += sum(s.fallback_count for s in summaries)
            if on_episode:
                on_episode(result)


def _write_summary(plan: RunPlan, result: RunResult, tables: dict[str, object]) -> None:
    summary = {
        "run": plan.config.run.name,
        "seed": plan.master_seed,
        "episodes": plan.episode_count(),
        "played_this_session": result.played,
        "failed": result.failed,
        "interrupted": result.interrupted,
        "wall_s": round(result.wall_s, 3),
        **tables,
        "games": [g.to_json() for g in result.games],
    }
    write_atomic(plan.out / "summary.json", json.dumps(summary, indent=2))
