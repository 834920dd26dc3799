"""Who stands where at spawn, and which squad each soldier belongs to.

The rules fix the arithmetic (the upstream battle map's): with
`W = H = map_size`, `init = map_size * map_size * 0.04`,
`side = int(sqrt(init)) * 2` and `gap = 3`, the left (red) army fills
`X in range(W//2 - gap - side, W//2 - gap, 2)` and the right (blue) army
`X in range(W//2 + gap, W//2 + gap + side, 2)`, both over
`Y in range((H - side)//2, (H - side)//2 + side, 2)`, x-major, keeping only
`0 < X < W-1` and `0 < Y < H-1`; the right army is cut to the left army's
count. Coordinates here are the internal 0-based `X`, `Y` (y grows upward).

Unit ids: the red army in spawn order, then the blue army. Squads: each army
sorted by (distance from its own back edge, Y, id) and cut into nine
contiguous groups, the earlier (rearmost) squads taking the extra soldiers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_MAP", "MIN_MAP", "SQUADS", "Layout", "spawn_cells"]

SQUADS = 9
"""Squads per army."""
MIN_MAP = 20
"""The smallest map whose spawn gives every one of the nine squads a soldier."""
MAX_MAP = 255
"""The largest map whose coordinates fit the hash's one-byte X and Y."""

_GAP = 3


def spawn_cells(map_size: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The red (left) and blue (right) spawn cells, 0-based, in spawn order."""
    size = map_size
    side = int(math.sqrt(map_size * map_size * 0.04)) * 2
    rows = range((size - side) // 2, (size - side) // 2 + side, 2)
    left_xs = range(size // 2 - _GAP - side, size // 2 - _GAP, 2)
    right_xs = range(size // 2 + _GAP, size // 2 + _GAP + side, 2)

    def army(xs: range) -> list[tuple[int, int]]:
        return [(x, y) for x in xs for y in rows if 0 < x < size - 1 and 0 < y < size - 1]

    left = army(left_xs)
    return left, army(right_xs)[: len(left)]


def _squad_sizes(count: int) -> list[int]:
    base, extra = divmod(count, SQUADS)
    return [base + (1 if k < extra else 0) for k in range(SQUADS)]


@dataclass(frozen=True, eq=False)
class Layout:
    """The fixed facts of one game's soldiers: map size, sides and squads; compared by value.

    `side[i]` is 0 for red (left, seat 0) and 1 for blue; `squad[i]` is the
    soldier's squad within its army, 0..8 (shown as 1..9), and `group[i]`
    its squad across both armies, `side * 9 + squad` (0..17). Arrays are
    read-only and shared by every state of the game.
    """

    map_size: int
    side: NDArray[np.int64]
    squad: NDArray[np.int64]
    group: NDArray[np.int64]

    @classmethod
    def build(
        cls,
        map_size: int,
        cells: Sequence[tuple[int, int]],
        sides: Sequence[int],
        squads: Sequence[int | None],
    ) -> Layout:
        """A layout for soldiers on 0-based `cells`; a None squad is assigned by the rule."""
        side = np.array(sides, dtype=np.int64)
        squad = np.array([-1 if k is None else k for k in squads], dtype=np.int64)
        for army in (0, 1):
            members = [i for i in range(len(cells)) if sides[i] == army and squads[i] is None]
            back = 0 if army == 0 else map_size - 1
            members.sort(key=lambda i: (abs(cells[i][0] - back), cells[i][1], i))
            start = 0
            for k, size in enumerate(_squad_sizes(len(members))):
                squad[members[start : start + size]] = k
                start += size
        group = side * SQUADS + squad
        for array in (side, squad, group):
            array.setflags(write=False)
        return cls(map_size, side, squad, group)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self.map_size == other.map_size and all(
            np.array_equal(a, b) for a, b in ((self.side, other.side), (self.squad, other.squad))
        )

    def __hash__(self) -> int:
        return hash((self.map_size, self.side.tobytes(), self.squad.tobytes()))

    @property
    def count(self) -> int:
        """Soldiers in the game, both armies, dead or alive."""
        return len(self.side)

    def back_x(self, side: int) -> int:
        """The 0-based X of an army's own back edge."""
        return 0 if side == 0 else self.map_size - 1
