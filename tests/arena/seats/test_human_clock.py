"""A person's deadlines on a virtual clock: the first decision held for the page (or
`first_open_s`), the first try's deadline, and the decision's end, each to the instant."""

from __future__ import annotations

import anyio
import pytest

import games
from arena.config import Deadlines
from arena.play.protocol import DecisionRequest
from arena.seats.desk import Desk
from arena.seats.human import HumanSeat
from tests.arena.fakes import FixedPrompt

pytestmark = [pytest.mark.anyio, pytest.mark.virtual_clock]

OWN = Deadlines(first_reply_s=2.0, retry_s=2.0, decision_s=5.0)
"""The person's own deadlines (connect-four lets a run set them)."""


def _seat() -> tuple[Desk, HumanSeat, DecisionRequest]:
    game = games.load("connect-four")
    state = game.initial(1)
    desk = Desk("clock")
    seat = HumanSeat(desk.table(game, 1, 1, 0), OWN, first_open_s=10.0)
    game_deadlines = Deadlines(first_reply_s=0.5, retry_s=0.5, decision_s=1.0)  # not the person's
    request = DecisionRequest(
        game, state, 0, seat, FixedPrompt("p"), game_deadlines, legal=game.legal_moves(state, 0)
    )
    return desk, seat, request


async def test_an_unseen_first_decision_is_held_for_first_open_s_then_runs_its_own_clock() -> None:
    _, seat, request = _seat()
    asked = anyio.current_time()
    decision = await seat.decide(request)
    assert (decision.source, decision.cause) == ("fallback", "timeout")
    # Held 10 s for a page nobody opened, then the first try's 2 s: no try came.
    assert anyio.current_time() - asked == pytest.approx(10.0 + OWN.first_reply_s)
    assert decision.latency_s == pytest.approx(OWN.first_reply_s)  # think time, from the start


async def test_a_refused_try_leaves_the_clock_running_to_the_decisions_end() -> None:
    desk, seat, request = _seat()
    table = seat.table
    refused: list[str | None] = []

    async def person() -> None:
        await anyio.sleep(1.0)
        desk.shown()  # the page shows the game: the clock starts at 1 s
        await anyio.sleep(1.5)
        assert table.turn is not None
        refused.append(table.turn.offer("z9"))  # refused at 2.5 s, 1.5 s into its first 2 s
        await anyio.sleep(10)

    async with anyio.create_task_group() as group:
        group.start_soon(person)
        asked = anyio.current_time()
        decision = await seat.decide(request)
        ended = anyio.current_time() - asked
        group.cancel_scope.cancel()
    assert len(refused) == 1
    assert refused[0]  # the engine's message
    assert (decision.source, decision.cause) == ("fallback", "timeout")
    assert [a.cause for a in decision.attempts] == ["unreadable", "timeout"]
    # The clock started when the page showed it, and ran to decision_s after that.
    assert ended == pytest.approx(1.0 + OWN.decision_s)
    assert decision.latency_s == pytest.approx(OWN.decision_s)


async def test_an_accepted_try_ends_the_decision_when_it_comes() -> None:
    desk, seat, request = _seat()
    table = seat.table

    async def person() -> None:
        desk.shown()
        await anyio.sleep(1.25)
        assert table.turn is not None
        assert table.turn.offer("d") is None

    async with anyio.create_task_group() as group:
        group.start_soon(person)
        decision = await seat.decide(request)
    assert (decision.source, decision.latency_s) == ("reply", pytest.approx(1.25))
