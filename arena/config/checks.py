"""The run config's checks across tables: what no single table can see.

A baseline named for one game in a run of others, a program in a run of games
programs do not play, a uid block too small for the programs' children, a decoding the policy's protocol cannot send, a deadline table of a game the run never plays, the
stopping rules against the schedule, and the API keys and secret headers the
environment must hold (unless the caller sends nothing).
"""

from __future__ import annotations

import os
from typing import Any

import games
from arena.config.models import (
    Config,
    ConfigError,
    GameTable,
    LlmPolicy,
    ProgramPolicy,
    ScriptedPolicy,
)
from games import program_games

__all__ = ["check_semantics"]


def check_semantics(config: Config, source: str, keys: bool = True) -> None:
    """Raise ConfigError (naming `source`, the field and the fix) for the first thing that
    spans tables and is wrong; with `keys`, every secret the policies name must be set."""
    if keys:
        _check_keys(config, source)
    _check_stopping(config, source)
    _check_program_uids(config, source)
    for name, policy in config.policies.items():
        if isinstance(policy, LlmPolicy):
            _check_decoding(name, policy, source)
        if isinstance(policy, ScriptedPolicy):
            _check_baseline(config, name, policy, source)
        if isinstance(policy, ProgramPolicy):
            _check_program(config, name, source)
    for name, table in config.game.items():
        try:
            game = games.load(name, **table.engine_params())
        except ValueError as exc:
            raise ConfigError(f"{source}: [game.{name}]: {exc}") from exc
        _check_game_table(game, name, table, source)
    unplayed = sorted(set(config.game) - _played(config))
    if unplayed:
        tables = ", ".join(f"[game.{name}]" for name in unplayed)
        named = ", ".join(repr(name) for name in unplayed)
        rotation = (
            f" (rotate stands for {', '.join(games.ROTATION)})"
            if "rotate" in config.run.games
            else ""
        )
        raise ConfigError(
            f"{source}: {tables}: no entry of run.games = {config.run.games} ever plays "
            f"{named}{rotation}: remove the table{'s' if len(unplayed) > 1 else ''}, or add "
            f"{named} to run.games"
        )


def _check_stopping(config: Config, source: str) -> None:
    """The SPRT tests one pair; an adaptive schedule ranks several; a cost budget needs
    every model's price."""
    run = config.run
    if run.sprt is not None and len(config.policies) != 2:
        raise ConfigError(
            f"{source}: [run.sprt] tests two policies against each other, and the run has "
            f"{len(config.policies)} ({', '.join(config.policies)}): keep two, or remove [run.sprt]"
        )
    chooser = (
        "[run.sprt]"
        if run.sprt is not None
        else 'schedule = "adaptive"'
        if run.schedule == "adaptive"
        else None
    )
    if chooser is not None and len(run.games) != 1:
        raise ConfigError(
            f"{source}: {chooser} reads its matches in schedule order, one games entry at a "
            f"time, and run.games = {run.games}: keep one entry (rotate plays the four board "
            "games in turn)"
        )
    if run.sprt is not None and "matches" in run.model_fields_set:
        raise ConfigError(
            f"{source}: with [run.sprt] the pair plays until the verdict, at most "
            "sprt.max_matches matches: remove run.matches"
        )
    if run.sprt is not None and run.schedule == "adaptive":
        raise ConfigError(
            f'{source}: [run.sprt] and schedule = "adaptive" both choose when to stop: keep one'
        )
    if run.schedule == "adaptive" and len(config.policies) < 3:
        raise ConfigError(
            f'{source}: schedule = "adaptive" picks among pairs, and two policies make one '
            "pair: use [run.sprt] for an A/B test of two"
        )
    if run.budget_usd is not None:
        unpriced = [
            name
            for name, p in config.policies.items()
            if isinstance(p, LlmPolicy) and p.price is None
        ]
        if unpriced:
            raise ConfigError(
                f"{source}: run.budget_usd = {run.budget_usd} needs the cost of every reply, "
                f"and {', '.join(f'policies.{n}' for n in unpriced)} has no price: add "
                "price = { input_per_mtok = ..., output_per_mtok = ... }, or use budget_tokens"
            )


def _check_decoding(name: str, policy: LlmPolicy, source: str) -> None:
    """A condition the protocol cannot send is refused, never recorded as measured:
    Anthropic's Messages have no JSON mode (its request would be the free one)."""
    if policy.provider == "anthropic" and policy.reply_decoding == "json":
        field = "json_mode = true" if policy.json_mode else 'decoding = "json"'
        raise ConfigError(
            f'{source}: policies.{name}: {field} on provider = "anthropic": the protocol has '
            'no JSON mode; use decoding = "schema"'
        )


def _check_keys(config: Config, source: str) -> None:
    """Every API key the policies name and the environment lacks, in one error."""
    missing = [
        (f"{name}.{field}", env)
        for name, policy in config.policies.items()
        if isinstance(policy, LlmPolicy)
        for field, env in (
            ("api_key_env", policy.api_key_env),
            ("client_key_password_env", policy.client_key_password_env),
            *((f"headers_env.{header}", e) for header, e in policy.headers_env.items()),
        )
        if env and not os.environ.get(env)
    ]
    if len(missing) == 1:
        where, key_env = missing[0]
        raise ConfigError(
            f"{source}: policies.{where} names {key_env}, "
            f"which is not set: export {key_env}=... before the run"
        )
    if missing:
        lines = "".join(f"\n  policies.{where} names {env}" for where, env in missing)
        exports = " ".join(f"{env}=..." for env in dict.fromkeys(env for _, env in missing))
        raise ConfigError(
            f"{source}: the API keys of {len(missing)} policies are not set:{lines}\n"
            f"export {exports} before the run"
        )


def _check_game_table(game: games.Game[Any], name: str, table: GameTable, source: str) -> None:
    fmt = game.match_format
    if table.episode_wall_s is not None and fmt.wall_s is None:
        cap = f"; at {game.ply_cap:,} plies a game ends as a no-contest" if game.ply_cap else ""
        raise ConfigError(
            f"{source}: [game.{name}] episode_wall_s = {table.episode_wall_s:g}: {name} is never "
            f"stopped by time (a game runs to its end{cap}; docs/rules.md): remove episode_wall_s"
        )
    if table.dice is not None and not fmt.dealt_in_cards:
        raise ConfigError(
            f"{source}: [game.{name}] dice = {table.dice!r}: {name}'s chance comes from the match "
            "seed, not from cards: remove dice"
        )


def _played(config: Config) -> set[str]:
    """Every game the run's entries can stand for (`rotate`: the whole rotation)."""
    return {name for entry in config.run.games for name in _entry_games(entry)}


def _entry_games(entry: str) -> tuple[str, ...]:
    return games.ROTATION if entry == "rotate" else (entry,)


def _check_program(config: Config, name: str, source: str) -> None:
    playable = program_games()
    unplayable = sorted(_played(config) - set(playable))
    if unplayable:
        raise ConfigError(
            f"{source}: policies.{name} is a program, and programs do not play {unplayable} "
            f"(they play {', '.join(playable)}): remove it or the game"
        )


def _check_program_uids(config: Config, source: str) -> None:
    """The uid block is [first, last] and holds a uid for every program child that may run
    at once (two seats a game, `concurrency` games)."""
    first, last = config.run.program_uids
    where = f"{source}: run.program_uids = [{first}, {last}]"
    if first > last:
        raise ConfigError(f"{where}: the first uid is above the last: write [first, last]")
    programs = sum(isinstance(p, ProgramPolicy) for p in config.policies.values())
    needed = min(programs, 2) * config.run.concurrency
    if last - first + 1 < needed:
        raise ConfigError(
            f"{where} holds {last - first + 1} uids, and up to {needed} program children run "
            f"at once (run.concurrency = {config.run.concurrency}): widen the block to "
            f"[{first}, {first + needed - 1}] or more"
        )


def _check_baseline(config: Config, name: str, policy: ScriptedPolicy, source: str) -> None:
    if policy.baseline in ("default", "random"):
        return
    others = sorted(g for g in _played(config) if policy.baseline not in games.load(g).baselines)
    if others:
        owners = [n for n in games.names() if policy.baseline in games.load(n).baselines]
        raise ConfigError(
            f"{source}: policies.{name}.baseline = {policy.baseline!r} plays only "
            f"{', '.join(owners)}, but the run has {others}: use 'default'"
        )
