"""The ratings' benchmarks still run in their small modes and print their tables (the
figures are read by people, not asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_scale_bench_prints_its_table() -> None:
    out = _run("bench.scale", "--small")
    assert "peak MB" in out
    assert "bootstrap" in out
    assert "sandwich" in out
    assert "targets: all met" in out


def test_placement_bench_prints_its_table() -> None:
    out = _run("bench.placement", "--sims", "40", "--entrants", "4")
    assert "placed within one rank" in out
    assert "reaches 90%" in out
