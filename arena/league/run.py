"""Playing a run: a producer, a bounded pool of workers, a signal watcher and one writer.

The schedule is produced lazily into a zero-buffer stream, so a run of 10,000
matches holds no more in memory than one of 10; `concurrency` workers each
play one episode at a time; every finished replay flows to one writer, which
writes the replay atomically and then stores the episode in the league's
SQLite store in one transaction. Episodes the store already holds are not
played again, so a run killed at any moment resumes where it stopped.

Which episode goes out next is the backlog's (`league.backlog`). A game the
infrastructure spoiled (`record.validity`) is stored as a no-contest and its
episode played again later in the run, up to `replay_no_contest` times, as
`<episode>~replay<n>`; a resumed session queues the stored ones still under
the cap. Whether each model endpoint is up, and when its state stops the run,
is endpoint health's (`league.health`). What the session leaves for readers
is the summary's (`league.summary`).

A first SIGINT or SIGTERM stops the schedule and gives the episodes in flight
`grace_s` to finish; a second one, or the end of the grace period, discards
them (they are played again on resume). A failing episode is logged with its
error and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import signal
import time
from collections import Counter
from typing import TYPE_CHECKING

import anyio
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import providers
from arena.cluster import EpisodeLost, Executor, WorkerRefused, open_executor
from arena.league.backlog import Backlog
from arena.league.health import EndpointHealth, model_policies
from arena.league.lock import hold_run_folder
from arena.league.plan import RunPlan
from arena.league.store import LeagueStore
from arena.league.summary import EpisodeFailure, Progress, RunResult, start_over, write_summary
from arena.play.episode import EpisodeSetup
from arena.play.match import Episode
from arena.record.crash import crash_point
from arena.record.replay import Replay, write_atomic
from arena.record.validity import measured

if TYPE_CHECKING:
    from arena.league.standings import GameSummary
    from arena.seats.desk import Desk

__all__ = ["LOST_TRIES", "WAKE_S", "Failure", "execute"]

log = structlog.get_logger("arena.league.run")

Failure = EpisodeFailure
"""Deprecated: `EpisodeFailure`, a typed record (an episode that failed: its id, the error)."""


LOST_TRIES = 3
"""An episode whose process is lost this often in one session is given up (a failure)."""
WAKE_S = 1.0
"""The producer looks again at least this often while it waits for an endpoint or a replay."""


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
    with hold_run_folder(plan.out):
        async with providers.Providers(trust=plan.config.run.trust) as pool:
            if check_endpoints and model_policies(plan):
                from arena.league.preflight import preflight

                await preflight(plan, pool)
            if executor is not None:
                return await _execute(
                    plan, pool, executor, on_episode, grace_s, handle_signals, desk
                )
            async with open_executor(plan, ray_address) as opened:
                return await _execute(plan, pool, opened, on_episode, grace_s, handle_signals, desk)


async def _execute(
    plan: RunPlan,
    pool: providers.Providers,
    executor: Executor,
    on_episode: Progress | None,
    grace_s: float,
    handle_signals: bool,
    desk: Desk | None,
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
                 already_finished=len(finished), executor=executor.where)  # fmt: skip
        result.finished_before, result.episodes = len(finished), plan.episode_count()
        if on_episode:
            on_episode(result)  # the session starts: a resume is said before anything plays
        with structlog.contextvars.bound_contextvars(run=name):
            session = _Session(plan, pool, executor, store, finished, result, on_episode, desk)
            await session.play(grace_s, handle_signals)
        result.stopping = session.backlog.rules.to_json()
        if session.backlog.rounds is not None:
            result.stopping["adaptive"] = session.backlog.rounds.to_json()
        from arena.league.tables import league_tables

        result.tables = league_tables(store.game_summaries(), plan.config, plan.master_seed)
        store.store_ratings([(i, r) for i, r in result.tables["ratings"]["elo_history"]])
        result.wall_s = time.monotonic() - started
        write_summary(plan, result, store.game_summaries())
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
        executor: Executor,
        store: LeagueStore,
        finished: set[str],
        result: RunResult,
        on_episode: Progress | None,
        desk: Desk | None = None,
    ) -> None:
        self.plan = plan
        self.executor = executor
        self.store = store
        self.result = result
        self.on_episode = on_episode
        self.setups: dict[str, EpisodeSetup] = {}
        self.schedule_scope = anyio.CancelScope()
        """Cancelled by the first signal: no new episode starts."""
        self.work_scope = anyio.CancelScope()
        """The workers' scope: the grace period's deadline, or a second signal, ends it."""
        self.health = EndpointHealth(plan, pool, changed=self._poke, stop=self._stop)
        self.seat_maker = plan.seat_maker(pool, self.health.breakers, desk)
        """Makes every seat the session's episodes play here."""
        self.backlog = Backlog(plan, store, finished, result, self.health.blocked)
        self.lost: Counter[str] = Counter()
        """How often each episode's process was lost this session."""
        self.flying: set[str] = set()
        """Episodes a worker is playing now (what the progress calls in flight)."""
        self._changed = anyio.Event()

    async def play(self, grace_s: float, handle_signals: bool) -> None:
        """Producer and workers inside the work scope; the writer outside it, so what
        finished is written, even after a stop."""
        concurrency = self.plan.config.run.concurrency
        jobs_send, jobs_receive = anyio.create_memory_object_stream[Episode](0)
        done_send, done_receive = anyio.create_memory_object_stream[Replay | EpisodeFailure](
            concurrency
        )
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
                    game = episode.match.game
                    if game not in self.setups:
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

    def _moved(self, episode: Episode, playing: bool) -> None:
        if playing:
            self.flying.add(episode.id)
        else:
            self.flying.discard(episode.id)
        self.result.in_flight = len(self.flying)
        if self.on_episode:
            self.on_episode(self.result)

    async def _work(
        self,
        jobs: MemoryObjectReceiveStream[Episode],
        done: MemoryObjectSendStream[Replay | EpisodeFailure],
    ) -> None:
        """One worker: one episode at a time from the queue, its replay to the writer."""
        async with jobs, done:
            async for episode in jobs:
                if self.health.blocked(episode.match):  # its endpoint went down meanwhile
                    self.backlog.waiting.append(episode)
                    self._let_go(episode)
                    continue
                self.backlog.playing[episode.id] = episode
                self._moved(episode, True)
                try:
                    replay: Replay | EpisodeFailure = await self.executor.play(
                        self.setups[episode.match.game], episode
                    )
                except EpisodeLost as exc:
                    await self._lost(episode, exc, done)
                    continue
                except WorkerRefused as exc:
                    self._let_go(episode)
                    self._stop(str(exc))
                    continue
                except Exception as exc:  # an engine or seat bug must not take the run down
                    log.exception("episode_failed", episode=episode.id, error=repr(exc))
                    replay = EpisodeFailure(episode.id, repr(exc))
                finally:
                    self._moved(episode, False)
                await done.send(replay)

    def _let_go(self, episode: Episode) -> None:
        """The episode leaves the workers unstored (it waits, or a resume plays it)."""
        self.backlog.playing.pop(episode.id, None)
        self.backlog.dealt_with(episode.id)
        self._poke()

    async def _lost(
        self,
        episode: Episode,
        why: EpisodeLost,
        done: MemoryObjectSendStream[Replay | EpisodeFailure],
    ) -> None:
        """The process playing `episode` was lost: nothing of it is stored but a cut card's
        finished games; it is played again (a card with a new card), up to `LOST_TRIES`."""
        self.lost[episode.id] += 1
        tries = self.lost[episode.id]
        cut = await anyio.to_thread.run_sync(self.setups[episode.match.game].hooks.cut, episode.id)
        log.warning(
            "episode_lost", episode=episode.id, error=str(why), lost=tries,
            kept=cut.episode if cut is not None else None,
            note="played again from its start" if tries < LOST_TRIES else "given up",
        )  # fmt: skip
        if cut is not None:
            self.backlog.expect(cut.episode)  # one more item for the writer
            self.result.replays += 1
            await done.send(cut)
        if tries < LOST_TRIES:
            self.backlog.again.append(episode)
            self._let_go(episode)
            return
        error = f"its worker was lost {tries} times; last: {why}"
        await done.send(EpisodeFailure(episode.id, error))

    async def _watch_signals(self, watcher: anyio.CancelScope, grace_s: float) -> None:
        """First signal: stop scheduling, grace for the episodes in flight; second: stop now."""
        with watcher, anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                self.result.interrupted = True
                work = self.work_scope
                flying = self.result.in_flight
                if work.deadline == float("inf"):
                    log.warning(
                        "stop_requested", signal=signal.Signals(signum).name, grace_s=grace_s,
                        in_flight=flying,
                        note=f"no new episode starts; the {flying} in flight get {grace_s:g} s to "
                        "finish; a second Ctrl-C discards them (a resume plays them again)",
                    )  # fmt: skip
                    self.schedule_scope.cancel()
                    work.deadline = anyio.current_time() + grace_s
                else:
                    log.warning(
                        "stop_forced",
                        signal=signal.Signals(signum).name,
                        discarded=flying,
                        note=f"{flying} episode(s) in flight discarded: a resume plays them again",
                    )
                    work.cancel()

    def _store_durably(self, replay: Replay) -> list[GameSummary]:
        """Store the replay, then tell its game's hooks it is durable (a card's reveal)."""
        summaries = _store(self.plan, self.store, replay)
        crash_point("store")
        self.setups[replay.game].hooks.stored(replay)
        return summaries

    async def _write(self, done: MemoryObjectReceiveStream[Replay | EpisodeFailure]) -> None:
        """The one writer: every finished replay stored in the order it finished."""
        async with done:
            async for item in done:
                episode = self.backlog.playing.pop(item.episode, None)
                if isinstance(item, EpisodeFailure):
                    self.result.failed.append(item)
                else:
                    try:
                        # fsync and commit run in a worker thread, one episode after another,
                        # so the event loop (and every deadline on it) never waits on the disk.
                        summaries = await anyio.to_thread.run_sync(self._store_durably, item)
                    except Exception as exc:  # one unstorable episode must not end the run
                        log.error("episode_not_stored", episode=item.episode, error=repr(exc))
                        self.result.failed.append(EpisodeFailure(item.episode, repr(exc)))
                    else:
                        self.result.played += 1
                        self.result.fallbacks += sum(s.fallback_count for s in summaries)
                        self._again_if_spoiled(item, episode)
                        self.backlog.stored(summaries)
                self.backlog.dealt_with(item.episode)
                self._poke()
                if self.on_episode:
                    self.on_episode(self.result)

    def _again_if_spoiled(self, replay: Replay, episode: Episode | None) -> None:
        """Queue the episode to be played again if a game of it did not measure a seat and it
        is under the cap; past the cap it stays a no-contest."""
        spoiled = [g for g in replay.games if g.result is not None and not measured(g.result)]
        if not spoiled or episode is None:
            return
        if episode.replay >= 1 and self.health.gateway_too_short(replay, spoiled):
            return
        if episode.replay < self.backlog.replay_cap:
            self.backlog.again_later(episode, spoiled[0].result.detail if spoiled[0].result else "")
        else:
            log.warning(
                "no_contest_kept", episode=episode.id, replays=episode.replay,
                reason="played again as often as replay_no_contest allows",
            )  # fmt: skip
