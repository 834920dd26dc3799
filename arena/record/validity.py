"""Validity: a game counts only if it measured the seats (docs/rules.md#validity).

A fallback is the seat's own failure or the infrastructure's (`replay.Side`). A
game in which a seat's infrastructure fallbacks exceed `max_infra_share` of
its decisions did not measure that seat: it is recorded as `no-contest` (out
of the ratings, shown as NC) with the reason, and played again later in the
run. The rule reads only what a replay records, so `arena verify` checks it.
"""

from __future__ import annotations

from arena.record.causes import FACTS, INFRASTRUCTURE, Cause, Side, side_of
from arena.record.replay import FallbackRecord, GameRecord, GameResult

__all__ = [
    "BREAKER_NOTES",
    "GATEWAY_TIMEOUTS",
    "INFRASTRUCTURE_NC",
    "gateway_timeouts",
    "infrastructure_no_contest",
    "infrastructure_share",
    "measured",
    "side_error",
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
    """For a game whose infrastructure fallbacks all came of a gateway's timeouts (502 or
    504), or of the circuit those opened (a request not sent, or cut, while it was open):
    each such seat and how long the gateway waited before each 502/504, in seconds; {}
    when anything else of the infrastructure failed, or nothing did."""
    infra = [f for f in record.fallbacks if f.side == INFRASTRUCTURE]
    gateway = [f for f in infra if f.cause == "http_status"]
    if not gateway or not all(_breakers(f) for f in infra if f.cause != "http_status"):
        return {}
    statuses = {a.status for f in gateway for a in f.attempts if a.cause == "http_status"}
    if not statuses <= GATEWAY_TIMEOUTS:
        return {}
    seats = {f.seat for f in gateway}
    waits: dict[int, list[float]] = {seat: [] for seat in seats}
    for ply in record.plies:
        for decision in ply.decisions:
            if decision.seat not in seats:
                continue
            for attempt in decision.attempts:  # each transport attempt it made
                for sent in attempt.retries:
                    if sent.get("status") in GATEWAY_TIMEOUTS and sent.get("latency_s"):
                        waits[decision.seat].append(float(sent["latency_s"]))
    return waits


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
