"""What every ply of a replay looks like, re-derived with the engine.

A replay keeps the moves, not the pictures. `replay_data` replays each game
from its seed, `parse` then `apply` on every recorded move as `arena verify`
does, and asks the game's drawer (`boards.DRAWERS`) for a frame after every
ply; frame 0 is the starting position. Everything a page shows comes out
of here as JSON-able data: the frames, the decisions with their source,
`say`, attempts (reply, reasoning, token usage, the prompt and its split into
system and user message) and fallback cause, and the recorded standings.
"""

from __future__ import annotations

from typing import Any

import games
from arena.record.replay import DecisionRecord, FallbackRecord, GameRecord, Replay
from arena.viewer.boards import drawer_for

__all__ = ["REPLY_CHARS", "game_data", "replay_data"]

REPLY_CHARS = 2000
"""How much of a raw reply a page carries (fallback records cut theirs there too)."""


def replay_data(replay: Replay) -> dict[str, Any]:
    """The data of one replay page: the episode, and per game its plies and frames."""
    game = games.load(replay.game, **replay.params)
    seed = replay.match.seed
    return {
        "kind": "replay",
        "run": replay.run,
        "episode": replay.episode,
        "game": replay.game,
        "rules_version": replay.rules_version,
        "params": replay.params,
        "match": replay.match.model_dump(),
        "seed": seed,
        "card_seed": replay.integrity.get("card_seed"),
        "deadlines": replay.deadlines,
        "games": [game_data(game, replay.chance, record, replay) for record in replay.games],
    }


def game_data(
    game: games.Game[Any], seed: int | str, record: GameRecord, replay: Replay
) -> dict[str, Any]:
    """One game: aliases, policies (spectator side), result, plies and one frame per ply."""
    drawer = drawer_for(game.name)
    state = game.initial(seed, game=record.index)
    fallbacks = {(f.ply, f.seat): f for f in record.fallbacks}
    frames = [drawer.frame(game, None, state)]
    standings = [[game.standing(state, 0), game.standing(state, 1)]]
    plies = []
    for ply in record.plies:
        moves = {d.seat: game.parse(state, d.seat, d.move) for d in ply.decisions}
        after = game.apply(state, moves)
        frames.append(drawer.frame(game, state, after))
        standings.append(list(ply.standings))
        plies.append(
            {
                "ply": ply.ply,
                "decisions": [
                    _decision(game.name, d, fallbacks.get((ply.ply, d.seat)))
                    for d in sorted(ply.decisions, key=lambda d: d.seat)
                ],
            }
        )
        state = after
    return {
        "index": record.index,
        "aliases": record.aliases,
        "policies": replay.spectator.policies.get(str(record.index), []),
        "result": record.result.model_dump() if record.result is not None else None,
        "static": drawer.static(game, game.initial(seed, game=record.index)),
        "frames": frames,
        "standings": standings,
        "plies": plies,
        "fallbacks": len(record.fallbacks),
    }


def _decision(
    game_name: str, decision: DecisionRecord, fallback: FallbackRecord | None
) -> dict[str, Any]:
    """A decision as the move list shows it, with its fallback cause when it fell back."""
    return {
        "seat": decision.seat,
        "alias": decision.alias,
        "move": drawer_for(game_name).move_text(decision.move),
        "source": decision.source,
        "say": decision.say,
        "latency_s": decision.latency_s,
        "attempts": [
            {
                "n": a.n,
                "cause": a.cause,
                "error": a.error,
                "status": a.status,
                "latency_s": a.latency_s,
                "reply": None if a.reply is None else a.reply[:REPLY_CHARS],
                "reasoning": a.reasoning,
                "usage": a.usage,
                "prompt": a.prompt,
                "system_chars": a.system_chars,
            }
            for a in decision.attempts
        ],
        "fallback": None
        if fallback is None
        else {"cause": fallback.cause, "last_error": fallback.last_error},
    }
