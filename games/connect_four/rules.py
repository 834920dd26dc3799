"""Connect-four on 7 files x 6 ranks, the first game of the board gauntlet.

Seat 0 is red and drops first, seat 1 blue; a disc falls to the lowest empty
cell of its file. Four discs of one colour in a line, across, up or on a
diagonal, win (`four-in-a-row`); a full board without one is a draw
(`board-full`). The game ends by itself within 42 plies, so it has no ply cap.

Rules source:
    `docs/rules.md#connect-four`: the rules, the tolerant notation, the
    standing formula and the tactician.

Parameters:
    None: 7 files a-g (`FILES`) of 6 ranks (`RANKS`).

State:
    `ConnectFourState`: one Python-int bitboard per seat. Cell (file f, rank
    r), both counted from 0, is bit `f * 7 + r`: every file owns seven bits,
    six cells and an always-empty guard bit on top, so shifting by 1, 7, 8 or 6
    steps one cell up, right, up-right or down-right and a line can never wrap
    from the top of one file into the bottom of the next. The legal files, the
    turn and the result are worked out when a disc is dropped.

Notation:
    A move is a file letter, `d`; the reader takes a letter a-g or a digit 1-7
    (files a-g) in any case, with any punctuation around it. Legal moves are
    listed a to g.

Standing:
    The sum over the 69 four-cell windows (`WINDOW_CELLS`) free of opponent
    discs of `WEIGHTS[k]`, k the seat's discs in the window. The wall clock
    adjudicates by it (`wall-clock`, reason `deadline`).

Baseline:
    tactician: the move maximising the mover's standing after it, ties to the
    first in legal order.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from games.core import Outcome, TurnGame, Unreadable, normalise_token

__all__ = [
    "FILES",
    "RANKS",
    "WEIGHTS",
    "WINDOW_CELLS",
    "ConnectFour",
    "ConnectFourState",
    "winning_cells",
]

# -- parameters ---------------------------------------------------------------

FILES = "abcdefg"
"""File letters, left to right; a move is one of them."""
RANKS = 6
"""Ranks per file, bottom to top."""
WEIGHTS = (0, 1, 4, 16, 10000)
"""standing's w[k]: a window holding k of the seat's discs and none of the opponent's."""

_STRIDE = RANKS + 1  # six cells and the guard bit
_CELLS = len(FILES) * RANKS
_SIDES = ("red", "blue")
_SYMBOLS = ("R", "B")

# -- state --------------------------------------------------------------------


class ConnectFourState(NamedTuple):
    """A position; immutable, compared by value.

    `red` and `blue` are the bitboards (see the module docstring). `legal`,
    `to_act` and `result` are derived from them when the disc is dropped, so
    the framework's questions cost an attribute lookup.
    """

    ply: int
    red: int
    blue: int
    legal: tuple[str, ...]
    to_act: tuple[int, ...]
    result: Outcome | None


# -- rules --------------------------------------------------------------------


def _bit(file: int, rank: int) -> int:
    return 1 << (file * _STRIDE + rank)


def _windows() -> tuple[tuple[str, str, str, str], ...]:
    """Every line of four cells: horizontal, vertical, up-right and down-right."""
    found: list[tuple[str, str, str, str]] = []
    for df, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for f in range(len(FILES)):
            for r in range(RANKS):
                cells = [(f + i * df, r + i * dr) for i in range(4)]
                if all(0 <= cf < len(FILES) and 0 <= cr < RANKS for cf, cr in cells):
                    a, b, c, d = (f"{FILES[cf]}{cr + 1}" for cf, cr in cells)
                    found.append((a, b, c, d))
    return tuple(found)


WINDOW_CELLS = _windows()
"""The 69 four-cell windows of standing (and of every possible win), by cell name."""

_INDEX = {f"{FILES[f]}{r + 1}": f * _STRIDE + r for f in range(len(FILES)) for r in range(RANKS)}
_WINDOW_MASKS = tuple(sum(1 << _INDEX[cell] for cell in window) for window in WINDOW_CELLS)
# The windows through each cell: the tactician only needs those of the cell it fills.
_WINDOWS_AT = {
    index: tuple(mask for mask in _WINDOW_MASKS if mask >> index & 1) for index in _INDEX.values()
}
# What filling one more cell of a window adds to standing, by the discs already in it.
_GAIN = tuple(WEIGHTS[k + 1] - WEIGHTS[k] for k in range(4))

_FILE_OF = {letter: f for f, letter in enumerate(FILES)}
_BOTTOM = tuple(_bit(f, 0) for f in range(len(FILES)))
_TOP = tuple(_bit(f, RANKS - 1) for f in range(len(FILES)))
_TOP_ROW = sum(_TOP)
_COLUMN = tuple(sum(_bit(f, r) for r in range(RANKS)) for f in range(len(FILES)))

_SEAT_0, _SEAT_1, _OVER = (0,), (1,), ()
_RED_WINS = Outcome.win(0, "four-in-a-row")
_BLUE_WINS = Outcome.win(1, "four-in-a-row")
_BOARD_FULL = Outcome.draw("board-full")


def _has_four(board: int) -> bool:
    """Whether `board` holds four in a line (unrolled: this runs on every move)."""
    pairs = board & (board >> 1)
    if pairs & (pairs >> 2):
        return True
    pairs = board & (board >> _STRIDE)
    if pairs & (pairs >> 2 * _STRIDE):
        return True
    pairs = board & (board >> (_STRIDE + 1))
    if pairs & (pairs >> 2 * (_STRIDE + 1)):
        return True
    pairs = board & (board >> (_STRIDE - 1))
    return bool(pairs & (pairs >> 2 * (_STRIDE - 1)))


def winning_cells(s: ConnectFourState) -> tuple[str, ...]:
    """Every cell of the winner's lines of four, by file then rank; () without a winner.

    A disc can complete more than one line (two directions, or five in a row),
    so this is the union of every window one colour fills. Only the winner can
    fill one: the game ends at the first.
    """
    for board in (s.red, s.blue):
        filled = 0
        for mask in _WINDOW_MASKS:
            if board & mask == mask:
                filled |= mask
        if filled:
            return tuple(cell for cell, index in _INDEX.items() if filled >> index & 1)
    return ()


def _landing(s: ConnectFourState, file: int) -> int:
    """The bit of the lowest empty cell of `file` (which must not be full)."""
    # Adding the file's bottom bit carries through its filled cells to the first hole.
    return ((s.red | s.blue) + _BOTTOM[file]) & _COLUMN[file]


# A NamedTuple's own constructor is Python code; building the tuple directly
# skips it, and making states is most of a random playout's time.
_new = tuple.__new__


def _shown(text: str) -> str:
    """`text` quoted for an error message, cut so a long reply cannot flood it."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _boards(s: ConnectFourState, seat: int) -> tuple[int, int]:
    """(the seat's discs, the opponent's discs)."""
    if seat == 0:
        return s.red, s.blue
    if seat == 1:
        return s.blue, s.red
    raise ValueError(f"seat {seat!r} does not exist: connect-four's seats are 0 and 1")


# -- the game -----------------------------------------------------------------

_INITIAL = ConnectFourState(0, 0, 0, tuple(FILES), _SEAT_0, None)


class ConnectFour(TurnGame[ConnectFourState]):
    """Connect-four: seat 0 red, seat 1 blue; first to four in a line wins."""

    name: ClassVar[str] = "connect-four"
    family: ClassVar[str] = "board"
    rules_version: ClassVar[int] = 1

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> ConnectFourState:
        """The empty board; there is no chance, so `seed` and `game` change nothing."""
        return _INITIAL

    # -- rules ----------------------------------------------------------------

    def _legal(self, s: ConnectFourState) -> tuple[str, ...]:
        return s.legal

    def _play(self, s: ConnectFourState, move: str) -> ConnectFourState | None:
        """The state after the mover drops a disc into file `move`; None if no such file is open."""
        file = _FILE_OF.get(move)
        if file is None:
            return None
        filled = s.red | s.blue
        if filled & _TOP[file]:
            return None
        # Adding the file's bottom bit carries through its filled cells to the first hole.
        bit = (filled + _BOTTOM[file]) & _COLUMN[file]
        ply = s.ply + 1
        legal = s.legal if not bit & _TOP_ROW else tuple(m for m in s.legal if m != move)
        red, blue = s.red, s.blue
        # Nobody holds four discs before ply 7, so the line test can wait until then.
        if ply & 1:  # red has just moved
            red |= bit
            if ply > 6 and _has_four(red):
                return _new(ConnectFourState, (ply, red, blue, legal, _OVER, _RED_WINS))
            to_act = _SEAT_1
        else:
            blue |= bit
            if ply > 6 and _has_four(blue):
                return _new(ConnectFourState, (ply, red, blue, legal, _OVER, _BLUE_WINS))
            to_act = _SEAT_0
        if ply == _CELLS:
            return _new(ConnectFourState, (ply, red, blue, legal, _OVER, _BOARD_FULL))
        return _new(ConnectFourState, (ply, red, blue, legal, to_act, None))

    def _refusal(self, s: ConnectFourState, move: str, text: str) -> str:
        return f"read {move!r} from {_shown(text)}, but file {move} is full: pick an open file."

    # -- notation -------------------------------------------------------------

    def _read(self, text: str) -> str:
        """A file letter a-g or a digit 1-7, any case, any punctuation."""
        token = normalise_token(text)
        if len(token) == 1 and token in _FILE_OF:
            return token
        if len(token) == 1 and "1" <= token <= str(len(FILES)):
            return FILES[int(token) - 1]
        raise Unreadable(
            f"read {_shown(text.strip())}: a connect-four move is one <file letter>, a letter a-g "
            "(or a digit 1-7, counting files from the left)."
        )

    # -- standing -------------------------------------------------------------

    def standing(self, s: ConnectFourState, seat: int) -> int:
        """Sum of WEIGHTS[k] over the windows free of opponent discs, k = the seat's discs."""
        mine, theirs = _boards(s, seat)
        return sum(WEIGHTS[(mine & w).bit_count()] for w in _WINDOW_MASKS if not theirs & w)

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: ConnectFourState, seat: int) -> str:
        """tactician: the move maximising the mover's standing after it, ties to the first.

        Only the windows through the filled cell change, so the move with the
        largest gain over them is the move with the largest standing after it.
        """
        self._check_turn(s, seat)
        mine, theirs = _boards(s, seat)
        best_move, best = "", -1
        for move in s.legal:
            cell = _landing(s, _FILE_OF[move]).bit_length() - 1
            gain = sum(_GAIN[(mine & w).bit_count()] for w in _WINDOWS_AT[cell] if not theirs & w)
            if gain > best:
                best_move, best = move, gain
        return best_move

    # -- view -----------------------------------------------------------------

    def view(self, s: ConnectFourState, seat: int) -> dict[str, Any]:
        """The whole position (nothing is hidden), as JSON-able data.

        Keys: `game` ("connect-four"), `ply` (plies played), `to_move` (the seat
        to move, None once over), `you` (the seat asked), `sides` ({"0": "red",
        "1": "blue"}), `files` (["a", ..., "g"]), `cells` (six rank rows from
        rank 1 upward, each seven one-character strings "." / "R" / "B", file a
        first), `legal` (the legal moves of the seat to move, a..g).
        """
        _boards(s, seat)  # refuses a seat that does not exist
        cells = [
            [
                _SYMBOLS[0] if s.red & _bit(f, r) else _SYMBOLS[1] if s.blue & _bit(f, r) else "."
                for f in range(len(FILES))
            ]
            for r in range(RANKS)
        ]
        return {
            "game": self.name,
            "ply": s.ply,
            "to_move": s.to_act[0] if s.to_act else None,
            "you": seat,
            "sides": {"0": _SIDES[0], "1": _SIDES[1]},
            "files": list(FILES),
            "cells": cells,
            "legal": list(s.legal) if s.to_act else [],
        }
