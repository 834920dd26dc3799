"""Playing a run: a producer, a bounded pool of workers, a signal watcher and one writer.

The producer hands the backlog's episodes (`league.backlog`: the schedule,
lazily, and the episodes to play again) to `concurrency` workers, each playing
one episode at a time; every finished replay flows to one writer, which writes
it atomically and then stores it in the league's SQLite store in one
transaction. Episodes the store already holds are not played again, so a run
killed at any moment resumes where it stopped. Whether each model endpoint is
up, and when its state stops the run, is endpoint health's (`league.health`);
what the session leaves for readers is the summary's (`league.summary`).

The plan (`league.plan`) is a value; this is where it meets the run folder. As a
session opens (`open_session`), before a worker is sent the plan: with
`--force-new` earlier sessions' results are gone, the resolved config is
written, and the programs are committed to (their SHA-256 in the ledger, their
bytes kept privately), which gives the plan its commits. Before the first game
(`begin`) the config and policies are stored, a pool's retirements settled
(`league.pool.settle_retirements`), and each game's hooks settle what a killed
session left (a cut card's finished games are stored).

A first SIGINT or SIGTERM stops the schedule and gives the episodes in flight
`grace_s` to finish (but what waits on a person only: `Desk.stop`); a second
one, or the end of the grace period, discards them (they are played again on
resume). A failing episode is logged with its error and the run goes on.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING

import anyio
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import games
import providers
from arena.cluster import EpisodeLost, Executor, WorkerRefused, open_executor
from arena.league.backlog import Backlog
from arena.league.health import EndpointHealth, model_policies
from arena.league.lock import hold_run_folder
from arena.league.plan import RunPlan
from arena.league.pool import settle_retirements
from arena.league.store import LeagueStore
from arena.league.summary import EpisodeFailure, Progress, RunResult, close_session, start_over
from arena.play.collector import collector_tuned
from arena.play.episode import EpisodeSetup
from arena.play.match import Episode
from arena.record.crash import crash_point, group_limit
from arena.record.ledger import commit_programs
from arena.record.replay import Replay, write_atomic
from arena.seats.cut import CuttableEpisode

if TYPE_CHECKING:
    from arena.results.standings import GameSummary
    from arena.seats.desk import Desk

__all__ = ["WAKE_S", "begin", "execute", "open_session"]

log = structlog.get_logger("arena.league.run")

WAKE_S = 1.0
"""The producer looks again at least this often while it waits for an endpoint or a replay."""
_Done = Replay | EpisodeFailure  # what a worker hands the writer
_GROUP = 64
"""The most finished episodes the writer keeps as one group (one folder fsync, one commit)."""


async def execute(
    plan: RunPlan,
    *,
    on_episode: Progress | None = None,
    grace_s: float = 30.0,
    handle_signals: bool = False,
    check_endpoints: bool = True,
    ray_address: str | None = None,
    executor: Executor | None = None,
    desk: Desk | None = None,
) -> RunResult:
    """Play every episode of the plan the store does not hold yet, with bounded concurrency.

    The run folder is held for the whole session: a second run on it stops at once. Every
    model endpoint is probed first (`preflight`) unless `check_endpoints` is False. With
    `executor = "ray"` the episodes are played on the cluster at `ray_address`
    (`arena.cluster`); `executor` plays them instead, if given. A run with a
    human policy needs the `desk` of its play page (`arena.viewer.play.play_page`)."""
    if plan.people and desk is None:
        raise ValueError(
            f"policies {', '.join(plan.people)} are people: the run needs its play page's desk "
            "(arena.viewer.play.play_page), which `arena run` serves"
        )
    with hold_run_folder(plan.out), collector_tuned():
        async with providers.Providers(trust=plan.config.run.trust) as pool:
            if check_endpoints and model_policies(plan):
                from arena.league.preflight import preflight  # HTTP: runs with models only

                await preflight(plan, pool)
            plan = open_session(plan)  # before a worker is sent the plan: it carries the commits
            opened = (
                nullcontext(executor) if executor is not None else open_executor(plan, ray_address)
            )
            async with opened as where:
                session = _Session(plan, pool, where, on_episode, desk)
                return await session.run(grace_s, handle_signals)


def open_session(plan: RunPlan) -> RunPlan:
    """The run folder as a session starts: with `--force-new`, earlier sessions' results
    gone (`start_over`); the resolved config written, for readers and for a resume; the
    programs committed to before any of them plays. The plan with its commits, which its
    programs' games record."""
    if plan.resume == "new":
        start_over(plan.out)
    write_atomic(plan.out / "config.resolved.json", json.dumps(plan.resolved(), indent=2))
    return dataclasses.replace(plan, commits=commit_programs(plan.out, plan.programs))


def begin(plan: RunPlan, store: LeagueStore, keep: Callable[[Replay], object]) -> None:
    """What a session does in its store before its first game: the config and policies
    stored, a pool's retirements settled, and what a killed session left of each game
    settled by its hooks (a cut card's games stored with `keep`)."""
    records, session = plan.policy_records(), plan.session
    store.begin_run(
        plan.config.run.name, plan.master_seed, plan.resolved(), records, session=session
    )
    if plan.pool:
        settle_retirements(plan, store)
    finished = store.finished_episodes()
    for name in plan.games_played():
        plan.hooks(games.load(name)).resume(keep, finished)


class _Session:
    """One session's episodes: the producer, the workers, the signal watcher and the writer."""

    def __init__(
        self,
        plan: RunPlan,
        pool: providers.Providers,
        executor: Executor,
        on_episode: Progress | None,
        desk: Desk | None,
    ) -> None:
        self.plan, self.pool, self.executor = plan, pool, executor
        self.on_episode: Progress = on_episode or (lambda result: None)
        self.desk = desk
        self.result = RunResult()
        self.setups: dict[str, EpisodeSetup] = {}
        self.schedule_scope = anyio.CancelScope()
        """Cancelled by the first signal: no new episode starts."""
        self.work_scope = anyio.CancelScope()
        """The workers' scope: the grace period's deadline, or a second signal, ends it."""
        self._changed = anyio.Event()

    async def run(self, grace_s: float, handle_signals: bool) -> RunResult:
        """The session from its start (a new run's folder cleared) to its summary."""
        plan, result = self.plan, self.result
        self.store = store = LeagueStore.open_for_run(plan.out)
        started, name = time.monotonic(), plan.config.run.name
        try:
            begin(plan, store, lambda replay: store.keep(replay, plan.out))
            finished = store.finished_episodes()
            log.info(
                "run_started",
                run=name,
                seed=plan.master_seed,
                episodes=plan.episode_count(),
                already_finished=len(finished),
                executor=self.executor.where,
            )
            result.finished_before, result.episodes = len(finished), plan.episode_count()
            self.on_episode(self.result)  # the session starts: a resume is said before any move
            health = EndpointHealth(plan, self.pool, changed=self._poke, stop=self._stop)
            self.health, blocked, given_up = health, health.blocked, health.gateway_too_short
            self.seat_maker = plan.seat_maker(self.pool, health.breakers, self.desk)
            self.backlog = Backlog(plan, store, finished, result, blocked, given_up)
            with structlog.contextvars.bound_contextvars(run=name):
                await self.play(grace_s, handle_signals)
            close_session(plan, store, result, self.backlog.stopping(), time.monotonic() - started)
        finally:
            store.close()
        log.info(
            "run_finished",
            run=name,
            played=result.played,
            skipped=result.skipped,
            failed=len(result.failed),
            interrupted=result.interrupted,
            wall_s=round(result.wall_s, 3),
        )
        return result

    async def play(self, grace_s: float, handle_signals: bool) -> None:
        """Producer and workers inside the work scope; the writer outside it, so what
        finished is written, even after a stop."""
        concurrency = self.plan.config.run.concurrency
        jobs_send, jobs_receive = anyio.create_memory_object_stream[Episode](0)
        done_send, done_receive = anyio.create_memory_object_stream[_Done](concurrency)
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._write, done_receive)
            watcher = anyio.CancelScope()
            if handle_signals:
                outer.start_soon(self._watch_signals, watcher, grace_s)
            async with done_send:
                with self.work_scope:
                    async with self.health.probing(), anyio.create_task_group() as inner:
                        inner.start_soon(self._produce, jobs_send)
                        with jobs_receive:
                            for _ in range(concurrency):
                                inner.start_soon(
                                    self._work, jobs_receive.clone(), done_send.clone()
                                )
            watcher.cancel()

    async def _produce(self, jobs: MemoryObjectSendStream[Episode]) -> None:
        """The backlog's episodes to the workers, as they are ready; the end once nothing is
        left to play or out."""
        backlog = self.backlog
        with self.schedule_scope:
            async with jobs:
                while True:
                    changed = self._changed = anyio.Event()
                    episode = backlog.take()
                    if episode is None:
                        if backlog.done:
                            return
                        with anyio.move_on_after(WAKE_S):  # a missed wake-up costs a second
                            await changed.wait()
                        continue
                    if (game := episode.match.game) not in self.setups:
                        self.setups[game] = self.plan.setup_for(game, self.seat_maker)
                    backlog.hand_out(episode)
                    await jobs.send(episode)

    def _poke(self) -> None:
        """Something the producer waits for changed."""
        self._changed.set()

    def _stop(self, reason: str, misconfigured: bool = False, cut: bool = False) -> None:
        """Start no new episode; those in flight finish (an endpoint down fails them fast),
        or with `cut` are discarded (a resume plays them again)."""
        log.error("run_stopped", reason=reason)
        self.result.stopped = reason
        self.result.interrupted = True
        self.result.misconfigured = self.result.misconfigured or misconfigured
        self.schedule_scope.cancel()
        if cut:
            self.work_scope.cancel()

    def _started(self, episode: Episode) -> None:
        """A worker starts playing `episode`: it is in flight until the writer dealt with it."""
        self.backlog.start(episode)
        log.info("episode_started", episode=episode.id, in_flight=self.result.in_flight)
        self.on_episode(self.result)

    async def _work(
        self,
        jobs: MemoryObjectReceiveStream[Episode],
        done: MemoryObjectSendStream[_Done],
    ) -> None:
        """One worker: one episode at a time from the queue, its replay to the writer."""
        async with jobs, done:
            async for episode in jobs:
                if self.health.blocked(episode.match):  # its endpoint went down meanwhile
                    self.backlog.waiting.append(episode)
                    self._let_go(episode)
                    continue
                self._started(episode)
                try:
                    game = episode.match.game
                    with anyio.CancelScope() as scope:
                        setup = self._setup_in(game, CuttableEpisode(episode.id, scope))
                        replay: _Done = await self.executor.play(setup, episode)
                    if scope.cancelled_caught:  # the run stops; only a person could finish it
                        self._let_go(episode)
                        continue
                except EpisodeLost as exc:  # nothing stored but a cut card's finished games
                    cut = await anyio.to_thread.run_sync(self.setups[game].hooks.cut, episode.id)
                    if cut is not None:
                        self.backlog.expect(cut.episode)  # one more item for the writer
                        await done.send(cut)
                    kept = cut.episode if cut is not None else None
                    failed = self.backlog.lost(episode, str(exc), kept)
                    if failed is None:  # played again (a card with a new card)
                        self._poke()
                        continue
                    replay = failed
                except WorkerRefused as exc:
                    self._let_go(episode)
                    self._stop(str(exc))
                    continue
                except Exception as exc:  # an engine or seat bug must not take the run down
                    log.exception("episode_failed", episode=episode.id, error=repr(exc))
                    replay = EpisodeFailure(episode.id, repr(exc))
                await done.send(replay)

    def _setup_in(self, game: str, episode: CuttableEpisode) -> EpisodeSetup:
        """`game`'s setup for one `episode`: with people, their tables get its scope from
        the seat maker, so a stop cuts a game that waits on them only."""
        setup = self.setups[game]
        if self.desk is None:
            return setup
        return dataclasses.replace(setup, seat_maker=self.seat_maker.in_episode(episode))

    def _let_go(self, episode: Episode) -> None:
        self.backlog.let_go(episode)
        self._poke()

    async def _watch_signals(self, watcher: anyio.CancelScope, grace_s: float) -> None:
        """First signal: stop scheduling, grace for the episodes in flight; second: stop now."""
        with watcher, anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                self.result.interrupted = True
                name, flying = signal.Signals(signum).name, self.result.in_flight
                if self.work_scope.deadline < float("inf"):
                    log.warning(
                        "stop_forced",
                        signal=name,
                        discarded=flying,
                        note=f"{flying} episode(s) in flight discarded: a resume plays them again",
                    )
                    self.work_scope.cancel()
                    continue
                log.warning(
                    "stop_requested",
                    signal=name,
                    grace_s=grace_s,
                    in_flight=flying,
                    note=f"no new episode starts; the {flying} in flight get {grace_s:g} s "
                    "to finish; a second Ctrl-C discards them (a resume plays them again)",
                )
                self.schedule_scope.cancel()
                self.work_scope.deadline = anyio.current_time() + grace_s
                if self.desk is not None:  # what only a person can finish does not wait
                    self.desk.stop()

    def _store_durably(self, replays: list[Replay]) -> list[list[GameSummary] | Exception]:
        """Store the replays as one group, then tell each one's game hooks it is durable (a
        card's reveal); each one's summaries, or why it is not stored. A group the store
        refuses (all or none is stored) is stored again one by one, so only the episode that
        cannot be stored fails."""
        try:
            kept = self.store.keep_all(replays, self.plan.out)
        except Exception as exc:
            if len(replays) == 1:
                return [exc]
            return [self._store_durably([replay])[0] for replay in replays]
        results: list[list[GameSummary] | Exception] = []
        for replay, summaries in zip(replays, kept, strict=True):
            crash_point("store")
            try:
                self.setups[replay.game].hooks.stored(replay)
            except Exception as exc:
                results.append(exc)
            else:
                results.append(summaries)
        return results

    async def _write(self, done: MemoryObjectReceiveStream[_Done]) -> None:
        """The one writer: every finished replay stored in the order it finished, those that
        finished together (waiting while the last group was stored) as one group."""
        async with done:
            async for first in done:
                group = [first]
                limit = group_limit() or _GROUP
                while len(group) < limit:
                    try:
                        group.append(done.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                replays = [item for item in group if not isinstance(item, EpisodeFailure)]
                # fsyncs and commit run in a worker thread, one group after another, so the
                # event loop (and every deadline on it) never waits on the disk.
                stored = iter(
                    await anyio.to_thread.run_sync(self._store_durably, replays) if replays else []
                )
                for item in group:
                    self._written(item, None if isinstance(item, EpisodeFailure) else next(stored))

    def _written(self, item: _Done, stored: list[GameSummary] | Exception | None) -> None:
        """Account for one episode the writer dealt with: `stored` its summaries, or why it
        is not stored (None: it failed before)."""
        outcome = "failed"
        if isinstance(item, EpisodeFailure):
            self.result.failed.append(item)
            self.backlog.written(item.episode)
        elif isinstance(stored, Exception):  # one unstorable episode must not end the run
            log.error("episode_not_stored", episode=item.episode, error=repr(stored))
            self.result.failed.append(EpisodeFailure(item.episode, repr(stored)))
            self.backlog.written(item.episode)
        elif stored is not None:  # counted done as it leaves the episodes in flight: one step
            self.backlog.stored(item, stored)
            counted = any(g.scores is not None for g in stored)
            outcome = "counted" if counted else "no_contest"
        log.info(
            "episode_finished",
            episode=item.episode,
            outcome=outcome,
            in_flight=self.result.in_flight,
        )
        self.backlog.dealt_with(item.episode)
        self._poke()
        self.on_episode(self.result)
