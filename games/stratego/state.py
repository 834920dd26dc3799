"""Stratego's state: the true board plus the public history the rules and views need."""

from __future__ import annotations

from dataclasses import dataclass

from games.stratego.chase import Chase, Streak

__all__ = ["Battle", "StrategoState"]


@dataclass(frozen=True, slots=True)
class Battle:
    """One attack, public once fought: both ranks were revealed.

    `winner` is 1 when the attacker won, -1 when the defender held, 0 when
    both died. `attacker` and `defender` are kinds (see `board.CODES`).
    """

    ply: int
    seat: int
    start: int
    target: int
    attacker: int
    defender: int
    winner: int


@dataclass(frozen=True, slots=True)
class StrategoState:
    """A Stratego state; the arena treats it as an opaque immutable value.

    `phase` is "setup" until both setups are placed, then "play". `board` is
    the padded mailbox of `board.py` (the true ranks: views mask them).
    `mover` is the seat to move in play. `ply` counts the moves played (the
    setup is not a ply), `quiet` the plies since the last battle. `key` is the
    Zobrist key of the placement, `movable` each seat's squares holding a
    piece that can move, sorted (that is, in legal order). `streaks` and
    `chase` are the memories of the anti-chase laws (`chase.py`), and
    `chase_overflow` counts the chase keys ever dropped beyond its memory.
    `battles` is the public battle history, `last_move` the last move code
    (-1 before the first). `flag_taken_by` is the seat that captured the
    flag, if any. `legal` holds the mover's legal moves, derived once when the
    state is made, since every turn needs them.
    """

    seed: int | str
    game: int
    phase: str
    board: tuple[int, ...]
    mover: int
    ply: int
    quiet: int
    key: int
    movable: tuple[tuple[int, ...], tuple[int, ...]]
    streaks: tuple[Streak, Streak]
    chase: Chase | None
    chase_overflow: int
    battles: tuple[Battle, ...]
    last_move: int
    flag_taken_by: int | None
    legal: tuple[int, ...]
