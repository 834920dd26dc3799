"""The battle in the arena: parallel commanders, the episode clock, switch-off, verification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.replay import load_replay
from arena.record.verify import verify_replay
from tests.timing import MARGIN_S


def _battle(policies: dict[str, Any], game: dict[str, Any]) -> dict[str, Any]:
    return {
        "run": {"name": "b", "seed": 3, "games": ["battle"], "matches": 1, "concurrency": 2},
        "game": {"battle": {"map_size": 31, **game}},
        "policies": policies,
    }


def _run(tmp_path: Path, data: dict[str, Any]) -> list[Any]:
    anyio.run(execute, plan_run(parse_config(data), tmp_path))
    return [load_replay(p) for p in sorted((tmp_path / "replays").glob("*.json"))]


def test_battle_episode_records_chain_orders_and_verifies(tmp_path: Path) -> None:
    policies = {
        "pincer": {"kind": "scripted"},
        "faulty": {"kind": "mock", "faults": {"unreadable": 0.3}},
    }
    (replay,) = _run(tmp_path, _battle(policies, {}))
    assert [g.index for g in replay.games] == [1, 2]
    assert replay.games[0].aliases == ["Alpha", "Bravo"]
    assert replay.games[1].aliases == [
        "Bravo",
        "Alpha",
    ]
    first = replay.games[0].plies[0]
    assert len(first.decisions) == 2
    assert len(first.integrity["hashes"]) == 20  # one gameHash link per tick of the turn
    assert {f.cause for g in replay.games for f in g.fallbacks} == {"unreadable"}
    scores = [g.result.scores for g in replay.games if g.result]
    assert all(sum(s) == 0 for s in scores)
    verify_replay(replay)


def test_tampered_hash_chain_fails_verification(tmp_path: Path) -> None:
    policies = {"pincer": {"kind": "scripted"}, "sound": {"kind": "mock"}}
    (replay,) = _run(tmp_path, _battle(policies, {}))
    replay.games[1].plies[2].integrity["hashes"][5] = "0" * 64
    with pytest.raises(Exception, match="integrity data \\['hashes'\\]"):
        verify_replay(replay)


def test_switch_off_when_two_turns_no_longer_fit(tmp_path: Path) -> None:
    # Seats answer in 30 ms; the episode has 0.5 s and a turn may take 0.1 s, so after
    # about 0.3 s the seats are switched off and the rest runs at full speed to a real end.
    policies = {"a": {"kind": "mock", "latency_ms": 30}, "b": {"kind": "mock", "latency_ms": 30}}
    game = {"first_reply_s": 0.08, "retry_s": 0.02, "decision_s": 0.1, "episode_wall_s": 0.5}
    (replay,) = _run(tmp_path, _battle(policies, game))
    causes = [f.cause for g in replay.games for f in g.fallbacks]
    assert "llm_off" in causes
    assert all(g.result and g.result.reason == "complete" for g in replay.games)
    asked = sum(
        1 for g in replay.games for p in g.plies for d in p.decisions if d.source != "fallback"
    )
    assert asked > 0, "the seats were asked while two turns still fitted"
    assert sum(g.wall_s for g in replay.games) < 0.5 + MARGIN_S
    verify_replay(replay)
