"""Hex's board as plain text for a prompt, drawn from a view alone."""

from __future__ import annotations

from typing import Any

__all__ = ["board_text"]


def board_text(view: dict[str, Any]) -> str:
    """The rhombus with a1 at the bottom left, rank numbers left, file letters below.

    Each rank is drawn half a cell further right than the one below it, so a
    cell's six neighbours sit around it as they do on a hex board: two in its
    own row, two up-left / up-right and two down-left / down-right. `view` is
    `Hex.view(...)`'s dict; only its `cells`, `files`, `sides` and `goals` are
    read.
    """
    cells: list[list[str]] = view["cells"]
    files: list[str] = view["files"]
    sides: dict[str, str] = view["sides"]
    goals: dict[str, str] = view["goals"]
    width = len(str(len(cells)))
    letters = " ".join(files)
    lines = [f"{'':>{width}} {' ' * len(cells)}{letters}"]
    for rank in range(len(cells), 0, -1):
        indent = " " * rank
        lines.append(f"{rank:>{width}} {indent}{' '.join(cells[rank - 1])}  {rank}")
    lines.append(f"{'':>{width}}  {letters}")
    lines.append(
        f"Legend: R = {sides['0']} (seat 0, {goals['0']}), "
        f"B = {sides['1']} (seat 1, {goals['1']}), . = empty."
    )
    lines.append(
        "Each cell touches six others: the two beside it on its own rank, two on the rank "
        "above (its own file and the file to its left) and two on the rank below (its own "
        "file and the file to its right)."
    )
    return "\n".join(lines)
