"""Executors: what an episode costs on Ray against the local pool, and a program league's wall time.

    python -m bench.executors [--episodes 60] [--repeats 3] [--cpus 2]

Starts a Ray instance of this machine with `--cpus` CPUs (`ray.init(address="local")`),
then, in this one process:

1. **Overhead per episode.** A league of fast scripted episodes (connect-four, the
   tactician against the random baseline and a mock seat: a few ms each) is played with
   `executor = "local"` and `"ray"`, both at concurrency 1, so that the difference is what
   the cluster adds to each episode: the task's submission, the plan lookup on the
   worker, the thread and event loop the worker plays in, the messages streamed back and
   the driver's relay of the events. Median of `--repeats` runs; target at most 20 ms.
2. **A program league.** Program seats (`players/search.py`, `greedy.py`,
   `random_player.py` on connect-four) on Ray with `--cpus` workers against the local
   pool at concurrency `--cpus`: the wall times and their ratio. On one machine the two
   share the same cores, so the ratio shows the cluster's cost at equal hardware; on a
   cluster the Ray run has every node's cores.

Joining the cluster (a few seconds, once per run) is measured apart and not counted, nor
is a warm-up league in which each worker process imports the arena once.
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

from arena.config import load_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 20.0

FAST = """
[run]
name = "overhead"
seed = 3
games = ["connect-four"]
matches = {matches}
concurrency = 1
executor = "{executor}"
[policies.tactician]
kind = "scripted"
baseline = "default"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock]
kind = "mock"
"""

PROGRAMS = """
[run]
name = "programs"
seed = 31
games = ["connect-four"]
matches = {matches}
concurrency = {cpus}
executor = "{executor}"
[policies.search]
kind = "program"
path = "{root}/players/search.py"
[policies.greedy]
kind = "program"
path = "{root}/players/greedy.py"
[policies.random]
kind = "program"
path = "{root}/players/random_player.py"
"""


def _play(text: str, folder: Path) -> tuple[float, int]:
    """(wall seconds of the session, episodes played)."""
    config = folder / "league.toml"
    config.write_text(text)
    plan = plan_run(load_config(config), folder / "run")
    result = anyio.run(lambda: execute(plan, check_endpoints=False))
    if result.failed:
        raise SystemExit(f"episodes failed: {result.failed[:3]}")
    return result.wall_s, result.played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=60, help="episodes per overhead run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="the Ray instance's CPUs")
    parser.add_argument("--program-matches", type=int, default=2)
    args = parser.parse_args()

    import ray

    close_logging()  # the runs' events go nowhere: only the figures are printed
    console = Console()
    started = time.perf_counter()
    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False,
             log_to_driver=False, logging_level="ERROR")  # fmt: skip
    join_s = time.perf_counter() - started
    matches = max(1, args.episodes // 6)  # 3 pairs x 2 episodes a match
    overheads, per_local, per_ray = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm-up"  # the workers' first tasks import the arena: not counted
        warm.mkdir()
        _play(FAST.format(matches=2, executor="ray"), warm)
        for n in range(args.repeats):
            walls = {}
            for executor in ("local", "ray"):
                folder = Path(tmp) / f"fast-{executor}-{n}"
                folder.mkdir()
                wall, played = _play(FAST.format(matches=matches, executor=executor), folder)
                walls[executor] = wall / played
            per_local.append(walls["local"] * 1000)
            per_ray.append(walls["ray"] * 1000)
            overheads.append((walls["ray"] - walls["local"]) * 1000)
        program_walls = {}
        for executor in ("local", "ray"):
            folder = Path(tmp) / f"programs-{executor}"
            folder.mkdir()
            text = PROGRAMS.format(matches=args.program_matches, cpus=args.cpus,
                                   executor=executor, root=ROOT)  # fmt: skip
            program_walls[executor] = _play(text, folder)
    ray.shutdown()

    table = Table(title=f"executors ({args.cpus} CPUs, median of {args.repeats})")
    for column in ("figure", "local", "ray", "target"):
        table.add_column(column, justify="right" if column != "figure" else "left")
    overhead = statistics.median(overheads)
    table.add_row("ms per fast episode", f"{statistics.median(per_local):.1f}",
                  f"{statistics.median(per_ray):.1f}", "")  # fmt: skip
    verdict = "met" if overhead <= TARGET_MS else "MISSED"
    table.add_row("overhead per episode (ms)", "", f"{overhead:.1f}",
                  f"<= {TARGET_MS:g} ({verdict})")  # fmt: skip
    (local_s, played), (ray_s, _) = program_walls["local"], program_walls["ray"]
    table.add_row(f"program league, {played} episodes (s)", f"{local_s:.1f}", f"{ray_s:.1f}",
                  f"ray/local {ray_s / local_s:.2f}x")  # fmt: skip
    table.add_row("joining the cluster (s, once)", "", f"{join_s:.1f}", "")
    console.print(table)
    console.print(
        f"overhead per episode, each run (ms): {', '.join(f'{o:.1f}' for o in overheads)}"
    )


if __name__ == "__main__":
    main()
