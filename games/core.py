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
move set: it answers turn order and the end from fields every state carries,
and handles reading, refusing, adjudication by standing and the `tactician`
baseline once, so a game implements only "in progress, your turn" (OpenSpiel's
shape).
"""

from __future__ import annotations

import hashlib
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

__all__ = [
    "COMPLETE",
    "DEADLINE",
    "Game",
    "Illegal",
    "MatchFormat",
    "MoveError",
    "Outcome",
    "ProgramHelper",
    "TurnGame",
    "TurnState",
    "Unreadable",
    "is_card_seed",
    "move_pieces",
    "normalise_token",
    "placeholder_refusal",
    "reads_as_several",
    "several_refusal",
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

    @classmethod
    def by_standing(cls, first: int, second: int, ending: str, reason: str = COMPLETE) -> Outcome:
        """Seat 0 with standing `first` against seat 1 with `second`: the higher wins, equal
        standings draw."""
        if first == second:
            return cls.draw(ending, reason)
        return cls.win(0 if first > second else 1, ending, reason)

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

    @property
    def dealt_in_cards(self) -> bool:
        """Whether each episode is dealt a card (`chance = "card"`): what a run's `dice`
        setting and a given card seed apply to."""
        return self.chance == "card"

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
    baselines: ClassVar[Mapping[str, str]] = {}
    """The named baselines a run config may give this game, name -> what it plays (one
    line); the first is the game's own `baseline` (`tactician`, `pincer`). Empty where
    only `default` names it. `random` (`random_move`) is every game's and not listed."""
    ply_cap: ClassVar[int | None] = None
    """The ply at which the rules end a game that has not ended by itself, if any."""
    hidden_chance: ClassVar[bool] = False
    """Whether the chance of a state made by `apply` comes from a seed no seat may see
    (backgammon's next roll): a program exploring such a state chooses it itself."""

    def params(self) -> dict[str, Any]:
        """The resolved parameters, as a replay records them."""
        return {}

    @abstractmethod
    def initial(self, seed: int | str, game: int = 1) -> S:
        """The starting state; all chance derives from `seed` and `game` (1 or 2)."""

    def derived_chance(self, seed: int, card: int = 1, attempt: int = 1) -> int | str:
        """The chance of an episode all of whose chance follows from the integer `seed`:
        `seed` itself where the match seed is the chance; for a game dealt in cards, the
        seed of card `card` (its `attempt`-th deal) in a run with `dice = "derived"` and
        master seed `seed` (what `arena prompt` and `arena check` play by default)."""
        return seed

    def game_chance(self, chance: int | str, game: int) -> int | str:
        """What game `game` of an episode needs of the episode's chance, and nothing more: the
        chance itself for most games; for backgammon, the game's seed derived from the card
        seed, so a process that plays one game never holds the card's secret. `initial`
        accepts either."""
        return chance

    @abstractmethod
    def to_act(self, s: S) -> tuple[int, ...]:
        """The seats that must decide now; () once the game is over."""

    @abstractmethod
    def legal_moves(self, s: S, seat: int) -> tuple[str, ...]:
        """Every legal move of `seat`, canonical, in the order the game's rules fix."""

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

    @property
    def baseline_name(self) -> str | None:
        """The name of the game's own baseline (the first of `baselines`), or None."""
        return next(iter(self.baselines), None)

    def named_baseline(self, s: S, seat: int, name: str) -> Any:
        """The move of `seat` that the baseline `name` (a key of `baselines`) plays."""
        if name != self.baseline_name:
            known = ", ".join(self.baselines) or "none"
            raise ValueError(f"{self.name} has no baseline {name!r} (named ones: {known})")
        return self.baseline(s, seat)

    def random_move(self, s: S, seat: int, rng: random.Random) -> Any:
        """A uniformly drawn legal move; the baseline's move where moves cannot be listed.

        `rng` is the seat's own seeded generator, so the same seed draws the same moves.
        """
        legal = self.legal_moves(s, seat)
        return rng.choice(legal) if legal else self.baseline(s, seat)

    @abstractmethod
    def view(self, s: S, seat: int) -> dict[str, Any]:
        """What `seat` may know of `s`, JSON-able."""

    def reply_key(self, s: S) -> str:
        """The key under which a reply carries its move in state `s`: `move`, the
        battle's `orders`, Stratego's `setup` in its setup phase."""
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
_CARD_SEED = re.compile(r"[0-9a-fA-F]{64}")


def is_card_seed(text: object) -> bool:
    """Whether `text` has the shape of a card seed, what a game dealt in cards is dealt:
    a string of 64 hex digits (32 random bytes, drawn when the card starts)."""
    return isinstance(text, str) and _CARD_SEED.fullmatch(text) is not None


def normalise_token(text: str) -> str:
    """The board gauntlet's reading: lower-case, trim, keep only a-z and 0-9."""
    return _STRIP.sub("", text.strip().lower())


_PLACEHOLDER = re.compile(r"<[^<>]*[A-Za-z]{3}[^<>]*>")
"""A placeholder of the arena's texts: `<your move>`, `<from>-<to>`, `<file letter>`."""
_DOTS = re.compile(r"[\s\"'`\[\]<>]*(?:\.{2,}|\u2026)+[\s\"'`\[\]<>]*")
"""A reply that is only an ellipsis (`...`, `<...>`): a placeholder of the arena's texts."""
_LIST_CUTS = {
    True: re.compile(r"[\s,;|]+"),
    False: re.compile(r"[,;|\n]+|\s+(?:or|and|then)\s+", re.IGNORECASE),
}
_JOINING_WORDS = frozenset({"or", "and", "then"})
_PIECE_EDGES = " \t\r\n\"'`[]"


def _quoted(text: str) -> str:
    """`text` quoted for a refusal, cut so a long reply cannot flood it."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def placeholder_refusal(text: str, wanted: str) -> str | None:
    """The refusal of a reply that wrote a placeholder of the arena's texts (`<your move>`,
    `<cell>`, `...`) where its move belongs, or None when `text` holds none. `wanted` says
    what belongs there (`one of the legal moves exactly as listed`).

    Asked only of text the reader has refused, so a move in brackets (`<d>`) still reads.
    """
    if _PLACEHOLDER.search(text) is None and _DOTS.fullmatch(text) is None:
        return None
    return f"{_quoted(text)} is a placeholder: in its place, write {wanted}."


def move_pieces(text: str, *, spaces: bool = True) -> list[str]:
    """`text` cut where a reply lists moves (commas, semicolons, bars, `or`, `and`, `then`,
    and with `spaces` whitespace too), each piece without quotes or brackets around it."""
    pieces = (piece.strip(_PIECE_EDGES) for piece in _LIST_CUTS[spaces].split(text))
    return [p for p in pieces if p and p.casefold() not in _JOINING_WORDS]


def reads_as_several(pieces: list[str], reads: Callable[[str], object]) -> bool:
    """Whether `pieces` (`move_pieces` of a refused reply) are two or more moves: each one
    read by `reads` without a MoveError."""
    if len(pieces) < 2:
        return False
    for piece in pieces:
        try:
            reads(piece)
        except MoveError:
            return False
    return True


def several_refusal(text: str, moves: str = "moves") -> str:
    """The refusal of a reply holding several moves (or `plays`) where one belongs."""
    return f"{_quoted(text)} holds several {moves}: give exactly one."


class TurnState(Protocol):
    """What the frame reads from a `TurnGame` state: fields the game works out when it
    makes the state, so every question about turns and the end is an attribute read."""

    @property
    def ply(self) -> int:
        """Plies played so far."""

    @property
    def to_act(self) -> tuple[int, ...]:
        """(the seat to move,) while the game goes on; () once it is over."""

    @property
    def result(self) -> Outcome | None:
        """The final truth: the rules' ending or, at the ply cap, `ply-cap`; None until then."""


T = TypeVar("T", bound=TurnState)


class TurnGame(Game[T]):
    """An alternating two-seat game with an enumerable move set.

    A game implements the rule functions named with a leading underscore, for a
    game in progress with the state's mover to play:

    - `_legal(s)`: the mover's legal moves, canonical and in the game's order;
    - `_read(text)`: the canonical move a reply's text stands for, or Unreadable
      saying what was read;
    - `_play(s, move)`: the state after the mover plays `move`, or None when
      `move` is not a canonical legal move (one call checks and plays);
    - `_refusal(s, move, text)`: why the canonical `move`, read from `text`, is
      refused: the message of the Illegal that `parse` raises (and `apply`, for
      a canonical move).

    Every state carries `ply`, `to_act` and `result` (`TurnState`), worked out
    by the game when it makes the state: a game with a `ply_cap` ends there, if
    its rules have not ended it, with `Outcome.by_standing(..., "ply-cap")`.
    This class answers the public questions from those fields and handles the
    turn checks, adjudication by standing and the tactician baseline once.
    """

    baselines: ClassVar[Mapping[str, str]] = {
        "tactician": "the move maximising the mover's standing after it, ties to the first"
    }

    @abstractmethod
    def _legal(self, s: T) -> tuple[str, ...]:
        """The mover's legal moves, canonical and in the game's order."""

    @abstractmethod
    def _read(self, text: str) -> str:
        """The canonical move `text` stands for; raise Unreadable (saying what was read)."""

    @abstractmethod
    def _play(self, s: T, move: str) -> T | None:
        """The state after the mover plays `move`, or None if it is no canonical legal move."""

    @abstractmethod
    def _refusal(self, s: T, move: str, text: str) -> str:
        """Why the mover may not play the canonical `move`, read from the reply `text`."""

    def ply(self, s: T) -> int:
        """Plies played so far."""
        return s.ply

    def to_act(self, s: T) -> tuple[int, ...]:
        """(the seat to move,) while the game goes on, else ()."""
        return s.to_act

    def outcome(self, s: T) -> Outcome | None:
        """The rules' ending, `ply-cap` at the ply cap, else None."""
        return s.result

    def legal_moves(self, s: T, seat: int) -> tuple[str, ...]:
        """The legal moves of `seat`, canonical and in the game's order; () off turn."""
        to_act = s.to_act
        return self._legal(s) if to_act and to_act[0] == seat else ()

    def parse(self, s: T, seat: int, move: object) -> str:
        """The canonical legal move a reply's text reads as; Unreadable or Illegal otherwise."""
        if not isinstance(move, str):
            raise Unreadable(f"expected the move as text, got {type(move).__name__}")
        try:
            canonical = self._read(move)
        except Unreadable as exc:
            refusal = self._misread(move)
            if refusal is None:
                raise
            raise Unreadable(refusal) from exc
        self._check_turn(s, seat)
        if self._play(s, canonical) is None:
            raise Illegal(self._refusal(s, canonical, move))
        return canonical

    def _misread(self, text: str) -> str | None:
        """Why an unreadable `text` is refused where the reader's own words would mislead: it
        is a placeholder of the arena's texts, or several moves; None otherwise."""
        placeholder = placeholder_refusal(text, "one of the legal moves exactly as listed")
        if placeholder is not None:
            return placeholder
        return several_refusal(text) if reads_as_several(move_pieces(text), self._read) else None

    def apply(self, s: T, moves: Mapping[int, Any]) -> T:
        """The state after the seat to act plays its canonical legal move; `s` is unchanged."""
        to_act = s.to_act
        if to_act and len(moves) == 1:
            move = moves.get(to_act[0])
            if isinstance(move, str):
                after = self._play(s, move)
                if after is not None:
                    return after
        raise self._refused(s, moves)

    def adjudicate(self, s: T) -> Outcome:
        """`wall-clock` (reason `deadline`): the higher standing wins, equal standings draw."""
        return Outcome.by_standing(self.standing(s, 0), self.standing(s, 1), "wall-clock", DEADLINE)

    def baseline(self, s: T, seat: int) -> str:
        """tactician: the move maximising the mover's standing after it, ties to the first."""
        self._check_turn(s, seat)
        best_move, best = "", None
        for move in self._legal(s):
            after = self._play(s, move)
            if after is None:
                raise RuntimeError(f"{self.name}: the listed move {move!r} does not play")
            value = self.standing(after, seat)
            if best is None or value > best:
                best_move, best = move, value
        return best_move

    def _check_turn(self, s: T, seat: int) -> None:
        """Raise Illegal unless `seat` is to move in `s`."""
        to_act = s.to_act
        if to_act and to_act[0] == seat:
            return
        if s.result is not None:
            raise Illegal(f"the game is over ({s.result.ending}): seat {seat} has no move")
        raise Illegal(f"it is not seat {seat}'s turn: seat {to_act[0]} moves")

    def _refused(self, s: T, moves: Mapping[int, Any]) -> Illegal:
        """Why `apply` will not play `moves` in `s`."""
        if s.result is not None:
            return Illegal(f"the game is over ({s.result.ending}): no move can be applied")
        seat = s.to_act[0]
        if len(moves) != 1 or seat not in moves:
            return Illegal(f"expected exactly one move, by seat {seat}; got seats {list(moves)}")
        move = moves[seat]
        if isinstance(move, str) and self._canonical(move):
            return Illegal(self._refusal(s, move, move))
        example = next(iter(self._legal(s)), "")
        return Illegal(
            f"{move!r} is not a legal move of seat {seat} here: apply takes canonical moves "
            f"like {example!r} (parse reads a reply's looser text)"
        )

    def _canonical(self, move: str) -> bool:
        try:
            return self._read(move) == move
        except Unreadable:
            return False
