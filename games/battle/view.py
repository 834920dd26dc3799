"""What a commander sees: every squad on the field and a map, as JSON-able data.

The battle hides nothing, so a seat's view differs from the
other's only in which army is "own" and in showing own orders. Coordinates
are 1-based `(x, y)`, `(1, 1)` the bottom-left cell.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from games.battle.layout import SQUADS
from games.battle.notation import squad_prefix
from games.battle.state import BattleState

__all__ = ["ENEMY_MARKS", "OWN_MARKS", "build_view"]

OWN_MARKS = "123456789"
"""Map characters of one's own squads 1..9."""
ENEMY_MARKS = "abcdefghi"
"""Map characters of the enemy's squads 1..9."""
_SIDES = ("red", "blue")
_SPAWNS = ("left", "right")


def build_view(s: BattleState, seat: int, turn_ticks: int, max_ticks: int) -> dict[str, Any]:
    """Seat `seat`'s view of `s` (see `Battle.view`)."""
    own, enemy = squad_prefix(s.game, seat), squad_prefix(s.game, 1 - seat)
    size = s.layout.map_size
    turns = -(-max_ticks // turn_ticks)
    return {
        "game": s.game,
        "tick": s.tick,
        "max_ticks": max_ticks,
        "turn": min(s.tick // turn_ticks + 1, turns),
        "turns": turns,
        "turn_ticks": turn_ticks,
        "map_size": size,
        "alias": "Alpha" if own == "A" else "Bravo",
        "squad_letter": own,
        "enemy_letter": enemy,
        "side": _SIDES[seat],
        "spawn": _SPAWNS[seat],
        "back_edge_x": s.layout.back_x(seat) + 1,
        "own": {"alive": s.survivors(seat), "hp": s.total_hp(seat)},
        "enemy": {"alive": s.survivors(1 - seat), "hp": s.total_hp(1 - seat)},
        "own_squads": _squads(s, seat, own, with_orders=True),
        "enemy_squads": _squads(s, 1 - seat, enemy, with_orders=False),
        "map": _map(s, seat),
        "legend": (
            f"rows from y={size} (top) to y=1, columns x=1..{size}; "
            f"1-9: your squads {own}1-{own}9; a-i: enemy squads {enemy}1-{enemy}9; .: empty"
        ),
    }


def _squads(s: BattleState, side: int, letter: str, *, with_orders: bool) -> list[dict[str, Any]]:
    """One summary per squad of `side`: living count, hp, centroid and box (None when gone)."""
    living = s.hp > 0
    rows: list[dict[str, Any]] = []
    for k in range(SQUADS):
        members = np.flatnonzero(living & (s.layout.group == side * SQUADS + k))
        row: dict[str, Any] = {"name": f"{letter}{k + 1}", "alive": len(members)}
        if len(members):
            xs, ys = s.x[members], s.y[members]
            row["hp"] = int(s.hp[members].sum())
            row["centroid"] = [int(xs.sum()) // len(xs) + 1, int(ys.sum()) // len(ys) + 1]
            row["box"] = [
                [int(xs.min()) + 1, int(ys.min()) + 1],
                [int(xs.max()) + 1, int(ys.max()) + 1],
            ]
        else:
            row.update(hp=0, centroid=None, box=None)
        if with_orders:
            row["order"] = s.orders[side][k].to_json()
        rows.append(row)
    return rows


def _map(s: BattleState, seat: int) -> list[str]:
    """The whole board, one string per row from the top row down."""
    size = s.layout.map_size
    cells = np.full((size, size), ".", dtype="<U1")  # [y, x]
    living = np.flatnonzero(s.hp > 0)
    own = s.layout.side[living] == seat
    marks = np.where(
        own,
        np.array(list(OWN_MARKS))[s.layout.squad[living]],
        np.array(list(ENEMY_MARKS))[s.layout.squad[living]],
    )
    cells[s.y[living], s.x[living]] = marks
    return ["".join(row) for row in cells[::-1]]
