"""Quoridor on a 9 x 9 board with 10 walls a side, the fourth game of the board gauntlet.

Seat 0 (red) starts on e1 and moves first, seat 1 (blue) on e9; each must
bring its pawn to the far rank (`goal-row`). A turn either moves the pawn one
step (jumping the other pawn when it stands in the way, sideways when the jump
is walled off) or places a wall; no wall may leave a pawn without a path to
its goal rank. At 400 plies a game the rules have not ended is adjudicated by
standing (`ply-cap`).

Rules source:
    `docs/rules.md#quoridor`: the rules, among them that a jump also needs
    the step from the mover to the other pawn open; the legal-move order, the
    tolerant notation, the standing formula, the ply cap and the ending names.

Parameters:
    None: 9 x 9 cells (`board.SIZE`), `WALLS_PER_SEAT` 10, `PLY_CAP` 400.

State:
    `QuoridorState`: the pawns' cells, the walls left per seat and the placed
    walls (`fence`: a bit set, the steps they block as two masks, the walls
    that still fit and those that could part the board), with what follows,
    worked out when the state is made: each pawn's shortest route, the turn,
    the result and the mover's legal moves. `position` builds one from cell
    and wall names.

Notation:
    A pawn move is its destination cell, `e2`; a wall is its anchor and `h`
    or `v`, `e3h`. The reader lower-cases and keeps a-z and 0-9. Legal moves
    list pawn moves by (file, rank), then walls by (anchor file, anchor rank,
    h before v).

Standing:
    1000 - 10 x dist + 2 x walls left, dist being the steps the seat's pawn
    needs to its goal rank around the walls, ignoring pawns. The ply cap and
    the wall clock (`wall-clock`, reason `deadline`) adjudicate by it.

Baseline:
    tactician: the move maximising the mover's standing after it, ties to the
    first in legal order (computed directly, `tactician`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from operator import getitem
from typing import Any, ClassVar, NamedTuple

from games.core import Outcome, TurnGame, Unreadable, normalise_token
from games.quoridor import board
from games.quoridor.board import (
    ADJACENT,
    BLOCKS,
    GOAL_RANKS,
    OPEN_NEIGHBOURS,
    PERPENDICULAR,
    SIZE,
    STEPS,
    Route,
    reaches,
    reaches_goal,
    route,
    set_bits,
)
from games.quoridor.fence import EMPTY_FENCE, Fence, allowed_walls, fence_after, suspects

__all__ = [
    "CELL_NAMES",
    "FILES",
    "NAME_TO_CELL",
    "NAME_TO_WALL",
    "PLY_CAP",
    "SIDES",
    "WALLS_PER_SEAT",
    "WALL_NAMES",
    "Quoridor",
    "QuoridorState",
    "legal_wall_mask",
    "legal_walls",
    "legal_walls_plain",
    "pawn_targets",
    "pawn_targets_plain",
    "play_pawn",
    "play_wall",
    "position",
    "read_move",
    "standing",
    "tactician",
    "wall_names",
]

# -- parameters ---------------------------------------------------------------

WALLS_PER_SEAT = 10
PLY_CAP = 400
SIDES: tuple[str, str] = ("red", "blue")
"""How the view names the seats; the pawn symbols are their initials."""

# -- state --------------------------------------------------------------------


class QuoridorState(NamedTuple):
    """A quoridor position, immutable.

    `pawns` and `walls_left` are per seat; `pawns` holds cell indices and
    `fence` the placed walls, bit i of `fence.walls` for wall i (see
    `board`), with what they leave. The rest is derived, worked out when
    the state is made: `routes`, each seat's `board.route` from its pawn,
    while a seat has walls left (None after, when no rule needs them every
    ply); `to_act`, `result` (`goal-row`, or `ply-cap` at 400 plies) and
    `moves`, the mover's legal moves in legal order (() once over). All are
    kept because every rule function and every question of the framework
    needs them, and a move updates the fence and the routes in a few steps
    where searching afresh would cost a search per state.
    """

    ply: int
    pawns: tuple[int, int]
    walls_left: tuple[int, int]
    fence: Fence
    to_act: tuple[int, ...]
    result: Outcome | None
    routes: tuple[Route, Route] | None
    moves: tuple[str, ...]

    @property
    def walls(self) -> int:
        """The placed walls: bit i set for wall i."""
        return self.fence.walls

    @property
    def up_blocked(self) -> int:
        """The vertical steps the walls block (`board`'s up mask)."""
        return self.fence.up_blocked

    @property
    def right_blocked(self) -> int:
        """The horizontal steps the walls block (`board`'s right mask)."""
        return self.fence.right_blocked


_new_state = partial(tuple.__new__, QuoridorState)
"""`QuoridorState(*fields)` without the Python-level `__new__` a NamedTuple gets:
a third of what making a state costs, and a state is made every ply."""

_SEATS: tuple[tuple[int], tuple[int]] = ((0,), (1,))
_OVER: tuple[int, ...] = ()
_WINS: tuple[Outcome, Outcome] = (Outcome.win(0, "goal-row"), Outcome.win(1, "goal-row"))


def _made(
    ply: int,
    pawns: tuple[int, int],
    walls_left: tuple[int, int],
    fence: Fence,
    routes: tuple[Route, Route] | None,
) -> QuoridorState:
    """The state of a game the rules have not ended, after `ply` plies: the
    turn and the mover's moves, or the ply cap's adjudication by standing."""
    if ply >= PLY_CAP:
        s = QuoridorState(ply, pawns, walls_left, fence, _OVER, None, routes, ())
        return s._replace(result=Outcome.by_standing(standing(s, 0), standing(s, 1), "ply-cap"))
    seat = ply & 1
    mover, other = pawns[seat], pawns[1 - seat]
    if ADJACENT[mover] >> other & 1:  # a jump or a side step: by the rules' words
        targets = pawn_targets_plain(mover, other, fence.up_blocked, fence.right_blocked)
        moves = tuple(CELL_NAMES[c] for c in targets)
    else:
        moves = _STEP_NAMES[mover][fence.closed[mover]]
    if walls_left[seat]:
        if routes is None:  # never: routes are kept while a seat has walls left
            routes = _routes_of(pawns, fence)
        moves += wall_names(allowed_walls(fence, pawns, routes))
    return _new_state((ply, pawns, walls_left, fence, _SEATS[seat], None, routes, moves))


def _routes_of(pawns: tuple[int, int], fence: Fence) -> tuple[Route, Route]:
    """Each seat's route from its pawn, searched afresh (or found in the cache)."""
    up_blocked, right_blocked = fence.up_blocked, fence.right_blocked
    first, second = (route(pawns[seat], seat, up_blocked, right_blocked) for seat in (0, 1))
    return first, second


def position(
    red: str,
    blue: str,
    red_walls: Sequence[str] = (),
    blue_walls: Sequence[str] = (),
    ply: int = 0,
) -> QuoridorState:
    """A position from names, for tests and tools: the pawns' cells, the walls
    each seat has placed (its walls left follow) and the plies played (their
    parity says who moves). ValueError names any value no game could reach.
    """
    cells = [NAME_TO_CELL.get(name) for name in (red, blue)]
    if cells[0] is None or cells[1] is None or cells[0] == cells[1]:
        raise ValueError(f"pawns {red!r}, {blue!r} must be two different cells a1..i9")
    if ply < 0:
        raise ValueError(f"ply must be 0 or more, got {ply}")
    pawns = (cells[0], cells[1])
    walls_left = (WALLS_PER_SEAT, WALLS_PER_SEAT)
    s = _made(0, pawns, walls_left, EMPTY_FENCE, _routes_of(pawns, EMPTY_FENCE))
    for seat, names in enumerate((red_walls, blue_walls)):
        if len(names) > WALLS_PER_SEAT:
            raise ValueError(f"seat {seat} has {len(names)} walls; at most {WALLS_PER_SEAT}")
        for name in names:
            wall = NAME_TO_WALL.get(name)
            fault = (
                "not a wall a1h..h8v" if wall is None else _wall_fault(s._replace(ply=seat), wall)
            )
            if wall is None or fault is not None:
                raise ValueError(f"wall {name!r} of seat {seat} cannot stand: {fault}")
            s = play_wall(s._replace(ply=seat), wall)
    winners = [seat for seat in (0, 1) if GOAL_RANKS[seat] >> s.pawns[seat] & 1]
    if len(winners) > 1:
        raise ValueError(f"pawns {red!r}, {blue!r} cannot both stand on their goal ranks")
    if winners:
        return s._replace(ply=ply, to_act=_OVER, result=_WINS[winners[0]], moves=())
    return _made(ply, s.pawns, s.walls_left, s.fence, s.routes)


# -- rules --------------------------------------------------------------------

# Wall legality searches the board for few candidate walls: only for a wall
# a segment of which would close a loop in the drawing the walls make with
# the board edge and block a step of the route a pawn is kept (`fence`).
# `legal_walls_plain` is the definition itself, a search for every wall,
# which the tests hold the fast check to.


def pawn_targets(s: QuoridorState) -> tuple[int, ...]:
    """The cells the mover's pawn may move to, ascending."""
    seat = s.ply & 1
    mover, other = s.pawns[seat], s.pawns[1 - seat]
    if ADJACENT[mover] >> other & 1:
        return tuple(pawn_targets_plain(mover, other, s.up_blocked, s.right_blocked))
    return OPEN_NEIGHBOURS[mover][s.fence.closed[mover]]


def pawn_targets_plain(mover: int, other: int, up_blocked: int, right_blocked: int) -> list[int]:
    """The cells a pawn on `mover` may move to with the other pawn on `other`, by
    the rules' words (jumps and side steps included), ascending."""
    targets: list[int] = []
    for direction, step in enumerate(STEPS[mover]):
        if step is None or (up_blocked if step[1] else right_blocked) & step[2]:
            continue
        if step[0] != other:
            targets.append(step[0])
            continue
        beyond = STEPS[other][direction]
        if beyond is not None and not (up_blocked if beyond[1] else right_blocked) & beyond[2]:
            targets.append(beyond[0])
            continue
        for side_direction in PERPENDICULAR[direction]:  # only when no straight jump
            side = STEPS[other][side_direction]
            if side is not None and not (up_blocked if side[1] else right_blocked) & side[2]:
                targets.append(side[0])
    targets.sort()
    return targets


def _with_wall(fence: Fence, wall: int) -> tuple[int, int]:
    """The blocked-step masks (up, right) once `wall` stands too."""
    if wall & 1:
        return fence.up_blocked, fence.right_blocked | BLOCKS[wall]
    return fence.up_blocked | BLOCKS[wall], fence.right_blocked


def _wall_fault(s: QuoridorState, wall: int) -> str | None:
    """Why the mover may not place `wall`, or None if it may."""
    if not s.walls_left[s.ply & 1]:
        return "you have no walls left."
    same_anchor = s.walls >> (wall & ~1) & 3
    if same_anchor:
        return f"wall {WALL_NAMES[(wall & ~1) | (same_anchor >> 1)]} already sits on that anchor."
    blocked = s.right_blocked if wall & 1 else s.up_blocked
    if blocked & BLOCKS[wall]:
        overlap = [
            WALL_NAMES[w]
            for w in set_bits(s.walls)
            if (w ^ wall) & 1 == 0 and BLOCKS[w] & BLOCKS[wall]
        ]
        return f"it overlaps wall {', '.join(overlap)} (a step it blocks is blocked already)."
    seat = _cut_off(s, wall)
    if seat is not None:
        pawn = CELL_NAMES[s.pawns[seat]]
        return f"it would leave the pawn on {pawn} without a path to rank {_goal_rank(seat)}."
    return None


def _fault(s: QuoridorState, move: str) -> str | None:
    """Why the mover may not play the canonical `move`, or None if it may."""
    cell = NAME_TO_CELL.get(move)
    if cell is not None:
        targets = pawn_targets(s)
        if cell in targets:
            return None
        return (
            f"your pawn on {CELL_NAMES[s.pawns[s.ply & 1]]} cannot reach {move} this turn. A pawn "
            "steps to an open neighbouring cell or jumps the opponent's pawn; the cells yours "
            "can reach are among the legal moves."
        )
    wall = NAME_TO_WALL.get(move)
    if wall is None:
        return "it is not a canonical quoridor move (a <cell>, or a wall <anchor><h|v>)."
    return _wall_fault(s, wall)


def _may_place(s: QuoridorState, wall: int) -> bool:
    """Whether the mover may place `wall`: `_wall_fault` without the words."""
    fits = s.walls_left[s.ply & 1] and s.fence.fitting >> wall & 1
    return bool(fits) and _cut_off(s, wall) is None


def _cut_off(s: QuoridorState, wall: int) -> int | None:
    """The seat whose pawn `wall`, one that fits, would leave without a path to its
    goal rank, or None."""
    if not (s.fence.loops_first | s.fence.loops_second) >> wall & 1:
        return None  # it parts no cells
    routes = s.routes or _routes_of(s.pawns, s.fence)
    up_blocked, right_blocked = _with_wall(s.fence, wall)
    for seat in (0, 1):
        suspect = suspects(s.fence, routes[seat]) >> wall & 1
        if suspect and not reaches_goal(s.pawns[seat], seat, up_blocked, right_blocked):
            return seat
    return None


def legal_wall_mask(s: QuoridorState) -> int:
    """The walls the mover may place, as a mask: bit i for wall i."""
    if not s.walls_left[s.ply & 1]:
        return 0
    return allowed_walls(s.fence, s.pawns, s.routes or _routes_of(s.pawns, s.fence))


def legal_walls(s: QuoridorState) -> list[int]:
    """The walls the mover may place, ascending (legal order)."""
    return set_bits(legal_wall_mask(s))


def legal_walls_plain(s: QuoridorState) -> list[int]:
    """`legal_walls` by the rules' words, a search for every wall: the reference.

    A wall is legal when the mover has walls left, no wall sits on its
    anchor, neither step it blocks is blocked already and both pawns still
    reach their goal ranks once it stands. Slow; for tests and tools.
    """
    if not s.walls_left[s.ply & 1]:
        return []
    legal = []
    for wall in range(board.WALL_COUNT):
        blocked = s.right_blocked if wall & 1 else s.up_blocked
        if s.walls >> (wall & ~1) & 3 or blocked & BLOCKS[wall]:
            continue
        up_blocked, right_blocked = _with_wall(s.fence, wall)
        if all(
            reaches(s.pawns[seat], GOAL_RANKS[seat], up_blocked, right_blocked) for seat in (0, 1)
        ):
            legal.append(wall)
    return legal


def play_pawn(s: QuoridorState, cell: int) -> QuoridorState:
    """The state after the mover's pawn goes to `cell` (assumed legal)."""
    seat = s.ply & 1
    pawns = (cell, s.pawns[1]) if seat == 0 else (s.pawns[0], cell)
    routes, fence = s.routes, s.fence
    if routes is not None:  # a route ignores the other pawn: only the mover's changes
        moved = route(cell, seat, fence.up_blocked, fence.right_blocked)
        routes = (moved, routes[1]) if seat == 0 else (routes[0], moved)
    if GOAL_RANKS[seat] >> cell & 1:
        return QuoridorState(s.ply + 1, pawns, s.walls_left, fence, _OVER, _WINS[seat], routes, ())
    return _made(s.ply + 1, pawns, s.walls_left, fence, routes)


def play_wall(s: QuoridorState, wall: int) -> QuoridorState:
    """The state after the mover places `wall` (assumed legal)."""
    seat = s.ply & 1
    left = s.walls_left
    walls_left = (left[0] - 1, left[1]) if seat == 0 else (left[0], left[1] - 1)
    fence = fence_after(s.fence, wall)
    routes = _routes_past(s, wall, fence) if walls_left != (0, 0) else None
    return _made(s.ply + 1, s.pawns, walls_left, fence, routes)


def _routes_past(s: QuoridorState, wall: int, fence: Fence) -> tuple[Route, Route]:
    """Each seat's route once `wall` stands (`fence`, the fence with it).

    A route the wall does not cut is the route still (see `board.route`);
    only a cut one is searched again.
    """
    kept = s.routes or _routes_of(s.pawns, s.fence)
    found = []
    for seat in (0, 1):
        path = kept[seat]
        if (path.first_cuts | path.second_cuts) >> wall & 1:
            path = route(s.pawns[seat], seat, fence.up_blocked, fence.right_blocked)
        found.append(path)
    return found[0], found[1]


# -- notation -----------------------------------------------------------------

FILES = "abcdefghi"
CELL_NAMES: tuple[str, ...] = tuple(FILES[c // SIZE] + str(c % SIZE + 1) for c in range(81))
WALL_NAMES: tuple[str, ...] = tuple(
    FILES[w >> 1 >> 3] + str((w >> 1 & 7) + 1) + "hv"[w & 1] for w in range(board.WALL_COUNT)
)
NAME_TO_CELL: dict[str, int] = {name: c for c, name in enumerate(CELL_NAMES)}
NAME_TO_WALL: dict[str, int] = {name: w for w, name in enumerate(WALL_NAMES)}
"""Exactly the notation's patterns ^[a-i][1-9]$ (pawn) and ^[a-h][1-8][hv]$ (wall)."""

_WALL_NAMES_BY_BYTE: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(WALL_NAMES[8 * i + j] for j in range(8) if byte >> j & 1) for byte in range(256))
    for i in range(board.WALL_COUNT // 8)
)
"""Per byte i of a wall mask and its value, the names of its walls 8i..8i+7, ascending."""


def wall_names(walls: int) -> tuple[str, ...]:
    """The names of the walls in the mask `walls`, in legal order.

    A byte at a time from a table: a legal list holds a hundred walls or so,
    and a bit at a time would cost a step each.
    """
    names: list[str] = []
    for chunk in map(getitem, _WALL_NAMES_BY_BYTE, walls.to_bytes(board.WALL_COUNT // 8, "little")):
        names += chunk
    return tuple(names)


_STEP_NAMES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(CELL_NAMES[n] for n in targets) for targets in by_code)
    for by_code in OPEN_NEIGHBOURS
)
"""`board.OPEN_NEIGHBOURS` in notation: a pawn's moves when no pawn stands next to it."""


def read_move(text: str) -> str:
    """The canonical move the tolerant reader makes of `text`; Unreadable if none."""
    token = normalise_token(text)
    if token in NAME_TO_CELL or token in NAME_TO_WALL:
        return token
    raise Unreadable(
        f"read {token!r} from {text!r}, which is not a quoridor move. Write a pawn move as its "
        "destination <cell> (a file letter a-i then a rank number 1-9), or a wall as "
        "<anchor><h|v>: its anchor (a file letter a-h then a rank number 1-8), then h for a "
        "horizontal wall or v for a vertical one."
    )


def _goal_rank(seat: int) -> int:
    """The rank (1-based) seat `seat` must reach."""
    return SIZE if seat == 0 else 1


# -- standing -----------------------------------------------------------------


def standing(s: QuoridorState, seat: int) -> int:
    """1000 - 10 x dist + 2 x walls left; dist = wall-graph steps to the goal rank."""
    dist = route(s.pawns[seat], seat, s.up_blocked, s.right_blocked)[0]
    return 1000 - 10 * dist + 2 * s.walls_left[seat]


# -- baseline -----------------------------------------------------------------


def tactician(s: QuoridorState) -> str:
    """The mover's legal move maximising its standing after it; ties to the first.

    Same answer as trying every legal move, faster: a wall never shortens the
    mover's own path and costs it one wall, so once a pawn move reaches the
    best value a wall could have, no wall is tried (pawn moves come first in
    legal order and win ties), and a wall off the mover's path keeps its dist.
    """
    seat = s.ply & 1
    cell, left, fence = s.pawns[seat], s.walls_left[seat], s.fence
    up_blocked, right_blocked = fence.up_blocked, fence.right_blocked
    best_move, best = "", -(1 << 30)
    for target in pawn_targets(s):
        value = 1000 - 10 * route(target, seat, up_blocked, right_blocked).dist + 2 * left
        if value > best:
            best_move, best = CELL_NAMES[target], value
    path = s.routes[seat] if s.routes else route(cell, seat, up_blocked, right_blocked)
    dist, cutting = path.dist, path.first_cuts | path.second_cuts
    wall_ceiling = 1000 - 10 * dist + 2 * (left - 1)
    if not left or best >= wall_ceiling:
        return best_move
    for wall in legal_walls(s):
        if cutting >> wall & 1:  # standing after the wall, without making the state
            value = wall_ceiling - 10 * (route(cell, seat, *_with_wall(fence, wall)).dist - dist)
        else:
            value = wall_ceiling
        if value > best:
            best_move, best = WALL_NAMES[wall], value
            if value == wall_ceiling:
                break
    return best_move


# -- the game -----------------------------------------------------------------

_START_PAWNS = (4 * SIZE, 4 * SIZE + SIZE - 1)  # e1, e9
_START = _made(
    0,
    _START_PAWNS,
    (WALLS_PER_SEAT, WALLS_PER_SEAT),
    EMPTY_FENCE,
    _routes_of(_START_PAWNS, EMPTY_FENCE),
)
"""The start, made once the rules and the notation its moves are listed in exist."""


class Quoridor(TurnGame[QuoridorState]):
    """Quoridor, 9 x 9, 10 walls a side; moves are `e2` (pawn) or `e3h` (wall)."""

    name: ClassVar[str] = "quoridor"
    family: ClassVar[str] = "board"
    rules_version: ClassVar[int] = 1
    ply_cap: ClassVar[int | None] = PLY_CAP

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> QuoridorState:
        """The start: pawns on e1 and e9, 10 walls each; no chance, so `seed` is unused."""
        if game not in (1, 2):
            raise ValueError(f"game must be 1 or 2 (its index in the match), got {game!r}")
        return _START

    # -- rules ----------------------------------------------------------------

    def _legal(self, s: QuoridorState) -> tuple[str, ...]:
        """Pawn moves by (file, rank), then walls by (anchor file, anchor rank, h, v)."""
        return s.moves

    def _play(self, s: QuoridorState, move: str) -> QuoridorState | None:
        """The state after the mover's `move`; None if it is no canonical legal move."""
        cell = NAME_TO_CELL.get(move)
        if cell is not None:  # pawn moves head the list, so the look-up is short
            return play_pawn(s, cell) if move in s.moves else None
        wall = NAME_TO_WALL.get(move)
        return play_wall(s, wall) if wall is not None and _may_place(s, wall) else None

    def _refusal(self, s: QuoridorState, move: str, text: str) -> str:
        return f"{move!r} (read from {text!r}) is not legal here: {_fault(s, move)}"

    # -- notation -------------------------------------------------------------

    def _read(self, text: str) -> str:
        return read_move(text)

    # -- standing -------------------------------------------------------------

    def standing(self, s: QuoridorState, seat: int) -> int:
        """1000 - 10 x dist + 2 x walls left (dist ignores pawns)."""
        return standing(s, seat)

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: QuoridorState, seat: int) -> str:
        """tactician: the move maximising the mover's standing after it, ties to the first."""
        self._check_turn(s, seat)
        return tactician(s)

    # -- view -----------------------------------------------------------------

    def view(self, s: QuoridorState, seat: int) -> dict[str, Any]:
        """What `seat` sees (everything; quoridor hides nothing).

        Keys: "game", "ply", "to_move" (seat or None once over), "you" (seat),
        "sides" ({"0": "red", "1": "blue"}), "files" ("abcdefghi"), "cells"
        (rank rows from rank 1 upward, each 9 one-char strings: "." empty,
        "R" seat 0's pawn, "B" seat 1's), "pawns" (seat -> cell name),
        "goal_rank" (seat -> rank number), "walls" (placed walls in notation,
        in legal-move order), "walls_left" (seat -> count), "ply_cap".
        """
        cells = [["."] * SIZE for _ in range(SIZE)]
        for pawn_seat, cell in enumerate(s.pawns):
            cells[cell % SIZE][cell // SIZE] = SIDES[pawn_seat][0].upper()
        to_move = self.to_act(s)
        return {
            "game": self.name,
            "ply": s.ply,
            "to_move": to_move[0] if to_move else None,
            "you": seat,
            "sides": {"0": SIDES[0], "1": SIDES[1]},
            "files": FILES,
            "cells": cells,
            "pawns": {"0": CELL_NAMES[s.pawns[0]], "1": CELL_NAMES[s.pawns[1]]},
            "goal_rank": {"0": _goal_rank(0), "1": _goal_rank(1)},
            "walls": [WALL_NAMES[w] for w in set_bits(s.walls)],
            "walls_left": {"0": s.walls_left[0], "1": s.walls_left[1]},
            "ply_cap": PLY_CAP,
        }
