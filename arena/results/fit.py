"""Rich tables that fit the console: whole columns are left out, never numbers cut.

A table is declared as columns, each with a rank: the lowest-ranked column is
left out first, until the table fits the width. A column whose cells all say
nothing (every cost unknown, every token count zero) goes before any other. A
number is never truncated or wrapped (its column is as wide as its widest cell);
only a column of text marked `wrap` may fold. A column left out may say its
content in short under the table (`instead`); the caption names the others and
where to read them. A column shown may say what a mark in its cells means
(`notes`), first under the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

__all__ = ["Column", "fitted"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header (may hold a line break), its cells, how much it matters
    (`rank`: higher stays longer) and whether its text may fold (`wrap`)."""

    header: str
    cells: Sequence[str]
    rank: int
    right: bool = True
    wrap: bool = False
    empty: frozenset[str] = frozenset()
    """Cell texts that say nothing (`-`, `0`): a column of nothing else goes first."""
    instead: Sequence[str] = ()
    """Lines said under the table when the column is left out (its content, in short)."""
    notes: Sequence[str] = ()
    """Lines said under the table while the column is shown (what a mark in it means)."""

    @property
    def width(self) -> int:
        """The widest line of its header and cells."""
        lines = [line for text in (self.header, *self.cells) for line in text.splitlines()]
        return max((len(line) for line in lines), default=0)

    @property
    def blank(self) -> bool:
        """Every cell says nothing."""
        return bool(self.cells) and all(c in self.empty for c in self.cells)


_WRAPPED_MIN = 16
"""The narrowest a wrapped column is folded to."""


def _width(columns: Sequence[Column]) -> int:
    """The table's width with rich's default box: each column padded by one space either
    side, with a rule between columns and at both ends."""
    widths = [min(c.width, _WRAPPED_MIN) if c.wrap else c.width for c in columns]
    return sum(widths) + 3 * len(columns) + 1


def fitted(title: str, columns: Sequence[Column], width: int, *, more: str = "") -> Table:
    """A table of `columns` no wider than `width` (the first column always stays): under
    it, what left-out columns say `instead`, and the others named with `more`, where to
    read them."""
    kept = list(columns)
    order = sorted(kept[1:], key=lambda c: (not c.blank, c.rank))
    left_out: list[str] = []
    said: list[str] = []
    while _width(kept) > width and order:
        column = order.pop(0)
        kept.remove(column)
        if column.instead:
            said.extend(column.instead)
        elif not column.blank:
            left_out.append(column.header.replace("\n", " "))
    if left_out:
        said.append(f"not shown at {width} columns: {', '.join(left_out)}{more}")
    said[:0] = [note for c in kept for note in c.notes]
    table = Table(title=title, caption="\n".join(said) or None, caption_justify="left")
    for c in kept:
        table.add_column(
            c.header,
            justify="right" if c.right else "left",
            no_wrap=not c.wrap,
            min_width=None if c.wrap else c.width,
            overflow="fold",
        )
    for i in range(len(columns[0].cells)):
        table.add_row(*(c.cells[i] for c in kept))
    return table
