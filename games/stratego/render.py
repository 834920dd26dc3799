"""Stratego's board as plain text for prompts, drawn from one seat's view alone.

Legend (also printed under the board):

- `F B S 2 3 4 5 6 7 8 9 X` your own pieces by code; a `*` after one means the
  enemy has seen its rank;
- `[7]` an enemy piece whose rank you have seen;
- `?` an enemy piece you have not seen, which has never moved (it may be a
  Bomb or the Flag);
- `!` an enemy piece you have not seen, which has moved (so it is neither a
  Bomb nor the Flag);
- `~` lake, `.` empty.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEGEND", "board_text", "move_help"]

_FILES = "abcdefghij"
LEGEND = (
    "Legend: F B S 2-9 X = your pieces (* = the enemy has seen its rank); "
    "[7] = enemy piece of known rank;\n"
    "? = unknown enemy piece that has never moved; "
    "! = unknown enemy piece that has moved (not a Bomb or the Flag); ~ = lake; . = empty."
)


def board_text(view: dict[str, Any]) -> str:
    """The board with rank 10 at the top, a1 bottom-left, coordinates on all four edges.

    ```
          a  b  c  d  e  f  g  h  i  j
     10   ?  ?  ?  ?  ?  ?  ?  ?  ?  ?   10
      6   .  .  ~  ~  . [7] ~  ~  !  .   6
      1   F  B  B  2* .  .  .  .  .  .   1
    ```
    Every cell is three characters wide; the legend follows the board.
    """
    cells: dict[str, str] = {name: " ~ " for name in view["lakes"]}
    you = view["you"]
    for piece in view["pieces"]:
        cells[piece["square"]] = _cell(piece, you)
    header = "     " + "".join(f" {f} " for f in _FILES).rstrip()
    lines = [header]
    for rank in range(10, 0, -1):
        row = "".join(cells.get(f"{f}{rank}", " . ") for f in _FILES)
        lines.append(f"{rank:>3}  {row}  {rank}")
    lines.append(header)
    lines.append(LEGEND)
    return "\n".join(lines)


def _cell(piece: dict[str, Any], you: int) -> str:
    code: str = piece["code"]
    if piece["seat"] == you:
        return f" {code}{'*' if piece['revealed'] else ' '}"
    if code != "?":
        return f"[{code}]"
    return " ! " if piece["moved"] else " ? "


def move_help(view: dict[str, Any]) -> str:
    """How to write a reply in this phase: the setup format, or the move notation."""
    if view.get("phase") == "setup":
        ranks = view.get("home_ranks")
        return (
            "Write your setup as 40 piece codes: your home ranks from your own back rank forward, "
            f"each rank from file a to file j (your home ranks: {ranks}). Separators are ignored.\n"
            "Pieces: F Flag x1, B Bomb x6, S Spy x1, 2 Scout x8, 3 Miner x5, 4 Sergeant x4, "
            "5 Lieutenant x4, 6 Captain x4, 7 Major x3, 8 Colonel x2, 9 General x1, X Marshal x1."
        )
    return (
        "A move is <from>-<to>: the square your piece leaves, a hyphen and the square it goes "
        "to, each a file letter a-j then a rank number 1-10. A Scout may move several squares "
        "in a line."
    )
