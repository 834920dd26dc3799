"""Breakthrough's board as plain text for prompts, drawn from a view alone."""

from __future__ import annotations

from typing import Any

__all__ = ["board_text"]


def board_text(view: dict[str, Any]) -> str:
    """The board with rank 1 at the bottom, rank numbers left, files below, and a legend.

    ```
    6 | B B B B B B
    5 | B B B B B B
    4 | . . . . . .
    3 | . . . . . .
    2 | R R R R R R
    1 | R R R R R R
        a b c d e f
    ```
    """
    cells: list[list[str]] = view["cells"]
    files: str = view["files"]
    width = len(str(len(cells)))
    lines = [
        f"{rank:>{width}} | {' '.join(row)}"
        for rank, row in reversed(list(enumerate(cells, start=1)))
    ]
    lines.append(f"{'':>{width}}   {' '.join(files)}")
    sides, goals = view["sides"], view["goal_rank"]
    lines.append(
        f"R = {sides['0']} (seat 0, moves toward rank {goals['0']}), "
        f"B = {sides['1']} (seat 1, moves toward rank {goals['1']}), . = empty"
    )
    return "\n".join(lines)
