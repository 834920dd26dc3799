"""Memory bounded by what is in flight: RSS after 5,000 scripted games against 500.

    python -m bench.memory [--small 500] [--large 5000]

Each command runs in its own process on the same kind of league (connect-four,
tactician against random, seeds from the matches): `arena run`, then `arena
report` (standings, and the fallback rows as CSV) and `arena view`, each timed
for its peak resident set size (the child's `ru_maxrss`). A run whose memory is
bounded by the games in flight, not by the games finished, shows the large
league's peak within 20% of the small one's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

TARGET = 1.20

CONFIG = """\
[run]
name = "memory"
seed = 5
games = ["connect-four"]
matches = {matches}
concurrency = 8
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.random]
kind = "scripted"
baseline = "random"
"""


def peak_mb(*args: str) -> float:
    """Peak RSS in MB of `python -m arena.cli *args` in a fresh process."""
    command = [
        sys.executable, "-c",
        "import resource, sys; from arena.cli import main; code = main(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)",
        *args,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"arena {' '.join(args)} failed: {done.stderr[-2000:]}")
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def measure(folder: Path, games: int) -> dict[str, float]:
    """Peak RSS of run, report and view on a league of `games` games."""
    config = folder / f"memory-{games}.toml"
    config.write_text(CONFIG.format(matches=games // 2))
    out = folder / f"run-{games}"
    return {
        "arena run": peak_mb("run", str(config), "--out", str(out), "--no-progress"),
        "arena report": peak_mb("report", str(out), "--what", "fallbacks", "--format", "csv"),
        "arena view": peak_mb("view", str(out)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", type=int, default=500)
    parser.add_argument("--large", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        small, large = measure(Path(temp), args.small), measure(Path(temp), args.large)
    table = Table(title=f"peak RSS, {args.small:,} games against {args.large:,} (target <= 1.20x)")
    for column in ("command", f"{args.small:,} games", f"{args.large:,} games", "ratio"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for command in small:
        ratio = large[command] / small[command]
        table.add_row(
            command, f"{small[command]:.0f} MB", f"{large[command]:.0f} MB", f"{ratio:.2f}x"
        )
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
