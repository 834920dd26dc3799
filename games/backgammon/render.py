"""Backgammon's board as plain text for prompts, drawn from a view alone (`Backgammon.view`)."""

from __future__ import annotations

from typing import Any

__all__ = ["board_text"]

_WIDTH = 4


def _cell(point: dict[str, int]) -> str:
    if point["you"]:
        text = f"X{point['you']}"
    elif point["opponent"]:
        text = f"O{point['opponent']}"
    else:
        text = "."
    return text.rjust(_WIDTH)


def _row(cells: list[str]) -> str:
    return "".join(cells[:6]) + " |" + "".join(cells[6:])


def _dice_line(view: dict[str, Any]) -> str:
    dice: list[int] = view["dice"]
    if not dice:
        return "Dice: none (the game is over)"
    text = f"Dice: {dice[0]}-{dice[1]}"
    if view["four_moves"]:
        text += f" (doubles: four moves of {dice[0]})"
    if not view["your_turn"]:
        text += f", {view['to_move']} to move"
    return text


def board_text(view: dict[str, Any]) -> str:
    """The board from the viewer's side: 13-24 along the top, 12-1 along the bottom.

    ```
    You are BLACK (X); the opponent is O. You move from 24 toward 1 and bear off from 1-6.
           13  14  15  16  17  18 |  19  20  21  22  23  24
           X5   .   .   .  O3   . |  O5   .   .   .   .  X2
           O5   .   .   .  X3   . |  X5   .   .   .   .  O2
           12  11  10   9   8   7 |   6   5   4   3   2   1
    Bar: X 0, O 0. Off: X 0, O 0. Pips: X 167, O 167.
    Dice: 3-1
    ```
    """
    by_point = {entry["point"]: entry for entry in view["board"]}
    top, bottom = range(13, 25), range(12, 0, -1)
    bar, off, pips = view["bar"], view["off"], view["pips"]
    margin = " " * 5
    lines = [
        f"You are {view['you']} (X); the opponent is O. "
        "You move from 24 toward 1 and bear off from 1-6.",
        margin + _row([str(p).rjust(_WIDTH) for p in top]),
        margin + _row([_cell(by_point[p]) for p in top]),
        margin + _row([_cell(by_point[p]) for p in bottom]),
        margin + _row([str(p).rjust(_WIDTH) for p in bottom]),
        f"Bar: X {bar['you']}, O {bar['opponent']}. Off: X {off['you']}, O {off['opponent']}. "
        f"Pips: X {pips['you']}, O {pips['opponent']}.",
        _dice_line(view),
    ]
    return "\n".join(lines)
