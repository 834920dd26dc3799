"""The seat protocol: what the game loop and a seat say to each other.

Every seat, scripted, text (an LLM, the mock) or program, is a `Seat`: the
loop hands it a `DecisionRequest` and gets back a `Decision`, a validated
move and how it was reached. Text seats share one way of deciding (a prompt,
the reply read, one retry, a fallback; `decisions.TextSeat`): they implement
only `ask`, which answers a `Question` with an `Answer` or raises
`SeatFailure` with a fallback cause. Inside a game a seat is only its alias:
no seat is ever handed a policy name. The loop gets its seats from a
`MakesSeats` it is handed (a session's one `arena.seats.factory.SeatMaker`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

import games
from arena.config import Deadlines
from arena.play.prompts import PromptSource
from arena.record.causes import CAUSES, Cause, ForfeitCause, Side
from arena.record.replay import ReplyReport

__all__ = [
    "Answer",
    "Decision",
    "DecisionAttempt",
    "DecisionRequest",
    "MakesSeats",
    "Question",
    "Seat",
    "SeatFailure",
    "Source",
]

Source = Literal["reply", "retry", "fallback", "forfeit"]
"""How a decision's move was reached: the first reply, the retry, the baseline in the
seat's place, or nothing at all (a program's forfeit ends its game)."""


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
    stable: int = 0
    """How many of the prompt's first characters are its stable part (`prompts.Prompt`)."""


class Answer(ReplyReport):
    """A text seat's reply, and what the provider said about it."""

    text: str


class SeatFailure(Exception):
    """A text seat gave no usable reply, for `cause` (`arena.record.causes`)."""

    def __init__(
        self,
        cause: Cause,
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
        self.report = ReplyReport(status=status, retries=retries or [])
        """What the provider said before it gave up: the last status, its transport attempts."""


@dataclass(frozen=True, slots=True)
class DecisionAttempt:
    """One attempt at a decision (the first reply, or the retry): a question to a text seat,
    or a person's try, and what came of it."""

    n: int
    prompt: str
    latency_s: float
    reply: str | None
    cause: Cause | None
    """None when the attempt gave a move the game accepted."""
    error: str = ""
    report: ReplyReport | None = None
    """The provider's report: the answer's, or the failure's (its status and transport
    attempts); None where no provider was reached."""
    side: Side | None = None
    """Whose failure the attempt was (`validity.side_of`); None when it gave a move."""
    system_chars: int | None = None
    """In the chat layout, how many of the prompt's first characters went as the system
    message (the rest as the user message); None when it went as one message."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A seat's validated move and how the arena got it."""

    seat: int
    move: Any
    source: Source
    latency_s: float
    attempts: tuple[DecisionAttempt, ...] = ()
    say: str = ""
    notes: str | None = None
    cause: Cause | None = None
    """The fallback's cause: for a text seat that of its last failed attempt (unless an
    earlier one was the infrastructure's: `decisions`)."""
    extracted: Any = None
    """The move as the seat wrote it, before the game's reader (None on fallback)."""
    nodes: int | None = None
    """Program seats: the engine helper calls this move cost."""
    forfeit: ForfeitCause | None = None
    """A forfeit's cause."""
    error: str = ""
    """A forfeit's detail."""


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """Everything needed to ask one seat for one move."""

    game: games.Game[Any]
    state: Any
    seat: int
    player: Seat
    prompt: PromptSource
    """What the prompt is rendered from (`prompts.SeatPrompt`), with the retry's feedback."""
    deadlines: Deadlines
    key: str = "move"
    legal: tuple[str, ...] = field(default=())
    move_help: Callable[[], str] | None = None
    """How to write a move, for a retry where the moves cannot be listed (the battle)."""
    retry_lists: bool = True
    """Whether a retry lists the legal moves: not where the seat's template leaves them
    out (finding them is then part of the test), unless its policy says otherwise."""


class Seat(ABC):
    """What sits in a seat for one game: it decides, may describe itself to the replay, and
    is closed when the game ends."""

    prompted: ClassVar[bool] = False
    """Whether the seat reads prompts: it is shown the legal moves, and the battle's clock
    rule stops asking it (a scripted seat answers at once and is never switched off)."""

    @abstractmethod
    async def decide(self, request: DecisionRequest) -> Decision:
        """The seat's move for `request`, within its deadlines."""

    def observe(self, state: Any, moved: str | None) -> None:  # noqa: B027 - most ignore it
        """The game is at `state`: its start (`moved` None), or after a ply, `moved` as the
        seat's prompt lists it (a move, or `turn N` for simultaneous orders). A person's
        page redraws on it."""

    def ended(self, outcome: games.Outcome) -> None:  # noqa: B027 - most seats ignore it
        """The game is over with `outcome` (its end, or the wall clock's adjudication)."""

    def endpoint_down(self) -> bool:
        """Whether the infrastructure behind the seat is known to be down (a model's endpoint
        whose circuit is open): a timeout then is not the seat's."""
        return False

    def describe(self) -> dict[str, Any] | None:
        """What a replay records of this seat beside its moves (a program's SHA-256, seed,
        node budget and timeout), or None."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - most seats hold nothing to close
        """End what the seat holds (a program's child process); bounded, safe to repeat."""


class MakesSeats(Protocol):
    """What the game loop asks for the seats of each game it plays: a session's one seat
    maker (`arena.seats.factory.SeatMaker`), handed down in the episode's setup."""

    def make(self, game: games.Game[Any], policy: str, *, seed: int, index: int, seat: int) -> Seat:
        """The seat `policy` plays through at `seat` of game `index` of `game`'s match on
        `seed`."""
        ...
