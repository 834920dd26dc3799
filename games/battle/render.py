"""The battle's view as prompt text, drawn from a view alone.

`board_text` starts with machine-readable lines that scripted seats (the mock
LLM server among them) rely on, one fact per line, exactly::

    MAP SIZE: 45
    YOUR SQUADS: A1 A2 A3 ...     (living squads only)
    ENEMY SQUADS: B1 B2 ...       (living squads only)

followed by the squad tables and the map for a human or a model to read.
`orders_help` is the order schema written for the seat's own squad letters,
for a prompt or a retry.
"""

from __future__ import annotations

from typing import Any

__all__ = ["board_text", "move_help", "orders_help"]


def board_text(view: dict[str, Any]) -> str:
    """The prompt's picture of the field: facts, squad tables, then the map."""
    own_letter, enemy_letter = view["squad_letter"], view["enemy_letter"]
    lines = [
        f"MAP SIZE: {view['map_size']}",
        f"YOUR SQUADS: {_living(view['own_squads'])}",
        f"ENEMY SQUADS: {_living(view['enemy_squads'])}",
        f"TICK: {view['tick']} of {view['max_ticks']} "
        f"(command turn {view['turn']} of {view['turns']}, {view['turn_ticks']} ticks each)",
        f"GAME: {view['game']} of 2",
        f"YOU: {view['alias']}, the {view['side']} army, spawned on the {view['spawn']}; "
        f"your back edge is x = {view['back_edge_x']}",
        f"SOLDIERS: yours {view['own']['alive']} (hp {view['own']['hp']} tenths), "
        f"enemy {view['enemy']['alive']} (hp {view['enemy']['hp']} tenths)",
        "",
        f"Your squads ({own_letter}):",
        *(_squad_line(row) for row in view["own_squads"]),
        "",
        f"Enemy squads ({enemy_letter}):",
        *(_squad_line(row) for row in view["enemy_squads"]),
        "",
        f"Map ({view['legend']}):",
        *_map_lines(view["map"]),
    ]
    return "\n".join(lines)


def orders_help(view: dict[str, Any]) -> str:
    """The orders schema with this seat's squad letters and map size."""
    own, enemy, size = view["squad_letter"], view["enemy_letter"], view["map_size"]
    squad = '"squad": "<your squad>"'
    return "\n".join(
        [
            'Reply with "orders": a JSON list, one object per squad to re-task; <your squad> is '
            f"one of yours ({own}1..{own}9), <enemy squad> one of the enemy's ({enemy}1..{enemy}9):",
            f'  {{{squad}, "do": "advance"}}  - toward the living enemy\'s centroid',
            f'  {{{squad}, "do": "attack", "enemy": "<enemy squad>"}}  - toward that squad\'s centroid',
            f'  {{{squad}, "do": "move", "to": [<x>, <y>]}}  - toward a cell, '
            f"x and y in 1..{size}, (1, 1) bottom-left; attacks on the way",
            f'  {{{squad}, "do": "hold"}}  - stay, attack neighbours',
            f'  {{{squad}, "do": "retreat"}}  - toward your back edge, no attacks',
            "Squads you do not name keep their order; [] keeps every order.",
        ]
    )


def _living(rows: list[dict[str, Any]]) -> str:
    return " ".join(row["name"] for row in rows if row["alive"])


def _squad_line(row: dict[str, Any]) -> str:
    if not row["alive"]:
        return f"  {row['name']}: gone"
    (x0, y0), (x1, y1) = row["box"]
    cx, cy = row["centroid"]
    text = (
        f"  {row['name']}: {row['alive']} alive, hp {row['hp']}, centroid ({cx}, {cy}), "
        f"box ({x0}, {y0})-({x1}, {y1})"
    )
    order = row.get("order")
    if order is None:
        return text
    detail = f" {order['enemy']}" if "enemy" in order else ""
    if "to" in order:
        detail = f" to ({order['to'][0]}, {order['to'][1]})"
    return f"{text}, order: {order['do']}{detail}"


def _map_lines(rows: list[str]) -> list[str]:
    """The map with y labels on the left and an x ruler (every 5th column) below."""
    size = len(rows)
    ruler = "".join(
        str(x // 10 % 10) if x % 5 == 0 and x >= 10 else " " for x in range(1, size + 1)
    )
    units = "".join(str(x % 10) if x % 5 == 0 else " " for x in range(1, size + 1))
    lines = [f"{size - i:>3} {row}" for i, row in enumerate(rows)]
    return [*lines, f"    {ruler}", f"    {units}"]


move_help = orders_help
"""The name the arena looks for: how to write a move, for a retry prompt."""
