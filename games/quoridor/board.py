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
indices are the legal (anchor file, anchor rank, h before v) order.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = [
    "ANCHORS",
    "BLOCKS",
    "CELLS",
    "DOWN",
    "GOAL_RANKS",
    "LEFT",
    "PERPENDICULAR",
    "POINTS",
    "RIGHT",
    "RIGHT_STEPS",
    "SIZE",
    "STEPS",
    "UNREACHABLE",
    "UP",
    "UP_STEPS",
    "WALL_COUNT",
    "Step",
    "closes_loop",
    "components",
    "reaches",
    "route",
    "set_bits",
]

SIZE = 9
"""Files and ranks of the board."""

ANCHORS = SIZE - 1
"""Wall anchors per file and per rank (a..h, 1..8)."""

CELLS = SIZE * SIZE
WALL_COUNT = 2 * ANCHORS * ANCHORS

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

_BORDER = ANCHORS * ANCHORS
"""The lattice node standing for the whole board edge (one connected piece)."""


def _points_of(wall: int) -> tuple[int, int, int]:
    """The lattice points a wall runs through: one end, its anchor, the other end."""
    anchor = wall >> 1
    x, n = divmod(anchor, ANCHORS)
    ends = ((x - 1, n), (x + 1, n)) if wall & 1 == 0 else ((x, n - 1), (x, n + 1))
    a, b = (p * ANCHORS + q if 0 <= p < ANCHORS and 0 <= q < ANCHORS else _BORDER for p, q in ends)
    return a, anchor, b


POINTS: tuple[tuple[int, int, int], ...] = tuple(_points_of(w) for w in range(WALL_COUNT))
"""Per wall, its three lattice points (anchors; the board edge is one node)."""


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


@lru_cache(maxsize=1 << 14)
def route(cell: int, seat: int, up_blocked: int, right_blocked: int) -> tuple[int, int, int]:
    """One shortest path of `seat`'s pawn from `cell` to its goal rank, pawns ignored.

    Returns (distance in steps, the path's vertical steps, its horizontal steps);
    (UNREACHABLE, 0, 0) if there is none. Cached: standing, wall legality and
    the tactician ask for the same few routes many times.
    """
    up_open = UP_STEPS & ~up_blocked
    right_open = RIGHT_STEPS & ~right_blocked
    goal = GOAL_RANKS[seat]
    seen = frontier = 1 << cell
    layers = [frontier]
    while not frontier & goal:
        grown = (
            ((frontier & up_open) << 1)
            | ((frontier >> 1) & up_open)
            | ((frontier & right_open) << SIZE)
            | ((frontier >> SIZE) & right_open)
        )
        frontier = grown & ~seen
        if not frontier:
            return UNREACHABLE, 0, 0
        seen |= frontier
        layers.append(frontier)
    end = frontier & goal
    path_up, path_right = _trace_back(layers, (end & -end).bit_length() - 1, up_open, right_open)
    return len(layers) - 1, path_up, path_right


def _trace_back(layers: list[int], cell: int, up_open: int, right_open: int) -> tuple[int, int]:
    """Walk from `cell` in the last BFS layer back to the first; the steps taken."""
    path_up = path_right = 0
    for layer in reversed(layers[:-1]):
        if cell % SIZE and (layer & up_open) >> (cell - 1) & 1:
            cell -= 1
            path_up |= 1 << cell
        elif (layer >> (cell + 1)) & (up_open >> cell) & 1:
            path_up |= 1 << cell
            cell += 1
        elif cell >= SIZE and (layer & right_open) >> (cell - SIZE) & 1:
            cell -= SIZE
            path_right |= 1 << cell
        else:  # the BFS guarantees the last neighbour is the one
            path_right |= 1 << cell
            cell += SIZE
    return path_up, path_right


@lru_cache(maxsize=1 << 12)
def components(walls: int) -> tuple[int, ...]:
    """A component label per lattice point of the graph the placed `walls` draw.

    The board edge counts as one node. A new wall splits a region of the
    board (and so may cut a pawn off) only if two of its three points are
    already connected here: that is the planar dual of "removing these steps
    disconnects the cells", and it rules out most candidates without a search.
    """
    parent = list(range(_BORDER + 1))

    def find(p: int) -> int:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for wall in set_bits(walls):
        a, b, c = POINTS[wall]
        parent[find(a)] = find(b)
        parent[find(c)] = find(b)
    return tuple(find(p) for p in range(_BORDER + 1))


def set_bits(mask: int) -> list[int]:
    """The indices of the bits set in `mask`, ascending (cells or walls of a mask)."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


def closes_loop(wall: int, labels: tuple[int, ...]) -> bool:
    """Whether `wall` joins two lattice points already connected in `labels`."""
    a, b, c = POINTS[wall]
    la, lb, lc = labels[a], labels[b], labels[c]
    return la in (lb, lc) or lb == lc
