"""What the scripted and the mock seats command in the battle: their own orders, not pincer's."""

from __future__ import annotations

import json
import random

import anyio
import pytest

from arena.play.protocol import Question
from arena.seats.mock import MockSeat
from arena.seats.scripted import ScriptedSeat
from games.battle import Battle, BattleState, Orders

pytestmark = pytest.mark.anyio

SKIRMISH = Battle(map_size=31)


def _turns(n: int) -> BattleState:
    """The skirmish after `n` command turns of pincer on both sides."""
    s = SKIRMISH.initial(6)
    for _ in range(n):
        s = SKIRMISH.apply(s, {seat: SKIRMISH.baseline(s, seat) for seat in (0, 1)})
    return s


def test_a_random_scripted_seat_commands_seeded_random_orders_not_pincer() -> None:
    s = _turns(2)
    drawn = [ScriptedSeat("random", random.Random(seed)).choose(SKIRMISH, s, 0) for seed in (1, 2)]
    again = ScriptedSeat("random", random.Random(1)).choose(SKIRMISH, s, 0)
    assert drawn[0] == again
    assert drawn[0] != drawn[1]
    for orders in drawn:
        assert isinstance(orders, Orders)
        assert orders != SKIRMISH.baseline(s, 0)
        assert SKIRMISH.parse(s, 0, orders.to_json()) == orders  # no repair


def test_a_named_scripted_seat_plays_that_baseline() -> None:
    s = _turns(1)
    seat = 1
    assert ScriptedSeat("flank", random.Random(1)).choose(SKIRMISH, s, seat) == (
        SKIRMISH.named_baseline(s, seat, "flank")
    )
    for name in ("pincer", "default"):
        chosen = ScriptedSeat(name, random.Random(1)).choose(SKIRMISH, s, seat)
        assert chosen == SKIRMISH.baseline(s, seat)
    assert SKIRMISH.named_baseline(s, seat, "flank") != SKIRMISH.baseline(s, seat)


async def _mock_orders(seed: int, s: BattleState, seat: int) -> list[object]:
    question = Question("THE FIELD", "orders", 1, SKIRMISH, s, seat, ())
    answer = await MockSeat(random.Random(seed), {}).ask(
        question, deadline=anyio.current_time() + 5
    )
    orders = json.loads(answer.text)["orders"]
    assert isinstance(orders, list)
    return orders


async def test_the_mock_seat_commands_its_own_seeded_orders_not_pincer() -> None:
    s = _turns(3)
    first, again, other = [await _mock_orders(seed, s, 1) for seed in (4, 4, 5)]
    assert first == again
    assert first != other
    for orders in (first, other):
        read = SKIRMISH.parse(s, 1, orders)
        assert read.repairs == ()
        assert read.to_json() == orders
        assert read != SKIRMISH.baseline(s, 1)
