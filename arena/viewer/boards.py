"""One drawer per game kind: the JSON a page needs to draw a position.

A drawer reads states only through the game's public surface (`view`,
`standing`) except the battle's, which re-runs the ticks of a turn with
`arena.viewer.battle`, and connect-four's and hex's, which ask their rules
module for the cells of a win (`winning_cells`, `winning_chain`) to mark.
`static` is what never changes in a game (board
geometry, the battle's squads); `frame` is the position after a ply, given
the state before it (None for the starting position) so a drawer can mark
what the ply changed.

Adding a game to the viewer: write a drawer here, register it in
`DRAWERS` under the game's name, and add a renderer of the same name to
`static/boards.js` (`RENDERERS`, shared by the replay and play pages).
Backgammon's drawer lives in its own module, `backgammon`, with the search
for the single-die steps of a play.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

import games
from arena.viewer.backgammon import BackgammonDrawer
from arena.viewer.battle import turn_frames
from games.battle import BattleState, squad_prefix
from games.connect_four.rules import winning_cells
from games.hex.rules import winning_chain

__all__ = [
    "DRAWERS",
    "BattleDrawer",
    "Drawer",
    "GridDrawer",
    "QuoridorDrawer",
    "StrategoDrawer",
    "drawer_for",
]


class Drawer(Protocol):
    """How the viewer draws one game kind."""

    def static(self, game: games.Game[Any], initial: Any) -> dict[str, Any]:
        """What stays the same through a game."""

    def frame(self, game: games.Game[Any], before: Any | None, after: Any) -> dict[str, Any]:
        """The position `after` (reached from `before`, or the start when None)."""

    def seat_frame(
        self, game: games.Game[Any], before: Any | None, after: Any, seat: int
    ) -> dict[str, Any]:
        """The position `after` as `seat` may see it (the play page's board): only what
        the seat's own view holds."""

    def move_text(self, move: Any) -> str:
        """A recorded move as people read it in the move list."""


def _cell_rows(view: dict[str, Any]) -> list[str]:
    """A grid view's cells as one string per rank, rank 1 first."""
    return ["".join(row) for row in view["cells"]]


def _changed(files: str, before: list[str] | None, after: list[str]) -> list[str]:
    """Names of the cells whose content a ply changed (a1 bottom-left)."""
    if before is None:
        return []
    return [
        f"{files[f]}{r + 1}"
        for r, (old, new) in enumerate(zip(before, after, strict=True))
        for f in range(len(new))
        if old[f] != new[f]
    ]


class GridDrawer:
    """connect-four, hex and breakthrough: a rectangle of cells holding R, B or nothing.

    `winning`, where the game has one, names the cells of a won position's winning
    line or chain; a frame carries them under `winning` when there are any.
    """

    def __init__(self, winning: Callable[[Any], tuple[str, ...]] | None = None) -> None:
        self.winning = winning

    def static(self, game: games.Game[Any], initial: Any) -> dict[str, Any]:
        """The files, ranks and side names."""
        view = game.view(initial, 0)
        return {
            "files": "".join(view["files"]),
            "ranks": len(view["cells"]),
            "sides": view["sides"],
        }

    def frame(self, game: games.Game[Any], before: Any | None, after: Any) -> dict[str, Any]:
        """The cells after the ply, and which of them changed."""
        view = game.view(after, 0)
        cells = _cell_rows(view)
        old = None if before is None else _cell_rows(game.view(before, 0))
        out: dict[str, Any] = {
            "cells": cells,
            "to_move": view["to_move"] if game.to_act(after) else None,
            "changed": _changed("".join(view["files"]), old, cells),
        }
        won = self.winning(after) if self.winning is not None else ()
        if won:  # only the last frame of a won game: the others carry nothing more
            out["winning"] = list(won)
        return out

    def seat_frame(
        self, game: games.Game[Any], before: Any | None, after: Any, seat: int
    ) -> dict[str, Any]:
        """The frame itself: every seat sees the whole board."""
        return self.frame(game, before, after)

    def move_text(self, move: Any) -> str:
        """The move in the game's notation."""
        return str(move)


class QuoridorDrawer(GridDrawer):
    """Quoridor: the grid with its two pawns, plus the walls and the walls left."""

    def frame(self, game: games.Game[Any], before: Any | None, after: Any) -> dict[str, Any]:
        """The grid's frame, with the walls standing and the walls each seat has left."""
        out = super().frame(game, before, after)
        view = game.view(after, 0)
        old_walls = set() if before is None else set(game.view(before, 0)["walls"])
        out.update(
            walls=list(view["walls"]),
            new_walls=[w for w in view["walls"] if w not in old_walls],
            walls_left=[view["walls_left"]["0"], view["walls_left"]["1"]],
            pawns=[view["pawns"]["0"], view["pawns"]["1"]],
        )
        return out


def _soldiers_b64(x: Any, y: Any, hp: Any) -> str:
    """Three bytes per soldier in id order (0-based x, y, hp in tenths), base64."""
    packed = np.stack([x, y, hp], axis=1).astype(np.uint8)
    return base64.b64encode(packed.tobytes()).decode("ascii")


class BattleDrawer:
    """The battle: the squads, then every tick of every command turn, re-run by the engine."""

    def static(self, game: games.Game[Any], initial: Any) -> dict[str, Any]:
        """The map, every soldier's side and squad, the squad letters and the clock."""
        s: BattleState = initial
        return {
            "map_size": s.layout.map_size,
            "side": s.layout.side.tolist(),
            "squad": (s.layout.squad + 1).tolist(),
            "letters": [squad_prefix(s.game, 0), squad_prefix(s.game, 1)],
            "turn_ticks": game.params()["turn_ticks"],
            "max_ticks": game.params()["max_ticks"],
        }

    def frame(self, game: games.Game[Any], before: Any | None, after: Any) -> dict[str, Any]:
        """Every tick of the command turn that led to `after`, the orders and survivors."""
        s: BattleState = after
        if before is None:
            ticks = [(s.tick, _soldiers_b64(s.x, s.y, s.hp))]
        else:
            ticks = [(f.tick, _soldiers_b64(f.x, f.y, f.hp)) for f in turn_frames(before, s)]
        return {
            "first_tick": ticks[0][0],
            "ticks": [packed for _, packed in ticks],
            "orders": [[o.to_json() for o in s.orders[seat]] for seat in (0, 1)],
            "alive": [s.survivors(0), s.survivors(1)],
        }

    def seat_frame(
        self, game: games.Game[Any], before: Any | None, after: Any, seat: int
    ) -> dict[str, Any]:
        """The frame with the enemy's orders left out: a seat sees where the enemy is,
        never what it was told to do."""
        out = self.frame(game, before, after)
        out["orders"][1 - seat] = []
        return out

    def move_text(self, move: Any) -> str:
        """Orders one per squad: `A3 attack B5; A4 move (30,22)`."""
        if not isinstance(move, list):
            return str(move)
        return "; ".join(_order_text(order) for order in move) or "(no new orders)"


def _order_text(order: Any) -> str:
    if not isinstance(order, dict):
        return str(order)
    text = f"{order.get('squad', '?')} {order.get('do', '?')}"
    if order.get("enemy"):
        text += f" {order['enemy']}"
    if order.get("to"):
        x, y = order["to"]
        text += f" ({x},{y})"
    return text


class StrategoDrawer:
    """Stratego: the spectator's board is the union of both seats' views; each view kept."""

    def move_text(self, move: Any) -> str:
        """A move in notation; a 40-letter setup by rank, back rank first."""
        if isinstance(move, str) and len(move) == 40:
            return " / ".join(move[i : i + 10] for i in range(0, 40, 10))
        return str(move)

    def static(self, game: games.Game[Any], initial: Any) -> dict[str, Any]:
        """The board's files, ranks, lakes and sides."""
        view = game.view(initial, 0)
        return {"files": "abcdefghij", "ranks": 10, "lakes": view["lakes"], "sides": view["sides"]}

    def frame(self, game: games.Game[Any], before: Any | None, after: Any) -> dict[str, Any]:
        """Each seat's view after the ply, and the spectator's board that joins them."""
        views = [game.view(after, 0), game.view(after, 1)]
        seen = [_stratego_board(v["pieces"]) for v in views]
        board, owners, flags = ["."] * 100, ["."] * 100, ["."] * 100
        for seat, view in enumerate(views):
            for piece in view["pieces"]:
                if piece["seat"] != seat:
                    continue  # each seat knows its own pieces' true codes
                i = _square_index(piece["square"])
                board[i], owners[i] = piece["code"], str(seat)
                flags[i] = _FLAGS[(piece["revealed"], piece["moved"])]
        battle = views[0]["battles"][-1] if views[0]["battles"] else None
        fought_now = battle is not None and battle["ply"] == views[0]["ply"] and before is not None
        return {
            "board": "".join(board),
            "owners": "".join(owners),
            "flags": "".join(flags),
            "seen": ["".join(seen[0]), "".join(seen[1])],
            "phase": views[0]["phase"],
            "to_move": views[0]["to_move"],
            "last_move": views[0]["last_move"] if before is not None else None,
            "battle": battle if fought_now else None,
            "captured": [views[0]["captured"]["you"], views[1]["captured"]["you"]],
        }

    def seat_frame(
        self, game: games.Game[Any], before: Any | None, after: Any, seat: int
    ) -> dict[str, Any]:
        """The board from `seat`'s own view alone: its pieces' codes, the enemy's where a
        battle revealed them, `?` for the rest. The other seat's view is never read."""
        view = game.view(after, seat)
        board, owners, flags = ["."] * 100, ["."] * 100, ["."] * 100
        for piece in view["pieces"]:
            i = _square_index(piece["square"])
            board[i], owners[i] = piece["code"], str(piece["seat"])
            flags[i] = _FLAGS[(bool(piece.get("revealed")), bool(piece.get("moved")))]
        battle = view["battles"][-1] if view["battles"] else None
        fought_now = battle is not None and battle["ply"] == view["ply"] and before is not None
        seen = "".join(board)
        captured = [view["captured"]["you"], view["captured"]["enemy"]]
        return {
            "board": seen,
            "owners": "".join(owners),
            "flags": "".join(flags),
            "seen": [seen, seen],
            "phase": view["phase"],
            "to_move": view["to_move"],
            "last_move": view["last_move"] if before is not None else None,
            "battle": battle if fought_now else None,
            "captured": captured if seat == 0 else captured[::-1],
        }


_FLAGS = {(False, False): ".", (False, True): "m", (True, False): "r", (True, True): "b"}
"""A piece's public flags in one letter: moved, revealed, both (b) or neither."""


def _square_index(square: str) -> int:
    """a1 = 0, b1 = 1, ..., j10 = 99."""
    return (int(square[1:]) - 1) * 10 + "abcdefghij".index(square[0])


def _stratego_board(pieces: list[dict[str, Any]]) -> list[str]:
    """100 cells as one seat sees them: a code, `?` for an unknown enemy, `.` for empty."""
    cells = ["."] * 100
    for piece in pieces:
        cells[_square_index(piece["square"])] = piece["code"]
    return cells


DRAWERS: dict[str, Drawer] = {
    "connect-four": GridDrawer(winning_cells),
    "hex": GridDrawer(winning_chain),
    "breakthrough": GridDrawer(),
    "quoridor": QuoridorDrawer(),
    "battle": BattleDrawer(),
    "stratego": StrategoDrawer(),
    "backgammon": BackgammonDrawer(),
}
"""Game name -> its drawer; a game missing here has no replay page (its replays are listed)."""


def drawer_for(name: str) -> Drawer:
    """The drawer of game `name`; an error names the games the viewer can draw."""
    drawer = DRAWERS.get(name)
    if drawer is None:
        raise ValueError(f"the viewer cannot draw {name!r} yet (it draws: {', '.join(DRAWERS)})")
    return drawer
