"""Playing a run: a producer, a bounded pool of workers, a signal watcher and one writer.

The schedule is produced lazily into a zero-buffer stream, so a run of 10,000
matches holds no more in memory than one of 10; `concurrency` workers each
play one episode at a time; every finished replay flows to one writer, which
writes the replay atomically and then stores the episode in the league's
SQLite store in one transaction. Episodes the store already holds are not
played again, so a run killed at any moment resumes where it stopped.

A game the infrastructure spoiled (`record.validity`) is stored as a
no-contest and its episode played again later in the run, up to
`replay_no_contest` times, as `<episode>~replay<n>`; a resumed session queues
the stored ones still under the cap. Each model endpoint has a circuit
(`seats.breaker`): while it is open its policies' episodes wait (the others go
on) and it is probed at 1, 2, 4, ... 30 s; one down longer than
`endpoint_down_s` stops the run, resumable.

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
import statistics
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import structlog
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import providers
from arena.config import LlmPolicy
from arena.league.executor import EpisodeLost, Executor, WorkerRefused, open_executor
from arena.league.lock import hold_run_folder
from arena.league.plan import RunPlan
from arena.league.stopping import StopRules
from arena.league.store import DB_NAME, LeagueStore
from arena.play.episode import EpisodeSetup
from arena.play.match import Episode, Match
from arena.record.crash import crash_point
from arena.record.ledger import new_generation
from arena.record.replay import Replay, write_atomic, write_atomic_lines
from arena.record.validity import gateway_timeouts, measured
from arena.seats.breaker import Breakers, Circuit, Misconfigured, misconfiguration_fix

if TYPE_CHECKING:
    from arena.league.rounds import AdaptiveRounds
    from arena.league.standings import GameSummary
    from arena.record.replay import GameRecord
    from arena.seats.desk import Desk

__all__ = [
    "LOST_TRIES",
    "PROBE_BACKOFF_S",
    "SUMMARY_GAMES",
    "WAKE_S",
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
    """Episodes a previous session had finished, skipped so far."""
    finished_before: int = 0
    """Episodes the store held when this session started (a resume when not 0)."""
    episodes: int = 0
    """Episodes the schedule plans (replays after a no-contest not counted)."""
    interrupted: bool = False
    wall_s: float = 0.0
    in_flight: int = 0
    fallbacks: int = 0
    """Fallbacks in the games finished this session."""
    replays: int = 0
    """Episodes queued this session to be played again after a no-contest."""
    stopped: str = ""
    """Why the run stopped before its end by itself (an endpoint down too long), or ''."""
    misconfigured: bool = False
    """The run stopped because a model's endpoint is set up wrong (`arena run` exits 3)."""
    stopped_by: str = ""
    """Why no new match started before the schedule's end (a budget, the SPRT), or ''."""
    stopping: dict[str, Any] = field(default_factory=dict)
    """The budgets' spending and the SPRT, as summary.json shows them."""


class _RoundEnd:
    """Where an adaptive round ends in the schedule."""


_ROUND_END = _RoundEnd()

LOST_TRIES = 3
"""An episode whose process is lost this often in one session is given up (a failure)."""
PROBE_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""The waits between the probes of an endpoint that is down (the last one repeats)."""
WAKE_S = 1.0
"""The producer looks again at least this often while it waits for an endpoint or a replay."""

Progress = Callable[[RunResult], None]
"""Called when the session starts and whenever an episode starts or finishes, with the
run's counts so far."""


def start_over(out: Path) -> None:
    """--force-new: remove the old results, replays, the viewer's pages and the cut cards'
    kept games; the ledger is append-only and stays, with a new generation begun."""
    from arena.record.cards import PARTIAL

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
    ray_address: str | None = None,
    executor: Executor | None = None,
    desk: Desk | None = None,
) -> RunResult:
    """Play every episode of the plan the store does not hold yet, with bounded concurrency.

    The run folder is held for the whole session: a second run on it stops at once. Every
    model endpoint is probed first (`preflight`) unless `check_endpoints` is False. With
    `executor = "ray"` the episodes are played on the cluster at `ray_address`
    (`arena.league.executor`); `executor` plays them instead, if given. A run with a
    human policy needs the `desk` of its play page (`arena.viewer.play.play_page`)."""
    if plan.people and desk is None:
        raise ValueError(
            f"policies {', '.join(plan.people)} are people: the run needs its play page's desk "
            "(arena.viewer.play.play_page), which `arena run` serves"
        )
    with hold_run_folder(plan.out):
        async with providers.Providers(trust=plan.config.run.trust) as pool:
            if check_endpoints and _models(plan):
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
        result.stopping = session.rules.to_json()
        if session.rounds is not None:
            result.stopping["adaptive"] = session.rounds.to_json()
        from arena.league.tables import league_tables

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


def _models(plan: RunPlan) -> dict[str, LlmPolicy]:
    """The plan's model policies: a run without them never imports their seats' modules."""
    return {n: p for n, p in plan.config.policies.items() if isinstance(p, LlmPolicy)}


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
        self.desk = desk
        self.pool = pool
        self.executor = executor
        self.store = store
        self.finished = finished
        self.result = result
        self.on_episode = on_episode
        self.setups: dict[str, EpisodeSetup] = {}
        self.schedule_scope = anyio.CancelScope()
        """Cancelled by the first signal: no new episode starts."""
        self.work_scope = anyio.CancelScope()
        """The workers' scope: the grace period's deadline, or a second signal, ends it."""
        run = plan.config.run
        self.replay_cap = run.replay_no_contest
        self.spoiled = store.spoiled_episodes()
        self.rules = StopRules(plan.config, store.game_summaries(), self.spoiled)
        """Budgets and the SPRT: asked before each new match."""
        self.breakers = Breakers(run.breaker_failures, self._opened, self._misconfigured)
        self.circuits = self._model_circuits()
        """Each model policy's circuits, one per replica."""
        self.again: deque[Episode] = deque()
        """Episodes to play again (a game of theirs did not measure a seat)."""
        self.waiting: deque[Episode] = deque()
        """Episodes whose endpoints were down when their turn came."""
        self.waiting_cap = 4 * run.concurrency
        """The schedule is read no further while this many wait."""
        self.outstanding = 0
        """Episodes handed to the workers that the writer has not dealt with yet."""
        self.playing: dict[str, Episode] = {}
        self.lost: Counter[str] = Counter()
        """How often each episode's process was lost this session."""
        self.round_end = False
        """An adaptive round is handed out: the next waits until all of it is stored."""
        self.rounds: AdaptiveRounds | None = None
        """The adaptive schedule's rounds, if the run has one."""
        self._changed = anyio.Event()
        self._probes: TaskGroup | None = None

    def _model_circuits(self) -> dict[str, list[Circuit]]:
        models = _models(self.plan)
        if not models:
            return {}
        from arena.seats.llm import provider_specs

        return {
            name: [self.breakers.circuit(p) for p in provider_specs(spec)]
            for name, spec in models.items()
        }

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
                    async with anyio.create_task_group() as probes:
                        self._probes = probes
                        async with anyio.create_task_group() as inner:
                            inner.start_soon(self._produce, jobs_send)
                            self._start_workers(inner, concurrency, jobs_receive, done_send)
                        probes.cancel_scope.cancel()  # nothing is left to wait for
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
        """The schedule, lazily, without what an earlier session finished; the replays and
        the episodes that waited for an endpoint first, whenever their endpoints are up."""
        with self.schedule_scope:
            async with jobs:
                scheduled = self._scheduled()
                exhausted = False
                while True:
                    changed = self._changed = anyio.Event()
                    episode = self._ready()
                    pull = not exhausted and len(self.waiting) < self.waiting_cap
                    if episode is None and pull and not self._round_open():
                        pulled = next(scheduled, None)
                        if isinstance(pulled, _RoundEnd):  # the next round is picked from
                            self.round_end = True  # this one's results: wait for all of them
                            continue
                        episode = pulled
                        if episode is not None and self._closed(episode):
                            episode = None
                        exhausted = episode is None
                        if episode is not None and self._blocked(episode):
                            self.waiting.append(episode)
                            continue
                    if episode is None:
                        if exhausted and not (self.again or self.waiting or self.outstanding):
                            return
                        with anyio.move_on_after(WAKE_S):  # a missed wake-up costs a second
                            await changed.wait()
                        continue
                    game = episode.match.game
                    if game not in self.setups:
                        self.setups[game] = self.plan.setup_for(
                            game, self.pool, self.breakers, self.desk
                        )
                    self.outstanding += 1
                    await jobs.send(episode)

    def _round_open(self) -> bool:
        """Whether an adaptive round still has an episode to finish (a replay included): the
        next round waits for all of its results."""
        if self.round_end and not (self.outstanding or self.again or self.waiting):
            self.round_end = False
        return self.round_end

    def _rounds(self, rounds: AdaptiveRounds) -> Iterator[Match | _RoundEnd]:
        """The adaptive schedule: each round's matches, then the end of the round."""
        while True:
            picked = rounds.next_round(self.store.game_summaries())
            if isinstance(picked, str):
                self.result.stopped_by = picked
                log.info("run_stopping", reason=picked, ranking_probability=rounds.probability)
                return
            log.info("round_picked", first_index=picked[0].index, matches=len(picked),
                     ranking_probability=round(rounds.probability, 4))  # fmt: skip
            yield from picked
            yield _ROUND_END

    def _scheduled(self) -> Iterator[Episode | _RoundEnd]:
        """Each scheduled episode's next play: its first, or the next replay of a stored
        no-contest still under the cap; episodes finished for good are counted as skipped."""
        config = self.plan.config
        if config.run.schedule == "adaptive":
            from arena.league.rounds import AdaptiveRounds

            self.rounds = AdaptiveRounds(config, self.plan.master_seed)
        matches = self._rounds(self.rounds) if self.rounds else self.plan.matches()
        for match in matches:
            if isinstance(match, _RoundEnd):
                yield match
                continue
            for episode in match.episodes():
                while episode.id in self.finished and episode.again().id in self.finished:
                    episode = episode.again()
                if episode.id not in self.finished:
                    yield episode
                elif episode.id in self.spoiled and episode.replay < self.replay_cap:
                    self.result.skipped += 1
                    yield self._replay(episode, "a no-contest stored by an earlier session")
                else:
                    self.result.skipped += 1

    def _closed(self, episode: Episode) -> bool:
        """Whether a rule (a budget, the SPRT) keeps the episode's match from starting: then
        no later match starts either."""
        why = self.rules.closed(episode.match.index)
        if why is None:
            return False
        self.result.stopped_by = why
        log.info("run_stopping", reason=why, note="matches in flight finish; no new one starts")
        return True

    def _pending(self) -> set[int]:
        """Matches with an episode in play or queued (a replay, a wait for an endpoint)."""
        queued = itertools.chain(self.playing.values(), self.again, self.waiting)
        return {e.match.index for e in queued}

    def _replay(self, episode: Episode, why: str) -> Episode:
        again = episode.again()
        self.result.replays += 1
        log.warning("episode_replayed", episode=episode.id, replay=again.id, reason=why)
        return again

    def _ready(self) -> Episode | None:
        """The first replay, then the first waiting episode, whose endpoints are up."""
        for queue in (self.again, self.waiting):
            for n, episode in enumerate(queue):
                if not self._blocked(episode):
                    del queue[n]
                    return episode
        return None

    def _blocked(self, episode: Episode) -> bool:
        """Whether a policy of the episode plays through endpoints that are all down."""
        match = episode.match
        return any(
            all(c.is_open for c in self.circuits[p])
            for p in (match.first, match.second)
            if p in self.circuits
        )

    def _poke(self) -> None:
        """Something the producer waits for changed."""
        self._changed.set()

    def _opened(self, circuit: Circuit) -> None:
        """An endpoint's circuit opened: probe it until it answers (or the run stops)."""
        if self._probes is not None:
            self._probes.start_soon(self._probe, circuit)

    async def _probe(self, circuit: Circuit) -> None:
        """Probe an endpoint that is down at 1, 2, 4, ... 30 s; close its circuit when it
        answers; stop the run (resumable) when it stays down longer than `endpoint_down_s`,
        unless each of its policies has another replica up (then it is probed on)."""
        # The task that opened the circuit was playing an episode; its probe is the run's.
        structlog.contextvars.unbind_contextvars("episode", "game", "game_index")
        from arena.league.preflight import PROBE_S

        limit = self.plan.config.run.endpoint_down_s
        client = self.pool.client(circuit.spec)
        for n in itertools.count():
            wait = PROBE_BACKOFF_S[min(n, len(PROBE_BACKOFF_S) - 1)]
            if not self._served_elsewhere(circuit):
                wait = max(0.0, min(wait, limit - circuit.down_for()))
            await anyio.sleep(wait)
            try:
                answer = await client.probe(deadline=anyio.current_time() + PROBE_S)
            except providers.ProviderError:
                answer = None
            if answer is not None and answer.status < 500 and answer.status != 429:
                circuit.close()
                self._poke()
                return
            if circuit.down_for() >= limit and not self._served_elsewhere(circuit):
                self._stop(
                    f"the endpoint {circuit.endpoint} has been down for {circuit.down_for():.0f} s "
                    f"(endpoint_down_s = {limit:g}): start it again, then run the same command "
                    "to resume"
                )
                return

    def _misconfigured(self, circuit: Circuit, found: Misconfigured) -> None:
        """An endpoint answers, but never usefully: waiting would measure nothing, so the run
        stops now, resumable, and the games in flight are cut (a resume plays them again)."""
        if self.result.misconfigured:
            return
        names = [name for name, circuits in self.circuits.items() if circuit in circuits]
        url = circuit.spec.base_url
        fix = misconfiguration_fix(circuit.spec, found)
        log.error(
            "endpoint_misconfigured", policy=names[0] if names else None, policies=names,
            url=url, status=found.status, body=found.body, times=found.times, fix=fix,
        )  # fmt: skip
        what = (
            f"HTTP {found.status}" if found.status is not None else "bodies that are no completion"
        )
        self.result.misconfigured = True
        self._stop(
            f"policies {', '.join(names)}: the endpoint {url} answered {what} "
            f"({found.times} in a row: {found.body[:80]!r}); {fix}; then run the same command "
            "to resume (the games in flight were cut and are played again)"
        )
        self.work_scope.cancel()

    def _served_elsewhere(self, circuit: Circuit) -> bool:
        """Whether every policy behind `circuit` has another replica whose circuit is closed."""
        return all(
            any(c is not circuit and not c.is_open for c in circuits)
            for circuits in self.circuits.values()
            if circuit in circuits
        )

    def _stop(self, reason: str) -> None:
        """Start no new episode; those in flight finish (an endpoint down fails them fast)."""
        log.error("run_stopped", reason=reason)
        self.result.stopped = reason
        self.result.interrupted = True
        self.schedule_scope.cancel()

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
                if self._blocked(episode):  # its endpoint went down while it was handed over
                    self.waiting.append(episode)
                    self.outstanding -= 1
                    self._poke()
                    continue
                self.playing[episode.id] = episode
                self._moved(+1)
                try:
                    replay: Replay | Failure = await self.executor.play(
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
                    replay = {"episode": episode.id, "error": repr(exc)}
                finally:
                    self._moved(-1)
                await done.send(replay)

    def _let_go(self, episode: Episode) -> None:
        """The episode leaves the workers unstored (it waits, or a resume plays it)."""
        self.playing.pop(episode.id, None)
        self.outstanding -= 1
        self._poke()

    async def _lost(
        self, episode: Episode, why: EpisodeLost, done: MemoryObjectSendStream[Replay | Failure]
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
            self.outstanding += 1  # one more item for the writer
            self.result.replays += 1
            await done.send(cut)
        if tries < LOST_TRIES:
            self.again.append(episode)
            self._let_go(episode)
            return
        error = f"its worker was lost {tries} times; last: {why}"
        await done.send({"episode": episode.id, "error": error})

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

    async def _write(self, done: MemoryObjectReceiveStream[Replay | Failure]) -> None:
        """The one writer: every finished replay stored in the order it finished."""
        async with done:
            async for item in done:
                episode = self.playing.pop(
                    str(item["episode"] if isinstance(item, dict) else item.episode), None
                )
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
                        self._again_if_spoiled(item, episode)
                        if self.rules.active:
                            self.rules.stored(summaries, self._pending())
                self.outstanding -= 1
                self._poke()
                if self.on_episode:
                    self.on_episode(self.result)

    def _again_if_spoiled(self, replay: Replay, episode: Episode | None) -> None:
        """Queue the episode to be played again if a game of it did not measure a seat and it
        is under the cap; past the cap it stays a no-contest."""
        spoiled = [g for g in replay.games if g.result is not None and not measured(g.result)]
        if not spoiled or episode is None:
            return
        if episode.replay >= 1 and self._gateway_too_short(replay, spoiled):
            return
        if episode.replay < self.replay_cap:
            self.again.append(
                self._replay(episode, spoiled[0].result.detail if spoiled[0].result else "")
            )
        else:
            log.warning(
                "no_contest_kept", episode=episode.id, replays=episode.replay,
                reason="played again as often as replay_no_contest allows",
            )  # fmt: skip

    def _gateway_too_short(self, replay: Replay, spoiled: list[GameRecord]) -> bool:
        """Whether a replayed episode was spoiled again by a gateway's timeouts alone (502,
        504): then every game of its endpoint would be, and the run stops (exit 3)."""
        waits: list[float] = []
        names: set[str] = set()
        for game in spoiled:
            seen = gateway_timeouts(game)
            if not seen:
                return False
            for seat, latencies in seen.items():
                waits += latencies
                names.add(replay.spectator.policies[str(game.index)][seat])
        models = _models(self.plan)
        urls = sorted({u for n in names if n in models for u in models[n].base_urls})
        seen_s = f"about {statistics.median(waits):.1f} s" if waits else "unknown"
        first = replay.deadlines.get("first_reply_s")
        limit = f"first_reply_s = {first:g} s" if first is not None else "first_reply_s"
        fix = (
            f"the gateway in front of the model gives up (HTTP 502/504, seen: {seen_s}) before "
            f"the model answers, a shorter wait than {limit}: raise the "
            "gateway's timeout (nginx: proxy_read_timeout) above first_reply_s, or lower "
            "first_reply_s"
        )
        log.error(
            "endpoint_misconfigured", policy=min(names), policies=sorted(names),
            url=urls[0] if urls else None, status=504, body="", times=len(waits), fix=fix,
        )  # fmt: skip
        self.result.misconfigured = True
        self._stop(
            f"{replay.episode} was a no-contest again, every fallback a gateway's timeout: "
            f"{fix}; then run the same command to resume"
        )
        return True


def _write_summary(plan: RunPlan, result: RunResult, games: Iterable[GameSummary]) -> None:
    """summary.json: the run, its tables and every game's result, written game by game."""
    head = {
        "run": plan.config.run.name,
        "seed": plan.master_seed,
        "episodes": plan.episode_count(),
        "played_this_session": result.played,
        "failed": result.failed,
        "interrupted": result.interrupted,
        "stopped_by": result.stopped_by or None,
        **result.stopping,
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
