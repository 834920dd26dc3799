"""What quoridor's placed walls leave for the next move, kept up to date per wall.

The walls draw a graph on the lattice of anchor points (point (x, n) is the
top-right corner of cell (x, n)), the whole board edge one more node of it.
A wall runs through three points, its first end (left of or below the
anchor), the anchor and its second end, as two segments: the first crosses
the wall's first step (`board`), the second its second step.

Why it helps: by planar duality, a blocked step parts its two cells (no path
joins them any more) exactly when its segment lies on a loop of that graph,
the edge node included. A wall whose segments lie on no loop parts nothing;
and a pawn's path that loses only steps whose cells stay joined can be
mended around each. So only a wall with a segment on a loop that crosses the
pawn's path can cut the pawn off, and only such walls need a search.

`Fence` holds the placed walls and the steps they block, the walls that
still fit, the walls each segment of which would lie on a loop, the graph's
pieces, and per cell its closed code (which of its steps are blocked) for
the pawn moves; `fence_after` updates it for one more wall in a few steps.
`allowed_walls` is the wall check: a flood fill for the `suspects` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from games.quoridor.board import (
    ALL_WALLS,
    ANCHORS,
    BLOCKS,
    CELLS,
    CLOSES,
    CONFLICTS,
    WALL_COUNT,
    Route,
    reaches_goal,
    set_bits,
)

__all__ = ["EMPTY_FENCE", "POINTS", "Fence", "allowed_walls", "fence_after", "suspects"]

_EDGE = ANCHORS * ANCHORS
"""The lattice node standing for the whole board edge (one connected piece)."""


def _points_of(wall: int) -> tuple[int, int, int]:
    """The lattice points a wall runs through: its first end, its anchor, its second end."""
    anchor = wall >> 1
    x, n = divmod(anchor, ANCHORS)
    ends = ((x - 1, n), (x + 1, n)) if wall & 1 == 0 else ((x, n - 1), (x, n + 1))
    a, b = (p * ANCHORS + q if 0 <= p < ANCHORS and 0 <= q < ANCHORS else _EDGE for p, q in ends)
    return a, anchor, b


POINTS: tuple[tuple[int, int, int], ...] = tuple(_points_of(w) for w in range(WALL_COUNT))
"""Per wall, its three lattice points (anchor indices; `_EDGE` for the board edge)."""

# A piece is a mask of points "spread" onto the walls' bits: anchor q is bit
# 2q (the bit of its h wall), the edge bit 128, so a piece lines up with the
# wall masks and two shifts say, for every wall at once, where its points lie.
_EDGE_BIT = 1 << WALL_COUNT
_H_WALLS = sum(1 << w for w in range(0, WALL_COUNT, 2))
_V_WALLS = _H_WALLS << 1


def _point_bit(point: int) -> int:
    return _EDGE_BIT if point == _EDGE else 1 << (2 * point)


_POINT_BITS: tuple[int, ...] = tuple(
    sum(_point_bit(p) for p in POINTS[w]) for w in range(WALL_COUNT)
)
"""Per wall, its three points as a piece mask."""


def _walls_where(keep: Callable[[int, int, int], bool]) -> int:
    """The mask of the walls for which `keep(anchor file, anchor rank, is vertical)` holds."""
    return sum(1 << w for w in range(WALL_COUNT) if keep(*divmod(w >> 1, ANCHORS), w & 1))


_FIRST_END_ON_EDGE = _walls_where(lambda x, n, v: (n if v else x) == 0)
_SECOND_END_ON_EDGE = _walls_where(lambda x, n, v: (n if v else x) == ANCHORS - 1)
"""The walls whose first or second end is the board edge."""


class Fence(NamedTuple):
    """The placed walls and what they leave for the next move, kept up to date by
    `fence_after`.

    `walls`: bit i set for each placed wall i. `up_blocked`, `right_blocked`:
    the steps they block, as the up and right masks of `board`. `fitting`:
    the walls no placed wall conflicts with. `loops_first`
    (`loops_second`): the walls whose first (second) segment would lie on a
    loop once placed, so its step would part its two cells; it only grows,
    as pieces only merge. `pieces`: the graph's connected pieces of two or
    more points, sorted, so equal wall sets give equal fences whatever the
    order of placement. `closed`: per cell, its closed code (`board`).
    """

    walls: int
    up_blocked: int
    right_blocked: int
    fitting: int
    loops_first: int
    loops_second: int
    pieces: tuple[int, ...]
    closed: bytes


EMPTY_FENCE = Fence(0, 0, 0, ALL_WALLS, 0, 0, (), bytes(CELLS))
"""The fence of the empty board: no wall, every wall fits, none closes a loop."""


def fence_after(fence: Fence, wall: int) -> Fence:
    """The fence once `wall` stands too: the pieces it touches merge into one.

    A wall gains a segment on a loop only through the merged piece, so the
    loops are the old ones and those the merged piece makes. A wall that
    touches nothing makes a piece of its own three points, and only walls
    that overlap it have two of those: none that can still be placed.
    """
    points = _POINT_BITS[wall]
    merged, pieces = points, []
    for piece in fence.pieces:
        if piece & points:
            merged |= piece
        else:
            pieces.append(piece)
    pieces.append(merged)
    pieces.sort()
    loops_first, loops_second = fence.loops_first, fence.loops_second
    if merged != points or points & _EDGE_BIT:
        first, second = _loops_within(merged)
        loops_first, loops_second = loops_first | first, loops_second | second
    closed = bytearray(fence.closed)
    for cell, bit in CLOSES[wall]:
        closed[cell] |= bit
    up_blocked, right_blocked = fence.up_blocked, fence.right_blocked
    if wall & 1:
        right_blocked |= BLOCKS[wall]
    else:
        up_blocked |= BLOCKS[wall]
    return Fence(
        fence.walls | 1 << wall,
        up_blocked,
        right_blocked,
        fence.fitting & ~CONFLICTS[wall],
        loops_first,
        loops_second,
        tuple(pieces),
        bytes(closed),
    )


def _loops_within(piece: int) -> tuple[int, int]:
    """The walls whose first, and whose second, segment would close a loop in `piece`.

    A segment closes a loop when its two points are joined already, directly
    or through the wall's other segment: first with the anchor or the second
    end, second with the anchor or the first end. For every wall at once:
    the piece's bits say whose anchor is in it, and shifted, whose ends are.
    """
    on = piece & _H_WALLS  # bit 2q: anchor q is in the piece
    edge = ALL_WALLS if piece & _EDGE_BIT else 0
    first_end = (
        (on << 2 * ANCHORS & _H_WALLS & ~_FIRST_END_ON_EDGE)
        | (on << 3 & _V_WALLS & ~_FIRST_END_ON_EDGE)
        | (edge & _FIRST_END_ON_EDGE)
    )
    anchor = on | on << 1
    second_end = (
        (on >> 2 * ANCHORS & ~_SECOND_END_ON_EDGE)
        | (on >> 1 & _V_WALLS & ~_SECOND_END_ON_EDGE)
        | (edge & _SECOND_END_ON_EDGE)
    )
    both_ends = first_end & second_end
    return both_ends | (first_end & anchor), both_ends | (anchor & second_end)


def suspects(fence: Fence, path: Route) -> int:
    """The walls that could cut off the pawn walking `path` (a `board.Route`): a
    segment of theirs would close a loop, and the step it blocks is on the path."""
    return (fence.loops_first & path.first_cuts) | (fence.loops_second & path.second_cuts)


def allowed_walls(fence: Fence, pawns: tuple[int, int], routes: tuple[Route, Route]) -> int:
    """The walls that fit and leave both pawns a path to their goal ranks, as a mask:
    `fitting` less the suspects of either pawn's route that a flood fill finds cut
    it off. `routes` are the pawns' routes (`board.route`) with the placed walls."""
    legal, up_blocked, right_blocked = fence.fitting, fence.up_blocked, fence.right_blocked
    for seat in (0, 1):
        cell = pawns[seat]
        for wall in set_bits(legal & suspects(fence, routes[seat])):
            steps = BLOCKS[wall]
            if wall & 1:
                cut_off = not reaches_goal(cell, seat, up_blocked, right_blocked | steps)
            else:
                cut_off = not reaches_goal(cell, seat, up_blocked | steps, right_blocked)
            if cut_off:
                legal ^= 1 << wall
    return legal
