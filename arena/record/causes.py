"""Fallback causes: every reason a seat's decision was not its own, whose it was, and the
words for it (docs/rules.md#the-decision-protocol, docs/rules.md#validity).

A cause is one of `CAUSES`; the replay models type their `cause` fields with
`Cause`, so a replay naming any other fails validation (and `arena verify` says
which). Each cause has a side (`CauseSide`): the seat's own failure (what it
returned), the infrastructure's (the provider, the network, the endpoint), a
timeout that is either's (the seat's while its endpoint was up and nothing of
the infrastructure failed before it in the decision), or neither's (`llm_off`:
the battle's clock rule did not ask the seat). Each has two wordings: the
neutral one a retry prompt gives the model (fixed words, so no provider text,
model name, URL or status reaches a prompt), and the one a report shows a user.

A program's forfeit (it loses the game) has causes of its own, `FORFEIT_CAUSES`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "CAUSES",
    "FACTS",
    "FORFEIT_CAUSES",
    "INFRASTRUCTURE",
    "INFRASTRUCTURE_CAUSES",
    "READING_CAUSES",
    "SEAT",
    "Cause",
    "CauseFacts",
    "CauseSide",
    "ForfeitCause",
    "Side",
    "side_of",
]

Cause = Literal[
    "timeout",
    "transport",
    "rate_limited",
    "http_status",
    "provider_error",
    "empty",
    "truncated",
    "unreadable",
    "illegal",
    "over_budget",
    "llm_off",
    "not_connected",
]
"""A fallback's (or a failed attempt's) cause."""

CAUSES: tuple[Cause, ...] = get_args(Cause)
"""Every cause, in the order reports and exports list them."""

ForfeitCause = Literal["illegal", "crash", "exception", "timeout", "over_budget"]
"""Why a program lost its game by its own fault."""

FORFEIT_CAUSES: tuple[ForfeitCause, ...] = get_args(ForfeitCause)
"""Every forfeit cause."""

Side = Literal["seat", "infrastructure"]
"""Whose failure a fallback was (docs/rules.md#validity): the seat's own (what it returned,
or no reply while its endpoint was up), or the infrastructure's (the provider, the network,
the endpoint down). The battle's clock rule (`llm_off`) is neither: the seat was not asked."""
SEAT: Side = "seat"
INFRASTRUCTURE: Side = "infrastructure"

CauseSide = Literal["seat", "infrastructure", "either", "neither"]
"""Whose failure a cause can be: one side's, either's (a timeout), or neither's (`llm_off`)."""


@dataclass(frozen=True, slots=True)
class CauseFacts:
    """What the arena knows of one cause."""

    side: CauseSide
    retry: str
    """What a retry prompt says of it, neutral words ('' where the game's own message
    follows the cause: `unreadable` and `illegal`)."""
    says: str
    """How a report says it to a user."""


_DELIVERY = "the reply could not be delivered."

FACTS: dict[Cause, CauseFacts] = {
    "timeout": CauseFacts("either", "no reply came in time.", "no reply before the deadline"),
    "transport": CauseFacts(
        "infrastructure", _DELIVERY, "the connection failed or dropped the reply"
    ),
    "rate_limited": CauseFacts("infrastructure", _DELIVERY, "the provider limited the rate"),
    "http_status": CauseFacts("infrastructure", _DELIVERY, "the endpoint answered an error status"),
    "provider_error": CauseFacts(
        "infrastructure", _DELIVERY, "the provider's answer was no completion"
    ),
    "not_connected": CauseFacts(
        "infrastructure", _DELIVERY, "the endpoint could not be reached (or was down)"
    ),
    "empty": CauseFacts("seat", "the reply was empty.", "an empty reply"),
    "truncated": CauseFacts(
        "seat", "the reply was cut off at the token limit.", "a reply cut at the token limit"
    ),
    "unreadable": CauseFacts("seat", "", "a reply with no move the game could read"),
    "illegal": CauseFacts("seat", "", "an illegal move"),
    "over_budget": CauseFacts("seat", "", "the program ran over its node budget"),
    "llm_off": CauseFacts("neither", "", "not asked: the clock had no room left"),
}
"""Each cause's side and wordings."""

INFRASTRUCTURE_CAUSES: frozenset[Cause] = frozenset(
    c for c, f in FACTS.items() if f.side == "infrastructure"
)
"""Causes that are the infrastructure's whatever else happened; a `timeout` is too in the
cases `side_of` names, and the seat's otherwise."""

READING_CAUSES: frozenset[Cause] = frozenset({"empty", "truncated", "unreadable", "illegal"})
"""Causes read from the model's own answer: it came, and it failed."""


def side_of(cause: Cause, endpoint_down: bool, after: Iterable[Side | None] = ()) -> Side | None:
    """Whose failure an attempt of `cause` was (None for `llm_off`). A timeout is the
    infrastructure's while the endpoint is known to be down, or when an earlier attempt of
    the same decision (`after`: their sides) failed on the infrastructure's side: the seat
    is charged only for a failure it would have had without the infrastructure."""
    side = FACTS[cause].side
    if side == "neither":
        return None
    if side == "either":
        return INFRASTRUCTURE if endpoint_down or INFRASTRUCTURE in after else SEAT
    return side
