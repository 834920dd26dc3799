"""Bytes per game of league.db and summary.json, the same games among 10 and among 40 entrants.

    python -m bench.history_sizes [--matches 2000] [--entrants 10 40]

A few connect-four matches are played once (tactician against random); every
league here is those games again, match after match, between entrants paired
in turn (every pair of the league in order, then again), stored through the
league store and closed as a session closes (`close_session`: the tables, the
Elo events, the session's ratings, summary.json and games.jsonl). Only the
names at the seats differ between the leagues, so what grows with the number
of entrants is what the store and the summary keep per entrant, not per game.
The history kept per match is the two policies a match moved (target: 40
entrants at most 1.3x the bytes per game of 10).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import tempfile
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

from arena.config import parse_config
from arena.league.plan import RunPlan, plan_run
from arena.league.run import execute
from arena.league.store import DB_NAME, LeagueStore
from arena.league.summary import GAMES_NAME, SUMMARY_NAME, RunResult, close_session
from arena.logs import configure_logging
from arena.record.replay import Replay, load_replay

__all__ = ["TARGET", "per_game_sizes"]

TARGET = 1.3
"""The most the bytes per game may grow from the fewest entrants to the most."""

_SEED = 7


def _template_matches(folder: Path) -> list[list[Replay]]:
    """The few real matches every league here repeats: each match's replays."""
    config = {
        "run": {"name": "template", "seed": _SEED, "games": ["connect-four"], "matches": 3},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "random": {"kind": "scripted", "baseline": "random"},
        },
    }
    out = folder / "template"
    anyio.run(execute, plan_run(parse_config(config), out))
    replays = [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]
    by_match = itertools.groupby(
        sorted(replays, key=lambda r: r.match.index), lambda r: r.match.index
    )
    return [list(group) for _, group in by_match]


def _entrant(n: int) -> str:
    return f"entrant-{n:03d}"


def _as_played_by(template: Replay, index: int, first: str, second: str) -> Replay:
    """`template`'s games again as match `index`, `first` and `second` at its seats."""
    names = {template.match.first: first, template.match.second: second}
    match = template.match.model_copy(
        update={"index": index, "id": f"m{index:07d}", "first": first, "second": second}
    )
    seats = {k: [names[p] for p in v] for k, v in template.spectator.policies.items()}
    spectator = template.spectator.model_copy(
        update={"policies": seats, "authors": {}, "fingerprints": {}}
    )
    episode = f"e{index:07d}-{template.games[0].index}"
    return template.model_copy(
        update={"episode": episode, "match": match, "spectator": spectator, "session": 1}
    )


def _league(
    folder: Path, templates: list[list[Replay]], entrants: int, matches: int
) -> dict[str, Any]:
    """Store `matches` matches among `entrants` and close the session; the sizes."""
    names = [_entrant(n) for n in range(entrants)]
    config = parse_config({
        "run": {"name": f"sizes-{entrants}", "seed": _SEED, "games": ["connect-four"], "matches": 1},
        "policies": {n: {"kind": "scripted", "baseline": "random"} for n in names},
    })  # fmt: skip
    out = folder / f"league-{entrants}"
    store = LeagueStore.open_for_run(out)
    played = 0
    try:
        policies = [{"name": n, "kind": "scripted", "templates": {}} for n in names]
        store.begin_run(config.run.name, _SEED, {"run": {"name": config.run.name}}, policies)
        pairs = itertools.cycle(itertools.combinations(names, 2))
        for index, (first, second) in zip(range(matches), pairs, strict=False):
            for template in templates[index % len(templates)]:
                replay = _as_played_by(template, index, first, second)
                path = out / "replays" / f"{replay.episode}.json"
                digest = hashlib.sha256(replay.model_dump_json().encode()).hexdigest()
                played += len(store.record(replay, path, digest))
        plan = RunPlan(config, _SEED, out, templates={})
        close_session(plan, store, RunResult(), {}, 0.0)
    finally:
        store.close()
    return {
        "entrants": entrants,
        "games": played,
        "league.db": (out / DB_NAME).stat().st_size / played,
        "summary.json": (out / SUMMARY_NAME).stat().st_size / played,
        "games.jsonl": (out / GAMES_NAME).stat().st_size / played,
    }


def per_game_sizes(
    matches: int = 2000, entrants: tuple[int, ...] = (10, 40)
) -> list[dict[str, Any]]:
    """Bytes per game of league.db, summary.json and games.jsonl of the same `matches`
    matches among each number of `entrants`: one dict a league (entrants, games, and
    the three sizes per game)."""
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        templates = _template_matches(folder)
        return [_league(folder, templates, n, matches) for n in entrants]


def main() -> None:
    """Print the bytes per game, and each size's ratio to the fewest entrants'."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--entrants", type=int, nargs="+", default=[10, 40])
    args = parser.parse_args()
    Console(width=120).print(sizes_table(args.matches, tuple(args.entrants)))


def sizes_table(matches: int, entrants: tuple[int, ...]) -> Table:
    """`per_game_sizes` as a table, each size's ratio to the fewest entrants' beside it."""
    configure_logging(None, console=False)  # the games it plays are no one's to read
    sizes = per_game_sizes(matches, entrants)
    table = Table(title=f"bytes per game, {matches:,} matches (target <= {TARGET}x)")
    for column in ("entrants", "games", "league.db", "summary.json", "games.jsonl"):
        table.add_column(column, justify="right")
    base = sizes[0]
    for row in sizes:
        table.add_row(
            str(row["entrants"]), f"{row['games']:,}",
            *(f"{row[k]:,.0f} B ({row[k] / base[k]:.2f}x)" for k in ("league.db", "summary.json", "games.jsonl")),
        )  # fmt: skip
    return table


if __name__ == "__main__":
    main()
