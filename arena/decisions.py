"""One decision: ask a seat under deadlines, retry once, fall back (SPEC 2).

The first attempt gets `first_reply_s`; if it fails in any way (no reply in
time, a provider error, an empty, unreadable or illegal reply) the seat gets
ONE retry under `retry_s`, if time is left, whose prompt carries the reason
and the legal moves; all of it sits inside `decision_s`, measured on anyio's
monotonic clock from the moment the decision is requested. When the retry
fails too, or time runs out, the game's baseline decides and a
`FallbackRecord` says why. Seats that act at the same moment are asked in one
parallel batch, each retrying as soon as its own first attempt fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

import games
from arena.config import Deadlines
from arena.extract import extract
from arena.seats import Answer, ProgramPlayer, Question, ScriptedSeat, SeatFailure, TextSeat

__all__ = [
    "NO_REPLY",
    "REPLY_CUT",
    "RETRY_REASONS",
    "Attempt",
    "Decision",
    "DecisionRequest",
    "decide",
    "decide_batch",
    "retry_reason",
    "switched_off",
]

log = structlog.get_logger("arena.decisions")

REPLY_CUT = 2000
"""Fallback records keep at most this much of each raw reply."""
SEAT_LEAD_S = 0.05
"""How much earlier than the arena's own cut-off a seat is told its deadline."""

RETRY_REASONS = {
    "timeout": "no reply in time",
    "transport": "the reply could not be delivered",
    "not_connected": "the reply could not be delivered",
    "rate_limited": "the reply could not be delivered",
    "http_status": "the reply could not be delivered",
    "provider_error": "the reply could not be delivered",
    "empty": "the reply was empty",
    "truncated": "the reply was cut off at the token limit",
}
"""What a retry prompt says of a failed attempt, per cause: fixed words, so that no
provider error text, model name, URL or status detail ever reaches a prompt. For
`unreadable` and `illegal` the game's own message follows the cause."""

NO_REPLY = "no reply before the attempt's deadline"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One question to a text seat and what came of it."""

    n: int
    prompt: str
    latency_s: float
    reply: str | None
    cause: str | None
    """None when the attempt gave a move the game accepted."""
    error: str = ""
    answer: Answer | None = None
    failure: SeatFailure | None = None
    """The seat's own failure (a provider error), with its status and transport attempts."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A seat's validated move and how the arena got it."""

    seat: int
    move: Any
    source: str
    """`reply`, `retry` or `fallback` (scripted seats decide as `reply`)."""
    latency_s: float
    attempts: tuple[Attempt, ...] = ()
    say: str = ""
    notes: str | None = None
    cause: str | None = None
    """The fallback's cause: that of the last failed attempt, else `timeout`."""
    extracted: Any = None
    """The move as the seat wrote it, before the game's reader (None on fallback)."""
    nodes: int | None = None
    """Program seats: the engine helper calls this move cost."""
    error: str = ""
    """A forfeit's detail."""


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """Everything needed to ask one seat for one move."""

    game: games.Game[Any]
    state: Any
    seat: int
    player: TextSeat | ScriptedSeat | ProgramPlayer
    prompt: Callable[[str | None], str]
    """Renders the prompt; the argument is the retry's feedback, or None."""
    deadlines: Deadlines
    key: str = "move"
    legal: tuple[str, ...] = field(default=())
    move_help: Callable[[], str] | None = None
    """How to write a move, for a retry where the moves cannot be listed (the battle)."""


def retry_reason(cause: str, error: str) -> str:
    """The neutral reason a retry prompt gives for a failed attempt (`RETRY_REASONS`)."""
    if cause in ("unreadable", "illegal"):
        return f"{cause}: {error}"
    return RETRY_REASONS.get(cause, "the reply could not be used")


def _feedback(reason: str, req: DecisionRequest) -> str:
    lines = [f"YOUR PREVIOUS REPLY WAS REFUSED: {reason}"]
    if req.legal:
        lines.append("LEGAL MOVES: " + ", ".join(req.legal))
    elif req.move_help is not None:
        lines.append(req.move_help())
    key = req.key
    lines.append(f'Reply with one JSON object: {{"{key}": "...", "say": "...", "notes": "..."}}')
    return "\n".join(lines)


async def _attempt(
    req: DecisionRequest, n: int, feedback: str | None, deadline: float
) -> tuple[Attempt, Any, Any]:
    """One attempt; returns its record, the parsed move (or None) and the extraction.

    Lateness is decided by arrival: a reply the seat hands back after `deadline`
    is a timeout, whichever of the scope and the reply the event loop saw first.
    """
    prompt = req.prompt(feedback)
    started = anyio.current_time()
    log.info("decision_requested", seat=req.seat, attempt=n, budget_s=round(deadline - started, 3))
    question = Question(prompt, req.key, n, req.game, req.state, req.seat, req.legal)
    answer: Answer | None = None
    with anyio.move_on_after(deadline - started):
        try:
            # The seat is told a slightly earlier deadline, so that its own timeout (which
            # carries its record of transport attempts) comes before this scope cuts it off.
            seat_deadline = max(started, deadline - SEAT_LEAD_S)
            answer = await req.player.ask(question, deadline=seat_deadline)  # type: ignore[union-attr]
        except SeatFailure as failure:
            latency = anyio.current_time() - started
            record = Attempt(
                n, prompt, latency, None, failure.cause, failure.detail, failure=failure
            )
            return record, None, None
    arrived = anyio.current_time()
    latency = arrived - started
    if answer is None or arrived > deadline:
        return Attempt(n, prompt, latency, None, "timeout", NO_REPLY), None, None
    if not answer.text.strip():
        return (
            Attempt(n, prompt, latency, answer.text, "empty", "the reply was empty", answer),
            None,
            None,
        )
    extracted = extract(answer.text, req.key)
    try:
        move = req.game.parse(req.state, req.seat, extracted.move)
    except games.Unreadable as exc:
        cause = "truncated" if answer.stop_reason == "length" else "unreadable"
        return Attempt(n, prompt, latency, answer.text, cause, str(exc), answer), None, extracted
    except games.Illegal as exc:
        return (
            Attempt(n, prompt, latency, answer.text, "illegal", str(exc), answer),
            None,
            extracted,
        )
    return Attempt(n, prompt, latency, answer.text, None, "", answer), move, extracted


def _logged(record: Attempt, seat: int) -> Attempt:
    log.info(
        "reply_received",
        seat=seat,
        attempt=record.n,
        latency_ms=round(record.latency_s * 1000, 1),
        cause=record.cause,
        status=record.answer.status if record.answer else None,
    )
    return record


async def decide(req: DecisionRequest) -> Decision:
    """Ask one seat, retry once if time is left, else fall back with a cause.

    Each attempt's own deadline is cut to the decision's end, so the attempts
    themselves keep `decision_s`: no second scope races them at the end.
    """
    started = anyio.current_time()
    if isinstance(req.player, ProgramPlayer):
        return await _program_decision(req, req.player, started)
    if isinstance(req.player, ScriptedSeat):
        move = req.player.choose(req.game, req.state, req.seat)
        return Decision(req.seat, move, "reply", anyio.current_time() - started)
    end = started + req.deadlines.decision_s
    attempts: list[Attempt] = []
    feedback: str | None = None
    for n, limit in ((1, req.deadlines.first_reply_s), (2, req.deadlines.retry_s)):
        now = anyio.current_time()
        if now >= end:
            break
        record, move, extracted = await _attempt(req, n, feedback, min(now + limit, end))
        attempts.append(_logged(record, req.seat))
        if record.cause is None:
            source = "reply" if n == 1 else "retry"
            return Decision(
                req.seat,
                move,
                source,
                anyio.current_time() - started,
                tuple(attempts),
                extracted.say,
                extracted.notes,
                None,
                extracted.move,
            )
        feedback = _feedback(retry_reason(record.cause, record.error), req)
    cause = attempts[-1].cause if attempts else "timeout"
    move = req.game.baseline(req.state, req.seat)
    return Decision(
        req.seat, move, "fallback", anyio.current_time() - started, tuple(attempts), cause=cause
    )


async def _program_decision(
    req: DecisionRequest, player: ProgramPlayer, started: float
) -> Decision:
    """A program's move: no retry; over budget it is the first legal move, recorded as a
    fallback; a forfeit comes back as a decision with source `forfeit`."""
    from arena.programs import ProgramForfeit

    try:
        chosen = await player.seat.choose(req.game, req.state, req.seat, timeout_s=player.timeout_s)
    except ProgramForfeit as forfeit:
        latency = anyio.current_time() - started
        log.warning("program_forfeited", seat=req.seat, cause=forfeit.cause, detail=forfeit.detail)
        return Decision(
            req.seat, None, "forfeit", latency, cause=forfeit.cause, error=forfeit.detail
        )
    latency = anyio.current_time() - started
    if chosen.over_budget:
        return Decision(
            req.seat, chosen.move, "fallback", latency, cause="over_budget", nodes=chosen.nodes
        )
    return Decision(req.seat, chosen.move, "reply", latency, nodes=chosen.nodes)


def switched_off(req: DecisionRequest) -> Decision:
    """The baseline decides without asking: the episode's clock has no room left for
    the seat (the battle's switch-off rule); recorded as a fallback, cause `llm_off`."""
    if isinstance(req.player, ScriptedSeat):
        return Decision(req.seat, req.player.choose(req.game, req.state, req.seat), "reply", 0.0)
    return Decision(
        req.seat, req.game.baseline(req.state, req.seat), "fallback", 0.0, cause="llm_off"
    )


async def decide_batch(requests: Sequence[DecisionRequest]) -> dict[int, Decision]:
    """Ask every seat of the batch at once; each retries on its own schedule."""
    if len(requests) == 1:
        return {requests[0].seat: await decide(requests[0])}
    results: dict[int, Decision] = {}

    async def one(req: DecisionRequest) -> None:
        results[req.seat] = await decide(req)

    async with anyio.create_task_group() as group:
        for req in requests:
            group.start_soon(one, req)
    return results
