"""The benchmarks still run (their figures are read by people, not asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("module", "args", "expect"),
    [
        ("bench.engines", ["--runs", "1", "--seconds", "0.05", "--game", "hex"], "playouts/s"),
        ("bench.orchestrator", ["--runs", "1"], "decisions/s"),
        ("bench.battle", ["--runs", "1"], "ticks/s"),
        (
            "bench.throughput",
            ["--runs", "1", "--in-flight", "4", "--latency-ms", "5", "--episodes", "8"],
            "of ideal",
        ),
        (
            "bench.compare",  # this tree against itself: the ratio's machinery, not a figure
            ["HEAD", "--rounds", "1", "--in-flight", "4", "--latency-ms", "5", "--episodes", "8"],
            "median ratio over 1 rounds",
        ),
        ("bench.overshoot", ["--runs", "1", "--in-flight", "3", "--burners", "0"], "decision_s"),
        ("bench.memory", ["--small", "4", "--large", "8"], "ratio"),
        ("bench.rebuild_memory", ["--games", "8", "--times", "2"], "peak RSS"),
        ("bench.efficiency", ["--tests", "50", "--check", "1"], "targets"),
        ("bench.bodies", ["--in-flight", "2", "--rounds", "1"], "peak RSS"),
        ("bench.programs", ["--calls", "100", "--runs", "1"], "standing alone"),
        ("bench.history_sizes", ["--matches", "50"], "bytes per game"),
    ],
)
def test_benchmark_prints_its_table(module: str, args: list[str], expect: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert expect in done.stdout
