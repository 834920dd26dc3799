"""Connect-four's board as plain text for a prompt, drawn from a view alone."""

from __future__ import annotations

from typing import Any

__all__ = ["board_text"]


def board_text(view: dict[str, Any]) -> str:
    """The board with a1 at the bottom left, rank numbers left, file letters below.

    `view` is `ConnectFour.view(...)`'s dict; only its `cells`, `files` and
    `sides` are read.
    """
    cells: list[list[str]] = view["cells"]
    files: list[str] = view["files"]
    sides: dict[str, str] = view["sides"]
    width = len(str(len(cells)))
    lines = [
        f"{rank:>{width}} | {' '.join(cells[rank - 1])} |" for rank in range(len(cells), 0, -1)
    ]
    lines.append(f"{'':>{width}}   {' '.join(files)}")
    lines.append(
        f"Legend: R = {sides['0']} (seat 0), B = {sides['1']} (seat 1), . = empty. "
        "A disc drops to the lowest empty cell of its file."
    )
    return "\n".join(lines)
