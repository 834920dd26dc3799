"""The battle's scripted commanders: `pincer` (the game's baseline), `flank` and random orders.

Each reads the position only (nothing on the field is hidden) and orders every
living squad of its army with canonical `SquadOrder`s the orders reader takes
as they are: verbs of `VERBS`, cells on the board, enemies among the living
enemy squads. Cells are computed in the internal 0-based coordinates and
written 1-based.

- `pincer`: squads 1-3 to 4 above the enemy's topmost soldier, 7-9 to 4 below
  its lowest, 4-6 to its centroid, all at the enemy centroid's x; all may attack.
- `flank`: refuses the centre and turns the enemy's weaker wing: the half of
  the enemy army, above or below its centroid's y, whose soldiers hold less hp
  (ties: above). The wing row is 2 beyond the enemy's outermost soldier on that
  side. Squads 1-5 (the rear, which the front would block) first move straight
  out toward the board's edge on that side, at their own x, until their lead
  soldier reaches the wing row; then they move along it to 4 cells behind the
  enemy centroid (toward the enemy's back edge), attacking on the way. Squads
  6-9 (the front) hold, so the enemy meets a standing line, and advance from
  tick 100 on.
- `random_orders`: each squad named gets a verb drawn uniformly, an `attack`
  a uniformly drawn enemy squad, a `move` a uniformly drawn cell of the board.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from games.battle.layout import SQUADS
from games.battle.notation import VERBS, SquadOrder, squad_prefix
from games.battle.state import BattleState

__all__ = [
    "FLANK_BEHIND",
    "FLANK_HOLD_TICKS",
    "FLANK_REACH",
    "FLANK_WING",
    "PINCER_REACH",
    "flank",
    "pincer",
    "random_orders",
]

PINCER_REACH = 4
"""How far above the enemy's top (and below its bottom) pincer's wings aim."""
FLANK_WING = 5
"""flank's squads 1..FLANK_WING turn the wing; the others hold the centre."""
FLANK_REACH = 2
"""How far beyond the enemy's outermost soldier on the wing flank's wing row lies."""
FLANK_BEHIND = 4
"""How far behind the enemy centroid, toward the enemy's back edge, flank's wing aims."""
FLANK_HOLD_TICKS = 100
"""The tick from which flank's centre advances instead of holding."""


@dataclass(frozen=True, slots=True)
class _Enemy:
    """The living enemy army of a seat: its soldiers' cells and hp, and its integer centroid
    (0-based)."""

    xs: NDArray[np.int64]
    ys: NDArray[np.int64]
    hp: NDArray[np.int64]
    cx: int
    cy: int

    @classmethod
    def of(cls, s: BattleState, seat: int) -> _Enemy:
        units = np.flatnonzero(s.alive() & (s.layout.side == 1 - seat))
        xs, ys = s.x[units], s.y[units]
        return cls(xs, ys, s.hp[units], int(xs.sum()) // len(units), int(ys.sum()) // len(units))


def pincer(s: BattleState, seat: int, map_size: int) -> tuple[SquadOrder, ...]:
    """The pincer orders of `seat`'s living squads (module docstring), clamped to the board."""
    enemy = _Enemy.of(s, seat)
    top = min(int(enemy.ys.max()) + PINCER_REACH, map_size - 1)
    bottom = max(int(enemy.ys.min()) - PINCER_REACH, 0)
    rows = (top, top, top, enemy.cy, enemy.cy, enemy.cy, bottom, bottom, bottom)
    prefix = squad_prefix(s.game, seat)
    return tuple(
        SquadOrder(f"{prefix}{k}", "move", to=(enemy.cx + 1, rows[k - 1] + 1))
        for k in sorted(s.living_squads(seat))
    )


def flank(s: BattleState, seat: int, map_size: int) -> tuple[SquadOrder, ...]:
    """The flank orders of `seat`'s living squads (module docstring)."""
    enemy = _Enemy.of(s, seat)
    above = int(enemy.hp[enemy.ys > enemy.cy].sum()) <= int(enemy.hp[enemy.ys < enemy.cy].sum())
    if above:
        row, edge = min(int(enemy.ys.max()) + FLANK_REACH, map_size - 1), map_size - 1
    else:
        row, edge = max(int(enemy.ys.min()) - FLANK_REACH, 0), 0
    behind = 1 if seat == 0 else -1  # seat 0 is red: the enemy's back edge is the right one
    wing_x = min(max(enemy.cx + behind * FLANK_BEHIND, 0), map_size - 1)
    centre = "advance" if s.tick >= FLANK_HOLD_TICKS else "hold"
    prefix = squad_prefix(s.game, seat)
    alive = s.alive()
    orders = []
    for k in sorted(s.living_squads(seat)):
        if k > FLANK_WING:
            orders.append(SquadOrder(f"{prefix}{k}", centre))
            continue
        units = np.flatnonzero(alive & (s.layout.group == seat * SQUADS + k - 1))
        ys = s.y[units]
        out = int(ys.max()) >= row if above else int(ys.min()) <= row
        x = wing_x if out else int(s.x[units].sum()) // len(units)
        orders.append(SquadOrder(f"{prefix}{k}", "move", to=(x + 1, (row if out else edge) + 1)))
    return tuple(orders)


def random_orders(
    own: Sequence[str], enemy: Sequence[str], map_size: int, rng: random.Random
) -> tuple[SquadOrder, ...]:
    """An order for each squad of `own` drawn with `rng` (module docstring); `enemy` names the
    squads an `attack` may pick (none: no `attack` is drawn)."""
    verbs = VERBS if enemy else tuple(v for v in VERBS if v != "attack")
    orders = []
    for squad in own:
        do = rng.choice(verbs)
        if do == "attack":
            orders.append(SquadOrder(squad, do, enemy=rng.choice(enemy)))
        elif do == "move":
            orders.append(
                SquadOrder(squad, do, to=(rng.randint(1, map_size), rng.randint(1, map_size)))
            )
        else:
            orders.append(SquadOrder(squad, do))
    return tuple(orders)
