"""Backgammon's state: the two sides, the colour to move and the roll, and the board as data.

Each side is kept in its own numbering (`Side`): BLACK's point p is WHITE's
point 25 - p, and the absolute points 1-24 of replays and the viewer are
BLACK's numbering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.backgammon.dice import Roll

__all__ = [
    "CHECKERS",
    "COLOURS",
    "OPENING",
    "POINTS_DOWN",
    "BackgammonState",
    "Side",
    "board_json",
    "check_apart",
    "colour_index",
    "pip_count",
    "side_from_points",
    "sides_from_board",
]

CHECKERS = 15
COLOURS: tuple[str, str] = ("BLACK", "WHITE")
"""Colour names; index 0 is BLACK, whose numbering the absolute points use."""

_OFF, _BAR = 0, 25

POINTS_DOWN: tuple[int, ...] = tuple(range(24, 0, -1))
"""A side's points from its 24 down to its 1, the order moves are searched and written in."""

Side = bytes
"""26 checker counts in the side's own numbering: [0] off, [1..24] points, [25] bar.

Bytes rather than a tuple: they hash and slice in C, and a position's key is
just the two sides joined."""


def colour_index(colour: str) -> int:
    """0 for BLACK, 1 for WHITE; any case is read."""
    name = colour.strip().upper()
    if name not in COLOURS:
        raise ValueError(f"colour {colour!r} is neither BLACK nor WHITE")
    return COLOURS.index(name)


def side_from_points(points: Mapping[int, int], bar: int = 0, colour: str = "BLACK") -> Side:
    """A side from its checkers keyed by its own point numbers (1-24); the rest are borne off."""
    counts = [0] * 26
    for point, count in points.items():
        if not isinstance(point, int) or not 1 <= point <= 24:
            raise ValueError(f"{colour} point {point!r} is not a point: use 1-24 (own numbering)")
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"{colour} has {count!r} checkers on {point}: use a count >= 0")
        counts[point] = count
    if not isinstance(bar, int) or bar < 0:
        raise ValueError(f"{colour} has {bar!r} checkers on the bar: use a count >= 0")
    counts[_BAR] = bar
    placed = sum(counts)
    if placed > CHECKERS:
        raise ValueError(f"{colour} has {placed} checkers on the board and bar: at most 15")
    counts[_OFF] = CHECKERS - placed
    return bytes(counts)


OPENING: Side = side_from_points({24: 2, 13: 5, 8: 3, 6: 5})
"""Either side at the start, in its own numbering."""


def check_apart(black: Side, white: Side) -> None:
    """Raise ValueError if a point holds checkers of both colours."""
    shared = [p for p in range(1, 25) if black[p] and white[25 - p]]
    if shared:
        raise ValueError(
            f"BLACK points {shared} also hold WHITE checkers: a point holds one colour only "
            "(WHITE's point p is BLACK's point 25 - p)"
        )


def pip_count(side: Side) -> int:
    """The pips the side still has to move: sum of point times checkers, the bar counting 25."""
    return sum(point * side[point] for point in range(1, 26))


def board_json(black: Side, white: Side) -> dict[str, Any]:
    """The board in absolute points (BLACK's numbering): + BLACK checkers, - WHITE checkers."""
    return {
        "points": [black[p] - white[25 - p] for p in range(1, 25)],
        "bar": [black[_BAR], white[_BAR]],
        "off": [black[_OFF], white[_OFF]],
    }


def _counts(board: Mapping[str, Any], key: str, length: int) -> Sequence[int]:
    value = board.get(key)
    if not isinstance(value, Sequence) or len(value) != length:
        raise ValueError(f"board[{key!r}] is {value!r}: expected a list of {length} integers")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"board[{key!r}] is {value!r}: expected integers")
    return value


def sides_from_board(board: Mapping[str, Any]) -> tuple[Side, Side]:
    """(BLACK, WHITE) sides from `board_json`'s form; ValueError if it is not a board."""
    points = _counts(board, "points", 24)
    bar = _counts(board, "bar", 2)
    black = side_from_points({p: max(points[p - 1], 0) for p in range(1, 25)}, bar[0], "BLACK")
    white = side_from_points(
        {25 - p: max(-points[p - 1], 0) for p in range(1, 25)}, bar[1], "WHITE"
    )
    if list(_counts(board, "off", 2)) != [black[_OFF], white[_OFF]]:
        raise ValueError(f"board['off'] is {board['off']!r}: it must be 15 minus the rest")
    return black, white


@dataclass(frozen=True, slots=True)
class BackgammonState:
    """One position with the roll of the ply to play; never mutated."""

    black: Side
    white: Side
    turn: int
    """The colour to move: 0 BLACK, 1 WHITE."""
    roll: Roll | None
    """The dice of ply `ply + 1` and how they were drawn; None once the game is over."""
    ply: int
    """Plies played so far."""
    game: int
    game_seed: str

    @property
    def dice(self) -> tuple[int, ...]:
        """The dice of the ply to play (for ply 1: BLACK's die, WHITE's die); () when over."""
        return self.roll.dice if self.roll is not None else ()

    @property
    def colour(self) -> str:
        """The colour to move, BLACK or WHITE."""
        return COLOURS[self.turn]

    def sides(self) -> tuple[Side, Side]:
        """(mover, opponent), each in its own numbering."""
        return (self.black, self.white) if self.turn == 0 else (self.white, self.black)
