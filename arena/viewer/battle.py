"""The soldiers tick by tick through one command turn, for the viewer.

A replay keeps the orders and the gameHash chain, not the field at every
tick (bulky derived data is recomputed by the tools that need it).
`turn_frames` re-runs the tick engine from the state before a turn with the
orders the state after it holds, and checks every tick against the gameHash
links the real `apply` produced, so a frame can never drift from the game.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from games.battle.state import BattleState
from games.battle.tick import Field, directive

__all__ = ["TickFrame", "turn_frames"]


@dataclass(frozen=True, slots=True)
class TickFrame:
    """The field after one tick: 0-based `x`, `y` and hp in tenths (0 once dead), by unit id.

    A dead soldier keeps the cell it died on, as the gameHash does.
    """

    tick: int
    x: NDArray[np.int64]
    y: NDArray[np.int64]
    hp: NDArray[np.int64]


def turn_frames(before: BattleState, after: BattleState) -> list[TickFrame]:
    """One frame per tick the turn from `before` to `after` ran (`after` = apply(before, ...)).

    `after.orders` are the nine orders per seat the turn ran under (the
    merged orders `apply` stored), so the orders need not be passed again.
    Raises ValueError when `after` does not follow `before`: a tick whose
    gameHash link differs from the one `after` recorded.
    """
    if after.layout != before.layout or after.game != before.game:
        raise ValueError("the two states belong to different games")
    if after.turn != before.turn + 1 or len(after.chain) != after.tick - before.tick:
        raise ValueError(
            f"state at tick {after.tick} (turn {after.turn}) is not one command turn after "
            f"tick {before.tick} (turn {before.turn})"
        )
    directives = [directive(o) for o in (*after.orders[0], *after.orders[1])]
    field = Field(before.layout, before.x, before.y, before.hp, directives, before.digest)
    frames = []
    for offset, expected in enumerate(after.chain):
        link = field.step()
        tick = before.tick + offset + 1
        if link != expected:
            raise ValueError(
                f"tick {tick}: re-run gameHash {link[:12]}... differs from the recorded "
                f"{expected[:12]}...; the states do not follow each other"
            )
        frames.append(TickFrame(tick, field.x.copy(), field.y.copy(), field.hp.copy()))
    return frames
