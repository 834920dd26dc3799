"""Quoridor's board as Python-int bitboards: cells, steps, wall anchors, paths.

Geometry only; the rules that use it live in `games.quoridor.rules`.

Cell (file f, rank r), both from 0, is bit `f * 9 + r`, so ascending cell
indices are the legal (file, rank) order. A step between two orthogonal
neighbours is named by its lower cell: the vertical step (f, r)<->(f, r + 1)
is bit `f * 9 + r` of an "up" mask, the horizontal step (f, r)<->(f + 1, r)
is bit `f * 9 + r` of a "right" mask. A position's walls reduce to two masks
of blocked steps, so a flood fill over the board is a handful of shifts per
layer.

A wall anchor (x, n), both from 0 and below 8, is anchor `x * 8 + n`; wall
`2 * anchor + o` (o = 0 for `h`, 1 for `v`) is its index, so ascending wall
indices are the legal (anchor file, anchor rank, h before v) order. A
wall's first step is the one at its anchor's cell (x, n), its second the one
at (x + 1, n) for `h` and at (x, n + 1) for `v`.

What the placed walls leave for the next move, the walls that still fit and
those that could part the board, is `games.quoridor.fence`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "ADJACENT",
    "ALL_WALLS",
    "ANCHORS",
    "BLOCKS",
    "CELLS",
    "CLOSES",
    "CONFLICTS",
    "DOWN",
    "GOAL_RANKS",
    "LEFT",
    "OPEN_NEIGHBOURS",
    "PERPENDICULAR",
    "RIGHT",
    "RIGHT_STEPS",
    "SIZE",
    "STEPS",
    "UNREACHABLE",
    "UP",
    "UP_STEPS",
    "WALL_COUNT",
    "Route",
    "Step",
    "reaches",
    "reaches_goal",
    "route",
    "set_bits",
]

SIZE = 9
"""Files and ranks of the board."""

ANCHORS = SIZE - 1
"""Wall anchors per file and per rank (a..h, 1..8)."""

CELLS = SIZE * SIZE
WALL_COUNT = 2 * ANCHORS * ANCHORS
ALL_WALLS = (1 << WALL_COUNT) - 1
"""The mask of every wall index."""

_ALL_CELLS = (1 << CELLS) - 1

UP_STEPS = sum(1 << (f * SIZE + r) for f in range(SIZE) for r in range(SIZE - 1))
"""Cells that have a neighbour above them (every rank but the top)."""

RIGHT_STEPS = sum(1 << (f * SIZE + r) for f in range(SIZE - 1) for r in range(SIZE))
"""Cells that have a neighbour to their right (every file but the last)."""

GOAL_RANKS: tuple[int, int] = (
    sum(1 << (f * SIZE + SIZE - 1) for f in range(SIZE)),
    sum(1 << (f * SIZE) for f in range(SIZE)),
)
"""Per seat, the mask of its goal rank: seat 0 rank 9, seat 1 rank 1."""

UNREACHABLE = 99
"""The distance reported when no path exists (never in a legal position)."""

Step = tuple[int, bool, int]
"""A step from a cell: (neighbour cell, is vertical, its bit in the up/right mask)."""

UP, DOWN, RIGHT, LEFT = 0, 1, 2, 3
PERPENDICULAR: tuple[tuple[int, int], ...] = ((RIGHT, LEFT), (RIGHT, LEFT), (UP, DOWN), (UP, DOWN))


def _steps_of(cell: int) -> tuple[Step | None, ...]:
    """The four steps out of `cell` in UP, DOWN, RIGHT, LEFT order, None off the board."""
    f, r = divmod(cell, SIZE)
    return (
        (cell + 1, True, 1 << cell) if r < SIZE - 1 else None,
        (cell - 1, True, 1 << (cell - 1)) if r > 0 else None,
        (cell + SIZE, False, 1 << cell) if f < SIZE - 1 else None,
        (cell - SIZE, False, 1 << (cell - SIZE)) if f > 0 else None,
    )


STEPS: tuple[tuple[Step | None, ...], ...] = tuple(_steps_of(c) for c in range(CELLS))
"""Per cell, its steps in UP, DOWN, RIGHT, LEFT order (None off the board)."""


def _blocked_by(wall: int) -> int:
    """The two steps wall `wall` blocks, as a mask of the up (h) or right (v) steps."""
    x, n = divmod(wall >> 1, ANCHORS)
    if wall & 1 == 0:  # h: (x,n)<->(x,n+1) and (x+1,n)<->(x+1,n+1)
        return (1 << (x * SIZE + n)) | (1 << ((x + 1) * SIZE + n))
    return (1 << (x * SIZE + n)) | (1 << (x * SIZE + n + 1))  # v: (x,n)<->(x+1,n), rank n+1 too


BLOCKS: tuple[int, ...] = tuple(_blocked_by(w) for w in range(WALL_COUNT))
"""Per wall, the steps it blocks (in the up mask for h walls, the right mask for v)."""


def _conflicts_of(wall: int) -> int:
    """The walls that cannot stand with `wall`: both walls on its anchor (they would
    cross or coincide) and the walls of its orientation that overlap it by a step."""
    anchor, vertical = wall >> 1, wall & 1
    conflicts = 3 << (2 * anchor)
    for other in range(vertical, WALL_COUNT, 2):
        if BLOCKS[other] & BLOCKS[wall]:
            conflicts |= 1 << other
    return conflicts


CONFLICTS: tuple[int, ...] = tuple(_conflicts_of(w) for w in range(WALL_COUNT))
"""Per wall, the mask of walls that, once placed, leave no room for it (and vice versa)."""


def _cutters(up: bool, second: bool) -> tuple[int, ...]:
    """Per cell, the walls whose first (or `second`) step is its step `up` (or right)."""
    found = [0] * CELLS
    for wall in range(0 if up else 1, WALL_COUNT, 2):
        steps = BLOCKS[wall]
        low = steps & -steps
        found[((steps ^ low) if second else low).bit_length() - 1] |= 1 << wall
    return tuple(found)


_FIRST_UP, _SECOND_UP = _cutters(True, False), _cutters(True, True)
_FIRST_RIGHT, _SECOND_RIGHT = _cutters(False, False), _cutters(False, True)

# A cell's closed code says which of its four steps are blocked: bit 0 the
# step left (to cell - 9), 1 down (cell - 1), 2 up (cell + 1), 3 right
# (cell + 9), ascending neighbour order, so pawn moves are table look-ups.
_LEFT_BIT, _DOWN_BIT, _UP_BIT, _RIGHT_BIT = 1, 2, 4, 8


def _closes_of(wall: int) -> tuple[tuple[int, int], ...]:
    """The (cell, closed-code bit) pairs `wall` sets: both ends of both steps it blocks."""
    pairs = []
    for cell in set_bits(BLOCKS[wall]):
        if wall & 1:
            pairs += [(cell, _RIGHT_BIT), (cell + SIZE, _LEFT_BIT)]
        else:
            pairs += [(cell, _UP_BIT), (cell + 1, _DOWN_BIT)]
    return tuple(pairs)


ADJACENT: tuple[int, ...] = tuple(
    sum(1 << s[0] for s in STEPS[c] if s is not None) for c in range(CELLS)
)
"""Per cell, the mask of its orthogonal neighbours."""

OPEN_NEIGHBOURS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(
            n
            for i, n in enumerate((c - SIZE, c - 1, c + 1, c + SIZE))
            if not code >> i & 1 and 0 <= n < CELLS and ADJACENT[c] >> n & 1
        )
        for code in range(16)
    )
    for c in range(CELLS)
)
"""Per cell and closed code, the neighbours one open step away, ascending."""


def reaches(cell: int, goal: int, up_blocked: int, right_blocked: int) -> bool:
    """Whether a pawn on `cell` has a path to `goal` (a mask) over open steps."""
    up_open = UP_STEPS & ~up_blocked
    right_open = RIGHT_STEPS & ~right_blocked
    seen = 1 << cell
    while not seen & goal:
        grown = (
            seen
            | ((seen & up_open) << 1)
            | ((seen >> 1) & up_open)
            | ((seen & right_open) << SIZE)
            | ((seen >> SIZE) & right_open)
        )
        if grown == seen:
            return False
        seen = grown
    return True


def reaches_goal(cell: int, seat: int, up_blocked: int, right_blocked: int) -> bool:
    """`reaches(cell, GOAL_RANKS[seat], ...)` in fewer layers, for the hot path.

    It floods upward, seat 0 from the pawn to rank 9 and seat 1 from rank 1
    to the pawn, and climbs every open run of a file in one layer: adding the
    seen cells that can step up to the open up-steps carries through each run
    to its top, and the bits the carry flipped are the cells it climbed.
    """
    up_open = UP_STEPS & ~up_blocked
    right_open = RIGHT_STEPS & ~right_blocked
    seen, target = (1 << cell, GOAL_RANKS[0]) if seat == 0 else (GOAL_RANKS[1], 1 << cell)
    while not seen & target:
        climbed = seen | (((seen & up_open) + up_open) ^ up_open)
        grown = (
            climbed
            | ((climbed >> 1) & up_open)
            | ((climbed & right_open) << SIZE)
            | ((climbed >> SIZE) & right_open)
        )
        if grown == seen:
            return False
        seen = grown
    return True


class Route(NamedTuple):
    """One shortest path to a goal rank: its length, its steps, the walls that cut it.

    `up_steps` and `right_steps` name the path's steps as the up/right masks
    do; `first_cuts` (`second_cuts`) has bit i set for every wall i whose
    first (second) step is one of them. A wall in neither leaves this path
    open, so it cannot cut the pawn off.
    """

    dist: int
    up_steps: int
    right_steps: int
    first_cuts: int
    second_cuts: int


_NO_ROUTE = Route(UNREACHABLE, 0, 0, 0, 0)


@lru_cache(maxsize=1 << 14)
def route(cell: int, seat: int, up_blocked: int, right_blocked: int) -> Route:
    """One shortest path of `seat`'s pawn from `cell` to its goal rank, pawns ignored.

    `Route(UNREACHABLE, 0, 0, 0, 0)` if there is none. The path is the BFS's:
    it ends on the lowest of the nearest goal cells and each step back goes
    to the first neighbour, in a fixed order, of the previous layer. A wall
    that blocks none of its steps leaves the route as it was: distances only
    grow, those along it stay, so the search ends on the same cell and walks
    back the same steps; a state keeps its routes from one wall to the next.
    Cached: standing, wall legality and the tactician ask for the same routes.
    """
    up_open = UP_STEPS & ~up_blocked
    right_open = RIGHT_STEPS & ~right_blocked
    goal = GOAL_RANKS[seat]
    frontier = 1 << cell
    unseen = _ALL_CELLS ^ frontier
    layers = [frontier]
    while not frontier & goal:
        grown = (
            ((frontier & up_open) << 1)
            | ((frontier >> 1) & up_open)
            | ((frontier & right_open) << SIZE)
            | ((frontier >> SIZE) & right_open)
        )
        frontier = grown & unseen
        if not frontier:
            return _NO_ROUTE
        unseen ^= frontier
        layers.append(frontier)
    end = frontier & goal
    return _trace_back(layers, (end & -end).bit_length() - 1, up_open, right_open)


def _trace_back(layers: list[int], cell: int, up_open: int, right_open: int) -> Route:
    """Walk from `cell` in the last BFS layer back to the first; the route walked."""
    path_up = path_right = first = second = 0
    for layer in reversed(layers[:-1]):
        if cell % SIZE and (layer & up_open) >> (cell - 1) & 1:
            cell -= 1
            path_up |= 1 << cell
            first |= _FIRST_UP[cell]
            second |= _SECOND_UP[cell]
        elif (layer >> (cell + 1)) & (up_open >> cell) & 1:
            path_up |= 1 << cell
            first |= _FIRST_UP[cell]
            second |= _SECOND_UP[cell]
            cell += 1
        elif cell >= SIZE and (layer & right_open) >> (cell - SIZE) & 1:
            cell -= SIZE
            path_right |= 1 << cell
            first |= _FIRST_RIGHT[cell]
            second |= _SECOND_RIGHT[cell]
        else:  # the BFS guarantees the last neighbour is the one
            path_right |= 1 << cell
            first |= _FIRST_RIGHT[cell]
            second |= _SECOND_RIGHT[cell]
            cell += SIZE
    return Route(len(layers) - 1, path_up, path_right, first, second)


def set_bits(mask: int) -> list[int]:
    """The indices of the bits set in `mask`, ascending (cells or walls of a mask)."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


CLOSES: tuple[tuple[tuple[int, int], ...], ...] = tuple(_closes_of(w) for w in range(WALL_COUNT))
"""Per wall, the (cell, closed-code bit) pairs it sets: both cells of both its steps."""
