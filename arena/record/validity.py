"""Validity: a game counts only if it measured the seats (docs/rules.md#validity).

A fallback is the seat's own failure or the infrastructure's (`replay.Side`). A
game in which a seat's infrastructure fallbacks exceed `max_infra_share` of
its decisions did not measure that seat: it is recorded as `no-contest` (out
of the ratings, shown as NC) with the reason, and played again later in the
run. The rule reads only what a replay records, so `arena verify` checks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.record.causes import FACTS, INFRASTRUCTURE, Cause, Side, side_of
from arena.record.replay import DecisionRecord, FallbackRecord, GameRecord, GameResult

__all__ = [
    "BREAKER_NOTES",
    "GATEWAY_TIMEOUTS",
    "INFRASTRUCTURE_NC",
    "gateway_timeouts",
    "infrastructure_no_contest",
    "infrastructure_share",
    "measured",
    "side_error",
    "unmeasured_pairs",
]

INFRASTRUCTURE_NC = "infrastructure: "
"""How the detail of a game the infrastructure spoiled begins."""


def side_error(cause: Cause, side: Side | None) -> str | None:
    """What is wrong with a recorded fallback's side for its cause, or None: only a timeout
    can be either side's (it depends on the endpoint's state and on what failed before it in
    the decision)."""
    allowed = {side_of(cause, False), side_of(cause, True)}
    if side in allowed:
        return None
    return (
        f"a fallback of cause {cause!r} ({FACTS[cause].says}) is recorded as the {side}'s failure"
    )


def infrastructure_share(record: GameRecord, seat: int) -> tuple[int, int]:
    """(fallbacks the infrastructure caused, decisions) of `seat` in the game."""
    decided = sum(1 for ply in record.plies for d in ply.decisions if d.seat == seat)
    failed = sum(1 for f in record.fallbacks if f.seat == seat and f.side == INFRASTRUCTURE)
    return failed, decided


def infrastructure_no_contest(record: GameRecord, max_share: float) -> str | None:
    """The reason the game is a no-contest, if a seat's infrastructure fallbacks exceed
    `max_share` of its decisions; else None."""
    for seat in (0, 1):
        failed, decided = infrastructure_share(record, seat)
        if decided and failed / decided > max_share:
            return (
                f"{INFRASTRUCTURE_NC}{failed} of the {decided} decisions of "
                f"{record.aliases[seat]} fell back on the infrastructure's failures "
                f"(more than {max_share:g} of them): the game did not measure the seat"
            )
    return None


def measured(result: GameResult) -> bool:
    """False for a game the infrastructure spoiled (it is played again)."""
    return not (result.ending == "no-contest" and result.detail.startswith(INFRASTRUCTURE_NC))


GATEWAY_TIMEOUTS = frozenset({502, 504})
"""The statuses a gateway answers when the server behind it took longer than it waits."""


def gateway_timeouts(record: GameRecord) -> dict[int, list[float]]:
    """For a game whose infrastructure fallbacks all came of a gateway's timeouts: each such
    seat and how long the gateway waited before each 502/504, in seconds; {} when anything
    else of the infrastructure failed, or nothing did.

    A decision is a gateway's when a 502 or 504 answered one of its attempts (or one of an
    attempt's transport retries), and each of its other infrastructure failures was a
    timeout (no reply, after the gateway's answer) or the open circuit's doing (a request
    not sent, or cut). A fallback that is only the circuit's counts beside them."""
    decisions = {(p.ply, d.seat): d for p in record.plies for d in p.decisions}
    waits: dict[int, list[float]] = {}
    for fallback in record.fallbacks:
        if fallback.side != INFRASTRUCTURE:
            continue
        decision = decisions.get((fallback.ply, fallback.seat))
        seen = _gateway_waits(fallback, decision)
        if seen is None:
            if not _breakers(fallback):
                return {}
            continue
        waits.setdefault(fallback.seat, []).extend(seen)
    return waits


def _gateway_waits(fallback: FallbackRecord, decision: DecisionRecord | None) -> list[float] | None:
    """How long a gateway waited before each 502/504 of the decision, or None when the
    decision is not a gateway's (`gateway_timeouts`)."""
    sent = [r for a in decision.attempts for r in a.retries] if decision is not None else []
    waits = [float(r.get("latency_s") or 0.0) for r in sent if r.get("status") in GATEWAY_TIMEOUTS]
    answered = any(a.status in GATEWAY_TIMEOUTS for a in fallback.attempts)
    if not (waits or answered):
        return None
    for a in fallback.attempts:
        if a.side != INFRASTRUCTURE or a.cause == "timeout" or a.error.startswith(BREAKER_NOTES):
            continue
        if not (a.cause == "http_status" and a.status in GATEWAY_TIMEOUTS):
            return None
    return [w for w in waits if w > 0]


def unmeasured_pairs(h2h: Mapping[str, Sequence[int]]) -> list[tuple[str, str, int]]:
    """The pairs of policies every one of whose games was a no-contest, with how many: the
    league's head-to-head table (`"a|b"` -> wins, draws, losses, no-contests) measured
    nothing between them. Each pair once, in name order."""
    found = []
    for pair, (won, drawn, lost, nc) in sorted(h2h.items()):
        first, _, second = pair.partition("|")
        if first < second and nc and not (won or drawn or lost):
            found.append((first, second, nc))
    return found


BREAKER_NOTES = ("not sent:", "cut:")
"""How the errors of what an open circuit did begin (`seats.llm`): a question it did not
send, and one it cut in flight."""


def _breakers(fallback: FallbackRecord) -> bool:
    """Whether every infrastructure failure of the fallback was the open circuit's doing."""
    return all(
        a.cause == "timeout" or a.error.startswith(BREAKER_NOTES)
        for a in fallback.attempts
        if a.side == INFRASTRUCTURE
    )
