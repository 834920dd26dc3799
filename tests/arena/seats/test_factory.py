"""The seat maker: one per session, a builder per kind of policy."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import anyio
import pytest

import games
from arena.config import PolicyConfig, parse_config
from arena.league.plan import plan_run
from arena.play.protocol import MakesSeats
from arena.seats import factory
from arena.seats.factory import SeatMaker
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


def test_a_seat_draws_from_its_place_and_nothing_else(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    game = games.load("connect-four")

    def draw(maker: MakesSeats, seed: int, index: int, seat: int) -> float:
        made = maker.make(game, "mock", seed=seed, index=index, seat=seat)
        return float(made._rng.random())  # type: ignore[attr-defined]

    here = draw(plan.seat_maker(), 3, 2, 1)
    assert draw(plan.seat_maker(), 3, 2, 1) == here, "another session's maker, the same seat"
    assert draw(SeatMaker(plan.config), 3, 2, 1) == here
    assert here not in {
        draw(plan.seat_maker(), *place) for place in ((4, 2, 1), (3, 1, 1), (3, 2, 0))
    }


@pytest.mark.anyio
async def test_a_persons_table_gets_the_scope_of_the_episode_its_maker_was_given(
    tmp_path: Path,
) -> None:
    from arena.seats.cut import CuttableEpisode
    from arena.seats.desk import Desk
    from arena.seats.human import HumanSeat

    plan = _plan(tmp_path, person={"kind": "human", "name": "Ada"})
    desk = Desk("f")
    maker = plan.seat_maker(desk=desk)
    game = games.load("connect-four")
    episode = CuttableEpisode("e-1", anyio.CancelScope())
    made = maker.in_episode(episode).make(game, "person", seed=1, index=1, seat=0)
    assert isinstance(made, HumanSeat)
    assert made.table.episode is episode
    outside = maker.make(game, "person", seed=1, index=1, seat=1)
    assert isinstance(outside, HumanSeat)
    assert outside.table.episode is None  # the session's maker itself is in no episode
    assert maker.episode is None
