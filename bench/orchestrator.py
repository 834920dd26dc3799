"""Orchestrator overhead: decisions per second for the quickstart with instant seats.

    python -m bench.orchestrator [--runs 5]

Plays configs/quickstart.toml in-process with its policies replaced, twice:
every seat scripted (tactician, random), and every seat a sound mock that
answers through the full text path (prompt render, JSON reply, extraction,
the game's reader). Each decision also pays apply, the replay record and the
log events (JSON lines to a file). Prints decisions per second and wall time
per decision, medians of `--runs` runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

from arena.config import load_config, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging, configure_logging

ROOT = Path(__file__).resolve().parent.parent

SEATS: dict[str, dict[str, Any]] = {
    "scripted": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random-a": {"kind": "scripted", "baseline": "random"},
        "random-b": {"kind": "scripted", "baseline": "random"},
    },
    "mock text path": {
        "mock-a": {"kind": "mock"},
        "mock-b": {"kind": "mock"},
        "mock-c": {"kind": "mock"},
    },
}


def one_run(policies: dict[str, Any], out: Path) -> tuple[int, float]:
    base = load_config(ROOT / "configs" / "quickstart.toml").model_dump(mode="json")
    base["policies"] = policies
    base["run"]["matches"] = 8
    plan = plan_run(parse_config(base), out)
    configure_logging(out / "events.jsonl", console=False)
    began = time.perf_counter()
    try:
        result = anyio.run(execute, plan)
    finally:
        close_logging()
    elapsed = time.perf_counter() - began
    decisions = sum(row["decisions"] for row in result.tables["standings"]["overall"])
    return decisions, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    table = Table(
        title=f"orchestrator on the quickstart schedule (8 matches a pair), medians of {args.runs} runs"
    )
    for column in ("seats", "decisions", "decisions/s", "wall per decision"):
        table.add_column(column, justify="left" if column == "seats" else "right")
    for label, policies in SEATS.items():
        rates, per = [], []
        for r in range(args.runs):
            with tempfile.TemporaryDirectory() as temp:
                decisions, elapsed = one_run(policies, Path(temp) / f"run{r}")
            rates.append(decisions / elapsed)
            per.append(elapsed / decisions)
        table.add_row(
            label,
            f"{decisions:,}",
            f"{statistics.median(rates):,.0f}",
            f"{statistics.median(per) * 1000:.3f} ms",
        )
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
