"""The contract every game of the arena keeps, and the pieces they share.

Error tree::

    MoveError            a move the engine will not play; its message says what
    ├── Unreadable       was read and why it was refused
    └── Illegal

A game is an immutable rules object (`Game`) with parameters, and states are
immutable values it produces. The arena never mutates a state and never looks
inside one except through the `Game` methods, so each engine picks the
representation that makes it fast (tuples, Python-int bitboards, numpy arrays
it never writes after construction).

`TurnGame` is the shared frame of the alternating games with an enumerable
move set: it handles turn order, terminal checks, the ply cap, adjudication by
standing and the `tactician` baseline once, so a game implements only "in
progress, your turn" (OpenSpiel's shape).
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

__all__ = [
    "COMPLETE",
    "DEADLINE",
    "CachedTurnGame",
    "Game",
    "Illegal",
    "MatchFormat",
    "MoveError",
    "Outcome",
    "ProgramHelper",
    "TurnGame",
    "Unreadable",
    "normalise_token",
]

COMPLETE = "complete"
DEADLINE = "deadline"


class MoveError(ValueError):
    """A move the engine will not play."""


class Unreadable(MoveError):
    """The text does not read as a move of this game at all."""


class Illegal(MoveError):
    """The text reads as a move, but the rules forbid it here."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended.

    `scores` holds one score per seat and sums to zero, or is None for a
    no-contest. `reason` is `complete` or `deadline` (the wall clock stopped the
    game and it was adjudicated); `ending` is the game's own name for how it
    ended (`four-in-a-row`, `ply-cap`, `wipe`, ...). `detail` carries what a
    reader needs beyond that (a forfeit's cause, say), or is empty.
    """

    scores: tuple[int, ...] | None
    reason: str
    ending: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.reason not in (COMPLETE, DEADLINE):
            raise ValueError(f"outcome reason {self.reason!r} is not 'complete' or 'deadline'")
        if self.scores is not None and sum(self.scores) != 0:
            raise ValueError(f"outcome scores {self.scores} do not sum to zero")

    @classmethod
    def win(cls, winner: int, ending: str, reason: str = COMPLETE) -> Outcome:
        """Seat `winner` scores +1, the other -1."""
        return cls((1, -1) if winner == 0 else (-1, 1), reason, ending)

    @classmethod
    def draw(cls, ending: str, reason: str = COMPLETE) -> Outcome:
        """Both seats score 0."""
        return cls((0, 0), reason, ending)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able copy, as replays and the league store keep it."""
        return {
            "scores": list(self.scores) if self.scores is not None else None,
            "reason": self.reason,
            "ending": self.ending,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class MatchFormat:
    """How a league plays the game: pure data each game declares, read by the arena.

    A match is always two games on one seed with the seats swapped; the format
    says how those games are grouped, named, timed and seeded.
    """

    games_per_episode: Literal[1, 2] = 1
    """1: each game of a match is its own episode (its own replay); 2: both games are one
    episode (the battle, whose clock spans both, and a backgammon card)."""
    seat_names: tuple[tuple[str, str], tuple[str, str]] | None = None
    """The aliases of seats 0 and 1 in game 1 and in game 2 of a match; None: `cog-XXXX`,
    drawn from the match seed (see `aliases`)."""
    wall_covers_episode: bool = False
    """Whether the wall clock (`wall_s`) covers the whole episode, not each game."""
    switch_off_turns: int | None = None
    """Once this many full decisions no longer fit before the wall clock, no seat is
    asked any more: the baseline plays for every seat, recorded as `llm_off`."""
    deadlines: tuple[float, float, float] = (30.0, 15.0, 45.0)
    """Default `first_reply_s`, `retry_s` and `decision_s`, in seconds."""
    run_deadlines: bool = True
    """Whether a run's `[deadlines]` table applies (else only `[game.<name>]` changes them)."""
    wall_s: float | None = 1200.0
    """Default wall-clock stop in seconds (`episode_wall_s`); None: the game has none."""
    program_timeout_s: float | None = 30.0
    """Hard timeout per move of a program seat; None: program seats do not play the game."""
    chance: Literal["seed", "card"] = "seed"
    """Where the engine's chance comes from: `seed`, the match seed; `card`, a card seed
    drawn when the episode starts, committed before its first roll and revealed after."""

    def aliases(self, seed: int, game_index: int = 1) -> tuple[str, str]:
        """The names of seats 0 and 1 inside game `game_index` (1 or 2) of a match on `seed`.

        `cog-XXXX`: XXXX is the first four hex digits of sha256 of `"{seed}:{seat}"`;
        when both seats would get the same, seat 1 takes the next four.
        """
        if self.seat_names is not None:
            return self.seat_names[game_index - 1]
        first = hashlib.sha256(f"{seed}:0".encode()).hexdigest()[:4]
        digest = hashlib.sha256(f"{seed}:1".encode()).hexdigest()
        second = digest[:4] if digest[:4] != first else digest[4:8]
        return (f"cog-{first}", f"cog-{second}")


@dataclass(frozen=True, slots=True)
class ProgramHelper:
    """An engine helper a game adds to the common ones for program seats.

    `call(state, args)` answers with a JSON-able value, or a new state when
    `makes_state` is true (the arena hands the program a handle to it); a bad
    argument raises ValueError or TypeError, which the arena turns into a refusal.
    """

    call: Callable[[Any, list[Any]], Any]
    makes_state: bool = False


S = TypeVar("S")


class Game(ABC, Generic[S]):
    """The rules of one game with its parameters; every method is pure.

    Seats are 0 and 1. Moves of enumerable games are canonical strings; the
    battle's are lists of orders and Stratego's setup phase takes a setup string
    (`enumerable` is False where `legal_moves` may be empty while a seat still
    has to act).
    """

    name: ClassVar[str]
    family: ClassVar[str]
    """Prompt family: `board`, `battle`, `stratego` or `backgammon`."""
    rules_version: ClassVar[int]
    """Raised whenever a rule change could change a result."""
    enumerable: ClassVar[bool] = True
    match_format: ClassVar[MatchFormat] = MatchFormat()
    """How a league plays the game (episodes, aliases, clocks, chance)."""
    baseline_name: ClassVar[str | None] = None
    """The name a run config may give this game's baseline (`tactician`, `pincer`), or
    None where only `default` names it."""
    hidden_chance: ClassVar[bool] = False
    """Whether the chance of a state made by `apply` comes from a seed no seat may see
    (backgammon's next roll): a program exploring such a state chooses it itself."""

    def params(self) -> dict[str, Any]:
        """The resolved parameters, as a replay records them."""
        return {}

    @abstractmethod
    def initial(self, seed: int | str, game: int = 1) -> S:
        """The starting state; all chance derives from `seed` and `game` (1 or 2)."""

    @abstractmethod
    def to_act(self, s: S) -> tuple[int, ...]:
        """The seats that must decide now; () once the game is over."""

    @abstractmethod
    def legal_moves(self, s: S, seat: int) -> tuple[str, ...]:
        """Every legal move of `seat`, canonical, in the order SPEC.md fixes."""

    @abstractmethod
    def parse(self, s: S, seat: int, move: object) -> Any:
        """Read the move the arena extracted from a reply; raise MoveError if refused."""

    @abstractmethod
    def apply(self, s: S, moves: Mapping[int, Any]) -> S:
        """The state after the seats to act play `moves`; `s` is unchanged."""

    @abstractmethod
    def standing(self, s: S, seat: int) -> int:
        """The game's heuristic for `seat` from the true state; higher is better."""

    @abstractmethod
    def outcome(self, s: S) -> Outcome | None:
        """None while the game goes on."""

    @abstractmethod
    def adjudicate(self, s: S) -> Outcome:
        """The result if the wall clock stops the game now."""

    @abstractmethod
    def baseline(self, s: S, seat: int) -> Any:
        """The deterministic fallback move of `seat`."""

    @abstractmethod
    def view(self, s: S, seat: int) -> dict[str, Any]:
        """What `seat` may know of `s`, JSON-able."""

    def reply_key(self, s: S) -> str:
        """The key under which a reply carries its move in state `s` (SPEC 2.2):
        `move`, the battle's `orders`, Stratego's `setup` in its setup phase."""
        return "move"

    def integrity(self, s: S) -> dict[str, Any]:
        """Game-specific data a replay records after each ply so a verifier can
        re-derive it (the battle's hash chain); empty for most games."""
        return {}

    def ply(self, s: S) -> int:
        """Plies played so far."""
        return int(getattr(s, "ply"))  # noqa: B009 - every state keeps its ply count

    def sample_world(self, s: S, seat: int, seed: int) -> S:
        """A state consistent with everything `seat` knows of `s`, drawn with `seed`: what a
        program's helpers explore instead of the truth. `s` itself where nothing is hidden."""
        return s

    def program_helpers(self) -> Mapping[str, ProgramHelper]:
        """Helpers this game adds to the common ones (`legal_moves`, `apply`, ...)."""
        return {}


_STRIP = re.compile(r"[^a-z0-9]")


def normalise_token(text: str) -> str:
    """The board gauntlet's reading: lower-case, trim, keep only a-z and 0-9."""
    return _STRIP.sub("", text.strip().lower())


class TurnGame(Game[S]):
    """An alternating two-seat game with an enumerable move set.

    Subclasses implement the rule functions named with a leading underscore;
    this class handles whose turn it is, the ply cap and the baseline.
    """

    ply_cap: ClassVar[int | None] = None
    baseline_name: ClassVar[str | None] = "tactician"

    @abstractmethod
    def _mover(self, s: S) -> int:
        """The seat whose turn it is (meaningful while the game goes on)."""

    @abstractmethod
    def _result(self, s: S) -> Outcome | None:
        """The outcome the rules themselves produced, before any ply cap."""

    @abstractmethod
    def _legal(self, s: S) -> tuple[str, ...]:
        """The mover's legal moves, canonical and in SPEC order."""

    @abstractmethod
    def _read(self, token: str) -> str:
        """Canonical form of a normalised token; raise Unreadable if it is none."""

    @abstractmethod
    def _play(self, s: S, move: str) -> S:
        """The state after the mover plays the canonical, legal `move`."""

    @abstractmethod
    def _is_legal(self, s: S, move: str) -> bool:
        """Whether the canonical `move` is legal for the mover."""

    def outcome(self, s: S) -> Outcome | None:
        result = self._result(s)
        if result is None and self.ply_cap is not None and self.ply(s) >= self.ply_cap:
            return self._by_standing(s, COMPLETE, "ply-cap")
        return result

    def to_act(self, s: S) -> tuple[int, ...]:
        if self.outcome(s) is not None:
            return ()
        return (self._mover(s),)

    def legal_moves(self, s: S, seat: int) -> tuple[str, ...]:
        if self.to_act(s) != (seat,):
            return ()
        return self._legal(s)

    def parse(self, s: S, seat: int, move: object) -> str:
        if not isinstance(move, str):
            raise Unreadable(f"expected the move as text, got {type(move).__name__}")
        token = normalise_token(move)
        canonical = self._read(token)
        self._check_turn(s, seat)
        if not self._is_legal(s, canonical):
            raise Illegal(f"{canonical!r} is not legal here")
        return canonical

    def apply(self, s: S, moves: Mapping[int, Any]) -> S:
        seats = self.to_act(s)
        if not seats:
            raise Illegal("the game is over: no move can be applied")
        seat = seats[0]
        if set(moves) != {seat}:
            raise Illegal(f"expected exactly one move, by seat {seat}; got seats {sorted(moves)}")
        move = moves[seat]
        if not isinstance(move, str) or not self._is_legal(s, move):
            raise Illegal(f"{move!r} is not a legal move of seat {seat} here")
        return self._play(s, move)

    def adjudicate(self, s: S) -> Outcome:
        return self._by_standing(s, DEADLINE, "wall-clock")

    def baseline(self, s: S, seat: int) -> str:
        """tactician: the move maximising the mover's standing after it, ties to the first."""
        self._check_turn(s, seat)
        best_move, best = "", None
        for move in self._legal(s):
            value = self.standing(self._play(s, move), seat)
            if best is None or value > best:
                best_move, best = move, value
        return best_move

    def _by_standing(self, s: S, reason: str, ending: str) -> Outcome:
        a, b = self.standing(s, 0), self.standing(s, 1)
        if a == b:
            return Outcome.draw(ending, reason)
        return Outcome.win(0 if a > b else 1, ending, reason)

    def _check_turn(self, s: S, seat: int) -> None:
        if self.to_act(s) != (seat,):
            raise Illegal(f"it is not seat {seat}'s turn")


class _CachedTurns(Protocol):
    @property
    def ply(self) -> int: ...
    @property
    def to_act(self) -> tuple[int, ...]: ...
    @property
    def result(self) -> Outcome | None: ...
    @property
    def legal(self) -> tuple[str, ...]: ...


C = TypeVar("C", bound=_CachedTurns)


class CachedTurnGame(TurnGame[C]):
    """A TurnGame whose states carry `to_act`, `result` and `legal`, worked out once when
    the move that made them was applied: every question about turns and the end is then a
    field read, which is what lets a Python engine run thousands of playouts a second.
    (Such a game has no ply cap: its cached `result` is the whole truth.)"""

    def to_act(self, s: C) -> tuple[int, ...]:
        return s.to_act

    def outcome(self, s: C) -> Outcome | None:
        return s.result

    def legal_moves(self, s: C, seat: int) -> tuple[str, ...]:
        to_act = s.to_act
        return s.legal if to_act and to_act[0] == seat else ()

    def _mover(self, s: C) -> int:
        return s.ply & 1

    def _result(self, s: C) -> Outcome | None:
        return s.result

    def _legal(self, s: C) -> tuple[str, ...]:
        return s.legal if s.to_act else ()

    def _single_move(self, s: C, moves: Mapping[int, Any]) -> tuple[int, Any]:
        """The one seat to move and its move; Illegal if the game is over or others moved."""
        to_act = s.to_act
        if not to_act:
            raise Illegal(f"the game is over ({s.result}): no move can be applied")
        seat = to_act[0]
        if len(moves) != 1 or seat not in moves:
            raise Illegal(f"expected exactly one move, by seat {seat}; got seats {list(moves)}")
        return seat, moves[seat]
