"""`arena run --log-format json`: every line on stderr is one JSON object, the same as its
line in events.jsonl; nothing else is written there (the progress line is an event)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.ops.league import free_port, league_config, toml_text

pytestmark = pytest.mark.slow  # `arena run` in a process of its own


def _run(tmp_path: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = tmp_path / "league.toml"
    raw = league_config("http://127.0.0.1:1", "json-logs")
    config.write_text(toml_text(raw))
    out = tmp_path / "run"
    command = [
        sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out),
        "--mock-llm", "--mock-port", str(free_port()), "--mock-faults", "prose=0.2,500=0.05",
        "--no-preflight", *flags,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    return done, out


def test_every_stderr_line_is_its_events_line(tmp_path: Path) -> None:
    done, out = _run(tmp_path, "--log-format", "json", "--metrics-port", str(free_port()))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines, "nothing was logged"
    logged = [json.loads(line) for line in lines]  # every line parses, or this fails
    assert all(isinstance(event, dict) for event in logged)
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    for event in logged:
        assert event in events, f"{event} is not a line of events.jsonl"
    names = [event["event"] for event in logged]
    assert names[0] == "run_watched"
    assert "mock_llm_serving" in names
    assert {"run_started", "progress", "run_finished"} <= set(names)
    progress = [event for event in logged if event["event"] == "progress"][-1]
    assert progress["done"] == progress["total"] == 12
    assert progress["in_flight"] == 0
    for event in logged:
        assert {"timestamp", "level", "event"} <= set(event)
    # The standings still go to standard output, for people.
    assert "episode(s) played now" in done.stdout


def test_auto_is_json_off_a_terminal_and_console_stays_the_default(tmp_path: Path) -> None:
    auto, _ = _run(tmp_path / "auto", "--log-format", "auto")
    assert auto.returncode == 0, auto.stderr
    assert all(json.loads(line)["event"] for line in auto.stderr.splitlines())
    console, _ = _run(tmp_path / "console")
    assert console.returncode == 0, console.stderr
    assert "run_started" in console.stderr
    assert not console.stderr.lstrip().startswith("{")
    assert "json-logs: 12/12 episodes done" in console.stderr


def test_the_toml_of_the_league_reads_back(tmp_path: Path) -> None:
    """The helper's config is valid TOML for `arena run` (a guard for the tests above)."""
    raw = league_config("http://127.0.0.1:1", "x")
    assert tomllib.loads(toml_text(raw)) == raw
