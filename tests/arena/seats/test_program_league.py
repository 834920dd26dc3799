"""Program seats in a league: forfeits end only their game, budgets, records, the ledger."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.cli import main
from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.ledger import SOURCES
from arena.record.replay import Replay, load_replay
from arena.record.verify import verify_replay

ROOT = Path(__file__).resolve().parents[3]

RAISES_LATE = """
def create(ctx):
    return Player()


class Player:
    def __init__(self):
        self.moves = 0

    def choose_move(self, view):
        self.moves += 1
        if self.moves == 3:
            raise RuntimeError("third move: give up")
        return view["legal_moves"][0]
"""

GREEDY_FOR_NODES = """
def create(ctx):
    return Player(ctx)


class Player:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        while True:  # keeps calling engine helpers until the arena stops answering
            self.ctx.legal_moves(view["state"])
"""


def _run(tmp_path: Path, programs: dict[str, str], node_budget: int = 20_000) -> list[Replay]:
    policies: dict[str, Any] = {"tactician": {"kind": "scripted", "baseline": "tactician"}}
    for name, source in programs.items():
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        policies[name] = {"kind": "program", "path": str(path), "timeout_s": 10}
    data = {
        "run": {"name": "p", "seed": 9, "games": ["connect-four"], "matches": 1, "concurrency": 2,
                "node_budget": node_budget},
        "policies": policies,
    }  # fmt: skip
    anyio.run(execute, plan_run(parse_config(data), tmp_path / "out"))
    return [load_replay(p) for p in sorted((tmp_path / "out" / "replays").glob("*.json"))]


def test_a_forfeit_ends_only_its_game_and_verifies(tmp_path: Path) -> None:
    replays = _run(
        tmp_path, {"quitter": RAISES_LATE, "greedy": (ROOT / "players" / "greedy.py").read_text()}
    )
    endings = {}
    for replay in replays:
        verify_replay(replay)
        for game in replay.games:
            seats = replay.spectator.policies[str(game.index)]
            endings[(replay.episode, game.index)] = game.result
            if "quitter" in seats and game.result and game.result.ending == "forfeit":
                quitter = seats.index("quitter")
                assert game.result.scores[quitter] == -1
                assert f"seat {quitter} exception" in game.result.detail
                assert game.programs[str(quitter)]["sha256"]
    forfeits = [r for r in endings.values() if r and r.ending == "forfeit"]
    assert len(endings) == 6
    assert len(forfeits) == 4
    standings = json.loads((tmp_path / "out" / "summary.json").read_text())["standings"]
    by_policy = {r["policy"]: r for r in standings["overall"]}
    assert by_policy["quitter"]["forfeits"] == 4  # a forfeit shows where fallbacks do not
    assert by_policy["greedy"]["forfeits"] == by_policy["tactician"]["forfeits"] == 0
    nodes = [
        d.nodes
        for r in replays
        for g in r.games
        for p in g.plies
        for d in p.decisions
        if r.spectator.policies[str(g.index)][d.seat] == "greedy"
    ]
    assert nodes
    assert all(n is not None and n > 0 for n in nodes)
    ledger = [
        json.loads(line) for line in (tmp_path / "out" / "ledger.jsonl").read_text().splitlines()
    ]
    assert {e["policy"] for e in ledger if e["event"] == "program_registered"} == {
        "quitter",
        "greedy",
    }


def test_over_budget_plays_the_first_legal_move_and_the_third_forfeits(tmp_path: Path) -> None:
    (replay, *_) = _run(tmp_path, {"hungry": GREEDY_FOR_NODES}, node_budget=30)
    verify_replay(replay)
    game = replay.games[0]
    hungry = replay.spectator.policies[str(game.index)].index("hungry")
    over = [f for f in game.fallbacks if f.seat == hungry]
    assert [f.cause for f in over] == ["over_budget", "over_budget"]
    assert game.result is not None
    assert game.result.ending == "forfeit"
    assert "over_budget" in game.result.detail


def test_a_refused_program_fails_the_config_check(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef create(ctx):\n    return None\n")
    data = {
        "run": {"name": "p", "seed": 1, "games": ["hex"]},
        "policies": {"a": {"kind": "scripted"}, "bad": {"kind": "program", "path": str(bad)}},
    }
    # The static check runs when the run is planned, before any game (config knows no seat).
    with pytest.raises(ConfigError, match=r"policies\.bad\.path: .*os"):
        plan_run(parse_config(data), tmp_path / "out")
    data["run"]["games"] = ["battle"]
    data["policies"]["bad"]["path"] = str(ROOT / "players" / "greedy.py")
    with pytest.raises(ConfigError, match=r"programs do not play \['battle'\]"):
        parse_config(data)


MARKED = """
def create(ctx):
    return Player()


class Player:
    def __init__(self):
        self.moves = 0

    def choose_move(self, view):
        self.moves += 1
        if self.moves == 2:
            self.give_up()
        return view["legal_moves"][0]

    def give_up(self):
        print("MARKER-print")
        raise ValueError("x")  # MARKER-7f3a
"""


def test_a_forfeit_keeps_where_and_why_but_no_source_and_no_output(tmp_path: Path) -> None:
    """Programs' sources stay secret while they play: a forfeit's detail names the
    exception, the line and the function, and no file of the run shows a source line or
    what the program printed."""
    (tmp_path / "marked.py").write_text(MARKED)
    (tmp_path / "run.toml").write_text(
        '[run]\nname = "marked"\nseed = 9\ngames = ["connect-four"]\nmatches = 1\n'
        '[policies.tactician]\nkind = "scripted"\nbaseline = "tactician"\n'
        '[policies.marked]\nkind = "program"\npath = "marked.py"\ntimeout_s = 10\n'
    )
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "run.toml"), "--out", str(out), "--no-progress"]) == 0
    replays = [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]
    details = [g.result.detail for r in replays for g in r.games if g.result is not None]
    assert len(details) == 2
    for detail in details:
        assert "exception: choosing a move: ValueError: x" in detail
        assert "[marked.py line 18, in give_up; called from line 13, in choose_move]" in detail
    files = [p for p in out.rglob("*") if p.is_file() and p.parent.name != SOURCES]
    assert {"events.jsonl", "summary.json", "league.db"} <= {p.name for p in files}
    # The one place the source is, until it is revealed: the run's private copy.
    (kept,) = (out / SOURCES).iterdir()
    assert b"MARKER-7f3a" in kept.read_bytes()
    assert kept.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(out / "league.db") as db:
        dump = "\n".join(db.iterdump())
    assert "give_up" in dump
    for name, text in [*((str(p), p.read_bytes()) for p in files), ("dump", dump.encode())]:
        assert b"MARKER" not in text, name
