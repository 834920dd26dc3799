"""A card's result is durable before its seed is revealed: a kill at any step of its
lifecycle, then a resume, leaves a ledger where every card is revealed exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import main
from arena.record.cards import audit_ledger
from arena.record.crash import EPISODE_STEPS, KILL_AT
from arena.record.ledger import read_current
from arena.record.replay import load_replay

ROOT = Path(__file__).resolve().parents[3]

CONFIG = """\
[run]
name = "cards"
seed = 5
games = ["backgammon"]
matches = 1
concurrency = 1
[game.backgammon]
dice = "derived"
[policies.a]
kind = "scripted"
[policies.b]
kind = "scripted"
baseline = "random"
"""

pytestmark = pytest.mark.slow  # each test starts `arena` in subprocesses


def _run(config: Path, out: Path, kill_at: str | None = None) -> int:
    env = {k: v for k, v in os.environ.items() if k != KILL_AT}
    if kill_at:
        env[KILL_AT] = kill_at
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out)]
    done = subprocess.run(
        [*command, "--no-progress"], cwd=ROOT, env=env, capture_output=True, timeout=120
    )
    return done.returncode


def _finished_cards(out: Path) -> dict[tuple[str, int], str]:
    cards = {}
    for path in (out / "replays").glob("*.json"):
        block = load_replay(path).integrity
        if block.get("status") != "cancelled":
            cards[(block["card"], block["attempt"])] = block["card_seed"]
    return cards


def _results(out: Path) -> list[tuple[object, ...]]:
    games = json.loads((out / "summary.json").read_text())["games"]
    return [(g["episode"], g["game_index"], g["scores"], g["ending"], g["plies"]) for g in games]


@pytest.mark.parametrize("step", EPISODE_STEPS)  # a pool's steps: tests/arena/league/test_pool.py
def test_a_kill_at_each_step_then_a_resume_reveals_every_card_once(
    tmp_path: Path, step: str
) -> None:
    config = tmp_path / "cards.toml"
    config.write_text(CONFIG)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert _run(config, whole) == 0
    assert _run(config, cut, kill_at=step) == -9  # SIGKILL at the step
    assert _run(config, cut) == 0
    assert audit_ledger(cut, _finished_cards(cut)) == []
    assert main(["verify", str(cut)]) == 0
    reveals = [e for e in read_current(cut) if e["event"] == "reveal"]
    if step in ("replay", "store"):
        # The card had ended and its replay was written: the resume keeps that result, on
        # the same seed, and reveals it as finished. Nobody chose the dice by stopping.
        assert [r["status"] for r in reveals] == ["finished"]
        assert _results(cut) == _results(whole)
    else:
        # Cut mid-card: revealed as cancelled and replaced by a new card with a new seed.
        assert [(r["attempt"], r["status"]) for r in reveals] == [
            (1, "cancelled"),
            (2, "finished"),
        ]
