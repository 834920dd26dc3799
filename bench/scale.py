"""Ratings at scale: CPU seconds and peak RSS of Bradley-Terry with intervals, and of Elo.

    python -m bench.scale [--small]

Each size runs in a fresh process, so its peak RSS is its own: the process draws a
league of random pairs (entrants of strength N(0, 1) in log units, 174 Elo; matches of
two games, 10% draws), then times `bradley_terry(outcomes, seed=1)` (1,000 resamples
where the bootstrap is cheap, else the sandwich: `arena.results.ratings.bootstrap_is_cheap`)
and `elo(outcomes)`. CPU seconds are the process's (every thread's) over the call; peak
RSS is the process's whole peak, the outcomes included ("before" is the peak once the
outcomes are built). Targets on a 2-core machine: 200 entrants / 100,000 matches at most
10 s CPU and 512 MB; 1,000 / 1,000,000 at most 60 s and 2 GB; Elo in seconds. The row
at the bootstrap's largest size shows what the bootstrap costs where it still applies.
A second table gives the CPU a pool pays for each adaptive round (`round_view`: the
fit and 1,000 samples of the strengths, bootstrap resamples where the bootstrap is cheap,
else draws from the sandwich's normal) up to 1,000 entrants; target: seconds at 1,000.

`--small` runs small sizes only (the smoke test's).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.table import Table

from arena.league.adaptive import round_view
from arena.results.ratings import (
    BOOTSTRAP_MATCHES,
    BOOTSTRAP_POLICIES,
    MatchOutcome,
    bootstrap_is_cheap,
    bradley_terry,
    elo,
)
from bench.history_sizes import sizes_table

ELO_TARGET_S = 10.0
"""'Elo in seconds': at most this many CPU seconds at any size."""
ROUND_TARGET_S = 10.0
"""'A round at 1,000 entrants in seconds': at most this many CPU seconds."""


@dataclass(frozen=True, slots=True)
class Size:
    """One league size and its targets (None: no target, a figure to read)."""

    entrants: int
    matches: int
    cpu_s: float | None
    rss_mb: float | None


SIZES = [
    Size(BOOTSTRAP_POLICIES, BOOTSTRAP_MATCHES, None, None),
    Size(200, 100_000, 10.0, 512.0),
    Size(1_000, 1_000_000, 60.0, 2048.0),
]
SMALL = [Size(12, 400, None, None), Size(120, 6_000, None, None)]
ROUNDS = [
    Size(50, 10_000, None, None),
    Size(100, 20_000, None, None),
    Size(200, 40_000, None, None),
    Size(500, 100_000, None, None),
    Size(1_000, 200_000, ROUND_TARGET_S, None),
    Size(1_000, 1_000_000, ROUND_TARGET_S, None),
]
"""Pool sizes whose adaptive round is measured: `round_view`, 1,000 samples, once per
round of a session (a pool grows as far as a round's cost allows)."""
SMALL_ROUNDS = [Size(12, 400, None, None)]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def random_league(entrants: int, matches: int, seed: int = 1) -> list[MatchOutcome]:
    """`matches` matches of two games between random pairs of `entrants` entrants."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, entrants)
    first = rng.integers(0, entrants, matches)
    second = (first + rng.integers(1, entrants, matches)) % entrants
    p = 1.0 / (1.0 + np.exp(theta[second] - theta[first]))
    draw = np.minimum(0.1, 2 * np.minimum(p, 1 - p))[:, None]
    u = rng.random((matches, 2))
    win, lose = p[:, None] - draw / 2, p[:, None] + draw / 2
    results = np.where(u < win, 1.0, np.where(u < lose, 0.5, 0.0)).tolist()
    names = [f"entrant-{k:04d}" for k in range(entrants)]
    return [
        MatchOutcome(k, names[a], names[b], (r[0], r[1]))
        for k, (a, b, r) in enumerate(zip(first.tolist(), second.tolist(), results, strict=True))
    ]


def child(entrants: int, matches: int, pool_round: bool) -> None:
    """Measure one size in this process (`pool_round`: a pool's adaptive round instead of the
    ratings); print its figures as one JSON line."""
    outcomes = random_league(entrants, matches)
    before = _peak_mb()
    if pool_round:
        names = sorted({name for match in outcomes for name in (match.first, match.second)})
        start = time.process_time()
        round_view(outcomes, names, seed=1)
        seconds = time.process_time() - start
        print(json.dumps({"round_s": seconds, "before_mb": before, "peak_mb": _peak_mb()}))
        return
    start = time.process_time()
    table = bradley_terry(outcomes, seed=1)
    bt_s = time.process_time() - start
    start = time.process_time()
    ratings = elo(outcomes)
    elo_s = time.process_time() - start
    assert len(table) == len(ratings) == entrants
    figures = {"bt_s": bt_s, "elo_s": elo_s, "before_mb": before, "peak_mb": _peak_mb()}
    print(json.dumps(figures))


def measure(size: Size, pool_round: bool = False) -> dict[str, float]:
    """`child` of `size` in a fresh process."""
    sizes = [str(size.entrants), str(size.matches)]
    command = [sys.executable, "-m", "bench.scale", "--child", *sizes]
    command += ["--round"] if pool_round else []
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{size.entrants} / {size.matches}: {done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _target(size: Size) -> str:
    if size.cpu_s is None or size.rss_mb is None:
        return f"Elo <= {ELO_TARGET_S:g} s"
    return f"<= {size.cpu_s:g} s, <= {size.rss_mb:g} MB"


def ratings_section(sizes: list[Size], console: Console) -> bool:
    """Measure and print every size; whether every target was met."""
    table = Table(title="Ratings at scale: CPU s of the call, peak RSS MB of the process")
    headers = ("entrants", "matches", "interval", "BT s", "Elo s", "peak MB", "before", "target")
    for header in headers:
        table.add_column(header, justify="right")
    table.add_column("met")
    all_met = True
    for size in sizes:
        f = measure(size)
        method = "bootstrap" if bootstrap_is_cheap(size.entrants, size.matches) else "sandwich"
        met = f["elo_s"] <= ELO_TARGET_S
        if size.cpu_s is not None and size.rss_mb is not None:
            met &= f["bt_s"] <= size.cpu_s and f["peak_mb"] <= size.rss_mb
        all_met &= met
        table.add_row(
            f"{size.entrants:,}", f"{size.matches:,}", method, f"{f['bt_s']:.2f}",
            f"{f['elo_s']:.2f}", f"{f['peak_mb']:.0f}", f"{f['before_mb']:.0f}", _target(size),
            "yes" if met else "NO",
        )  # fmt: skip
    console.print(table)
    console.print("before: the process's peak RSS once the outcomes were built, before any rating")
    return all_met


def rounds_section(sizes: list[Size], console: Console) -> bool:
    """Measure and print a pool's adaptive round at each size; whether the targets are met."""
    table = Table(title="A pool's adaptive round (1,000 samples of the strengths, once a round)")
    for header in ("entrants", "matches", "samples", "round CPU s", "peak MB", "target"):
        table.add_column(header, justify="right")
    table.add_column("met")
    all_met = True
    for size in sizes:
        f = measure(size, pool_round=True)
        method = "bootstrap" if bootstrap_is_cheap(size.entrants, size.matches) else "sandwich"
        met = size.cpu_s is None or f["round_s"] <= size.cpu_s
        all_met &= met
        table.add_row(
            f"{size.entrants:,}", f"{size.matches:,}", method, f"{f['round_s']:.2f}",
            f"{f['peak_mb']:.0f}", "" if size.cpu_s is None else f"<= {size.cpu_s:g} s",
            "yes" if met else "NO",
        )  # fmt: skip
    console.print(table)
    return all_met


def main() -> None:
    """Print the ratings' CPU and memory at each size, and whether the targets are met."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--round", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        entrants, matches = args.child
        child(entrants, matches, pool_round=args.round)
        return
    console = Console(width=max(Console().width, 100))
    met = ratings_section(SMALL if args.small else SIZES, console)
    met &= rounds_section(SMALL_ROUNDS if args.small else ROUNDS, console)
    # what the store and summary.json keep per game does not grow with the entrants
    console.print(sizes_table(200 if args.small else 2000, (10, 40)))
    console.print(f"targets: {'all met' if met else 'NOT all met'}")


if __name__ == "__main__":
    main()
