"""What a run imports before its first decision: only what that decision needs.

Each check runs `arena run` in a fresh process and looks at `sys.modules` the
moment the first decision is asked for (`decide_batch` is wrapped as its module
is imported, so the arena itself runs unchanged).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.startup import CONFIG, WATCH

_SCRIPTED = CONFIG
"""The benchmark's one-game config: tactician against random, connect-four."""

_AT_FIRST_DECISION = (
    """
import json

seen = []

def on_first_decision():
    seen.append(sorted(sys.modules))
"""
    + WATCH
    + """
import arena.cli

code = arena.cli.main(["run", sys.argv[1], "--out", sys.argv[2], "--no-progress"])
print(json.dumps({"code": code, "modules": seen[0] if seen else None}))
"""
)

NOT_BEFORE_THE_FIRST_DECISION = (
    "rich",  # the console and the progress bar (--no-progress), structlog's tracebacks
    "pygments",
    "attr",
    "httpx",  # the models' HTTP stack
    "httpcore",
    "aiohttp",
    "truststore",
    "tenacity",
    "urllib.request",
    "numpy",  # the SPRT
    "arena.seats.llm",
    "arena.seats.mock",
    "arena.seats.cache",
    "arena.league.preflight",
    "arena.programs",  # the sandbox of program seats
    "arena.seats.program",
    "games.backgammon",  # cards, for a run without backgammon
    "arena.record.cards",
    "arena.results.standings",  # the tables, read when results are
    "arena.results.tables",
    "arena.results.ratings",
    "arena.results.report",
    "arena.viewer",  # the play page, the viewer's drawers
    "arena.seats.desk",  # people's seats, for a run without them
    "arena.seats.human",
    "uvicorn",
    "arena.mock_llm",
)

pytestmark = pytest.mark.slow  # each test starts `arena` in subprocesses


@pytest.fixture(scope="module")
def first_decision_modules(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    folder = tmp_path_factory.mktemp("startup")
    config = folder / "startup.toml"
    config.write_text(_SCRIPTED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _AT_FIRST_DECISION, str(config), str(folder / "run")],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, done.stderr[-3000:]
    assert result["modules"] is not None, "the run asked for no decision"
    return set(result["modules"])


@pytest.mark.parametrize("module", NOT_BEFORE_THE_FIRST_DECISION)
def test_a_scripted_run_does_not_import_before_its_first_decision(
    first_decision_modules: set[str], module: str
) -> None:
    loaded = sorted(m for m in first_decision_modules if m == module or m.startswith(f"{module}."))
    assert not loaded, f"imported before the first decision: {loaded}"


def test_the_first_decision_is_seen_with_the_game_it_plays(
    first_decision_modules: set[str],
) -> None:
    assert "games.connect_four" in first_decision_modules  # the check sees a real run


def test_structlog_is_imported_without_rich_and_rich_stays_importable() -> None:
    code = (
        "import sys, arena.logs, structlog; "
        "print('rich' in sys.modules, structlog.dev.rich is None); "
        "import rich.console; print(rich.console.Console is not None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["False", "True", "True"]
