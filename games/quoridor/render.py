"""Quoridor's board as plain text for a prompt, drawn from a view alone.

The board is a lattice: `+` marks the corners between cells, `---` under a
cell is a wall between it and the cell below, `|` between two cells a wall
between them, and a wall's centre (its anchor point) is drawn as `-` (h) or
`|` (v), so each wall reads as one unbroken stroke:

       +---+---+---+
     4 | .   .   . |
       +   +-------+      <- a wall under the two right-hand cells (anchor b3, h)
     3 | .   .   . |
"""

from __future__ import annotations

from typing import Any

__all__ = ["board_text"]

Point = tuple[int, int]
"""(file, rank), both from 0: a cell, or the lattice point at its top-right corner."""


def _wall_strokes(
    walls: list[str], file_letters: str
) -> tuple[set[Point], set[Point], dict[Point, str]]:
    """Blocked up-steps and right-steps (named by the lower / left cell) and the
    symbol of each wall's anchor point, from the wall names."""
    up: set[Point] = set()
    right: set[Point] = set()
    centres: dict[Point, str] = {}
    for name in walls:
        x, n, orientation = file_letters.index(name[0]), int(name[1:-1]) - 1, name[-1]
        if orientation == "h":
            up |= {(x, n), (x + 1, n)}
            centres[(x, n)] = "-"
        else:
            right |= {(x, n), (x, n + 1)}
            centres[(x, n)] = "|"
    return up, right, centres


def board_text(view: dict[str, Any]) -> str:
    """The board of a quoridor view, rank 9 on top, with a legend and the walls."""
    cells: list[list[str]] = view["cells"]
    file_letters: str = view["files"]
    ranks, files = len(cells), len(file_letters)
    up, right, centres = _wall_strokes(list(view["walls"]), file_letters)
    edge = "    +" + "---+" * files
    lines = [edge]
    for r in reversed(range(ranks)):
        row = "".join(
            f" {cells[r][f]} " + ("|" if f == files - 1 or (f, r) in right else " ")
            for f in range(files)
        )
        lines.append(f"{r + 1:>3} |{row}")
        if r > 0:
            lines.append(_between_ranks(r - 1, files, up, centres))
    lines += [edge, "      " + "   ".join(file_letters)]
    return "\n".join(lines + _legend(view))


def _between_ranks(r: int, files: int, up: set[Point], centres: dict[Point, str]) -> str:
    """The lattice line between rank r and rank r + 1 (ranks from 0)."""
    parts = ["    +"]
    for f in range(files):
        parts.append("---" if (f, r) in up else "   ")
        parts.append("+" if f == files - 1 else centres.get((f, r), "+"))
    return "".join(parts)


def _legend(view: dict[str, Any]) -> list[str]:
    """What the symbols mean, the walls placed and the walls left."""
    sides: dict[str, str] = view["sides"]
    goals: dict[str, int] = view["goal_rank"]
    pawns = "; ".join(
        f"{sides[seat][0].upper()} = {sides[seat]} pawn (seat {seat}) on {view['pawns'][seat]}, "
        f"goal rank {goals[seat]}"
        for seat in ("0", "1")
    )
    walls = ", ".join(view["walls"]) or "none"
    left = ", ".join(f"{sides[seat]} {view['walls_left'][seat]}" for seat in ("0", "1"))
    return [
        "",
        f"Legend: {pawns}; . = empty.",
        "Walls: --- blocks the step between the cells above and below it, | the step "
        "between the cells left and right of it; a wall's anchor point shows - (h) or | (v).",
        f"Walls placed ({len(view['walls'])}): {walls}",
        f"Walls left: {left}",
    ]
