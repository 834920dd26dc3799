"""Fixed costs: how long `import arena.cli` takes, and from `main()` to the first decision.

    python -m bench.startup [--runs 7]

Each figure is measured in a fresh Python process (nothing cached in memory but the
operating system's file cache), median of `--runs`:

1. `import arena.cli`, what every `arena` command pays first (target at most 0.25 s);
2. from the call of `main(["run", CONFIG])` to the first decision asked of a seat, on
   a config of one game (connect-four, the tactician against the random baseline):
   reading and checking the config, planning, opening the run folder, the store and
   the events file, and starting the first game (target at most 150 ms). The moment
   of the first decision is taken when `decide_batch` is first called, by a wrapper
   this benchmark installs as the module is imported, so the arena itself is unchanged.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

IMPORT_TARGET_S = 0.25
FIRST_DECISION_TARGET_S = 0.150

CONFIG = """
[run]
name = "startup"
seed = 1
games = ["connect-four"]
matches = 1
concurrency = 1
[policies.tactician]
kind = "scripted"
baseline = "default"
[policies.random]
kind = "scripted"
baseline = "random"
"""

_IMPORT = """
import time
started = time.perf_counter()
import arena.cli
print(time.perf_counter() - started)
"""

WATCH = """
import importlib.abc, importlib.util, sys

class _Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "arena.play.decisions":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            inner = module.decide_batch
            told = []

            async def decide_batch(*args, **kwargs):
                if not told:
                    told.append(True)
                    on_first_decision()
                return await inner(*args, **kwargs)

            module.decide_batch = decide_batch

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Watch())
"""
"""Script text that calls the script's own `on_first_decision()` when the arena first asks
a seat for a decision (`decide_batch` wrapped as its module is imported; the arena itself
runs unchanged). Shared with tests/arena/test_startup.py."""

_FIRST_DECISION = (
    """
import json, time

first = []

def on_first_decision():
    first.append(time.perf_counter())
"""
    + WATCH
    + """
import arena.cli
started = time.perf_counter()
code = arena.cli.main(["run", sys.argv[1], "--out", sys.argv[2], "--no-progress"])
print(json.dumps({"code": code, "first_decision_s": first[0] - started}))
"""
)


def _python(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    imports, firsts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "startup.toml"
        config.write_text(CONFIG)
        for n in range(args.runs):
            imports.append(float(_python(_IMPORT)))
            result = json.loads(_python(_FIRST_DECISION, str(config), str(Path(tmp) / f"run{n}")))
            if result["code"] != 0:
                raise SystemExit(f"the run failed (exit {result['code']})")
            firsts.append(result["first_decision_s"])
    table = Table(title=f"fixed costs, median of {args.runs} fresh processes")
    for column in ("figure", "median", "min", "max", "target"):
        table.add_column(column, justify="right" if column != "figure" else "left")
    for name, values, target in (
        ("import arena.cli", imports, IMPORT_TARGET_S),
        ("main() to the first decision", firsts, FIRST_DECISION_TARGET_S),
    ):
        median = statistics.median(values)
        verdict = "met" if median <= target else "MISSED"
        table.add_row(name, f"{median * 1000:.0f} ms", f"{min(values) * 1000:.0f} ms",
                      f"{max(values) * 1000:.0f} ms", f"<= {target * 1000:.0f} ms ({verdict})")  # fmt: skip
    Console().print(table)


if __name__ == "__main__":
    main()
