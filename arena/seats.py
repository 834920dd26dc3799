"""What sits in a seat: a scripted baseline, or a seat that answers in text.

A text seat (the mock, an LLM, later a program) gets a `Question` and returns
an `Answer` or raises `SeatFailure` with a fallback cause; the decision
protocol (`arena.decisions`) owns the deadlines around it. A scripted seat
chooses directly from the game. Inside a game a seat is only its alias: no
seat is ever handed a policy name.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import games

if TYPE_CHECKING:
    from arena.programs import ProgramSeat

__all__ = [
    "CAUSES",
    "Answer",
    "ProgramPlayer",
    "Question",
    "ScriptedSeat",
    "SeatFailure",
    "TextSeat",
]

CAUSES = (
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
)
"""Every fallback cause SPEC 2.5 names."""


@dataclass(frozen=True, slots=True)
class Question:
    """One attempt's question to a text seat."""

    prompt: str
    key: str
    """The reply key the arena reads: `move`, `orders` or `setup`."""
    attempt: int
    game: games.Game[Any]
    state: Any
    seat: int
    legal: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """A text seat's reply and what the provider said about it."""

    text: str
    provider: str = ""
    model: str = ""
    usage: dict[str, Any] | None = None
    """Normalised usage: input, cache_read, cache_write, output, reasoning."""
    raw_usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    raw_stop_reason: str | None = None
    request_id: str | None = None
    status: int | None = None
    retries: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float | None = None


class SeatFailure(Exception):
    """A text seat gave no usable reply; `cause` is one of `CAUSES`."""

    def __init__(
        self,
        cause: str,
        detail: str,
        *,
        status: int | None = None,
        retries: list[dict[str, Any]] | None = None,
    ) -> None:
        if cause not in CAUSES:
            raise ValueError(f"unknown fallback cause {cause!r} (known: {', '.join(CAUSES)})")
        super().__init__(detail)
        self.cause = cause
        self.detail = detail
        self.status = status
        """The HTTP status of the last response, if one came."""
        self.retries = retries or []
        """The provider's transport attempts before it gave up, as `Answer.retries`."""


class TextSeat(Protocol):
    """A seat that answers a prompt with text, within an absolute deadline."""

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        """Reply to `question`; the caller's cancel scope also bounds the call."""
        ...


class ScriptedSeat:
    """A scripted baseline: the game's own (`default`), `tactician`, `pincer` or `random`."""

    def __init__(self, baseline: str, rng: random.Random) -> None:
        self.baseline = baseline
        self._rng = rng

    def choose(self, game: games.Game[Any], state: Any, seat: int) -> Any:
        """The move this baseline plays; `random` draws among the legal moves."""
        if self.baseline == "random":
            legal = game.legal_moves(state, seat)
            if legal:
                return self._rng.choice(legal)
        return game.baseline(state, seat)


@dataclass(frozen=True, slots=True)
class ProgramPlayer:
    """A program seat of one game (SPEC 10), with its hard timeout per move.

    No retry (programs are deterministic): an illegal reply, a crash, an
    exception or the timeout forfeits the game; a move over the node budget
    becomes the first legal move, and the third such move forfeits.
    """

    seat: ProgramSeat
    timeout_s: float

    async def aclose(self) -> None:
        """End the program's child process."""
        await self.seat.aclose()
