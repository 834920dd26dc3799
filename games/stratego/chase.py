"""Stratego's two anti-chase laws (`docs/rules.md#stratego`), as small records and pure steps.

**Two-square rule.** A piece may not cross the same square boundary on more
than three consecutive turns of its owner. Each seat keeps a `Streak`: where
the piece that made its last move stands now, the square that move left, and
the boundary masks of that piece's last (at most three) consecutive moves. A
Scout counts every boundary it passes; attacks count as moves; whatever the
opponent does in between does not matter. The boundaries in all three masks
are closed to that piece on its owner's next turn.

**Continuous-chase rule** (the definitions of the rules).
A *threat* is a move that ends adjacent to an opponent's movable piece
without attacking. An *evade* moves a threatened piece, without attacking, to
a square not adjacent to the threatening piece. A *chase* is an unbroken
alternation of threats and evades. While a chase runs, the chaser may not
make a threat that recreates a position (Zobrist key of piece placement) that
already occurred after a threat of this chase, unless the threatening piece
simply returns to the square it left on its previous turn (the owner's last
move was that piece's, from the square it now returns to); that two-move
oscillation is then bounded by the two-square rule. A battle, or a move that
is neither the expected threat nor the expected evade, ends the chase; a
threat that does not continue one starts a new one.

Readings the rules leave open, fixed here: an evade that also threatens
counts as the evade (the chase goes on, the evader does not become a
chaser); after an evade, any threat by the chaser continues the chase,
whichever of its pieces makes it and whichever piece it threatens (the
alternation is unbroken); the chase keeps its most recent 32 after-threat
keys (`CHASE_MEMORY`), and every key dropped beyond that is counted in the
state (`chase_overflow`) so a replay can record it.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.stratego.board import BOMB, FLAG, OWNER, STEPS

__all__ = ["CHASE_MEMORY", "Chase", "Streak", "chase_refuses", "next_chase", "threatened"]

CHASE_MEMORY = 32
_TWO_SQUARE_TURNS = 3
# Cell kind bits (kind + 1) of the pieces that can never move, hence never be threatened.
_IMMOBILE = (FLAG + 1, BOMB + 1)


@dataclass(frozen=True, slots=True)
class Streak:
    """One seat's memory for the two-square rule.

    `square` is where the piece that made the seat's last move stands now (-1
    once it died in that move), `left` the square that move started from, and
    `crossed` the boundary masks of that piece's consecutive moves, oldest
    first, at most three.
    """

    square: int
    left: int
    crossed: tuple[int, ...]

    def closed(self) -> int:
        """The boundaries the piece on `square` may not cross on its owner's next turn."""
        if len(self.crossed) < _TWO_SQUARE_TURNS:
            return 0
        first, second, third = self.crossed
        return first & second & third

    def after(self, a: int, b: int, crossed: int, survived: bool) -> Streak:
        """The seat's streak after it moves the piece on `a` to `b`, crossing `crossed`."""
        kept = self.crossed[1 - _TWO_SQUARE_TURNS :] if a == self.square else ()
        return Streak(b if survived else -1, a, (*kept, crossed))


NO_STREAK = Streak(-1, -1, ())
"""A seat that has not moved yet (also every seat of a `from_board` position)."""


@dataclass(frozen=True, slots=True)
class Chase:
    """The running chase: who chases, with which piece, whom, and what it has seen.

    `chaser` is the seat making the threats; `threatener` the square of the
    piece that made the last threat; `targets` the squares of the pieces that
    threat reached, or after an evade the evader's new square alone; `keys`
    the placement keys after each threat of this chase, oldest first.
    """

    chaser: int
    threatener: int
    targets: tuple[int, ...]
    keys: tuple[int, ...]


def threatened(board: tuple[int, ...] | list[int], to: int, seat: int) -> tuple[int, ...]:
    """The opponent's movable pieces next to `to`: whom a quiet move of `seat` there threatens."""
    enemy = (1 - seat) * OWNER
    found: list[int] = []
    for step in STEPS:
        v = board[to + step]
        if v > 0 and v & OWNER == enemy and v & 15 not in _IMMOBILE:
            found.append(to + step)
    return tuple(found)


def chase_refuses(
    chase: Chase | None,
    seat: int,
    board: tuple[int, ...],
    a: int,
    b: int,
    key: int,
    streak: Streak,
) -> bool:
    """Whether the chase law forbids `seat`'s quiet move `a`-`b` on `board`, giving `key`.

    Only the chaser's threat after an evade can be refused: one that recreates
    a remembered position without being a return to the square the piece left
    on its previous turn.
    """
    if chase is None or chase.chaser != seat or key not in chase.keys:
        return False
    if streak.square == a and streak.left == b:
        return False  # the return: the two-square rule bounds this oscillation
    return bool(threatened(board, b, seat))


def next_chase(
    chase: Chase | None, seat: int, a: int, b: int, targets: tuple[int, ...], key: int
) -> tuple[Chase | None, int]:
    """The chase after `seat`'s quiet move `a`-`b` threatening `targets` and giving placement `key`.

    Returns the new chase (None when there is none) and how many old keys were
    dropped beyond `CHASE_MEMORY`. A battle ends a chase: callers pass None then.
    """
    if chase is not None and chase.chaser != seat:
        # On a grid a quiet move always leaves the threatener's side; checked as the rule says.
        if a in chase.targets and abs(b - chase.threatener) not in (1, 12):
            return Chase(chase.chaser, chase.threatener, (b,), chase.keys), 0
    elif chase is not None and targets:
        keys = (*chase.keys, key)
        dropped = max(0, len(keys) - CHASE_MEMORY)
        return Chase(seat, b, targets, keys[dropped:]), dropped
    if targets:
        return Chase(seat, b, targets, (key,)), 0
    return None, 0
