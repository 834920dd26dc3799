"""A league killed a dozen times (starting, mid-game, between writing a replay file and
storing its row, after storing) loses no game, plays none twice, and ends with the ratings
of the same league played without a stop.

The lives die by a schedule drawn from a seeded rng, not at moments of the wall clock, so
how much each one stores is the same on any machine and the league cannot finish early:
most arm a crash point at a count (`replay@n`, `store@n`: `arena.record.crash`), and with
`concurrency` episodes in flight each of those kills cuts the others mid-game; a couple
are killed from outside while the process is still starting, with `replay@1` armed so that
even a late kill leaves no game stored.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from arena.cli.verify import audit_folder
from arena.record.crash import KILL_AT

ROOT = Path(__file__).resolve().parents[2]
KILLS = 12
STARTING = 2  # of the kills, those from outside while the process starts
MOST = 8  # the most episodes a life killed at a crash point stores
LIFE_S = 120  # a life's timeout: one never killed plays the whole league in a few seconds

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


@dataclass(frozen=True)
class Death:
    """How one life of the league ends."""

    kill_at: str
    """The crash point armed, `<step>@<n>`."""
    outside_s: float | None = None
    """Killed from outside this long after it started (None: only the crash point)."""

    def stores(self) -> int:
        """How many episodes the life stores: a `replay@n` death the n-th one's file only."""
        step, n = self.kill_at.split("@")
        return int(n) - (step == "replay")


def _deaths(rng: random.Random) -> list[Death]:
    """The lives' deaths, shuffled: at `replay` or `store` reached 1 to `MOST` times, and
    `STARTING` of them from outside within 0.3 s of the start."""
    deaths = []
    for _ in range(KILLS - STARTING):
        deaths.append(Death(f"{rng.choice(('replay', 'store'))}@{rng.randint(1, MOST)}"))
    deaths += [Death("replay@1", rng.uniform(0.05, 0.3)) for _ in range(STARTING)]
    rng.shuffle(deaths)
    return deaths


def _run(config: Path, out: Path, kill_at: str | None = None) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != KILL_AT}
    if kill_at:
        env[KILL_AT] = kill_at
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out)]
    return subprocess.Popen(
        [*command, "--no-progress"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def _exit(process: subprocess.Popen[bytes]) -> int:
    """The process's exit code; one still running after `LIFE_S` is killed, failing the test."""
    try:
        return process.wait(timeout=LIFE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=LIFE_S)
        raise


def _live(config: Path, out: Path, death: Death) -> int:
    """One life of the league, to its death; its exit code."""
    process = _run(config, out, death.kill_at)
    if death.outside_s is not None:
        time.sleep(death.outside_s)
        process.send_signal(signal.SIGKILL)  # a no-op if the crash point came first
    return _exit(process)


def _stored(out: Path) -> dict[str, float]:
    """The stored episodes, with when each was stored."""
    db = out / "league.db"
    if not db.exists():
        return {}
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)) as connection:
        try:
            return dict(connection.execute("SELECT id, finished FROM episodes"))
        except sqlite3.OperationalError:  # killed before it made its tables
            return {}


def _cut_mid_game(out: Path) -> set[str]:
    """The episodes a life asked a seat to move in and then died before finishing."""
    cut: set[str] = set()
    begun: set[str] = set()
    for line in (out / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "run_started":
            cut |= begun
            begun = set()
        elif event["event"] == "decision_requested":
            begun.add(event["episode"])
        elif event["event"] == "game_finished":
            begun.discard(event["episode"])
    return cut  # the last life's begun episodes all finished: it was never killed


def _ratings(out: Path) -> object:
    summary = json.loads((out / "summary.json").read_text())
    return summary["ratings"], [(g["episode"], g["scores"]) for g in summary["games"]]


def test_a_dozen_kills_lose_nothing_and_change_no_rating(tmp_path: Path) -> None:
    config = tmp_path / "killed.toml"
    config.write_text(CONFIG)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert _exit(_run(config, whole)) == 0
    deaths = _deaths(random.Random(2026))
    assert sum(d.stores() for d in deaths) < EPISODES, "the kills leave work to resume"
    stored: dict[str, float] = {}
    for death in deaths:
        before = stored
        assert _live(config, cut, death) == -signal.SIGKILL, f"{death} did not kill the run"
        stored = _stored(cut)
        assert before.items() <= stored.items(), "an episode stored earlier was stored again"
        assert len(stored) - len(before) == death.stores(), death
    assert _cut_mid_game(cut), "no kill cut a game mid-play"
    before = stored
    assert _exit(_run(config, cut)) == 0
    stored = _stored(cut)
    assert before.items() <= stored.items(), "an episode stored earlier was stored again"
    assert len(stored) == EPISODES  # nothing lost (ids are the key: none is there twice)
    assert len(list((cut / "replays").glob("*.json"))) == EPISODES
    assert _ratings(cut) == _ratings(whole)
    assert audit_folder(cut).problems == []
