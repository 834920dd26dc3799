"""Playing a run: a bounded pool of workers fed from a queue, one writer.

The schedule is produced lazily into a zero-buffer stream, so a run of 10,000
matches holds no more in memory than one of 10; `concurrency` workers each
play one episode at a time; every finished replay flows to one writer, which
writes it atomically and updates the summary. A failing episode is logged
with its error and the run goes on.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import games
import providers
from arena.cards import CardDealer
from arena.config import (
    Config,
    ConfigError,
    LlmPolicy,
    MockPolicy,
    ScriptedPolicy,
    draw_master_seed,
)
from arena.episode import EpisodeSetup, play_episode
from arena.llm_seat import LlmSeat, provider_spec
from arena.mock_seat import MockSeat
from arena.prompts import PromptError, PromptTemplate, load_template
from arena.replay import Replay, write_atomic
from arena.schedule import PAIRED_EPISODES, Episode, Match, match_seed, resolve_entry, schedule
from arena.seats import ScriptedSeat, TextSeat
from arena.standings import GameSummary, by_game, standings, summarise

__all__ = ["RunPlan", "RunResult", "execute", "plan_run"]

log = structlog.get_logger("arena.run")


@dataclass(frozen=True)
class RunPlan:
    """A validated run, ready to play: the config with its master seed resolved."""

    config: Config
    master_seed: int
    out: Path
    templates: dict[tuple[str, str], PromptTemplate]
    """(policy, family) -> template."""

    @property
    def policies(self) -> list[str]:
        """Policy names in config order."""
        return list(self.config.policies)

    def matches(self) -> Iterator[Match]:
        """The schedule, lazily."""
        run = self.config.run
        return schedule(self.master_seed, run.games, run.matches, self.policies)

    def episode_count(self) -> int:
        """How many episodes the run plays."""
        n = len(self.policies)
        pairs = n * (n - 1) // 2
        total = 0
        for entry in self.config.run.games:
            for k in range(1, self.config.run.matches + 1):
                game = resolve_entry(entry, match_seed(self.master_seed, entry, k))
                total += pairs * (1 if game in PAIRED_EPISODES else 2)
        return total

    def resolved(self) -> dict[str, Any]:
        """The config as played: concrete master seed, per-game deadlines and parameters."""
        data = self.config.model_dump(mode="json")
        data["run"]["seed"] = self.master_seed
        played = sorted({m.game for m in self.matches()})
        data["resolved"] = {
            name: {
                "deadlines": self.config.deadlines_for(name).model_dump(),
                "episode_wall_s": self.config.wall_s_for(name),
                "params": self.config.params_for(name),
            }
            for name in played
        }
        return data

    def seat_for(
        self, policy: str, seed: int, index: int, seat: int, pool: providers.Providers | None = None
    ) -> ScriptedSeat | TextSeat:
        """The seat a policy plays through in one game; its randomness derives from the seed."""
        spec = self.config.policies[policy]
        rng = random.Random(f"{seed}:{index}:{seat}:{policy}")
        if isinstance(spec, ScriptedPolicy):
            return ScriptedSeat(spec.baseline, rng)
        if isinstance(spec, MockPolicy):
            return MockSeat(rng, spec.faults, spec.latency_ms / 1000)
        if pool is None:
            raise RuntimeError(
                f"policy {policy!r} is a model: its seats need the run's open provider pool"
            )
        return LlmSeat(pool.client(provider_spec(spec)), spec)

    def _dealer(self) -> CardDealer:
        table = self.config.game.get("backgammon")
        dice = table.dice if table is not None and table.dice is not None else "verifiable"
        return CardDealer(self.out, dice, self.master_seed)

    def setup_for(self, game_name: str, pool: providers.Providers | None = None) -> EpisodeSetup:
        """Everything an episode of `game_name` needs."""
        config = self.config
        params = config.params_for(game_name)
        game = games.load(game_name, **params)
        return EpisodeSetup(
            run=config.run.name,
            game=game,
            params={**game.params(), **params},
            deadlines=config.deadlines_for(game_name),
            wall_s=config.wall_s_for(game_name),
            record_prompts=config.run.record_prompts,
            templates={p: self.templates[(p, game.family)] for p in self.policies},
            seat_for=functools.partial(self.seat_for, pool=pool),
            wall_covers_episode=game_name == "battle",
            switch_off_turns=2 if game_name == "battle" else None,
            cards=self._dealer() if game_name == "backgammon" else None,
            authors={name: spec.author for name, spec in config.policies.items()},
        )


def plan_run(config: Config, out: Path | None = None) -> RunPlan:
    """Check everything that can fail before a game starts, and fix the master seed."""
    master = config.run.seed or draw_master_seed()
    families = {games.load(name).family for name in _games_played(config, master)}
    templates: dict[tuple[str, str], PromptTemplate] = {}
    for name, spec in config.policies.items():
        if isinstance(spec, LlmPolicy):
            try:
                provider_spec(spec)
            except ValueError as exc:
                raise ConfigError(f"policies.{name}: {exc}") from exc
        for family in families:
            try:
                templates[(name, family)] = load_template(spec.template_for(family))
            except PromptError as exc:
                raise ConfigError(f"policies.{name}.prompt: {exc}") from exc
    return RunPlan(config, master, out or Path("runs") / config.run.name, templates)


def _games_played(config: Config, master: int) -> set[str]:
    return {
        resolve_entry(entry, match_seed(master, entry, k))
        for entry in config.run.games
        for k in range(1, config.run.matches + 1)
    }


@dataclass
class RunResult:
    """What a run produced."""

    games: list[GameSummary] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    episodes: int = 0
    wall_s: float = 0.0


Progress = Callable[[GameSummary | None, int], None]
"""Called by the writer after each episode: a finished game (or None) and episodes done."""


async def execute(plan: RunPlan, *, on_episode: Progress | None = None) -> RunResult:
    """Play every episode of the plan with bounded concurrency."""
    plan.out.mkdir(parents=True, exist_ok=True)
    write_atomic(plan.out / "config.resolved.json", json.dumps(plan.resolved(), indent=2))
    result = RunResult()
    started = time.monotonic()
    name = plan.config.run.name
    log.info("run_started", run=name, seed=plan.master_seed, episodes=plan.episode_count())
    with structlog.contextvars.bound_contextvars(run=name):
        async with providers.Providers() as pool:
            await _play_all(plan, pool, result, on_episode)
    result.wall_s = time.monotonic() - started
    _write_summary(plan, result)
    log.info(
        "run_finished",
        run=name,
        episodes=result.episodes,
        failed=len(result.failed),
        wall_s=round(result.wall_s, 3),
    )
    return result


async def _play_all(
    plan: RunPlan, pool: providers.Providers, result: RunResult, on_episode: Progress | None
) -> None:
    """The schedule feeds `concurrency` workers through a zero-buffer stream; one writer."""
    setups: dict[str, EpisodeSetup] = {}
    jobs_send, jobs_receive = anyio.create_memory_object_stream[Episode](0)
    done_send, done_receive = anyio.create_memory_object_stream[Replay | dict[str, str]](
        plan.config.run.concurrency
    )

    async def produce() -> None:
        async with jobs_send:
            for match in plan.matches():
                if match.game not in setups:
                    setups[match.game] = plan.setup_for(match.game, pool)
                for episode in match.episodes():
                    await jobs_send.send(episode)

    async with anyio.create_task_group() as group, done_send:
        group.start_soon(produce)
        for _ in range(plan.config.run.concurrency):
            group.start_soon(_worker, setups, jobs_receive.clone(), done_send.clone())
        jobs_receive.close()
        group.start_soon(_writer, plan, done_receive, result, on_episode)


async def _worker(
    setups: dict[str, EpisodeSetup],
    jobs: MemoryObjectReceiveStream[Episode],
    done: MemoryObjectSendStream[Replay | dict[str, str]],
) -> None:
    async with jobs, done:
        async for episode in jobs:
            try:
                replay = await play_episode(setups[episode.match.game], episode)
            except Exception as exc:  # an engine or seat bug must not take the run down
                log.exception("episode_failed", episode=episode.id, error=repr(exc))
                await done.send({"episode": episode.id, "error": repr(exc)})
                continue
            await done.send(replay)


async def _writer(
    plan: RunPlan,
    done: MemoryObjectReceiveStream[Replay | dict[str, str]],
    result: RunResult,
    on_episode: Progress | None,
) -> None:
    replays = plan.out / "replays"
    async with done:
        async for item in done:
            result.episodes += 1
            if isinstance(item, dict):
                result.failed.append(item)
                if on_episode:
                    on_episode(None, result.episodes)
                continue
            write_atomic(replays / f"{item.episode}.json", item.model_dump_json(exclude_none=False))
            for summary in summarise(item):
                result.games.append(summary)
                if on_episode:
                    on_episode(summary, result.episodes)


def _write_summary(plan: RunPlan, result: RunResult) -> None:
    grouped = by_game(result.games)
    summary = {
        "run": plan.config.run.name,
        "seed": plan.master_seed,
        "episodes": result.episodes,
        "failed": result.failed,
        "wall_s": round(result.wall_s, 3),
        "standings": {
            "overall": [r.to_json() for r in standings(result.games, plan.policies)],
            **{
                name: [r.to_json() for r in standings(g, plan.policies, game=name)]
                for name, g in grouped.items()
            },
        },
        "games": [
            g.to_json() for g in sorted(result.games, key=lambda g: (g.match_index, g.game_index))
        ],
    }
    write_atomic(plan.out / "summary.json", json.dumps(summary, indent=2))
