"""Leagues that survive anything: SIGKILL and resume, Ctrl-C drain, changed configs, reports."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from arena.cli import main

ROOT = Path(__file__).resolve().parents[3]

POLICIES = """
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock-a]
kind = "mock"
latency_ms = {latency}
[policies.mock-b]
kind = "mock"
latency_ms = {latency}
faults = {{ unreadable = 0.1, illegal = 0.05 }}
[policies.mock-c]
kind = "mock"
latency_ms = {latency}
author = "team-c"
[policies.mock-d]
kind = "mock"
latency_ms = {latency}
author = "team-c"
"""

pytestmark = pytest.mark.slow  # each test starts `arena` in subprocesses


def _config(tmp_path: Path, *, latency: int = 4, matches: int = 1) -> Path:
    path = tmp_path / f"league-{latency}-{matches}.toml"
    path.write_text(
        f'[run]\nname = "league"\nseed = 4\ngames = ["connect-four", "breakthrough"]\n'
        f"matches = {matches}\nconcurrency = 3\n"
        "[deadlines]\nfirst_reply_s = 1\nretry_s = 0.5\ndecision_s = 1.5\n"
        + POLICIES.format(latency=latency)
    )
    return path


EPISODES = 2 * 15 * 2  # two games x 15 pairs of 6 policies x both seat orders


def _arena(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "arena.cli", *args, "--no-progress"]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _finished(out: Path) -> int:
    db = out / "league.db"
    if not db.exists():
        return 0
    try:
        # closing(): a connection left open would see a deleted and re-created file as the old one
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _kill_after(process: subprocess.Popen[bytes], out: Path, episodes: int, sig: int) -> None:
    deadline = time.monotonic() + 60
    while _finished(out) < episodes:
        assert process.poll() is None, f"the run ended before {episodes} episodes: {process.stderr}"
        assert time.monotonic() < deadline, "the run made no progress in 60 s"
        time.sleep(0.02)
    process.send_signal(sig)


def _standings(out: Path) -> list[dict[str, object]]:
    summary = json.loads((out / "summary.json").read_text())
    return summary["standings"]["overall"]


def _table(out: Path) -> list[tuple[object, ...]]:
    return [
        (r["policy"], r["games"], r["wins"], r["draws"], r["losses"], r["mean_score"])
        for r in _standings(out)
    ]


def test_killed_twice_resumes_to_the_uninterrupted_standings(tmp_path: Path) -> None:
    config = _config(tmp_path)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert _arena("run", str(config), "--out", str(whole)).wait(timeout=300) == 0
    for stop_at in (EPISODES // 3, 2 * EPISODES // 3):
        process = _arena("run", str(config), "--out", str(cut))
        _kill_after(process, cut, stop_at, signal.SIGKILL)
        process.wait(timeout=30)
        assert process.returncode == -signal.SIGKILL
        assert stop_at <= _finished(cut) < EPISODES
    resumed = _arena("run", str(config), "--out", str(cut))
    assert resumed.wait(timeout=300) == 0
    assert _finished(cut) == EPISODES
    with closing(sqlite3.connect(cut / "league.db")) as db:
        games = db.execute("SELECT episode, game_index FROM games").fetchall()
    assert len(games) == len(set(games)) == EPISODES
    assert len(list((cut / "replays").glob("*.json"))) == EPISODES
    assert _table(cut) == _table(whole)
    whole_ratings = json.loads((whole / "summary.json").read_text())["ratings"]
    cut_ratings = json.loads((cut / "summary.json").read_text())["ratings"]
    assert cut_ratings["elo"] == whole_ratings["elo"]
    assert cut_ratings["bt"] == whole_ratings["bt"]
    assert main(["verify", str(cut)]) == 0


def test_ctrl_c_drains_the_games_in_flight_then_resumes(tmp_path: Path) -> None:
    config = _config(tmp_path, latency=10)
    out = tmp_path / "out"
    process = _arena("run", str(config), "--out", str(out), "--grace", "20")
    _kill_after(process, out, 4, signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert process.stderr is not None
    said = process.stderr.read().decode()
    assert "stop_requested" in said
    flying = re.search(r"in_flight=(\d+)", said)
    assert flying, said
    assert int(flying.group(1)) >= 1  # how many games are still playing
    assert f"the {flying.group(1)} in flight get 20 s to finish" in said
    stopped_at = _finished(out)
    assert 4 <= stopped_at < EPISODES
    assert len(list((out / "replays").glob("*.json"))) == stopped_at
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    resumed = _arena("run", str(config), "--out", str(out))
    assert resumed.wait(timeout=300) == 0
    assert resumed.stderr is not None
    assert (
        f"resuming league in {out}: {stopped_at} of {EPISODES} "
        "episodes were finished earlier" in resumed.stderr.read().decode()
    )
    assert _finished(out) == EPISODES


def test_a_changed_config_is_refused_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, latency=0)
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    changed = _config(tmp_path, latency=0, matches=2)
    capsys.readouterr()
    assert main(["run", str(changed), "--out", str(out), "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert "run.matches: 1 -> 2" in error
    assert "--resume-anyway" in error
    assert "--force-new" in error
    assert main(["run", str(changed), "--out", str(out), "--no-progress", "--resume-anyway"]) == 0
    assert _finished(out) == 2 * EPISODES
    assert main(["run", str(config), "--out", str(out), "--no-progress", "--force-new"]) == 0
    assert _finished(out) == EPISODES


def test_reports_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, latency=0)
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--format", "json"]) == 0
    standings = json.loads(capsys.readouterr().out)
    overall = [r for r in standings if r["game"] == "overall"]
    assert {r["policy"] for r in overall} >= {"tactician", "random"}
    assert "team-c" not in json.dumps(standings)  # ratings are keyed by policy only
    assert main(["report", str(out), "--format", "json", "--what", "h2h"]) == 0
    pairs = {(r["policy"], r["opponent"]) for r in json.loads(capsys.readouterr().out)}
    assert ("mock-c", "mock-d") in pairs  # same-author pairs are shown head to head
    for what in ("standings", "h2h", "fallbacks", "games"):
        assert main(["report", str(out), "--format", "csv", "--what", what]) == 0
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        assert rows, what
    assert main(["report", str(out), "--format", "csv", "--what", "fallbacks"]) == 0
    fallbacks = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {"episode", "ply", "seat", "alias", "policy", "cause", "attempts", "move"} <= set(
        fallbacks[0]
    )
    assert main(["report", str(out), "--what", "h2h"]) == 0
    assert "head to head" in capsys.readouterr().out


def test_a_card_cut_by_a_kill_keeps_its_finished_game_and_is_replaced(tmp_path: Path) -> None:
    config = tmp_path / "cards.toml"
    config.write_text(
        '[run]\nname = "cards"\nseed = 8\ngames = ["backgammon"]\nmatches = 1\nconcurrency = 1\n'
        "[game.backgammon]\nfirst_reply_s = 1\nretry_s = 0.5\ndecision_s = 1.5\n"
        '[policies.a]\nkind = "mock"\nlatency_ms = 3\n[policies.b]\nkind = "mock"\nlatency_ms = 3\n'
    )
    out = tmp_path / "out"
    process = _arena("run", str(config), "--out", str(out))
    deadline = time.monotonic() + 60
    while not list((out / "partial-cards").glob("*.json")):  # game 1 is done, game 2 in play
        assert process.poll() is None, "the run ended before game 1 finished"
        assert time.monotonic() < deadline, "game 1 never finished"
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert _arena("run", str(config), "--out", str(out)).wait(timeout=120) == 0
    events = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    card = "backgammon-k1-a-vs-b"
    mine = [(e["event"], e["attempt"], e.get("status")) for e in events if e["card"] == card]
    assert mine == [
        ("commit", 1, None),
        ("reveal", 1, "cancelled"),
        ("commit", 2, None),
        ("reveal", 2, "finished"),
    ]
    summary = json.loads((out / "summary.json").read_text())
    games = {(g["episode"], g["game_index"]): g for g in summary["games"]}
    cut = f"{card}~cancelled-a1"
    assert games[(cut, 1)]["scores"] is not None  # the finished game is kept
    assert games[(cut, 2)]["scores"] is None
    assert games[(cut, 2)]["ending"] == "no-contest"
    assert games[(card, 1)]["scores"] is not None
    assert games[(card, 2)]["scores"] is not None
    assert summary["ratings"]["matches_rated"] == 1  # the replacement card, not the cut one
    # the match is the new card: the cut card's two games count as replayed, and only its cut
    # game, which ended a no-contest, in NC (its finished game is replaced, not a no-contest)
    rows = summary["standings"]["overall"]
    assert {(r["games"], r["no_contest"], r["replayed"]) for r in rows} == {(4, 1, 2)}
    assert {r["wins"] + r["draws"] + r["losses"] for r in rows} == {2}
    assert main(["verify", str(out)]) == 0
