"""Breakthrough on a 6 x 6 board, the second game of the board gauntlet.

Seat 0 is red on ranks 1-2 and moves up, first; seat 1 is blue on ranks 5-6
and moves down. A piece steps one rank forward, straight onto an empty cell or
diagonally onto any cell not holding its own piece (capturing there). Landing
on the far rank wins (`home-rank`), taking the last enemy piece wins
(`no-pieces`), a seat to move without a legal move loses (`no-moves`); at 300
plies a game the rules have not ended is adjudicated by standing (`ply-cap`).

Two consequences, for readers of results: every move advances a piece, so a
game lasts at most 85 plies (42 non-winning steps a side) and the ply cap
never binds from the initial position; and a side's most advanced piece can
always step diagonally, so `no-moves` is unreachable. Both rules are
implemented as stated all the same.

Rules source:
    `docs/rules.md#breakthrough`: the rules, the legal-move order, the
    tolerant notation, the standing formula (advance measured from the
    owner's own back rank), the ply cap and the ending names.

Parameters:
    None: 6 files a-f of 6 ranks, 12 pieces a side, `PLY_CAP` 300.

State:
    `Position`: a Python-int bitboard per side, file-major with 18 bits per
    file (file f, rank index r is bit 18 f + r), so one integer can hold per
    file which pieces step straight, left and right (6 bits each); that 18-bit
    group indexes a table of ready-made legal-move strings. The turn, the
    result and those movable pieces are worked out when the position is made.
    `from_rows` builds a position from a diagram.

Notation:
    A move is `<from>-<to>`, `b2-c3`; the reader lower-cases, keeps a-z and
    0-9 and takes `<from><to>` (`B2C3`, ` b2 c3 `). Legal moves are listed by
    (from file, from rank, to file, to rank).

Standing:
    100 x pieces + 10 x the sum of their advances + 40 x the largest advance
    (`standing_of`), a piece's advance being its distance in ranks from its
    owner's back rank. The ply cap and the wall clock (`wall-clock`, reason
    `deadline`) adjudicate by it.

Baseline:
    tactician: the move maximising the mover's standing after it, ties to the
    first in legal order (computed directly: the first legal move of the most
    advanced piece).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from games.core import Outcome, TurnGame, Unreadable, normalise_token

__all__ = ["PLY_CAP", "SIDES", "Breakthrough", "Position", "from_rows", "standing_of"]

# -- parameters ---------------------------------------------------------------

SIZE = 6
FILES = "abcdef"
PLY_CAP = 300
SIDES: tuple[str, str] = ("red", "blue")
SYMBOLS: tuple[str, str] = ("R", "B")
_ARMY = 2 * SIZE

# -- state --------------------------------------------------------------------

_STRIDE = 18
_GROUP = (1 << _STRIDE) - 1
_FILE_CELLS = (1 << SIZE) - 1


def _bit(file: int, rank: int) -> int:
    return 1 << (_STRIDE * file + rank)


def _step_name(file: int, rank: int, to_file: int, to_rank: int) -> str:
    return f"{FILES[file]}{rank + 1}-{FILES[to_file]}{to_rank + 1}"


BOARD = sum(_FILE_CELLS << (_STRIDE * f) for f in range(SIZE))
RANKS: tuple[int, ...] = tuple(sum(_bit(f, r) for f in range(SIZE)) for r in range(SIZE))
# Cells whose rank index has bit k set: the rank-index sum is three popcounts.
_RANK_BITS: tuple[int, ...] = tuple(
    sum(RANKS[r] for r in range(SIZE) if r >> k & 1) for k in range(3)
)
GOAL: tuple[int, int] = (RANKS[SIZE - 1], RANKS[0])
"""The rank each seat wins on reaching: red the top, blue the bottom."""
_STEP: tuple[int, int] = (1, -1)


class Position(NamedTuple):
    """A breakthrough position; seat `ply % 2` moves next while the game goes on.

    `red` and `blue` are bitboards (see the module docstring). The other
    fields are derived from them and cached when the position is made, so the
    framework's questions are attribute reads: `to_act` and `result` (the
    rules' ending, or `ply-cap` at 300 plies), and `movable`, which packs per
    file which pieces of the side to move can step left, straight and right
    (0 once the rules have ended the game).
    """

    red: int
    blue: int
    ply: int
    to_act: tuple[int, ...]
    result: Outcome | None
    movable: int


def from_rows(rows: Sequence[str], ply: int = 0) -> Position:
    """A position from a diagram read top down: rows[0] is rank 6, rows[5] rank 1.

    Each row has 6 characters `.` (empty), `R` (red) or `B` (blue); `ply` is
    the plies played, so seat `ply % 2` moves next. The result is derived as
    after a move: a position whose side to move already stands on its goal
    rank, or whose other side has no piece, cannot arise and is refused.
    """
    if len(rows) != SIZE or any(len(row) != SIZE or set(row) - set(".RB") for row in rows):
        raise ValueError(f"rows {list(rows)!r} are not 6 rows of 6 characters from '.RB'")
    if ply < 0:
        raise ValueError(f"ply {ply} is negative; give the number of plies played")
    pieces = [0, 0]
    for i, row in enumerate(rows):
        for f, char in enumerate(row):
            if char != ".":
                pieces[SYMBOLS.index(char)] |= _bit(f, SIZE - 1 - i)
    mover = ply & 1
    if pieces[mover] & GOAL[mover]:
        raise ValueError(f"{SIDES[mover]} is to move (ply {ply}) but already stands on its goal")
    if not pieces[1 - mover] or max(p.bit_count() for p in pieces) > _ARMY:
        raise ValueError(
            f"{SIDES[1 - mover]} made the last move (ply {ply}) so needs a piece, and no side "
            f"has more than {_ARMY}: got rows {list(rows)!r}"
        )
    return _settle(pieces[0], pieces[1], ply)


# -- rules --------------------------------------------------------------------


def _movable(own: int, other: int, seat: int) -> int:
    """Per file: `seat`'s pieces that can step straight (bits 0-5), left (6-11), right (12-17)."""
    free = BOARD & ~own
    if seat:
        straight = own & ((free & ~other) << 1)
        left, right = own & (free << (_STRIDE + 1)), own & (free >> (_STRIDE - 1))
    else:
        straight = own & ((free & ~other) >> 1)
        left, right = own & (free << (_STRIDE - 1)), own & (free >> (_STRIDE + 1))
    return straight | left << SIZE | right << 2 * SIZE


_WINS: tuple[dict[str, Outcome], ...] = tuple(
    {e: Outcome.win(seat, e) for e in ("home-rank", "no-pieces", "no-moves")} for seat in (0, 1)
)


_SEATS: tuple[tuple[int], tuple[int]] = ((0,), (1,))
_OVER: tuple[int, ...] = ()


def _settle(red: int, blue: int, ply: int) -> Position:
    """The position after seat `1 - ply % 2` moved, with its turn, result and movable cached.

    Rule order follows the rules: landing on the far rank, then the last
    enemy piece taken, then the side to move left without a move; only then
    the ply cap.
    """
    mover, last = ply & 1, 1 - (ply & 1)
    pieces = (red, blue)
    if pieces[last] & GOAL[last]:
        return Position(red, blue, ply, _OVER, _WINS[last]["home-rank"], 0)
    if not pieces[mover]:
        return Position(red, blue, ply, _OVER, _WINS[last]["no-pieces"], 0)
    movable = _movable(pieces[mover], pieces[last], mover)
    if not movable:
        return Position(red, blue, ply, _OVER, _WINS[last]["no-moves"], 0)
    if ply >= PLY_CAP:
        capped = Outcome.by_standing(standing_of(red, 0), standing_of(blue, 1), "ply-cap")
        return Position(red, blue, ply, _OVER, capped, movable)
    return Position(red, blue, ply, _SEATS[mover], None, movable)


class _Step(NamedTuple):
    """One geometric step of one seat: its movable bit, the cells it flips, its target."""

    movable_bit: int
    flips: int
    target: int


def _steps(seat: int) -> dict[str, _Step]:
    """Every geometrically possible step of `seat`, by canonical notation."""
    steps: dict[str, _Step] = {}
    for f in range(SIZE):
        for r in range(SIZE):
            to_r = r + _STEP[seat]
            for group, to_f in ((1, f - 1), (0, f), (2, f + 1)):
                if 0 <= to_f < SIZE and 0 <= to_r < SIZE:
                    move = _step_name(f, r, to_f, to_r)
                    frm, to = _bit(f, r), _bit(to_f, to_r)
                    steps[move] = _Step(frm << SIZE * group, frm | to, to)
    return steps


_STEPS: tuple[dict[str, _Step], dict[str, _Step]] = (_steps(0), _steps(1))


class _FileMoves(dict[int, tuple[str, ...]]):
    """Legal-move strings of one file's pieces, by that file's 18-bit movable group.

    Filled on first use: only the groups that occur in play are ever built.
    """

    def __init__(self, seat: int, file: int) -> None:
        super().__init__()
        self.seat, self.file = seat, file

    def __missing__(self, group: int) -> tuple[str, ...]:
        f, to_r = self.file, _STEP[self.seat]
        moves = []
        for r in range(SIZE):  # from rank, then to file: the legal order
            for shift, to_f in ((SIZE, f - 1), (0, f), (2 * SIZE, f + 1)):
                if group >> (shift + r) & 1:
                    moves.append(_step_name(f, r, to_f, r + to_r))
        self[group] = value = tuple(moves)
        return value


_TABLES: tuple[tuple[_FileMoves, ...], ...] = tuple(
    tuple(_FileMoves(seat, f) for f in range(SIZE)) for seat in (0, 1)
)


def legal_of(movable: int, seat: int) -> tuple[str, ...]:
    """The legal moves packed in `movable` for `seat`, in legal order."""
    t0, t1, t2, t3, t4, t5 = _TABLES[seat]
    return (
        t0[movable & _GROUP]
        + t1[movable >> _STRIDE & _GROUP]
        + t2[movable >> 2 * _STRIDE & _GROUP]
        + t3[movable >> 3 * _STRIDE & _GROUP]
        + t4[movable >> 4 * _STRIDE & _GROUP]
        + t5[movable >> 5 * _STRIDE]
    )


# -- notation -----------------------------------------------------------------

_PATTERN = re.compile(r"[a-f][1-6][a-f][1-6]")


def read_move(text: str) -> str:
    """The canonical move a reply's text stands for; Unreadable if it is none.

    The reading: lower-case, trim, keep a-z0-9, then <from><to> with
    files a-f and ranks 1-6 (`B2C3`, `b2-c3`, ` b2 c3 ` all read `b2-c3`).
    """
    token = normalise_token(text)
    if _PATTERN.fullmatch(token):
        return f"{token[:2]}-{token[2:]}"
    raise Unreadable(
        f"read {token!r} from {text!r}: a breakthrough move is <from>-<to>, the cell a piece "
        "leaves and the cell it steps to, each a file letter a-f then a rank number 1-6."
    )


def refusal(s: Position, seat: int, move: str) -> str:
    """Why the canonical `move` is not legal for `seat`, the side to move in `s`: one or more
    whole sentences."""
    f, to_f = FILES.index(move[0]), FILES.index(move[3])
    r, to_r = int(move[1]) - 1, int(move[4]) - 1
    own, other = (s.blue, s.red) if seat else (s.red, s.blue)
    colour, rival = SIDES[seat], SIDES[1 - seat]
    frm, to = move[:2], move[3:]
    if to_r - r != _STEP[seat] or abs(to_f - f) > 1:
        way = "up, toward rank 6" if seat == 0 else "down, toward rank 1"
        return (
            f"it is not a step of one rank {way}. A {colour} piece steps one rank {way}, "
            "straight or diagonally."
        )
    if not own & _bit(f, r):
        held = f"a {rival} piece" if other & _bit(f, r) else "no piece"
        return f"{frm} holds {held}, not one of {colour}'s."
    if own & _bit(to_f, to_r):
        return f"{to} holds {colour}'s own piece."
    if to_f == f and other & _bit(to_f, to_r):
        return (
            f"{to} holds a {rival} piece, and a straight step cannot capture (a diagonal one can)."
        )
    return "the rules forbid it here."


# -- standing -----------------------------------------------------------------


def standing_of(pieces: int, seat: int) -> int:
    """100 x pieces + 10 x sum(advance) + 40 x max(advance) of `seat`'s bitboard.

    A piece's advance is its distance in ranks from its owner's back rank
    (rank 1 for red, rank 6 for blue); max(advance) of no pieces is 0.
    """
    count = pieces.bit_count()
    if not count:
        return 0
    rank_sum = sum((pieces & bits).bit_count() << k for k, bits in enumerate(_RANK_BITS))
    if seat == 0:
        top = next(r for r in range(SIZE - 1, -1, -1) if pieces & RANKS[r])
        return 100 * count + 10 * rank_sum + 40 * top
    low = next(r for r in range(SIZE) if pieces & RANKS[r])
    return 100 * count + 10 * ((SIZE - 1) * count - rank_sum) + 40 * (SIZE - 1 - low)


# -- the game -----------------------------------------------------------------

_INITIAL = from_rows(["BBBBBB", "BBBBBB", "......", "......", "RRRRRR", "RRRRRR"])


class Breakthrough(TurnGame[Position]):
    """Breakthrough 6 x 6: red (seat 0) moves up first, blue (seat 1) moves down."""

    name: ClassVar[str] = "breakthrough"
    family: ClassVar[str] = "board"
    rules_version: ClassVar[int] = 1
    ply_cap: ClassVar[int | None] = PLY_CAP

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> Position:
        """The starting position; breakthrough has no chance, so `seed` is unused."""
        if game not in (1, 2):
            raise ValueError(f"game index {game!r} must be 1 or 2 (its place in the match)")
        return _INITIAL

    # -- rules ----------------------------------------------------------------

    def _legal(self, s: Position) -> tuple[str, ...]:
        """Moves by (from file, from rank, to file, to rank)."""
        return legal_of(s.movable, s.ply & 1)

    def _play(self, s: Position, move: str) -> Position | None:
        """The position after the side to move plays `move`; None if it is no legal step."""
        red, blue, ply = s.red, s.blue, s.ply
        step = _STEPS[ply & 1].get(move)
        if step is None or not s.movable & step.movable_bit:
            return None
        if ply & 1:
            blue ^= step.flips
            red &= ~step.target
        else:
            red ^= step.flips
            blue &= ~step.target
        return _settle(red, blue, ply + 1)

    def _refusal(self, s: Position, move: str, text: str) -> str:
        return f"{move} is not legal here: {refusal(s, s.ply & 1, move)}"

    # -- notation -------------------------------------------------------------

    def _read(self, text: str) -> str:
        return read_move(text)

    # -- standing -------------------------------------------------------------

    def standing(self, s: Position, seat: int) -> int:
        """The breakthrough standing of `seat` (see `standing_of`)."""
        return standing_of(s.blue if seat else s.red, seat)

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: Position, seat: int) -> str:
        """tactician, computed directly.

        A move adds 10 to the mover's standing (one rank of advance), plus 40
        when the piece steps from the mover's most advanced rank; captures do
        not change the mover's own terms. So the tactician's choice is the
        first legal move from that rank (the most advanced piece always has
        one), which is exactly TurnGame.baseline's answer.
        """
        self._check_turn(s, seat)
        own = s.blue if seat else s.red
        ranks = range(SIZE) if seat else range(SIZE - 1, -1, -1)
        front = str(next(r for r in ranks if own & RANKS[r]) + 1)
        legal = legal_of(s.movable, seat)
        return next((m for m in legal if m[1] == front), legal[0])

    # -- view -----------------------------------------------------------------

    def view(self, s: Position, seat: int) -> dict[str, Any]:
        """What `seat` sees: the whole board (nothing is hidden).

        Keys: `game`, `ply`, `to_move` (seat, or None once over), `you`,
        `sides` ({"0": "red", "1": "blue"}), `files` ("abcdef"), `cells`
        (rank rows from rank 1 upward, each 6 one-char strings `.`/`R`/`B`),
        `pieces` ({"0": red count, "1": blue count}), `goal_rank`
        ({"0": 6, "1": 1}) and `ply_cap`.
        """
        seats = self.to_act(s)
        at = [(s.red >> i & 1) | (s.blue >> i & 1) << 1 for i in range(_STRIDE * SIZE)]
        cells = [[".RB"[at[_STRIDE * f + r]] for f in range(SIZE)] for r in range(SIZE)]
        return {
            "game": self.name,
            "ply": s.ply,
            "to_move": seats[0] if seats else None,
            "you": seat,
            "sides": {"0": SIDES[0], "1": SIDES[1]},
            "files": FILES,
            "cells": cells,
            "pieces": {"0": s.red.bit_count(), "1": s.blue.bit_count()},
            "goal_rank": {"0": SIZE, "1": 1},
            "ply_cap": PLY_CAP,
        }
