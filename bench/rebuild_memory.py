"""`arena rebuild` in bounded memory: its peak RSS at N games and at 4N.

    python -m bench.rebuild_memory [--games 1000] [--times 4]

A league of scripted seats (connect-four, tactician against random) is played
to N games and another to 4N; each store is then deleted and `arena rebuild`
re-creates it, in a fresh process whose peak resident set size (`ru_maxrss`)
is read. A rebuild that holds one replay at a time shows the large league's
peak within 1.3x of the small one's (it held every replay before: +34 KB a
game).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.memory import CONFIG, peak_mb

TARGET = 1.30


def rebuild_peak(folder: Path, games: int) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of `arena rebuild` on a league of `games` games."""
    config = folder / f"league-{games}.toml"
    config.write_text(CONFIG.format(matches=games // 2))
    out = folder / f"run-{games}"
    peak_mb("run", str(config), "--out", str(out), "--no-progress")
    (out / "league.db").unlink()
    started = time.perf_counter()
    peak = peak_mb("rebuild", str(out))
    return peak, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--times", type=int, default=4)
    args = parser.parse_args()
    sizes = (args.games, args.games * args.times)
    with tempfile.TemporaryDirectory() as temp:
        measured = [rebuild_peak(Path(temp), n) for n in sizes]
    table = Table(title=f"arena rebuild: peak RSS (target: {args.times}x the games, <= {TARGET}x)")
    for column in ("games", "peak RSS", "wall", "ratio"):
        table.add_column(column, justify="right")
    for n, (peak, seconds) in zip(sizes, measured, strict=True):
        ratio = peak / measured[0][0]
        table.add_row(f"{n:,}", f"{peak:.0f} MB", f"{seconds:.1f} s", f"{ratio:.2f}x")
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
