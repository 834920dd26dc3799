"""Listing the legal moves is a choice: a template may leave them out, and its retry too."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.replay import load_replay

pytestmark = pytest.mark.anyio


def _config(**mock: Any) -> dict[str, Any]:
    return {
        "run": {"name": "listing", "seed": 3, "games": ["connect-four"], "matches": 2},
        "deadlines": {"first_reply_s": 1, "decision_s": 3},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "blind": {"kind": "mock", "prompt": "board/no-legal.md", **mock},
        },
    }


async def _attempts(tmp_path: Path, **mock: Any) -> tuple[list[Any], list[Any]]:
    await execute(plan_run(parse_config(_config(**mock)), tmp_path))
    attempts, games = [], []
    for path in sorted((tmp_path / "replays").glob("*.json")):
        replay = load_replay(path)
        for game in replay.games:
            games.append((replay, game))
            seat = replay.spectator.policies[str(game.index)].index("blind")
            for ply in game.plies:
                attempts += [a for d in ply.decisions if d.seat == seat for a in d.attempts]
    return attempts, games


async def test_a_template_without_the_list_keeps_it_out_of_the_retry(tmp_path: Path) -> None:
    attempts, games = await _attempts(tmp_path)
    retries = [a for a in attempts if a.n == 2]
    assert retries  # guessing without the list, the mock is refused often
    assert not [a for a in attempts if a.prompt and "LEGAL MOVES:" in a.prompt]
    causes = Counter(a.cause for a in attempts)
    assert sum(n for cause, n in causes.items() if cause is not None) >= len(retries)
    for replay, game in games:
        seat = str(replay.spectator.policies[str(game.index)].index("blind"))
        assert game.listed == {seat: {"prompt": False, "retry": False}}


async def test_retry_lists_moves_lists_them_in_the_retry_only(tmp_path: Path) -> None:
    attempts, games = await _attempts(tmp_path, retry_lists_moves=True)
    retries = [a for a in attempts if a.n == 2]
    assert retries
    assert all(a.prompt and "LEGAL MOVES:" in a.prompt for a in retries)
    assert not [a for a in attempts if a.n == 1 and a.prompt and "LEGAL MOVES:" in a.prompt]
    assert {v["retry"] for _, g in games for v in g.listed.values()} == {True}


async def test_under_a_schema_the_mock_plays_from_the_enum(tmp_path: Path) -> None:
    attempts, _ = await _attempts(tmp_path, decoding="schema")
    assert attempts
    assert {a.cause for a in attempts} == {None}
    assert {a.decoding for a in attempts} == {"schema-enum"}
