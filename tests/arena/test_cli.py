"""The `arena` command end to end, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main

CONFIG = """
[run]
name = "cli"
seed = 5
games = ["rotate"]
matches = 1
[deadlines]
first_reply_s = 0.5
retry_s = 0.3
decision_s = 0.8
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.faulty]
kind = "mock"
faults = { unreadable = 0.2, error = 0.1 }
"""


def test_run_then_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "cli.toml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "tactician" in printed
    assert "mean game score" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["games"]) == 2
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert {"run_started", "reply_received", "game_finished", "run_finished"} <= {
        e["event"] for e in events
    }
    assert all(e["run"] == "cli" for e in events if e["event"] == "game_finished")
    assert main(["verify", str(out)]) == 0
    assert "2 replay(s), 2 good, 0 bad; 0 problem(s)" in capsys.readouterr().out


def test_verify_fails_on_a_tampered_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "cli.toml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    replay = sorted((out / "replays").glob("*.json"))[0]
    data = json.loads(replay.read_text())
    data["games"][0]["result"]["ending"] = "resigned"
    replay.write_text(json.dumps(data))
    assert main(["verify", str(out)]) == 1
    assert "result" in capsys.readouterr().err


def test_bad_config_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(CONFIG.replace("matches = 1", "matches = -1"))
    assert main(["run", str(config), "--out", str(tmp_path / "never")]) == 2
    assert "run.matches" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_games_lists_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    for name in ("connect-four", "breakthrough", "hex", "quoridor", "rotate"):
        assert name in out
