"""Stratego's sampled worlds: what a program's helpers explore instead of the truth.

A program's view hides the opponent's unrevealed ranks, so helpers over the
true board would leak them (which pieces cannot move, who wins an attack).
`sample_world` keeps everything public (squares, moved and revealed marks,
revealed ranks, the battle history, the two-square memory) and deals the
opponent's unrevealed pieces, a multiset the view already implies, to its
unrevealed squares: bombs and the flag only to squares whose piece never
moved. The draw is seeded by the seat's seed and the ply, so a program's
records replay exactly. The continuous-chase memory holds keys of true
positions, so a world drops it: inside a world the chase law is not applied,
and the root keeps the true legal list, which is the mover's to know.
"""

from __future__ import annotations

import random
from dataclasses import replace

from games.stratego.board import BOMB, FLAG, MOVED, OWNER, REVEALED, SQUARES
from games.stratego.moves import legal_for, placement
from games.stratego.state import StrategoState

__all__ = ["sample_world"]

_IMMOBILE = (FLAG + 1, BOMB + 1)


def _deal(board: list[int], seat: int, rng: random.Random) -> None:
    """Shuffle the opponent's unrevealed kinds over its unrevealed squares, in place."""
    hidden = [
        sq
        for sq in SQUARES
        if board[sq] > 0
        and (board[sq] & OWNER) != (OWNER if seat else 0)
        and not board[sq] & REVEALED
    ]
    kinds = sorted(board[sq] & 15 for sq in hidden)
    immobile = [k for k in kinds if k in _IMMOBILE]
    mobile = [k for k in kinds if k not in _IMMOBILE]
    still = [sq for sq in hidden if not board[sq] & MOVED]
    rng.shuffle(still)
    rng.shuffle(mobile)
    dealt = dict(zip(still, immobile, strict=False))
    rest = [sq for sq in hidden if sq not in dealt]
    dealt.update(zip(rest, mobile, strict=True))
    for sq, kind in dealt.items():
        board[sq] = (board[sq] & ~15) | kind


def sample_world(state: StrategoState, seat: int, seed: int) -> StrategoState:
    """A Stratego state consistent with `seat`'s view of `state`, drawn from `seed`."""
    if state.phase != "play":
        return state
    board = list(state.board)
    _deal(board, seat, random.Random(f"stratego-world:{seed}:{state.game}:{state.ply}:{seat}"))
    key, squares = placement(board)
    legal = state.legal
    if state.mover != seat:  # only the mover may know its true legal list
        mover = state.mover
        legal = legal_for(tuple(board), squares[mover], mover, state.streaks[mover], None, key)
    return replace(state, board=tuple(board), key=key, movable=squares, chase=None, legal=legal)
