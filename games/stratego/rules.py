"""Stratego, ISF rules with two anti-chase laws.

Seat 0 is Red in every game (ranks 1-4, moves first), seat 1 Blue (ranks
7-10); the match swaps which policy holds seat 0. The game opens with the
setup phase: `to_act` is (0, 1), both seats send a 40-code setup (`setup`)
and `legal_moves` is empty; `apply(s, {0: setup0, 1: setup1})` places them.
Then the seats alternate, Red first. It ends when the flag is captured
(`flag`); when the side to move has no legal move, which loses, or draws if
the other side has none either (`no-moves`); after 100 plies in a row without
a battle, a draw (`no-battle`); at the 4,000th ply, a draw (`ply-cap`); the
wall clock adjudicates by standing (`wall-clock`, reason `deadline`).

Rules source:
    `docs/rules.md#stratego`: standard ISF Stratego with the two-square and
    continuous-chase laws (`chase`), the setup format, the notation, the
    legal-move order, the standing values and the baseline.

Parameters:
    None: a 10 x 10 board, a1 bottom-left, lakes c5 d5 c6 d6 g5 h5 g6 h6, 40
    pieces a side; `PLY_CAP` 4,000 and `NO_BATTLE_LIMIT` 100 (`moves`).

State:
    `StrategoState` (`state`): the true board as a padded mailbox (`board`),
    the mover, the plies played (the setup is not a ply), the plies since the
    last battle, the memories of the anti-chase laws, the public battle
    history and the mover's legal moves, worked out when the state is made
    (`moves`).

Notation:
    A move is `e4-e5`; the reader also takes `e4xe5`, `E4E5` and spaces.
    Legal moves come in (from file, from rank, to file, to rank) order. A
    setup is 40 piece codes (`setup`).

Standing:
    The sum of the values of the seat's surviving pieces (`board.VALUES`:
    Flag 1000, Marshal 170, ...).

Baseline:
    In setup the seeded random setup; in play the first attack on a revealed
    piece it beats, else the first forward move into an empty square, else the
    first legal move, reading only what the seat's own view shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from games.core import (
    COMPLETE,
    DEADLINE,
    Game,
    Illegal,
    MatchFormat,
    Outcome,
    Unreadable,
    move_pieces,
    normalise_token,
    placeholder_refusal,
    reads_as_several,
    several_refusal,
)
from games.stratego.board import (
    BATTLE,
    BLANK,
    BOUNDARIES,
    EMPTY,
    FILES,
    MOVE_NAMES,
    MOVE_OF,
    NAMES,
    REVEALED,
    SQUARES,
    STRIDE,
    VALUES,
    square_name,
)
from games.stratego.chase import NO_STREAK
from games.stratego.moves import (
    NO_BATTLE_LIMIT,
    PLY_CAP,
    legal_for,
    play,
    pseudo_moves,
    start_play,
)
from games.stratego.setup import parse_board, place, random_setup, read_setup
from games.stratego.state import StrategoState
from games.stratego.view import SIDES, battle_json, seat_view
from games.stratego.worlds import sample_world

__all__ = ["Stratego"]

# -- parameters ---------------------------------------------------------------

_MOVE = re.compile(r"([a-j])(10|[1-9])x?([a-j])(10|[1-9])")
_SEATS = (0, 1)
_SETUP_WANTED = "your setup (40 piece codes)"

# -- notation -----------------------------------------------------------------


def _read_move(move: object) -> str:
    if not isinstance(move, str):
        raise Unreadable(f"expected the move as text, <from>-<to>, got {type(move).__name__}.")
    found = _MOVE.fullmatch(normalise_token(move))
    if found is None:
        raise Unreadable(
            f"could not read {move!r} as a move: write <from>-<to>, the square your piece "
            "leaves and the square it goes to, each a file letter a-j then a rank number 1-10."
        )
    a_file, a_rank, b_file, b_rank = found.groups()
    return f"{a_file}{a_rank}-{b_file}{b_rank}"


def _misread(move: object) -> str | None:
    """Why an unreadable `move` is refused where the reader's own words would mislead: a
    placeholder of the arena's texts, or several moves; None otherwise."""
    if not isinstance(move, str):
        return None
    placeholder = placeholder_refusal(move, "one of the legal moves exactly as listed")
    if placeholder is not None:
        return placeholder
    return several_refusal(move) if reads_as_several(move_pieces(move), _read_move) else None


def _refusal(s: StrategoState, name: str) -> str:
    """Why the well-formed move `name` is not legal for the mover of `s`."""
    a_name, b_name = name.split("-")
    a = _cell(a_name)
    v = s.board[a]
    if v <= 0 or (v >> 4 & 1) != s.mover:
        return f"{name}: there is no piece of yours on {a_name}."
    kind = NAMES[(v & 15) - 1]
    m = MOVE_OF.get(name)
    if kind in ("Bomb", "Flag"):
        return f"{name}: your {kind} on {a_name} never moves."
    if m is None or m not in pseudo_moves(s.board, (a,), s.mover):
        return (
            f"{name}: your {kind} on {a_name} cannot reach {b_name} (a piece steps one square "
            "orthogonally onto an empty or enemy square, a Scout runs in a line over empty "
            "squares; lakes block)."
        )
    crossed = BOUNDARIES[m] & s.streaks[s.mover].closed()
    if s.streaks[s.mover].square == a and crossed:
        return (
            f"{name} breaks the two-square rule: the piece on {a_name} crossed "
            f"{_boundary_names(crossed)} on each of your last three turns."
        )
    return (
        f"{name} breaks the continuous-chase rule: this threat would recreate a position of "
        "the current chase (the chasing piece may repeat one only by returning to the "
        "square it left on its previous turn)."
    )


def _cell(name: str) -> int:
    return (FILES.index(name[0]) + 1) * STRIDE + int(name[1:])


def _boundary_names(mask: int) -> str:
    """`the boundary between e4 and e5`, or `the boundaries between e3 and e4 and between e4
    and e5`, for a boundary mask: the squares named apart, never as a move."""
    names = []
    for bit in range(mask.bit_length()):
        if mask >> bit & 1:
            low = bit // 2
            names.append(
                f"between {square_name(low)} and {square_name(low + (STRIDE if bit & 1 else 1))}"
            )
    if len(names) == 1:
        return f"the boundary {names[0]}"
    return f"the boundaries {', '.join(names[:-1])} and {names[-1]}"


# -- baseline -----------------------------------------------------------------


def _baseline_move(s: StrategoState, seat: int) -> int:
    board = s.board
    for m in s.legal:
        target = board[m & 255]
        known = target != EMPTY and target & REVEALED
        if known and BATTLE[(board[m >> 8] & 15) - 1][(target & 15) - 1] == 1:
            return m
    forward = 1 if seat == 0 else -1
    for m in s.legal:
        a, b = m >> 8, m & 255
        if board[b] == EMPTY and (b % STRIDE - a % STRIDE) * forward > 0:
            return m
    return s.legal[0]


# -- the game -----------------------------------------------------------------


class Stratego(Game[StrategoState]):
    """Stratego: a simultaneous setup phase, then alternate moves with hidden ranks."""

    name: ClassVar[str] = "stratego"
    family: ClassVar[str] = "stratego"
    rules_version: ClassVar[int] = 1
    enumerable: ClassVar[bool] = True
    match_format: ClassVar[MatchFormat] = MatchFormat(
        seat_names=(("Red", "Blue"), ("Red", "Blue")), wall_s=3600.0
    )

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> StrategoState:
        """The setup phase of game `game` (1 or 2) of the match on `seed`."""
        if game not in (1, 2):
            raise ValueError(f"game must be 1 or 2 (its index in the match), got {game!r}")
        return StrategoState(
            seed=seed,
            game=game,
            phase="setup",
            board=BLANK,
            mover=0,
            ply=0,
            quiet=0,
            key=0,
            movable=((), ()),
            streaks=(NO_STREAK, NO_STREAK),
            chase=None,
            chase_overflow=0,
            battles=(),
            last_move=-1,
            flag_taken_by=None,
            legal=(),
        )

    def from_board(self, board: str, to_move: int) -> StrategoState:
        """A play-phase position from 100 Gravon letters (rank 1 first, files a to j).

        `A` empty, `_` lake, Red `B` Bomb `C` Spy `D` Scout `E` Miner `F`
        Sergeant `G` Lieutenant `H` Captain `I` Major `J` Colonel `K` General `L`
        Marshal `M` Flag, Blue `N` to `Y` in the same order. The position has no
        history: nothing revealed, nothing moved, no anti-chase memory.
        """
        if to_move not in _SEATS:
            raise ValueError(f"to_move must be seat 0 (Red) or 1 (Blue), got {to_move!r}")
        return start_play(0, 1, parse_board(board), to_move)

    def random_setup(self, seed: int | str, seat: int, game: int = 1) -> str:
        """The seeded random setup of `seat` in game `game` on `seed` (the setup fallback)."""
        return random_setup(seed, seat, game)

    # -- rules ----------------------------------------------------------------

    def integrity(self, s: StrategoState) -> dict[str, Any]:
        """The battle the last move fought, if any (a reveal), and the chase memory's overflow."""
        data: dict[str, Any] = {}
        if s.battles and s.battles[-1].ply == s.ply and s.phase == "play":
            data["battle"] = battle_json(s.battles[-1])
        if s.chase_overflow:
            data["chase_overflow"] = s.chase_overflow
        return data

    def sample_world(self, s: StrategoState, seat: int, seed: int) -> StrategoState:
        """The opponent's unrevealed pieces dealt anew over its unrevealed squares (`worlds`)."""
        return sample_world(s, seat, seed)

    def reply_key(self, s: StrategoState) -> str:
        """`setup` in the setup phase, else `move`."""
        return "setup" if s.phase == "setup" else "move"

    def to_act(self, s: StrategoState) -> tuple[int, ...]:
        """(0, 1) in the setup phase, then the mover alone, () once the game is over."""
        if s.phase == "setup":
            return _SEATS
        return () if self.outcome(s) is not None else (s.mover,)

    def legal_moves(self, s: StrategoState, seat: int) -> tuple[str, ...]:
        """The mover's legal moves; empty in the setup phase, where any valid setup goes."""
        if self.to_act(s) != (seat,):
            return ()
        return tuple([MOVE_NAMES[m] for m in s.legal])

    def apply(self, s: StrategoState, moves: Mapping[int, Any]) -> StrategoState:
        """Both setups `{0: ..., 1: ...}` in the setup phase, else `{mover: "e4-e5"}`."""
        if s.phase == "setup":
            if set(moves) != set(_SEATS):
                raise Illegal(
                    f"the setup phase needs both seats' setups at once, got seats {sorted(moves)}"
                )
            board = list(BLANK)
            for seat in _SEATS:
                place(board, read_setup(moves[seat]), seat)
            return start_play(s.seed, s.game, tuple(board), 0)
        seats = self.to_act(s)
        if not seats:
            raise Illegal("the game is over: no move can be applied")
        if set(moves) != set(seats):
            raise Illegal(f"expected one move, by {self._whose_turn(s)}; got seats {sorted(moves)}")
        move = moves[seats[0]]
        m = MOVE_OF.get(move) if isinstance(move, str) else None
        if m is None or m not in s.legal:
            raise Illegal(f"{move!r} is not a legal move of seat {seats[0]} here")
        return play(s, m)

    def _whose_turn(self, s: StrategoState) -> str:
        seats = self.to_act(s)
        return f"seat {seats[0]} ({SIDES[seats[0]]}) moves" if seats else "the game is over"

    def outcome(self, s: StrategoState) -> Outcome | None:
        """`flag`, `no-moves`, `no-battle` or `ply-cap` once reached, else None."""
        if s.phase == "setup":
            return None
        if s.flag_taken_by is not None:
            scores = (1, -1) if s.flag_taken_by == 0 else (-1, 1)
            return Outcome(scores, COMPLETE, "flag", f"{SIDES[s.flag_taken_by]} took the flag")
        if s.quiet >= NO_BATTLE_LIMIT:
            return Outcome.draw("no-battle")
        if s.ply >= PLY_CAP:
            return Outcome.draw("ply-cap")
        if s.legal:
            return None
        other = 1 - s.mover
        if legal_for(s.board, s.movable[other], other, s.streaks[other], None, s.key):
            scores = (1, -1) if other == 0 else (-1, 1)
            return Outcome(scores, COMPLETE, "no-moves", f"{SIDES[s.mover]} has no legal move")
        return Outcome((0, 0), COMPLETE, "no-moves", "neither side has a legal move")

    def adjudicate(self, s: StrategoState) -> Outcome:
        """The wall clock's result: the higher standing wins, equal standings draw."""
        red, blue = self.standing(s, 0), self.standing(s, 1)
        if red == blue:
            return Outcome.draw("wall-clock", DEADLINE)
        return Outcome.win(0 if red > blue else 1, "wall-clock", DEADLINE)

    # -- notation -------------------------------------------------------------

    def parse(self, s: StrategoState, seat: int, move: object) -> str:
        """A setup in the setup phase (canonical 40 codes), else a move (canonical `e4-e5`)."""
        if s.phase == "setup":
            if seat not in _SEATS:
                raise Illegal(f"seat {seat!r} does not play: seats are 0 (Red) and 1 (Blue)")
            try:
                return read_setup(move)
            except Unreadable as exc:
                refusal = isinstance(move, str) and placeholder_refusal(move, _SETUP_WANTED)
                if not refusal:
                    raise
                raise Unreadable(refusal) from exc
        try:
            name = _read_move(move)
        except Unreadable as exc:
            refusal = _misread(move)
            if refusal is None:
                raise
            raise Unreadable(refusal) from exc
        if self.to_act(s) != (seat,):
            raise Illegal(f"it is not seat {seat}'s turn ({self._whose_turn(s)})")
        m = MOVE_OF.get(name)
        if m is None or m not in s.legal:
            raise Illegal(_refusal(s, name))
        return name

    # -- standing -------------------------------------------------------------

    def standing(self, s: StrategoState, seat: int) -> int:
        """The sum of `seat`'s surviving pieces' values (Flag 1000, Marshal 170, ...)."""
        total = 0
        for sq in SQUARES:
            v = s.board[sq]
            if v > 0 and (v >> 4 & 1) == seat:
                total += VALUES[(v & 15) - 1]
        return total

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: StrategoState, seat: int) -> str:
        """In setup the seeded random setup; in play the first known win, else forward, else first.

        It reads the seat's own pieces and only the revealed enemy ranks, as
        its view does, so it never decides on what the seat cannot know.
        """
        if s.phase == "setup":
            return random_setup(s.seed, seat, s.game)
        if self.to_act(s) != (seat,):
            raise Illegal(f"seat {seat} has no move to make: {self._whose_turn(s)}")
        return MOVE_NAMES[_baseline_move(s, seat)]

    # -- view -----------------------------------------------------------------

    def view(self, s: StrategoState, seat: int) -> dict[str, Any]:
        """What `seat` may know, JSON-able.

        Keys: `game`, `match_game` (1 or 2), `ply`, `you`, `side` ("Red" or
        "Blue"), `sides`, `phase` ("setup" or "play"), `to_act` and `to_move`
        (the seat to move, None in setup and once over), `home_ranks` (back
        rank first), `setup_counts`, `pieces` (every piece on the board in
        (file, rank) order: `square`, `seat`, `code` or "?" for an enemy
        whose rank the seat has not seen, `moved`, `revealed`), `lakes`,
        `captured` (codes lost by `you` and by `enemy`), `enemy_left`,
        `battles` (the last ten: `ply`, `by`, `move`, `attacker`, `defender`,
        `result`), `last_move`, `no_battle_plies`, `no_battle_limit`, `ply_cap`.
        """
        return seat_view(s, seat, self.to_act(s))
