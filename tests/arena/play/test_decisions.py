"""The decision protocol (docs/rules.md#the-decision-protocol) on a virtual clock: every
deadline, the retry's and the decision's, is asserted to the instant, on any machine."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import games
from arena.config import Deadlines
from arena.play.decisions import SEAT_LEAD_S, decide, decide_batch
from arena.play.protocol import DecisionRequest, Question
from tests.arena.fakes import Duel, FixedPrompt, ScriptSeat

pytestmark = [pytest.mark.anyio, pytest.mark.virtual_clock]


FAST = Deadlines(first_reply_s=0.2, retry_s=0.2, decision_s=0.5)


def _hex_after(*moves: str) -> tuple[games.Game[Any], Any]:
    game = games.load("hex")
    state = game.initial(1)
    for move in moves:
        state = game.apply(state, {game.to_act(state)[0]: move})
    return game, state


def _request(seat: ScriptSeat, deadlines: Deadlines = FAST, *moves: str) -> DecisionRequest:
    game, state = _hex_after(*moves)
    mover = game.to_act(state)[0]
    legal = game.legal_moves(state, mover)
    return DecisionRequest(
        game,
        state,
        mover,
        seat,
        FixedPrompt("PROMPT"),
        deadlines,
        legal=legal,
    )


async def test_sound_reply_is_played() -> None:
    seat = ScriptSeat([("reply", '{"move": " C4 ", "say": "hello", "notes": "mine"}')])
    decision = await decide(_request(seat))
    assert (decision.move, decision.source, decision.say, decision.notes) == (
        "c4",
        "reply",
        "hello",
        "mine",
    )


async def test_late_first_reply_gets_the_retry() -> None:
    seat = ScriptSeat([("sleep", 5.0, '{"move": "a1"}'), ("reply", '{"move": "b2"}')])
    decision = await decide(_request(seat))
    assert decision.source == "retry"
    assert decision.move == "b2"
    assert decision.attempts[0].cause == "timeout"
    # The retry is asked the instant the first attempt's deadline passes, not later.
    assert seat.started[1] - seat.started[0] == pytest.approx(FAST.first_reply_s)
    assert decision.attempts[0].latency_s == pytest.approx(FAST.first_reply_s)


async def test_past_decision_s_falls_back_with_timeout_within_the_deadline() -> None:
    seat = ScriptSeat([("hang",)])
    request = _request(seat)
    started = anyio.current_time()
    decision = await decide(request)
    elapsed = anyio.current_time() - started
    assert decision.source == "fallback"
    assert decision.cause == "timeout"
    assert decision.move == request.game.baseline(request.state, request.seat)
    # Each attempt had its own deadline, both inside decision_s: the fallback comes as the
    # retry's ends, not at decision_s.
    assert [a.latency_s for a in decision.attempts] == pytest.approx([0.2, 0.2])
    assert elapsed == pytest.approx(FAST.first_reply_s + FAST.retry_s)
    assert elapsed < FAST.decision_s


async def test_decision_s_cuts_a_long_retry() -> None:
    deadlines = Deadlines(first_reply_s=0.05, retry_s=10.0, decision_s=0.3)
    seat = ScriptSeat([("hang",)])
    started = anyio.current_time()
    decision = await decide(_request(seat, deadlines))
    assert decision.cause == "timeout"
    assert anyio.current_time() - started == pytest.approx(deadlines.decision_s)
    assert decision.attempts[1].latency_s == pytest.approx(0.25)  # retry_s cut to what was left


@pytest.mark.parametrize(
    ("script", "cause"),
    [
        ([("reply", "")], "empty"),
        ([("reply", "I like the centre of the board very much.")], "unreadable"),
        ([("fail", "provider_error")], "provider_error"),
        ([("hang",)], "timeout"),
    ],
)
async def test_each_failure_cause_is_recorded(script: list[tuple[Any, ...]], cause: str) -> None:
    decision = await decide(_request(ScriptSeat(script)))
    assert decision.source == "fallback"
    assert decision.cause == cause
    assert all(a.cause == cause for a in decision.attempts)


async def test_illegal_move_cause() -> None:
    seat = ScriptSeat([("reply", '{"move": "a1"}')])
    decision = await decide(_request(seat, FAST, "a1"))
    assert decision.cause == "illegal"
    assert len(decision.attempts) == 2


async def test_unreadable_at_the_token_limit_is_truncated() -> None:
    seat = ScriptSeat([("reply", '{"move": "c')], stop_reason="length")
    assert (await decide(_request(seat))).cause == "truncated"


async def test_retry_prompt_carries_reason_and_legal_moves() -> None:
    seat = ScriptSeat([("reply", '{"move": "a1"}'), ("reply", '{"move": "b1"}')])
    request = _request(seat, FAST, "a1")
    decision = await decide(request)
    assert decision.source == "retry"
    first, retry = (q.prompt for q in seat.questions)
    assert "REFUSED" not in first
    assert "YOUR PREVIOUS REPLY WAS REFUSED: illegal" in retry
    assert "LEGAL MOVES: " + ", ".join(request.legal) in retry


async def test_batch_asks_both_seats_concurrently() -> None:
    deadlines = Deadlines(first_reply_s=1.0, retry_s=0.5, decision_s=1.2)
    seats = [
        ScriptSeat([("sleep", 0.7, '{"move": "a"}')]),
        ScriptSeat([("sleep", 0.7, '{"move": "b"}')]),
    ]
    game = Duel()
    state = game.initial(1)
    requests = [
        DecisionRequest(
            game, state, seat, seats[seat], FixedPrompt("duel"), deadlines, legal=("a", "b")
        )
        for seat in (0, 1)
    ]
    decisions = await decide_batch(requests)
    assert {s: d.move for s, d in decisions.items()} == {0: "a", 1: "b"}
    assert all(d.source == "reply" for d in decisions.values())
    # Both seats were asked before either had answered: one batch, not one after the other.
    assert max(s.started[0] for s in seats) < min(s.answered[0] for s in seats)


async def test_each_seat_retries_on_its_own_schedule() -> None:
    deadlines = Deadlines(first_reply_s=0.3, retry_s=0.3, decision_s=1.0)
    quick_fail = ScriptSeat([("reply", "nonsense"), ("reply", '{"move": "b"}')])
    slow_ok = ScriptSeat([("sleep", 0.25, '{"move": "a"}')])
    game = Duel()
    state = game.initial(1)
    requests = [
        DecisionRequest(
            game, state, 0, quick_fail, FixedPrompt("duel"), deadlines, legal=("a", "b")
        ),
        DecisionRequest(game, state, 1, slow_ok, FixedPrompt("duel"), deadlines, legal=("a", "b")),
    ]
    decisions = await decide_batch(requests)
    assert decisions[0].source == "retry"
    assert decisions[1].source == "reply"
    # The failing seat's retry began before the slow seat had answered.
    assert quick_fail.started[1] < slow_ok.answered[0]


MARKER_MODEL = "marker-model-7f3a"
MARKER_URL = "http://10.9.8.7:4321/v1"


@pytest.mark.parametrize(
    "cause",
    ["timeout", "transport", "not_connected", "rate_limited", "http_status", "provider_error"],
)
async def test_retry_prompt_never_quotes_a_provider_error(cause: str) -> None:
    detail = f"{cause}: openai model {MARKER_MODEL!r} at {MARKER_URL} gave no usable answer"
    seat = ScriptSeat([("fail", cause, detail), ("reply", '{"move": "b1"}')])
    decision = await decide(_request(seat))
    assert decision.source == "retry"
    assert decision.attempts[0].error == detail  # the record keeps it (spectator side)
    retry = seat.questions[1].prompt
    assert "YOUR PREVIOUS REPLY WAS REFUSED: " in retry
    assert MARKER_MODEL not in retry
    assert MARKER_URL not in retry
    assert "openai" not in retry


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ([("hang",)], "no reply came in time."),
        ([("reply", "")], "the reply was empty."),
        ([("fail", "http_status", "HTTP 503 from x")], "the reply could not be delivered."),
    ],
)
async def test_retry_reasons_come_from_the_fixed_vocabulary(
    script: list[tuple[Any, ...]], reason: str
) -> None:
    seat = ScriptSeat([*script, ("reply", '{"move": "b1"}')])
    await decide(_request(seat, Deadlines(first_reply_s=0.1, retry_s=0.3, decision_s=0.6)))
    assert f"YOUR PREVIOUS REPLY WAS REFUSED: {reason}\n" in seat.questions[1].prompt


async def test_truncated_and_illegal_reasons() -> None:
    seat = ScriptSeat([("reply", '{"move": "c')], stop_reason="length")
    await decide(_request(seat))
    retry = seat.questions[1].prompt
    assert "REFUSED: the reply was cut off at the token limit.\n" in retry
    # the retry's first words ask for the move alone
    assert retry.startswith(
        "PROMPT\nKEEP THIS REPLY SHORT: write only the JSON object with your move"
    )
    seat = ScriptSeat([("reply", '{"move": "a1"}'), ("reply", '{"move": "b1"}')])
    await decide(_request(seat, FAST, "a1"))
    assert "REFUSED: illegal: " in seat.questions[1].prompt
    assert "KEEP THIS REPLY SHORT" not in seat.questions[1].prompt


async def test_a_reply_handed_back_after_the_deadline_is_a_timeout() -> None:
    # The seat shields itself from the arena's cut-off and answers late all the same:
    # lateness is decided by arrival, not by which wake-up the event loop saw first.
    deadlines = Deadlines(first_reply_s=0.1, retry_s=0.1, decision_s=0.2)
    seat = ScriptSeat([("late", 0.15, '{"move": "a1"}')])
    decision = await decide(_request(seat, deadlines))
    assert decision.source == "fallback"
    assert decision.cause == "timeout"
    assert decision.attempts[0].cause == "timeout"


async def test_the_decision_ends_with_its_attempts_not_a_second_cut() -> None:
    deadlines = Deadlines(first_reply_s=0.1, retry_s=10.0, decision_s=0.25)
    seat = ScriptSeat([("hang",)])
    decision = await decide(_request(seat, deadlines))
    # Both attempts were asked and both timed out at their own deadline, the second cut
    # to what was left of decision_s: no extra record of an arena cut-off.
    assert [a.n for a in decision.attempts] == [1, 2]
    assert all(a.prompt for a in decision.attempts)
    assert [a.latency_s for a in decision.attempts] == pytest.approx([0.1, 0.15])
    assert decision.latency_s == pytest.approx(deadlines.decision_s)


async def test_the_mock_seats_slow_fault_answers_clearly_late() -> None:
    import random

    from arena.seats.mock import MockSeat

    game, state = _hex_after()
    seat = MockSeat(random.Random(1), {"slow": 1.0})
    question = Question("p", "move", 1, game, state, 0, game.legal_moves(state, 0))
    deadline = anyio.current_time() + 0.05
    await seat.ask(question, deadline=deadline)
    assert anyio.current_time() >= deadline + 0.25


async def test_a_reply_nested_too_deep_is_unreadable_not_a_crash() -> None:
    deep = '{"move": ' + "[" * 100_000 + "]" * 100_000 + "}"
    seat = ScriptSeat([("reply", deep), ("reply", '{"move": "b1"}')])
    decision = await decide(_request(seat))
    assert decision.source == "retry"
    assert decision.attempts[0].cause == "unreadable"
    assert "too deep" in decision.attempts[0].error


@pytest.mark.parametrize(("offset", "accepted"), [(-0.1, True), (0.04, False)])
async def test_lateness_is_decided_by_arrival(offset: float, accepted: bool) -> None:
    # 100 ms before its deadline a reply is the seat's; 40 ms after it, a timeout, even when
    # the seat shields itself from the arena's cut-off and answers all the same.
    deadlines = Deadlines(first_reply_s=0.3, retry_s=0.3, decision_s=0.3)
    seat = ScriptSeat([("late", offset + SEAT_LEAD_S, '{"move": "a1"}')])
    decision = await decide(_request(seat, deadlines))
    assert (decision.source == "reply") is accepted
    assert decision.attempts[0].cause == (None if accepted else "timeout")


@pytest.mark.parametrize(
    ("script", "cause", "side"),
    [
        # a gateway's 504, then the retry's own deadline: the infrastructure's
        ([("fail", "http_status", "HTTP 504"), ("hang",)], "timeout", "infrastructure"),
        # a 503, then the model's own reply, illegal: the seat's
        ([("fail", "http_status", "HTTP 503"), ("reply", '{"move": "a1"}')], "illegal", "seat"),
        # a connection reset, then no reply in time: the infrastructure's
        ([("fail", "transport", "reset"), ("hang",)], "timeout", "infrastructure"),
        # no reply in time, twice: the seat's
        ([("hang",), ("hang",)], "timeout", "seat"),
    ],
)
async def test_the_seat_is_charged_only_for_what_it_did(
    script: list[tuple[Any, ...]], cause: str, side: str
) -> None:
    deadlines = Deadlines(first_reply_s=0.05, retry_s=0.05, decision_s=0.3)
    decision = await decide(_request(ScriptSeat(script), deadlines, "a1"))
    assert decision.source == "fallback"
    assert (decision.cause, decision.attempts[-1].side) == (cause, side)
    assert len(decision.attempts) == 2
