"""What one seat may know of a Stratego state, as JSON-able data.

Everything here is public or the seat's own: its own pieces with their codes,
the opponent's pieces as `?` unless a battle or a long Scout move revealed
them, which pieces have moved, the battle history (both ranks of every
battle are revealed by it) and what it implies (captured pieces, the
opponent's pieces left). Nothing reads a hidden rank: the mask is applied
before a code is looked up.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from games.stratego.board import (
    CODES,
    COUNTS,
    LAKES,
    MOVE_NAMES,
    MOVED,
    OWNER,
    REVEALED,
    SQUARES,
    square_name,
)
from games.stratego.moves import NO_BATTLE_LIMIT, PLY_CAP
from games.stratego.state import Battle, StrategoState

__all__ = ["RECENT_BATTLES", "SIDES", "seat_view"]

SIDES: tuple[str, str] = ("Red", "Blue")
RECENT_BATTLES = 10
_RESULTS = {1: "attacker wins", -1: "defender wins", 0: "both die"}


def seat_view(s: StrategoState, seat: int, to_act: tuple[int, ...]) -> dict[str, Any]:
    """The view of `seat` (see `Stratego.view` for the keys)."""
    lost = _captured(s.battles)
    return {
        "game": "stratego",
        "match_game": s.game,
        "ply": s.ply,
        "you": seat,
        "side": SIDES[seat],
        "sides": {"0": SIDES[0], "1": SIDES[1]},
        "phase": s.phase,
        "to_act": list(to_act),
        "to_move": to_act[0] if len(to_act) == 1 else None,
        "home_ranks": [1, 2, 3, 4] if seat == 0 else [10, 9, 8, 7],
        "setup_counts": dict(COUNTS),
        "pieces": [_piece(s.board[sq], sq, seat) for sq in SQUARES if s.board[sq] > 0],
        "lakes": sorted(square_name(sq) for sq in LAKES),
        "captured": {"you": lost[seat], "enemy": lost[1 - seat]},
        "enemy_left": _left(lost[1 - seat]) if s.phase == "play" else {},
        "battles": [battle_json(b) for b in s.battles[-RECENT_BATTLES:]],
        "last_move": MOVE_NAMES[s.last_move] if s.last_move >= 0 else None,
        "no_battle_plies": s.quiet,
        "no_battle_limit": NO_BATTLE_LIMIT,
        "ply_cap": PLY_CAP,
    }


def _piece(v: int, sq: int, seat: int) -> dict[str, Any]:
    owner = 1 if v & OWNER else 0
    known = owner == seat or bool(v & REVEALED)
    return {
        "square": square_name(sq),
        "seat": owner,
        "code": CODES[(v & 15) - 1] if known else "?",
        "moved": bool(v & MOVED),
        "revealed": bool(v & REVEALED),
    }


def _captured(battles: tuple[Battle, ...]) -> tuple[list[str], list[str]]:
    lost: tuple[list[str], list[str]] = ([], [])
    for b in battles:
        if b.winner <= 0:
            lost[b.seat].append(CODES[b.attacker])
        if b.winner >= 0:
            lost[1 - b.seat].append(CODES[b.defender])
    return lost


def _left(lost: list[str]) -> dict[str, int]:
    gone = Counter(lost)
    return {code: n - gone[code] for code, n in COUNTS.items()}


def battle_json(b: Battle) -> dict[str, Any]:
    """A fought battle as JSON: both ranks are public once it is fought."""
    return {
        "ply": b.ply,
        "by": b.seat,
        "move": MOVE_NAMES[b.start << 8 | b.target],
        "attacker": CODES[b.attacker],
        "defender": CODES[b.defender],
        "result": _RESULTS[b.winner],
    }
