"""CPU per decision of this tree against another commit, alternated round by round.

    python -m bench.compare REV [--rounds 4] [--in-flight 64] [--latency-ms 200]
                                [--episodes N]
    python -m bench.throughput --compare REV ...   (the same)

REV's files are exported (`git archive`) to a temporary folder; one mock LLM server
(`arena mock-llm`, from this tree) serves both. Each round runs `bench.throughput`'s
`one_run` once in this tree and once in REV's, each in a fresh process that imports only
its own tree's code, the first of the two alternating between rounds so neither always
meets a warmer machine. Printed: per round, each tree's CPU per decision and steady rate
against the ideal (N / latency), and their ratio; then the median ratio. A ratio measured
within one round shares the machine's load, so its median is the figure to quote on a
shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.throughput import start_server

ROOT = Path(__file__).resolve().parents[1]

_DRIVER = (
    "import json, sys\n"
    "from bench.throughput import one_run\n"
    "decisions, rate, cpu = one_run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))\n"
    "print(json.dumps([decisions, rate, cpu]))\n"
)
"""Run in each tree: its own `one_run`, whose signature is the same at every commit
since the benchmark has existed."""


def export(rev: str, into: Path) -> Path:
    """REV's files, as `git archive` gives them, under `into`."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True
    ).stdout
    tree = into / rev.replace("/", "_")
    tree.mkdir(parents=True)
    with tempfile.TemporaryFile() as held:
        held.write(archive)
        held.seek(0)
        with tarfile.open(fileobj=held) as tar:
            tar.extractall(tree, filter="data")
    return tree


def measure(tree: Path, url: str, in_flight: int, episodes: int) -> tuple[int, float, float]:
    """One `one_run` of `tree`'s code in a process of its own: (decisions, rate, CPU s per
    decision)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, url, str(in_flight), str(episodes)],
        cwd=tree, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: the run failed:\n{done.stderr[-3000:]}")
    decisions, rate, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    return int(decisions), float(rate), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rev", help="the commit to compare against, e.g. 608b2ee")
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=0, help="default: 6 x in flight")
    compare(parser.parse_args())


def compare(args: argparse.Namespace) -> list[float]:
    """Run the rounds `args` asks for and print them; the per-round ratios (HEAD / REV)."""
    in_flight, latency_ms = args.in_flight, args.latency_ms
    episodes = args.episodes or 6 * in_flight
    ideal = in_flight / (latency_ms / 1000)
    console = Console()
    server, url = start_server(latency_ms)
    ratios: list[float] = []
    table = Table(title=f"CPU per decision, this tree against {args.rev}, {in_flight} in flight")
    for header in ("round", "this tree ms", "% ideal", f"{args.rev} ms", "% ideal", "ratio"):
        table.add_column(header, justify="right")
    try:
        with tempfile.TemporaryDirectory() as temp:
            other = export(args.rev, Path(temp))
            for n in range(args.rounds):
                order = [("head", ROOT), ("rev", other)]
                if n % 2:
                    order.reverse()
                got = {name: measure(tree, url, in_flight, episodes) for name, tree in order}
                head, rev = got["head"], got["rev"]
                ratio = head[2] / rev[2]
                ratios.append(ratio)
                table.add_row(
                    str(n + 1), f"{head[2] * 1000:.3f}", f"{head[1] / ideal:.0%}",
                    f"{rev[2] * 1000:.3f}", f"{rev[1] / ideal:.0%}", f"{ratio:.2f}x",
                )  # fmt: skip
    finally:
        server.kill()
    console.print(table)
    console.print(f"median ratio over {len(ratios)} rounds: {statistics.median(ratios):.2f}x")
    return ratios


if __name__ == "__main__":
    main()
