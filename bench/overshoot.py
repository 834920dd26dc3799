"""Deadline overshoot under load: how late a decision ends past its `decision_s`.

    python -m bench.overshoot [--in-flight 64] [--runs 3]

64 board games in flight against the mock LLM server (its own process, 50 ms
latency, one answer in ten a hang that waits out the deadline) while two
processes burn both cores. Every decision of an LLM seat is bounded by
`decision_s`; the figure is how far past it the slowest one ended (its
recorded latency minus `decision_s`), with the 99th percentile beside it. The
target is at most 50 ms: the event loop must never wait on the disk (the
writer's fsync and commit run in a worker thread) nor on one game's engine
work (a game lets others run every few milliseconds).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from rich.console import Console
from rich.table import Table

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging
from arena.record.replay import load_replay
from bench.throughput import start_server

TARGET_MS = 50.0
DEADLINES = {"first_reply_s": 0.6, "retry_s": 0.3, "decision_s": 0.8}


def _config(url: str, in_flight: int) -> dict[str, Any]:
    llm = {"kind": "llm", "model": "m", "max_connections": 2 * in_flight}
    return {
        "run": {"name": "overshoot", "seed": 3, "games": ["rotate"], "matches": in_flight // 3 + 1,
                "concurrency": in_flight},
        "deadlines": DEADLINES,
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "openai": {**llm, "provider": "openai", "base_url": f"{url}/v1"},
            "anthropic": {**llm, "provider": "anthropic", "base_url": url},
        },
    }  # fmt: skip


def one_run(url: str, in_flight: int) -> tuple[int, float, float]:
    """(decisions of LLM seats, worst overshoot ms, p99 overshoot ms) of one league."""
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp) / "run"
        anyio.run(execute, plan_run(parse_config(_config(url, in_flight)), out))
        overshoot = []
        for path in (out / "replays").glob("*.json"):
            for game in load_replay(path).games:
                for ply in game.plies:
                    for decision in ply.decisions:
                        if decision.attempts:  # a seat that was asked
                            overshoot.append(decision.latency_s - DEADLINES["decision_s"])
    late = np.array(overshoot) * 1000
    return len(late), float(late.max()), float(np.percentile(late, 99))


def main() -> None:
    close_logging()  # the league's events would flood the console
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--burners", type=int, default=2, help="CPU-burning processes")
    args = parser.parse_args()
    server, url = start_server(50, "hang=0.1")
    burn = [sys.executable, "-c", "while True: pass"]
    burners = [subprocess.Popen(burn) for _ in range(args.burners)]
    table = Table(
        title=f"{args.in_flight} board games in flight, {args.burners} cores burnt, 1 in 10 a hang"
    )
    for column in ("run", "LLM decisions", "worst past decision_s", "p99", "target"):
        table.add_column(column, justify="right")
    worst = []
    try:
        for r in range(args.runs):
            decisions, most, p99 = one_run(url, args.in_flight)
            worst.append(most)
            table.add_row(str(r + 1), f"{decisions:,}", f"{most:+.1f} ms", f"{p99:+.1f} ms", "")
    finally:
        for process in [*burners, server]:
            process.kill()
            process.wait()
    median = statistics.median(worst)
    table.add_row("median", "", f"{median:+.1f} ms", "", f"<= {TARGET_MS:.0f} ms")
    Console(width=110).print(table)


if __name__ == "__main__":
    main()
