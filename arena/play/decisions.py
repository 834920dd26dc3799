"""One decision: ask a seat under deadlines, retry once, fall back
(docs/rules.md#the-decision-protocol).

Every seat decides through the seat protocol (`protocol.Seat.decide`); this
module holds what the decisions of text seats share, and the batch that asks
every seat of a ply at once. A text seat's first attempt gets
`first_reply_s`; if it fails in any way (no reply in time, a provider error,
an empty, unreadable or illegal reply) the seat gets ONE retry under
`retry_s`, if time is left, whose prompt carries a neutral reason and, where
the seat's template lists them (or its policy's `retry_lists_moves` says so),
the legal moves; all of it sits inside `decision_s`, measured on anyio's
monotonic clock from the moment the decision is requested. When the retry
fails too, or time runs out, the game's baseline decides and a
`FallbackRecord` says why. Seats that act at the same moment are asked in one
parallel batch, each retrying as soon as its own first attempt fails.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar, NamedTuple

import anyio
import structlog

import games
from arena.play.extract import Extracted, extract
from arena.play.prompts import reply_value
from arena.play.protocol import (
    Answer,
    Decision,
    DecisionAttempt,
    DecisionRequest,
    Question,
    Seat,
    SeatFailure,
)
from arena.record.causes import FACTS, Cause, side_of

__all__ = [
    "NO_REPLY",
    "OTHER_REASON",
    "REPLY_CUT",
    "RETRY_REASONS",
    "SEAT_LEAD_S",
    "SHORT_REPLY",
    "TOO_DEEP",
    "ReadReply",
    "TextSeat",
    "decide",
    "decide_batch",
    "read_reply",
    "retry_reason",
    "retry_text",
    "switched_off",
]

log = structlog.get_logger("arena.play.decisions")

REPLY_CUT = 2000
"""Fallback records keep at most this much of each raw reply."""
SEAT_LEAD_S = 0.05
"""How much earlier than the arena's own cut-off a seat is told its deadline."""

RETRY_REASONS: dict[Cause, str] = {c: f.retry for c, f in FACTS.items() if f.retry}
"""What a retry prompt says of a failed attempt, per cause (`arena.record.causes`): fixed
words, so that no provider error text, model name, URL or status detail ever reaches a
prompt. For `unreadable` and `illegal` the game's own message follows the cause."""
OTHER_REASON = "the reply could not be used."
"""The reason given for a cause `RETRY_REASONS` does not name."""
SHORT_REPLY = (
    "KEEP THIS REPLY SHORT: write only the JSON object with your {key}, with no reasoning "
    "before it; your previous reply ran into the token limit."
)
"""The first line of a retry after a reply that stopped at the token limit (`{key}`: the
reply key): a model that reasons at length is asked for the move alone."""

NO_REPLY = "no reply before the attempt's deadline"
TOO_DEEP = "the reply nests its JSON too deep to read."
_ENDS = (".", "?", "!")


class ReadReply(NamedTuple):
    """A reply as the protocol reads it: the move, or why there is none (`cause`, `error`);
    `extracted` where the move could be read at all (an illegal one included)."""

    move: Any
    cause: Cause | None
    error: str
    extracted: Extracted | None


def read_reply(
    game: games.Game[Any], state: Any, seat: int, text: str, key: str, stop_reason: str | None
) -> ReadReply:
    """Read a reply that arrived in time: empty, unreadable (or truncated, when the model
    stopped at its token limit), illegal, or a move. Decisions and `arena rescore` read
    replies through this one function, so the two never disagree."""
    if not text.strip():
        return ReadReply(None, "empty", RETRY_REASONS["empty"], None)
    try:
        extracted = extract(text, key)
        move = game.parse(state, seat, extracted.move)
    except (games.Unreadable, RecursionError) as exc:
        cause: Cause = "truncated" if stop_reason == "length" else "unreadable"
        error = str(exc) if isinstance(exc, games.Unreadable) else TOO_DEEP
        return ReadReply(None, cause, error, None)
    except games.Illegal as exc:
        return ReadReply(None, "illegal", str(exc), extracted)
    return ReadReply(move, None, "", extracted)


def retry_reason(cause: Cause, error: str) -> str:
    """The neutral reason a retry prompt gives for a failed attempt (`RETRY_REASONS`), whole
    sentences: a game's message that does not end as a sentence does gets a full stop."""
    if cause in ("unreadable", "illegal"):
        message = error.rstrip()
        return f"{cause}: {message}" + ("" if message.endswith(_ENDS) else ".")
    return RETRY_REASONS.get(cause, OTHER_REASON)


def retry_text(
    cause: Cause,
    error: str,
    *,
    key: str = "move",
    legal: Sequence[str] = (),
    move_help: Callable[[], str] | None = None,
    cut: bool = False,
) -> str:
    """What a retry prompt adds to the prompt: the reason, the legal moves (or the move help
    where they cannot be listed) and the reply line; first, after a reply `cut` at the token
    limit, the request for a short one (`SHORT_REPLY`)."""
    lines = [SHORT_REPLY.format(key=key)] if cut else []
    lines.append(f"YOUR PREVIOUS REPLY WAS REFUSED: {retry_reason(cause, error)}")
    if legal:
        lines.append("LEGAL MOVES: " + ", ".join(legal))
    elif move_help is not None:
        lines.append(move_help())
    lines.append(
        f'Reply with one JSON object: {{"{key}": {reply_value(key)}, "say": "...", "notes": "..."}}'
    )
    return "\n".join(lines)


class TextSeat(Seat):
    """A seat that answers a prompt in text: a model behind a provider, or the mock.

    It implements `ask`; deciding (the attempts, the one retry, the fallback)
    is the same for every text seat.
    """

    prompted: ClassVar[bool] = True

    @abstractmethod
    async def ask(self, question: Question, *, deadline: float) -> Answer:
        """Reply to `question` by `deadline` (anyio's clock), or raise SeatFailure; the
        caller's cancel scope also bounds the call."""

    def system_chars(self, question: Question) -> int | None:
        """How many of the prompt's first characters the seat sends as the system message
        (the chat layout), or None when it sends the prompt as one message."""
        return None

    async def decide(self, request: DecisionRequest) -> Decision:
        """Ask, retry once if time is left, else fall back with a cause."""
        return await _text_decision(self, request)


async def _attempt(
    seat: TextSeat, req: DecisionRequest, n: int, feedback: str | None, deadline: float
) -> tuple[DecisionAttempt, Any, Extracted | None]:
    """One attempt; returns its record, the parsed move (or None) and the extraction.

    Lateness is decided by arrival: a reply the seat hands back after `deadline`
    is a timeout, whichever of the scope and the reply the event loop saw first.
    """
    rendered = req.prompt.render(feedback)
    prompt = rendered.text
    started = anyio.current_time()
    log.info("decision_requested", seat=req.seat, attempt=n, budget_s=round(deadline - started, 3))
    question = Question(
        prompt, req.key, n, req.game, req.state, req.seat, req.legal, rendered.stable
    )
    attempt = partial(DecisionAttempt, n, prompt, system_chars=seat.system_chars(question))
    answer: Answer | None = None
    with anyio.move_on_after(deadline - started):
        try:
            # The seat is told a slightly earlier deadline, so that its own timeout (which
            # carries its record of transport attempts) comes before this scope cuts it off.
            answer = await seat.ask(question, deadline=max(started, deadline - SEAT_LEAD_S))
        except SeatFailure as failure:
            latency = anyio.current_time() - started
            record = attempt(latency, None, failure.cause, failure.detail, failure.report)
            return record, None, None
    arrived = anyio.current_time()
    latency = arrived - started
    if answer is None or arrived > deadline:
        return attempt(latency, None, "timeout", NO_REPLY), None, None
    text = answer.text
    read = read_reply(req.game, req.state, req.seat, text, req.key, answer.stop_reason)
    return attempt(latency, text, read.cause, read.error, answer), read.move, read.extracted


def _logged(record: DecisionAttempt, seat: int) -> DecisionAttempt:
    """The attempt's event: its outcome, and what the provider reported of it (tokens, cost,
    stop reason) for whatever watches the run (`arena.observe`)."""
    report = record.report
    reported: dict[str, Any] = {}
    if report is not None:
        usage = report.usage or {}
        reported = {
            "input_tokens": sum(
                usage.get(k) or 0 for k in ("input_uncached", "cache_read", "cache_write")
            ),
            "output_tokens": usage.get("output") or 0,
            "stop_reason": report.stop_reason,
        }
        if usage.get("reasoning") is not None:
            reported["reasoning_tokens"] = usage["reasoning"]
        if report.cost_usd is not None:
            reported["cost_usd"] = report.cost_usd
    log.info(
        "reply_received",
        seat=seat,
        attempt=record.n,
        latency_ms=round(record.latency_s * 1000, 1),
        cause=record.cause,
        status=report.status if report else None,
        **reported,
    )
    return record


async def _text_decision(seat: TextSeat, req: DecisionRequest) -> Decision:
    """Each attempt's own deadline is cut to the decision's end, so the attempts themselves
    keep `decision_s`: no second scope races them at the end."""
    started = anyio.current_time()
    end = started + req.deadlines.decision_s
    attempts: list[DecisionAttempt] = []
    feedback: str | None = None
    for n, limit in ((1, req.deadlines.first_reply_s), (2, req.deadlines.retry_s)):
        now = anyio.current_time()
        if now >= end:
            break
        record, move, extracted = await _attempt(seat, req, n, feedback, min(now + limit, end))
        if record.cause is not None:
            # a timeout after the infrastructure failed in this decision is not the seat's
            before = (a.side for a in attempts)
            record = replace(record, side=side_of(record.cause, seat.endpoint_down(), before))
        attempts.append(_logged(record, req.seat))
        if record.cause is None and extracted is not None:
            return Decision(
                req.seat,
                move,
                "reply" if n == 1 else "retry",
                anyio.current_time() - started,
                tuple(attempts),
                extracted.say,
                extracted.notes,
                None,
                extracted.move,
            )
        cut = record.report is not None and record.report.stop_reason == "length"
        feedback = retry_text(
            record.cause or "timeout",
            record.error,
            key=req.key,
            legal=req.legal if req.retry_lists else (),  # a template that leaves them out
            move_help=req.move_help if req.retry_lists or not req.legal else None,
            cut=cut,
        )
    cause = attempts[-1].cause if attempts else "timeout"
    move = req.game.baseline(req.state, req.seat)
    latency = anyio.current_time() - started
    return Decision(req.seat, move, "fallback", latency, tuple(attempts), cause=cause)


async def switched_off(req: DecisionRequest) -> Decision:
    """The clock has no room left to ask a seat (the battle's switch-off rule): a prompted
    seat is not asked, its baseline plays, recorded as a fallback with cause `llm_off`;
    a seat that reads no prompt decides as always."""
    if not req.player.prompted:
        return await req.player.decide(req)
    move = req.game.baseline(req.state, req.seat)
    return Decision(req.seat, move, "fallback", 0.0, cause="llm_off")


async def decide_batch(
    requests: Sequence[DecisionRequest],
    *,
    switch_off: bool = False,
    labels: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[int, Decision]:
    """Ask every seat of the batch at once (each retries on its own schedule); with
    `switch_off`, prompted seats are not asked (`switched_off`). `labels` (seat -> its
    alias, policy and model) go on the events each decision logs, never to the seat."""
    if switch_off:
        # Nobody waits on anything: the rest of the episode runs at full speed to its end.
        return {req.seat: await switched_off(req) for req in requests}
    labels = labels or {}
    if len(requests) == 1:
        req = requests[0]
        with structlog.contextvars.bound_contextvars(seat=req.seat, **labels.get(req.seat, {})):
            return {req.seat: await decide(req)}
    results: dict[int, Decision] = {}

    async def one(req: DecisionRequest) -> None:
        # each task has its own copy of the context: the labels stay on its seat's events
        with structlog.contextvars.bound_contextvars(seat=req.seat, **labels.get(req.seat, {})):
            results[req.seat] = await decide(req)

    async with anyio.create_task_group() as group:
        for req in requests:
            group.start_soon(one, req)
    return results


async def decide(req: DecisionRequest) -> Decision:
    """Ask one seat, through the seat protocol."""
    return await req.player.decide(req)
