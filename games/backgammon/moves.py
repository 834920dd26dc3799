"""Backgammon's moves (its plays): generation, the legal list, and matching a written play.

Rules: `docs/rules.md#backgammon`. A side is 26 counts (as bytes) in that side's own
numbering: index 0 is off, 1-24 the points, 25 the bar. The opponent's point
p is the mover's point 25 - p, so the opponent's count on the mover's point t
is `opp[25 - t]`.

Rules: use as many dice as possible, then the largest total of dice used
(both die orders tried); a checker on the bar enters before anything else
moves; bearing off needs every checker home (points 1-6), and a die larger
than needed bears off only from the highest occupied point. Plays reaching
the same position are one play; with no play the only reply is `NONE`.

The search moves checkers in place on two lists and undoes each step, and it
keeps one step sequence per resulting position (keyed by the bytes of both
sides), so no board is copied per step. Doubles are searched with
from-points never rising: four equal steps can always be played in that
order (entering first, bearing off last), so each multiset of steps is met
once instead of up to 24 times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import NamedTuple

from games.backgammon.notation import (
    BAR,
    NONE,
    OFF,
    POINT_NAMES,
    OrderKey,
    Step,
    WrittenMove,
    name_steps,
)
from games.backgammon.state import Side
from games.core import Illegal

__all__ = ["Play", "PlayTable", "find_play", "legal_plays"]


class Play(NamedTuple):
    """One legal play: its place in the list, its canonical name and both sides after it.

    A named tuple rather than a dataclass: the engine makes one per legal play,
    and tuples are made (and sorted, place first) in C.
    """

    order: OrderKey
    name: str
    mover: Side
    opponent: Side


@dataclass(frozen=True, slots=True)
class PlayTable:
    """Every legal play of one position and roll, in legal order, and the plays by name."""

    plays: tuple[Play, ...]
    names: tuple[str, ...]
    """The canonical names, in legal order."""
    by_name: Mapping[str, Play]

    @classmethod
    def of(cls, plays: list[Play]) -> PlayTable:
        """The table of `plays`, already sorted."""
        names = tuple(play.name for play in plays)
        return cls(tuple(plays), names, MappingProxyType(dict(zip(names, plays, strict=True))))


class _Search:
    """The positions reached with the most dice (then the largest total), one step list each."""

    __slots__ = ("best", "found")

    def __init__(self) -> None:
        self.best = (0, 0)
        self.found: dict[bytes, tuple[Step, ...]] = {}

    def record(self, mover: list[int], opponent: list[int], steps: list[Step], total: int) -> None:
        """Keep the position if no play so far used more dice (or a larger total)."""
        rank = (len(steps), total)
        if rank < self.best:
            return
        if rank > self.best:
            self.best = rank
            self.found = {}
        key = bytes(mover) + bytes(opponent)
        if key not in self.found:
            self.found[key] = tuple(steps)

    def keep(
        self, mover: list[int], opponent: list[int], steps: list[Step], rank: tuple[int, int]
    ) -> None:
        """Keep a position reached with every die (`rank`), dropping plays that used fewer."""
        if self.best != rank:
            self.best = rank
            self.found = {}
        key = bytes(mover) + bytes(opponent)
        if key not in self.found:
            self.found[key] = tuple(steps)


def _walk(
    me: list[int],
    opp: list[int],
    dice: tuple[int, ...],
    top: int,
    outside: int,
    steps: list[Step],
    search: _Search,
) -> None:
    """Play dice[len(steps):] from points at most `top`, recording every position reached.

    `outside` counts the mover's checkers on the bar and points 7-24 (bearing
    off waits for it to reach 0). The last die's positions go straight into
    the table rather than through one more call: this loop is the engine's
    hot path.
    """
    depth = len(steps)
    die = dice[depth]
    last = depth + 1 == len(dice)
    rank = (len(dice), sum(dice))
    doubles = dice[0] == dice[-1]
    moved = False
    sources = (BAR,) if me[BAR] else range(min(top, 24), 0, -1)
    for src in sources:
        if not me[src]:
            continue
        dst = src - die
        if dst > 0:
            blockers = opp[25 - dst]
            if blockers > 1:
                continue
            me[src] -= 1
            me[dst] += 1
            if blockers:
                opp[25 - dst] = 0
                opp[BAR] += 1
            steps.append((src, dst, blockers))
            if last:
                search.keep(me, opp, steps, rank)
            else:
                entered = 1 if src > 6 >= dst else 0
                _walk(me, opp, dice, src if doubles else BAR, outside - entered, steps, search)
            steps.pop()
            if blockers:
                opp[BAR] -= 1
                opp[25 - dst] = 1
            me[dst] -= 1
            me[src] += 1
        else:
            if outside or (dst < 0 and any(me[src + 1 : 7])):
                continue
            me[src] -= 1
            me[OFF] += 1
            steps.append((src, OFF, 0))
            if last:
                search.keep(me, opp, steps, rank)
            else:
                _walk(me, opp, dice, src if doubles else BAR, outside, steps, search)
            steps.pop()
            me[OFF] -= 1
            me[src] += 1
        moved = True
    if not moved:
        search.record(me, opp, steps, sum(dice[:depth]))


def _no_play(mover: Side, opponent: Side) -> PlayTable:
    return PlayTable.of([Play(((), 0, (), ()), NONE, mover, opponent)])


@lru_cache(maxsize=64)
def legal_plays(mover: Side, opponent: Side, dice: tuple[int, int]) -> PlayTable:
    """Every legal play of `mover` with `dice` against `opponent`, in legal order.

    Cached for a few recent positions: the arena asks for the list, reads a
    reply, then applies the play, so a position is searched once. The cache is
    kept small on purpose: thousands of cached tables slow every garbage
    collection down more than the hits save.
    """
    search = _Search()
    outside = sum(mover[7:])
    orders = [dice * 2] if dice[0] == dice[1] else [dice, dice[::-1]]
    for order in orders:
        _walk(list(mover), list(opponent), order, BAR, outside, [], search)
    if search.best[0] == 0:
        return _no_play(mover, opponent)
    plays = []
    for key, steps in search.found.items():
        name, order_key = name_steps(steps)
        plays.append(Play(order_key, name, key[:26], key[26:]))
    plays.sort(reverse=True)  # by place alone: no two plays share one
    return PlayTable.of(plays)


# -- matching a written play --------------------------------------------------


def _hits(before: Side, after: Side) -> frozenset[int]:
    """The mover's points where the play hit a blot (opponent sides, before and after)."""
    return frozenset(25 - p for p in range(1, 25) if before[p] == 1 and after[p] == 0)


def _moved(mover: Side, written: tuple[WrittenMove, ...]) -> Side:
    """The mover's side after the written moves (in any order), or Illegal if it cannot be."""
    counts = list(mover)
    for move in written:
        counts[move.points[0]] -= move.count
        counts[move.points[-1]] += move.count
    short = [p for p in range(26) if counts[p] < 0]
    if short:
        point = short[0]
        raise Illegal(
            f"the play moves more checkers from {POINT_NAMES[point]} than the "
            f"{mover[point]} you have there: pick a play from the legal list"
        )
    return bytes(counts)


def find_play(
    table: PlayTable, mover: Side, opponent: Side, written: tuple[WrittenMove, ...]
) -> Play:
    """The legal play reaching the position `written` describes; Illegal if none or several.

    Checkers' resulting places decide first; if they leave the hits open (a
    checker could have passed through a blot or not), the points the reply
    named settle it: every named landing point holding a blot, and every
    starred point, was hit. The play hitting exactly those wins, else the only
    play hitting at least those.
    """
    after = _moved(mover, written)
    candidates = [play for play in table.plays if play.mover == after]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise Illegal("no legal play with these dice moves your checkers that way")
    named = {p for move in written for p in move.points[1:] if p != OFF}
    claimed = {p for p in named if opponent[25 - p] == 1}
    claimed |= {p for move in written for p in move.starred}
    hits = [(_hits(opponent, play.opponent), play) for play in candidates]
    exact = [play for hit, play in hits if hit == claimed]
    if len(exact) == 1:
        return exact[0]
    covering = [play for hit, play in hits if hit >= claimed]
    if len(covering) == 1:
        return covering[0]
    options = " or ".join(play.name for play in candidates)
    raise Illegal(f"the play could mean {options}: name the points where it hits")
