"""Program nodes: what one helper call costs over the sandbox's pipe, single and batched.

    python -m bench.programs [--calls 4000] [--runs 5] [--sandbox auto]

A program seat in a real sandboxed child plays connect-four's opening position: its move
makes `--calls` helper calls (each `ctx.standing`, one node) one at a time, then the same
nodes as `ctx.standing_many` batches of 20. A move that makes no call is timed too and
taken off, so the figures are the calls alone: microseconds per single call (target at
most 50) and per state in a batch of 20 (target at most 10). Medians of `--runs` moves.

The table also shows how long a child takes to start (from the spawn to its first
move's answer, the move itself making no call), in each sandbox mode that works here
(`[run] sandbox`: `process`, and `bwrap` where bubblewrap is installed).

`--sandbox` sets the mode of the call figures' child.

Both figures include the engine's own work, so the table also shows `game.standing` of
that position timed in this process, without any wire: what a batched state costs at the
least. Every figure is wall time; on a loaded machine the two processes' waits for a CPU
come on top, so compare figures taken in the same session.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from rich.console import Console
from rich.table import Table

import games
from arena.programs import ProgramRunner, register
from arena.programs.bwrap import SANDBOX_MODES, SandboxMode, bwrap_problem

SINGLE_TARGET_US = 50.0
BATCH_TARGET_US = 10.0
BATCH = 20

PROGRAM = """
def create(ctx):
    return Caller(ctx)


class Caller:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        calls, batched = {calls}, {batched}
        state = view["state"]
        if batched:
            for _ in range(calls // {batch}):
                self.ctx.standing_many([state] * {batch}, 0)
        else:
            for _ in range(calls):
                self.ctx.standing(state, 0)
        return view["legal_moves"][0]
"""


async def _move_s(
    folder: Path, calls: int, batched: bool, runs: int, sandbox: SandboxMode
) -> list[float]:
    path = folder / f"caller_{calls}_{int(batched)}.py"
    path.write_text(PROGRAM.format(calls=calls, batched=batched, batch=BATCH))
    game = games.load("connect-four")
    state = game.initial(1)
    times = []
    budget = 10 * calls + 10
    async with ProgramRunner(register(path), seed=1, node_budget=budget, sandbox=sandbox) as seat:
        await seat.choose(game, state, 0, timeout_s=60)  # the child starts: not timed
        for _ in range(runs):
            started = time.perf_counter()
            await seat.choose(game, state, 0, timeout_s=60)
            times.append(time.perf_counter() - started)
    return times


async def _start_ms(folder: Path, mode: SandboxMode, runs: int) -> float:
    """The median time from a child's spawn to its first (empty) move's answer."""
    path = folder / "starter.py"
    path.write_text(PROGRAM.format(calls=0, batched=False, batch=BATCH))
    game = games.load("connect-four")
    state = game.initial(1)
    info = register(path)
    times = []
    for _ in range(runs):
        async with ProgramRunner(info, seed=1, sandbox=mode) as seat:
            started = time.perf_counter()
            await seat.choose(game, state, 0, timeout_s=60)
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _standing_us(calls: int, runs: int) -> float:
    game = games.load("connect-four")
    state = game.initial(1)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(calls):
            game.standing(state, 0)
        times.append(time.perf_counter() - started)
    return statistics.median(times) / calls * 1e6


async def _figures(calls: int, runs: int, sandbox: SandboxMode) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        empty = statistics.median(await _move_s(folder, 0, False, runs, sandbox))
        single = statistics.median(await _move_s(folder, calls, False, runs, sandbox))
        batched = statistics.median(await _move_s(folder, calls, True, runs, sandbox))
        modes: list[SandboxMode] = ["process"] + ([] if bwrap_problem() else ["bwrap"])
        starts = {f"child start, {m} (ms)": await _start_ms(folder, m, runs) for m in modes}
    return {
        **starts,
        "empty move (ms)": empty * 1000,
        "engine's standing alone (us)": _standing_us(calls, runs),
        "single call (us)": (single - empty) / calls * 1e6,
        f"per state, batches of {BATCH} (us)": (batched - empty) / calls * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--sandbox", choices=SANDBOX_MODES, default="auto", help="the calls' sandbox mode"
    )
    args = parser.parse_args()
    figures = anyio.run(_figures, args.calls, args.runs, args.sandbox)
    title = f"program helper calls, {args.calls:,} nodes a move, median of {args.runs}"
    table = Table(title=f"{title}, sandbox {args.sandbox}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    targets = {
        "single call (us)": SINGLE_TARGET_US,
        f"per state, batches of {BATCH} (us)": BATCH_TARGET_US,
    }
    for name, value in figures.items():
        target = targets.get(name)
        shown = (
            "" if target is None else f"<= {target:g} ({'met' if value <= target else 'MISSED'})"
        )
        table.add_row(name, f"{value:.1f}", shown)
    Console().print(table)


if __name__ == "__main__":
    main()
