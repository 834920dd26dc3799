"""Stratego in the arena: hidden ranks never reach a prompt; setups, fallbacks, reveals, verify."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import anyio

import games
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.play.prompts import SeatContext, load_template, render
from arena.record.replay import load_replay
from arena.record.verify import verify_replay
from tests.games.test_stratego_view import random_game, shuffle_hidden

G = games.load("stratego")


def _prompt(state: Any, seat: int) -> str:
    context = SeatContext(
        "stratego",
        1,
        seat,
        ("Red", "Blue")[seat],
        ("Red", "Blue")[1 - seat],
        G.view(state, seat),
        ("e4-e5",),
        G.legal_moves(state, seat),
        None,
        "",
        G.reply_key(state),
    )
    return render(load_template("stratego/default.md"), context)


def test_prompts_do_not_depend_on_the_opponents_hidden_ranks() -> None:
    for seed in range(1, 25):
        state = random_game(seed, 40 + seed)
        rng = random.Random(seed)
        for seat in (0, 1):
            other = shuffle_hidden(state, 1 - seat, rng)
            assert other.board != state.board or seed > 20
            assert _prompt(other, seat) == _prompt(state, seat)


def _run(tmp_path: Path, policies: dict[str, Any]) -> list[Any]:
    data = {
        "run": {"name": "s", "seed": 5, "games": ["stratego"], "matches": 1, "concurrency": 2},
        "deadlines": {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8},
        "policies": policies,
    }
    anyio.run(execute, plan_run(parse_config(data), tmp_path))
    return [load_replay(p) for p in sorted((tmp_path / "replays").glob("*.json"))]


def test_unreadable_setups_fall_back_to_the_seeded_setup_and_verify(tmp_path: Path) -> None:
    policies = {
        "baseline": {"kind": "scripted"},
        "broken": {"kind": "mock", "faults": {"unreadable": 1.0}},
    }
    replays = _run(tmp_path, policies)
    assert len(replays) == 2
    for replay in replays:
        verify_replay(replay)
        game = replay.games[0]
        setup_ply = game.plies[0]
        assert len(setup_ply.decisions) == 2  # both setups asked in one batch
        broken_seat = replay.spectator.policies[str(game.index)].index("broken")
        setup_fallback = [f for f in game.fallbacks if f.ply == 1]
        assert [(f.seat, f.cause) for f in setup_fallback] == [(broken_seat, "unreadable")]
        assert setup_fallback[0].move == G.random_setup(replay.match.seed, broken_seat, game.index)
        reveals = [p.integrity["battle"] for p in game.plies if "battle" in p.integrity]
        assert reveals, "battles reveal both pieces in the replay"
        assert {"attacker", "defender", "result", "move"} <= set(reveals[0])
