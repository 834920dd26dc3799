"""Engine speed: random playouts per second and baseline decisions per second, per game.

    python -m bench.engines [--runs 5] [--seconds 1.0] [--game hex ...]

One core, pure Python. A playout is the loop the issue fixes: `to_act`,
`legal_moves` + a random choice (the baseline where a game lists no moves, as
in Stratego's setup), `apply`, until `outcome`. Figures are medians of
`--runs` runs of about `--seconds` each; baseline figures time the baseline
once on each of 1,000 distinct positions from random playouts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

import games

TARGETS = {
    "connect-four": 15_000,
    "breakthrough": 6_000,
    "hex": 5_000,
    "quoridor": 1_500,
    "backgammon": 200,
    "stratego": 50,
}


def _seed(name: str, n: int) -> int | str:
    return f"{n:064x}" if name == "backgammon" else n


def playouts_per_second(game: games.Game[Any], seconds: float, start: int) -> float:
    rng = random.Random(start)
    done, n = 0, start
    began = time.perf_counter()
    while (elapsed := time.perf_counter() - began) < seconds or done == 0:
        s = game.initial(_seed(game.name, n))
        while seats := game.to_act(s):
            moves = {}
            for seat in seats:
                legal = game.legal_moves(s, seat)
                moves[seat] = rng.choice(legal) if legal else game.baseline(s, seat)
            s = game.apply(s, moves)
        game.outcome(s)
        done += 1
        n += 1
    return done / elapsed


def baseline_per_second(game: games.Game[Any], positions: int, start: int) -> float:
    """Baseline decisions per second over `positions` distinct positions, each asked once."""
    rng = random.Random(start)
    found: list[tuple[Any, int]] = []
    n = start
    while len(found) < positions:
        s = game.initial(_seed(game.name, n))
        while (seats := game.to_act(s)) and len(found) < positions:
            found.append((s, seats[0]))
            moves = {}
            for seat in seats:
                legal = game.legal_moves(s, seat)
                moves[seat] = rng.choice(legal) if legal else game.baseline(s, seat)
            s = game.apply(s, moves)
        n += 1
    began = time.perf_counter()
    for state, seat in found:
        game.baseline(state, seat)
    return len(found) / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--game", action="append", help="only these games (default: all)")
    args = parser.parse_args()
    table = Table(title=f"engines: medians of {args.runs} runs of ~{args.seconds:g} s, one core")
    for column in ("game", "playouts/s", "target", "ratio", "baseline decisions/s"):
        table.add_column(column, justify="left" if column == "game" else "right")
    for name in args.game or games.names():
        game = games.load(name)
        playouts = statistics.median(
            playouts_per_second(game, args.seconds, 1000 * r) for r in range(args.runs)
        )
        baseline = statistics.median(
            baseline_per_second(game, 1000, 7919 * (r + 1)) for r in range(args.runs)
        )
        target = TARGETS.get(name)
        ratio = f"{playouts / target:.2f}x" if target else "-"
        table.add_row(
            name, f"{playouts:,.0f}", f"{target:,}" if target else "-", ratio, f"{baseline:,.0f}"
        )
        Console().print(f"measured {name}", style="dim")
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
