"""`arena prompt`: the exact prompt a seat would get, before it costs a token."""

from __future__ import annotations

from pathlib import Path

import games
from arena.config import ConfigError, load_config
from arena.play.prompts import SeatContext, load_template, render

__all__ = ["preview"]


def preview(
    *,
    game: str,
    seed: int,
    ply: int = 1,
    game_index: int = 1,
    seat: int | None = None,
    config: Path | None = None,
    policy: str | None = None,
) -> str:
    """Reach ply `ply` with the baseline playing both seats, then render the prompt of the seat to act."""
    if seed <= 0:
        raise ConfigError(f"--seed {seed}: give a concrete seed >= 1")
    name = games.resolve_entry(game, seed)
    params = {}
    template_path = None
    if config is not None:
        loaded = load_config(config)
        params = loaded.params_for(name)
        if policy is None or policy not in loaded.policies:
            raise ConfigError(
                f"--policy {policy!r} is not a policy of {config} (known: {', '.join(loaded.policies)})"
            )
    rules = games.load(name, **params)
    if config is not None and policy is not None:
        template_path = loaded.policies[policy].template_for(rules.family)
    template = load_template(template_path or f"{rules.family}/default.md")
    state = rules.initial(seed, game=game_index)
    history: list[str] = []
    for _ in range(ply - 1):
        seats = rules.to_act(state)
        if not seats:
            raise ConfigError(f"--ply {ply}: the baseline game ends after {len(history)} plies")
        moves = {s: rules.baseline(state, s) for s in seats}
        state = rules.apply(state, moves)
        history.append(" ".join(str(m) for m in moves.values()))
    seats = rules.to_act(state)
    if not seats:
        raise ConfigError(f"--ply {ply}: the game is over at that ply")
    if seat is None:
        seat = seats[0]
    elif seat not in seats:
        raise ConfigError(f"--seat {seat} does not act at ply {ply} (seats to act: {list(seats)})")
    context = SeatContext.of(
        rules, state, seat, game_index=game_index,
        aliases=rules.match_format.aliases(seed, game_index),
        history=tuple(history), notes="",
    )  # fmt: skip
    return render(template, context)
