"""A large league's run folder written directly (no games played, nothing fitted): the
summary.json a league of `entrants` policies and `games` games would have, for the page's
tests at scale."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from arena.config import parse_config
from arena.results.pool import entrant_rows
from arena.results.standings import GameSummary, SeatStats
from arena.results.tables import league_tables

_ENDINGS = ("four-in-a-row", "full-board")


def _seat(rng: random.Random) -> SeatStats:
    fallbacks = {"unreadable": 1} if rng.random() < 0.05 else {}
    return SeatStats((rng.randint(3, 40),) * 6, fallbacks, decided=6)


def big_league(
    out: Path, *, entrants: int, games: int, seed: int = 3, pool: bool = False
) -> dict[str, Any]:
    """Write `out/summary.json` of a connect-four league (a standing pool's, with `pool`) of
    `entrants` policies and `games` games (two a match, random pairs, in two sessions);
    the summary, without its games."""
    rng = random.Random(seed)
    names = [f"policy-{n:04d}" for n in range(entrants)]
    strength = {n: rng.gauss(0, 200) for n in names}
    played = []
    for index in range(games // 2):
        first, second = rng.sample(names, 2)
        for game_index, seats in ((1, (first, second)), (2, (second, first))):
            edge = strength[seats[0]] - strength[seats[1]]
            win = rng.random() < 1 / (1 + 10 ** (-edge / 400))
            played.append(GameSummary(
                f"connect-four-k{index}-g{game_index}", index, "connect-four", game_index, seats,
                (1, -1) if win else (-1, 1), "complete", rng.choice(_ENDINGS), rng.randint(7, 42),
                (_seat(rng), _seat(rng)), False, 1 if index < games // 4 else 2,
            ))  # fmt: skip
    config = parse_config({
        "run": {"name": "big", "seed": seed, "games": ["connect-four"], "matches": 1},
        "policies": {n: {"kind": "scripted", "baseline": "random"} for n in names},
    })  # fmt: skip
    bt = {
        n: {"rating": 1500 + s, "low": 1470 + s, "high": 1530 + s, "on_prior": False}
        for n, s in strength.items()
    }
    tables = league_tables(played, config, seed, stored={"bt": bt, "ab": {}})
    earlier = {n: {**r, "rating": r["rating"] - 10} for n, r in bt.items()}
    history = [{"session": 1, "bt": earlier}, {"session": 2, "bt": bt}]
    summary = {
        "run": "big", "seed": seed, "episodes": games, "played_this_session": games, "failed": [],
        "interrupted": False, "stopped_by": None, "wall_s": 1.0, **tables, "history": history,
    }  # fmt: skip
    if pool:
        stored = [{"name": n, "kind": "scripted", "added": 1, "retired": None} for n in names]
        summary["entrants"] = entrant_rows(stored, played, bt, placement=0)
        summary["pool"] = {"target": 0.9, "matches": 2, "placement_matches": 0}
    out.mkdir(parents=True, exist_ok=True)
    rows = [g.to_json(latencies=False) for g in played]
    (out / "summary.json").write_text(json.dumps({**summary, "games": rows}))
    (out / "replays").mkdir(exist_ok=True)
    return summary
