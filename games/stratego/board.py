"""Stratego's geometry, pieces and the tables the move generator reads.

Squares live in a padded mailbox: file f (0 = a) and rank r (0 = rank 1) are
cell `(f + 1) * 12 + (r + 1)`, so a step is +-1 along a file and +-12 along a
rank, the border and the lakes are WALL cells that stop every ray without a
bounds check, and sorting cells as numbers sorts squares by (file, rank), the
legal-move order.

A cell holds EMPTY, WALL, or a piece packed in one small int: bits 0-3 are the
kind plus one, bit 4 the owner seat, bit 5 "revealed" (the opponent has seen
its rank) and bit 6 "moved" (public). The revealed and moved bits travel with
the piece when it moves.
"""

from __future__ import annotations

import random

__all__ = [
    "BATTLE",
    "BLANK",
    "BOMB",
    "BOUNDARIES",
    "CODES",
    "COUNTS",
    "EMPTY",
    "FILES",
    "FLAG",
    "LAKES",
    "MARSHAL",
    "MINER",
    "MOVED",
    "MOVE_NAMES",
    "MOVE_OF",
    "NAMES",
    "OWNER",
    "PIECE",
    "REVEALED",
    "SCOUT",
    "SPY",
    "SQUARES",
    "STEPS",
    "STRIDE",
    "VALUES",
    "WALL",
    "ZOBRIST",
    "boundaries",
    "cell",
    "square_name",
]

FILES = "abcdefghij"
STRIDE = 12
STEPS: tuple[int, int, int, int] = (-STRIDE, -1, 1, STRIDE)
"""Orthogonal steps in legal order: file - 1, rank - 1, rank + 1, file + 1."""

EMPTY = 0
WALL = -1
OWNER = 16
REVEALED = 32
MOVED = 64
PIECE = 31
"""Mask of the bits that say which piece stands there (kind and owner)."""

# Kinds are numbered by strength, so a battle between ordinary pieces is a comparison.
FLAG, SPY, SCOUT, MINER = 0, 1, 2, 3
MARSHAL, BOMB = 10, 11
CODES = "FS23456789XB"
"""The one-letter code of each kind, indexed by kind."""
NAMES = (
    "Flag",
    "Spy",
    "Scout",
    "Miner",
    "Sergeant",
    "Lieutenant",
    "Captain",
    "Major",
    "Colonel",
    "General",
    "Marshal",
    "Bomb",
)
COUNTS: dict[str, int] = {
    "F": 1,
    "B": 6,
    "S": 1,
    "2": 8,
    "3": 5,
    "4": 4,
    "5": 4,
    "6": 4,
    "7": 3,
    "8": 2,
    "9": 1,
    "X": 1,
}
"""How many of each piece a side sets up (40 in all), in the order setups list them."""
VALUES: tuple[int, ...] = (1000, 100, 10, 25, 15, 20, 30, 45, 70, 110, 170, 20)
"""The standing value of each kind, indexed by kind."""


def cell(file: int, rank: int) -> int:
    """The mailbox cell of the square on `file` (0 = a) and `rank` (0 = rank 1)."""
    return (file + 1) * STRIDE + rank + 1


def square_name(sq: int) -> str:
    """`e4` for the cell of e4."""
    return f"{FILES[sq // STRIDE - 1]}{sq % STRIDE}"


LAKES: frozenset[int] = frozenset(cell(f, r) for f in (2, 3, 6, 7) for r in (4, 5))
SQUARES: tuple[int, ...] = tuple(
    cell(f, r) for f in range(10) for r in range(10) if cell(f, r) not in LAKES
)
"""The 92 squares a piece can stand on, in (file, rank) order."""
BLANK: tuple[int, ...] = tuple(EMPTY if sq in SQUARES else WALL for sq in range(STRIDE * STRIDE))
"""The empty board: every playable square EMPTY, border and lakes WALL."""


def _battle(attacker: int, defender: int) -> int:
    if defender == BOMB:
        return 1 if attacker == MINER else -1
    if defender == FLAG or (attacker == SPY and defender == MARSHAL):
        return 1
    return (attacker > defender) - (attacker < defender)


BATTLE: tuple[tuple[int, ...], ...] = tuple(
    tuple(_battle(a, d) for d in range(12)) for a in range(12)
)
"""BATTLE[attacker kind][defender kind]: 1 the attacker wins, -1 it loses, 0 both die."""


def boundaries(a: int, b: int) -> int:
    """The square boundaries a straight move from `a` to `b` crosses, as a bit mask.

    The boundary between neighbours x < y is bit `2x` along a file and bit
    `2x + 1` along a rank; a Scout crosses every boundary it passes (seed).
    """
    step = STRIDE if abs(b - a) >= STRIDE else 1
    low, high = min(a, b), max(a, b)
    bit = 1 if step == STRIDE else 0
    return sum(1 << (2 * x + bit) for x in range(low, high, step))


def _line_moves() -> dict[str, int]:
    moves: dict[str, int] = {}
    for a in SQUARES:
        for step in STEPS:
            b = a + step
            while BLANK[b] == EMPTY:
                moves[f"{square_name(a)}-{square_name(b)}"] = a << 8 | b
                b += step
    return moves


MOVE_OF: dict[str, int] = _line_moves()
"""Canonical name -> move code `from << 8 | to`, for every straight move on the board."""
MOVE_NAMES: list[str] = [""] * (STRIDE * STRIDE << 8)
for _name, _code in MOVE_OF.items():
    MOVE_NAMES[_code] = _name
BOUNDARIES: dict[int, int] = {code: boundaries(code >> 8, code & 255) for code in MOVE_OF.values()}
"""Move code -> the boundaries it crosses."""

_ZOBRIST_SEED = 0x5EED_57A7E60
# One 64-bit key per (piece, cell); a fixed seed so keys are the same on every machine.
_rng = random.Random(_ZOBRIST_SEED)
ZOBRIST: tuple[tuple[int, ...], ...] = tuple(
    tuple(_rng.getrandbits(64) for _ in range(STRIDE * STRIDE)) for _ in range(PIECE + 1)
)
"""ZOBRIST[cell value & PIECE][square]: the placement key of that piece there."""
