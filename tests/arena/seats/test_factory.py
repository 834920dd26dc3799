"""The seat maker: one per session, a builder per kind of policy, the old entry points kept."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest

import games
from arena.config import PolicyConfig, parse_config
from arena.league.plan import plan_run
from arena.play.protocol import MakesSeats
from arena.seats import factory
from arena.seats.factory import SeatMaker, make_seat
from arena.seats.mock import MockSeat
from arena.seats.program import ProgramPlayer
from arena.seats.scripted import ScriptedSeat

PLAYERS = Path(__file__).resolve().parents[3] / "players"


def _plan(tmp_path: Path, **extra: dict[str, Any]) -> Any:
    policies: dict[str, Any] = {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "mock": {"kind": "mock"},
        "greedy": {"kind": "program", "path": str(PLAYERS / "greedy.py")},
        **extra,
    }
    data = {"run": {"name": "f", "seed": 5, "games": ["connect-four"]}, "policies": policies}
    return plan_run(parse_config(data), tmp_path / "out")


def test_every_kind_of_policy_has_a_builder() -> None:
    union = typing.get_args(typing.get_args(PolicyConfig)[0])
    assert set(factory._BUILDERS) == set(union)


def test_each_kind_gets_its_seat(tmp_path: Path) -> None:
    maker: MakesSeats = _plan(tmp_path).seat_maker()  # what the game loop is handed
    game = games.load("connect-four")
    made = {
        p: maker.make(game, p, seed=1, index=1, seat=0) for p in ("tactician", "mock", "greedy")
    }
    assert isinstance(made["tactician"], ScriptedSeat)
    assert isinstance(made["mock"], MockSeat)
    assert isinstance(made["greedy"], ProgramPlayer)


def test_what_a_seat_needs_and_lacks_is_said(tmp_path: Path) -> None:
    model = {"kind": "llm", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    plan = _plan(tmp_path, model=model, person={"kind": "human", "name": "Ada"})
    maker = plan.seat_maker()
    game = games.load("connect-four")
    with pytest.raises(RuntimeError, match=r"'model' is a model: .* open provider pool"):
        maker.make(game, "model", seed=1, index=1, seat=0)
    with pytest.raises(RuntimeError, match=r"'person' is a person: .* play page"):
        maker.make(game, "person", seed=1, index=1, seat=1)


def test_the_response_cache_is_asked_with_every_seat(tmp_path: Path) -> None:
    asked: list[None] = []
    plan = _plan(tmp_path)
    maker = SeatMaker(plan.config, plan.programs, response_cache=lambda: asked.append(None))
    maker.make(games.load("connect-four"), "tactician", seed=1, index=1, seat=0)
    assert asked == [None]


def test_a_seat_is_the_same_from_the_old_entry_points(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    game = games.load("connect-four")
    new = plan.seat_maker().make(game, "mock", seed=3, index=2, seat=1)
    with pytest.warns(DeprecationWarning, match="make_seat"):
        old = make_seat(plan.config, plan.programs, game, "mock", 3, 2, 1)
    with pytest.warns(DeprecationWarning, match="seat_for"):
        planned = plan.seat_for("mock", 3, 2, 1, game=game)
    with pytest.warns(DeprecationWarning, match="seat_for"):
        set_up = plan.setup_for("connect-four").seat_for("mock", 3, 2, 1)
    assert isinstance(old, MockSeat)
    draws = [seat._rng.random() for seat in (new, old, planned, set_up)]  # type: ignore[attr-defined]
    assert len(set(draws)) == 1, "every way draws from the same seeded generator"
