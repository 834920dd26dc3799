"""`bench.scale` still runs in its small mode and prints its table (figures read by people)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_scale_bench_prints_its_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--small"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "peak MB" in done.stdout
    assert "bootstrap" in done.stdout
    assert "sandwich" in done.stdout
    assert "targets: all met" in done.stdout
