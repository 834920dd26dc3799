"""Hex on a 7 x 7 rhombus, the third game of the board gauntlet.

Seat 0 (red) moves first and joins file a to file g, seat 1 (blue) joins rank
1 to rank 7; a move puts a stone on an empty cell. The first chain joining a
seat's two edges wins (`connection`). There is no swap rule, no draw and no
ply cap: a full board always holds exactly one connection, so the game ends
within 49 plies.

Rules source:
    `docs/rules.md#hex`: the rules, the tolerant notation, the standing
    formula and the tactician.

Parameters:
    None: 7 files a-g (`FILES`) of 7 ranks (`RANKS`).

State:
    `HexState`: one Python-int bitboard per seat. Cell (file f, rank r), both
    counted from 0, is bit `r * 8 + f`: every rank owns eight bits, seven
    cells and an always-empty guard bit, so the six neighbours of a cell are
    the shifts by 1, 8 and 7 either way, and a shift off the side of the board
    lands on a guard bit that masking removes. Each seat's stones chained to
    its first edge, the empty cells in legal order, the turn and the result
    are worked out when a stone is placed.

Notation:
    A move is a cell, a file then a rank, `c4`; the reader takes any case and
    any punctuation or spaces. Legal moves are listed by (file, rank).

Standing:
    1000 - 10 x distToWin: the fewest stones the seat must still place to join
    its edges, counting its own stones free and the opponent's impassable
    (`dist_to_win`; `UNREACHABLE`, 99, when they cut the edges apart). The
    wall clock adjudicates by it (`wall-clock`, reason `deadline`).

Baseline:
    tactician: the move maximising the mover's standing after it, ties to the
    first in legal order.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from games.core import Outcome, TurnGame, Unreadable, normalise_token

__all__ = [
    "FILES",
    "RANKS",
    "UNREACHABLE",
    "Hex",
    "HexState",
    "cell_mask",
    "dist_to_win",
    "neighbours",
    "winning_chain",
]

# -- parameters ---------------------------------------------------------------

FILES = "abcdefg"
"""File letters, left to right."""
RANKS = 7
"""Ranks, bottom to top."""
UNREACHABLE = 99
"""distToWin when opponent stones cut a seat's two edges apart."""

_STRIDE = 8  # seven cells and the guard bit
_SIDES = ("red", "blue")
_SYMBOLS = ("R", "B")
_GOALS = ("connect file a to file g", "connect rank 1 to rank 7")

# -- state --------------------------------------------------------------------


class HexState(NamedTuple):
    """A position; immutable, compared by value.

    `red` and `blue` are the bitboards (see the module docstring). The other
    fields are derived from them when a move is applied, so the framework's
    questions cost an attribute lookup: `linked` holds, per seat, its stones
    chained to its own first edge (file a for red, rank 1 for blue), which is
    all a win check needs; `legal` lists the empty cells in legal-move order.
    """

    ply: int
    red: int
    blue: int
    linked: tuple[int, int]
    legal: tuple[str, ...]
    to_act: tuple[int, ...]
    result: Outcome | None


# -- rules --------------------------------------------------------------------


def _name(file: int, rank: int) -> str:
    return f"{FILES[file]}{rank + 1}"


_INDEX = {_name(f, r): r * _STRIDE + f for f in range(len(FILES)) for r in range(RANKS)}
_BOARD = sum(1 << index for index in _INDEX.values())
_FILE_A = sum(1 << (r * _STRIDE) for r in range(RANKS))
_FILE_G = _FILE_A << (len(FILES) - 1)
_RANK_1 = sum(1 << f for f in range(len(FILES)))
_RANK_7 = _RANK_1 << ((RANKS - 1) * _STRIDE)
_SOURCE = (_FILE_A, _RANK_1)  # where a seat's chain starts
_TARGET = (_FILE_G, _RANK_7)  # and where it must arrive


def _spread(cells: int) -> int:
    """Every neighbour of `cells`, guard bits and bits off the board included."""
    return (
        (cells << 1)
        | (cells >> 1)
        | (cells << _STRIDE)
        | (cells >> _STRIDE)
        | (cells << (_STRIDE - 1))
        | (cells >> (_STRIDE - 1))
    )


def _flood(start: int, region: int) -> int:
    """`start` and every cell of `region` chained to it through `region`."""
    reach = start
    while True:
        wider = reach | (_spread(reach) & region)
        if wider == reach:
            return reach
        reach = wider


def cell_mask(cell: str) -> int:
    """The bit of the canonical `cell` (e.g. "c4") on the engine's bitboards."""
    index = _INDEX.get(cell)
    if index is None:
        raise ValueError(f"{cell!r} is not a hex cell: write a file a-g and a rank 1-7, e.g. 'c4'")
    return 1 << index


def neighbours(cell: str) -> tuple[str, ...]:
    """The cells adjacent to `cell`, in legal-move order."""
    near = _spread(cell_mask(cell))
    return tuple(name for name in _INDEX if near >> _INDEX[name] & 1)


def _first(cells: int) -> int:
    """The bit of the first of `cells` in legal-move order (by file, then rank)."""
    return next(1 << index for index in _INDEX.values() if cells >> index & 1)


def winning_chain(s: HexState) -> tuple[str, ...]:
    """The winner's chain from its first edge to its second; () while nobody has joined.

    Of the stones joining the two edges, the fewest that still do: a shortest
    path through the winning group, which leaves out the group's side branches.
    Where several are as short, each step back from the second edge takes the
    first cell in legal-move order, so the chain is one and the same every time.
    """
    for seat, stones in enumerate((s.red, s.blue)):
        levels = [stones & _SOURCE[seat]]  # level k: stones k steps from the first edge
        seen = levels[0]
        while levels[-1] and not levels[-1] & _TARGET[seat]:
            levels.append(_spread(levels[-1]) & stones & ~seen)
            seen |= levels[-1]
        if not levels[-1]:
            continue
        step = _first(levels[-1] & _TARGET[seat])
        chain = [step]
        for level in reversed(levels[:-1]):
            step = _first(_spread(step) & level)
            chain.append(step)
        names = {1 << index: name for name, index in _INDEX.items()}
        return tuple(names[bit] for bit in reversed(chain))
    return ()


# cell -> (its bit, the mask of its neighbours); the hot path of every move.
_CELL = {name: (1 << index, _spread(1 << index) & _BOARD) for name, index in _INDEX.items()}

_SEAT_0, _SEAT_1, _OVER = (0,), (1,), ()
_WINS = (Outcome.win(0, "connection"), Outcome.win(1, "connection"))
_INITIAL = HexState(0, 0, 0, (0, 0), tuple(_INDEX), _SEAT_0, None)


def _boards(s: HexState, seat: int) -> tuple[int, int]:
    """(the seat's stones, the opponent's stones)."""
    if seat == 0:
        return s.red, s.blue
    if seat == 1:
        return s.blue, s.red
    raise ValueError(f"seat {seat!r} does not exist: hex's seats are 0 and 1")


def _shown(text: str) -> str:
    """`text` quoted for an error message, cut so a long reply cannot flood it."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


# -- standing -----------------------------------------------------------------


def _levels(mine: int, theirs: int, edge: int) -> list[int]:
    """0-1 BFS from `edge` on bitboards: entry d holds every cell reachable at cost <= d.

    A path's cost is the number of empty cells on it (the seat's own stones are
    free, the opponent's impassable), counting the cell the path starts on. The
    list stops when a level adds nothing.
    """
    empty = _BOARD & ~(mine | theirs)
    reach = _flood(mine & edge, mine)
    levels = [reach]
    while True:
        wider = _flood(reach | ((_spread(reach) | edge) & empty), mine)
        if wider == reach:
            return levels
        levels.append(wider)
        reach = wider


def _distance(levels: list[int], target: int) -> int:
    """distToWin: the cost of the first level that touches `target`, else UNREACHABLE."""
    for cost, reach in enumerate(levels):
        if reach & target:
            return cost
    return UNREACHABLE


def dist_to_win(mine: int, theirs: int, seat: int) -> int:
    """The fewest stones `seat` must still place to join its edges; UNREACHABLE if cut."""
    source, target = _SOURCE[seat], _TARGET[seat]
    empty = _BOARD & ~(mine | theirs)
    reach = _flood(mine & source, mine)
    cost = 0
    # Same search as _levels, stopping as soon as the target edge is reached.
    while not reach & target:
        wider = _flood(reach | ((_spread(reach) | source) & empty), mine)
        if wider == reach:
            return UNREACHABLE
        reach = wider
        cost += 1
    return cost


def _cost_by_cell(levels: list[int]) -> dict[int, int]:
    """The cheapest cost at which each reachable cell (by its bit) is reached."""
    costs: dict[int, int] = {}
    seen = 0
    for cost, reach in enumerate(levels):
        fresh = reach & ~seen
        seen = reach
        while fresh:
            low = fresh & -fresh
            costs[low] = cost
            fresh ^= low
    return costs


# -- the game -----------------------------------------------------------------


class Hex(TurnGame[HexState]):
    """Hex 7 x 7: seat 0 red joins files a-g, seat 1 blue ranks 1-7; no swap, no draw."""

    name: ClassVar[str] = "hex"
    family: ClassVar[str] = "board"
    rules_version: ClassVar[int] = 1

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> HexState:
        """The empty board; there is no chance, so `seed` and `game` change nothing."""
        return _INITIAL

    # -- rules ----------------------------------------------------------------

    def _legal(self, s: HexState) -> tuple[str, ...]:
        return s.legal

    def _play(self, s: HexState, move: str) -> HexState | None:
        """The state after the mover puts a stone on cell `move`; None unless it is empty."""
        cell = _CELL.get(move)
        if cell is None:
            return None
        bit, near = cell
        if (s.red | s.blue) & bit:
            return None
        ply = s.ply + 1
        at = s.legal.index(move)
        legal = s.legal[:at] + s.legal[at + 1 :]
        linked = s.linked
        if ply & 1:  # red has just moved
            red = s.red | bit
            if bit & _FILE_A or near & linked[0]:
                # Before this stone no red chain touched file g, so only its own group can.
                chain = linked[0] | _flood(bit, red & ~linked[0])
                linked = (chain, linked[1])
                if chain & _FILE_G:
                    return HexState(ply, red, s.blue, linked, legal, _OVER, _WINS[0])
            return HexState(ply, red, s.blue, linked, legal, _SEAT_1, None)
        blue = s.blue | bit
        if bit & _RANK_1 or near & linked[1]:
            chain = linked[1] | _flood(bit, blue & ~linked[1])
            linked = (linked[0], chain)
            if chain & _RANK_7:
                return HexState(ply, s.red, blue, linked, legal, _OVER, _WINS[1])
        return HexState(ply, s.red, blue, linked, legal, _SEAT_0, None)

    def _refusal(self, s: HexState, move: str, text: str) -> str:
        owner = _SIDES[0] if s.red & _CELL[move][0] else _SIDES[1]
        return (
            f"read {move!r} from {_shown(text)}, but {move} already holds "
            f"a {owner} stone: name an empty cell."
        )

    # -- notation -------------------------------------------------------------

    def _read(self, text: str) -> str:
        """A cell a1..g7, any case, any punctuation or spaces."""
        token = normalise_token(text)
        if token in _CELL:
            return token
        raise Unreadable(
            f"read {_shown(text.strip())}: a hex move is one empty <cell>, a file letter a-g "
            "then a rank number 1-7."
        )

    # -- standing -------------------------------------------------------------

    def standing(self, s: HexState, seat: int) -> int:
        """1000 - 10 x distToWin (0-1 BFS; own stones free, empty cells 1, unreachable 99)."""
        mine, theirs = _boards(s, seat)
        return 1000 - 10 * dist_to_win(mine, theirs, seat)

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: HexState, seat: int) -> str:
        """tactician: the move maximising the mover's standing after it, ties to the first.

        A stone on empty cell c makes c free, so the cheapest chain through c
        costs costs_from_source[c] + costs_from_target[c] - 2 (both counted c
        once, at 1); chains avoiding c keep their cost. Two searches therefore
        give the standing after every candidate, exactly as playing each would.
        """
        self._check_turn(s, seat)
        mine, theirs = _boards(s, seat)
        outward = _levels(mine, theirs, _SOURCE[seat])
        now = _distance(outward, _TARGET[seat])
        from_source = _cost_by_cell(outward)
        from_target = _cost_by_cell(_levels(mine, theirs, _TARGET[seat]))
        best_move, best = "", UNREACHABLE + 1
        for move in s.legal:
            bit = _CELL[move][0]
            after = now
            if bit in from_source and bit in from_target:
                after = min(now, from_source[bit] + from_target[bit] - 2)
            if after < best:
                best_move, best = move, after
        return best_move

    # -- view -----------------------------------------------------------------

    def view(self, s: HexState, seat: int) -> dict[str, Any]:
        """The whole position (nothing is hidden), as JSON-able data.

        Keys: `game` ("hex"), `ply` (plies played), `to_move` (the seat to move,
        None once over), `you` (the seat asked), `sides` ({"0": "red", "1":
        "blue"}), `goals` (per seat, the edges it must join), `files` (["a", ...,
        "g"]), `cells` (seven rank rows from rank 1 upward, each seven
        one-character strings "." / "R" / "B", file a first), `legal` (the legal
        moves of the seat to move, in legal order; [] once over).
        """
        _boards(s, seat)  # refuses a seat that does not exist
        cells = [
            [
                _SYMBOLS[0] if s.red & bit else _SYMBOLS[1] if s.blue & bit else "."
                for bit in (cell_mask(_name(f, r)) for f in range(len(FILES)))
            ]
            for r in range(RANKS)
        ]
        return {
            "game": self.name,
            "ply": s.ply,
            "to_move": s.to_act[0] if s.to_act else None,
            "you": seat,
            "sides": {"0": _SIDES[0], "1": _SIDES[1]},
            "goals": {"0": _GOALS[0], "1": _GOALS[1]},
            "files": list(FILES),
            "cells": cells,
            "legal": list(s.legal) if s.to_act else [],
        }
