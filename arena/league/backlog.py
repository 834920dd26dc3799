"""The backlog: which episode goes out next, and what is still out.

Episodes come from the schedule, lazily (a run of 10,000 matches holds no more
in memory than one of 10), without what an earlier session finished; an
adaptive schedule comes in rounds, the next picked only once all of the last
one is stored. Before the schedule go the episodes to play again (a game the
infrastructure spoiled, a worker lost) and those that waited for an endpoint
that was down, whenever their endpoints are up again. A rule (a budget, the
SPRT) can close the schedule before a match starts.

What is out is kept by episode: handed to the workers or on its way to the
writer (`out`), and taken by a worker until the writer has dealt with it
(`playing`, what the progress calls in flight); the counts are their sizes. After the writer has stored an episode, the backlog
decides whether it is played again (a game the infrastructure spoiled, under
the cap), and after its worker was lost, whether it is tried again.
"""

from __future__ import annotations

import itertools
from collections import Counter, deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from arena.league.plan import RunPlan
from arena.league.stopping import StopRules
from arena.league.store import LeagueStore
from arena.league.summary import EpisodeFailure, RunResult
from arena.play.match import Episode, Match
from arena.record.replay import GameRecord, Replay
from arena.record.validity import measured

if TYPE_CHECKING:
    from collections.abc import Iterable

    from arena.results.standings import GameSummary

__all__ = ["LOST_TRIES", "Backlog", "Rounds"]

log = structlog.get_logger("arena.league.run")


LOST_TRIES = 3
"""An episode whose process is lost this often in one session is given up (a failure)."""


class Rounds(Protocol):
    """A schedule picked a round at a time: an adaptive league's (`league.adaptive.AdaptiveRounds`) or a
    standing pool's (`league.pool.PoolRounds`)."""

    probability: float
    """The ranking's probability of being right before the last round picked."""

    def next_round(self, stored: Iterable[GameSummary]) -> list[Match] | str:
        """The next round's matches from the stored games, or why none follows."""
        ...

    def to_json(self) -> dict[str, Any]:
        """What summary.json shows of the rounds."""
        ...


class _RoundEnd:
    """Where an adaptive round ends in the schedule."""


_ROUND_END = _RoundEnd()


class Backlog:
    """One session's episodes still to play, and those out; `blocked` says whether a
    match's endpoints are all down, `given_up` whether a replay spoiled again is left a
    no-contest whatever the cap (a gateway's timeouts stopped the run)."""

    def __init__(
        self,
        plan: RunPlan,
        store: LeagueStore,
        finished: set[str],
        result: RunResult,
        blocked: Callable[[Match], bool],
        given_up: Callable[[Replay, list[GameRecord]], bool] = lambda replay, spoiled: False,
    ) -> None:
        self._plan = plan
        self._given_up = given_up
        self._store = store
        self._finished = finished
        self._result = result
        self._blocked = blocked
        run = plan.config.run
        self.replay_cap = run.replay_no_contest
        self._spoiled = store.spoiled_episodes()
        result.fallbacks_before = store.fallback_total()
        self.rules = StopRules(plan.config, store.game_summaries(), self._spoiled)
        """Budgets and the SPRT: asked before each new match."""
        self.again: deque[Episode] = deque()
        """Episodes to play again (a game of theirs did not measure a seat, a worker lost)."""
        self.waiting: deque[Episode] = deque()
        """Episodes whose endpoints were down when their turn came."""
        self._waiting_cap = 4 * run.concurrency
        """The schedule is read no further while this many wait."""
        self.out: Counter[str] = Counter()
        """What the workers and the writer still have to deal with, by episode id."""
        self.playing: dict[str, Episode] = {}
        """Episodes a worker took, until the writer has dealt with them (what the progress
        calls in flight: a game played to its end is in flight until it is stored)."""
        self._lost: Counter[str] = Counter()
        """How often each episode's process was lost this session."""
        self.rounds: Rounds | None = None
        """The adaptive schedule's or the pool's rounds, if the run has them."""
        self._round_end = False
        self._schedule = self._scheduled()
        self._exhausted = False

    def take(self) -> Episode | None:
        """The next episode to hand out, or None while there is none (to wait for)."""
        while True:
            episode = self._ready()
            if episode is not None:
                return episode
            if self._exhausted or len(self.waiting) >= self._waiting_cap or self._round_open():
                return None
            pulled = next(self._schedule, None)
            if isinstance(pulled, _RoundEnd):  # the next round is picked from this one's
                self._round_end = True  # results: wait for all of them
                continue
            if pulled is not None and self._closed(pulled):
                pulled = None
            if pulled is None:
                self._exhausted = True
                return None
            if not self._blocked(pulled.match):
                return pulled
            self.waiting.append(pulled)

    @property
    def done(self) -> bool:
        """Whether nothing is left: the schedule read to its end, nothing to play again, and
        nothing out."""
        return self._exhausted and not (self.again or self.waiting or self.out)

    def hand_out(self, episode: Episode) -> None:
        """`episode` goes to the workers."""
        self.out[episode.id] += 1

    def expect(self, episode_id: str) -> None:
        """One more item for the writer (a cut card's kept games)."""
        self.out[episode_id] += 1

    def dealt_with(self, episode_id: str) -> None:
        """The writer, or a worker that let it go, is done with one item of `episode_id`."""
        self.out[episode_id] -= 1
        if self.out[episode_id] <= 0:
            del self.out[episode_id]

    def stopping(self) -> dict[str, Any]:
        """The budgets' spending, the SPRT and the adaptive rounds, as the summary shows them."""
        shown = self.rules.to_json()
        if self.rounds is not None:
            shown["pool" if self._plan.pool else "adaptive"] = self.rounds.to_json()
        return shown

    def start(self, episode: Episode) -> None:
        """A worker plays `episode` now."""
        self.playing[episode.id] = episode
        self._result.in_flight = len(self.playing)

    def let_go(self, episode: Episode) -> None:
        """The episode leaves the workers unstored (it waits, or a resume plays it)."""
        self.written(episode.id)
        self.dealt_with(episode.id)

    def written(self, episode_id: str) -> Episode | None:
        """The writer has dealt with `episode_id`'s failure (or a worker let it go, or
        `stored` its replay): the episode it was, if a worker played it, which is no longer
        in flight."""
        episode = self.playing.pop(episode_id, None)
        self._result.in_flight = len(self.playing)
        return episode

    def lost(self, episode: Episode, why: str, kept: str | None) -> EpisodeFailure | None:
        """`episode`'s process was lost (a cut card's finished games are `kept` as that
        episode): it is played again from its start, or after `LOST_TRIES` its failure."""
        self._lost[episode.id] += 1
        tries = self._lost[episode.id]
        log.warning(
            "episode_lost",
            episode=episode.id,
            error=why,
            lost=tries,
            kept=kept,
            note="played again from its start" if tries < LOST_TRIES else "given up",
        )
        if kept is not None:
            self._result.replays += 1
        if tries >= LOST_TRIES:
            return EpisodeFailure(episode.id, f"its worker was lost {tries} times; last: {why}")
        self.again.append(episode)
        self.let_go(episode)
        return None

    def _again_if_spoiled(self, replay: Replay, episode: Episode | None) -> None:
        """Queue a stored episode to be played again if a game of it did not measure a seat
        and it is under the cap; past the cap it stays a no-contest."""
        spoiled = [g for g in replay.games if g.result is not None and not measured(g.result)]
        if not spoiled or episode is None:
            return
        if episode.replay >= 1 and self._given_up(replay, spoiled):
            return
        if episode.replay < self.replay_cap:
            self.again_later(episode, spoiled[0].result.detail if spoiled[0].result else "")
        else:
            log.warning(
                "no_contest_kept",
                episode=episode.id,
                replays=episode.replay,
                reason="played again as often as replay_no_contest allows",
            )

    def again_later(self, episode: Episode, why: str) -> None:
        """Play `episode` again, before the schedule goes on."""
        self.again.append(self.replayed(episode, why))

    def replayed(self, episode: Episode, why: str) -> Episode:
        """`episode`'s next play, counted and logged."""
        again = episode.again()
        self._result.replays += 1
        # `game_index` is an int in every event; an episode of two games (a battle, a
        # backgammon card) names both under `game_indices` instead.
        indices = episode.game_indices
        which = {"game_index": indices[0]} if len(indices) == 1 else {"game_indices": list(indices)}
        log.warning(
            "episode_replayed",
            episode=episode.id,
            replay=again.id,
            reason=why,
            game=episode.match.game,
            **which,
        )
        return again

    def stored(self, replay: Replay, games: list[GameSummary]) -> None:
        """The writer stored `replay` (its `games`): counted done as it leaves the episodes
        in flight (a progress line between the two would count it as neither), played again
        if the infrastructure spoiled it, and seen by the stopping rules."""
        episode = self.written(replay.episode)
        self._result.played += 1
        self._result.fallbacks += sum(g.fallback_count for g in games)
        self._again_if_spoiled(replay, episode)
        if self.rules.active:
            queued = itertools.chain(self.playing.values(), self.again, self.waiting)
            self.rules.stored(games, {e.match.index for e in queued})

    def _ready(self) -> Episode | None:
        """The first replay, then the first waiting episode, whose endpoints are up."""
        for queue in (self.again, self.waiting):
            for n, episode in enumerate(queue):
                if not self._blocked(episode.match):
                    del queue[n]
                    return episode
        return None

    def _round_open(self) -> bool:
        """Whether an adaptive round still has an episode to finish (a replay included): the
        next round waits for all of its results."""
        if self._round_end and not (self.out or self.again or self.waiting):
            self._round_end = False
        return self._round_end

    def _closed(self, episode: Episode) -> bool:
        """Whether a rule (a budget, the SPRT) keeps the episode's match from starting: then
        no later match starts either."""
        why = self.rules.closed(episode.match.index)
        if why is None:
            return False
        self._result.stopped_by = why
        log.info("run_stopping", reason=why, note="matches in flight finish; no new one starts")
        return True

    def _rounds(self, rounds: Rounds) -> Iterator[Match | _RoundEnd]:
        """The adaptive schedule: each round's matches, then the end of the round."""
        while True:
            picked = rounds.next_round(self._store.game_summaries())
            if isinstance(picked, str):
                self._result.stopped_by = picked
                log.info("run_stopping", reason=picked, ranking_probability=rounds.probability)
                return
            log.info(
                "round_picked",
                first_index=picked[0].index,
                matches=len(picked),
                ranking_probability=round(rounds.probability, 4),
            )
            yield from picked
            yield _ROUND_END

    def _scheduled(self) -> Iterator[Episode | _RoundEnd]:
        """Each scheduled episode's next play: its first, or the next replay of a stored
        no-contest still under the cap; episodes finished for good are counted as skipped."""
        config = self._plan.config
        if config.run.pool:
            from arena.league.pool import PoolRounds

            self.rounds = PoolRounds(self._plan, self._store)
        elif config.run.schedule == "adaptive":
            from arena.league.adaptive import (
                AdaptiveRounds,  # numpy's fits: adaptive schedules only
            )

            self.rounds = AdaptiveRounds(config, self._plan.master_seed)
        matches = self._rounds(self.rounds) if self.rounds else self._plan.matches()
        for match in matches:
            if isinstance(match, _RoundEnd):
                yield match
                continue
            for episode in match.episodes():
                while episode.id in self._finished and episode.again().id in self._finished:
                    episode = episode.again()
                if episode.id not in self._finished:
                    yield episode
                elif episode.id in self._spoiled and episode.replay < self.replay_cap:
                    self._result.skipped += 1
                    yield self.replayed(episode, "a no-contest stored by an earlier session")
                else:
                    self._result.skipped += 1
