"""A league killed at a dozen random moments loses no game, plays none twice, and ends with
the ratings of the same league played without a stop."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from arena.league.audit import audit_run

ROOT = Path(__file__).resolve().parents[2]
KILLS = 12

CONFIG = """\
[run]
name = "killed"
seed = 12
games = ["connect-four", "breakthrough"]
matches = 4
concurrency = 4
[deadlines]
first_reply_s = 2
retry_s = 1
decision_s = 3
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock-a]
kind = "mock"
latency_ms = 10
[policies.mock-b]
kind = "mock"
latency_ms = 10
faults = { unreadable = 0.1, illegal = 0.1 }
"""
EPISODES = 2 * 4 * 6 * 2  # games x matches x pairs of 4 policies x both seat orders


def _run(config: Path, out: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out)]
    return subprocess.Popen(
        [*command, "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _stored(out: Path) -> list[str]:
    db = out / "league.db"
    if not db.exists():
        return []
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)) as connection:
        try:
            return [row[0] for row in connection.execute("SELECT id FROM episodes")]
        except sqlite3.OperationalError:
            return []


def _ratings(out: Path) -> object:
    summary = json.loads((out / "summary.json").read_text())
    return summary["ratings"], [(g["episode"], g["scores"]) for g in summary["games"]]


def test_a_dozen_kills_lose_nothing_and_change_no_rating(tmp_path: Path) -> None:
    config = tmp_path / "killed.toml"
    config.write_text(CONFIG)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert _run(config, whole).wait(timeout=300) == 0
    rng = random.Random(2026)
    kills = 0
    while kills < KILLS:
        process = _run(config, cut)
        time.sleep(rng.uniform(0.4, 1.6))  # a random moment: starting, playing, writing
        if process.poll() is not None:
            break  # it finished before this kill: the league is done
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
    assert kills >= 10, f"the league finished after {kills} kills: give it more games"
    assert len(_stored(cut)) < EPISODES, "the kills left work to resume"
    assert _run(config, cut).wait(timeout=300) == 0
    stored = _stored(cut)
    assert len(stored) == len(set(stored)) == EPISODES  # nothing lost, nothing twice
    assert len(list((cut / "replays").glob("*.json"))) == EPISODES
    assert _ratings(cut) == _ratings(whole)
    assert audit_run(cut).problems == []
