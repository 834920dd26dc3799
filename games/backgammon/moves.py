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

Plays are found as the positions they reach, each once, and named once
each as they are found: `doubles` searches a double, `two_dice` pairs the
steps of two dice (a play's position follows from its multiset of (from,
to) steps: a blot is hit when a step lands on it, whatever the order). The
table sorts them by their places (`notation.place`) and keeps each play's
name and steps; the sides after a play are worked out when asked for, since
a ply applies one play of the list.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from operator import itemgetter
from types import MappingProxyType
from typing import NamedTuple

from games.backgammon.doubles import double_plays
from games.backgammon.notation import (
    BAR,
    NONE,
    OFF,
    POINT_NAMES,
    Named,
    OrderKey,
    Step,
    WrittenMove,
)
from games.backgammon.state import Side
from games.backgammon.two_dice import two_dice_plays
from games.core import Illegal

__all__ = ["Play", "PlayTable", "find_play", "legal_plays"]


class Play(NamedTuple):
    """One legal play: its place in the list, its canonical name and both sides after it."""

    order: OrderKey
    name: str
    mover: Side
    opponent: Side


_place_of = itemgetter(0)


class PlayTable(NamedTuple):
    """Every legal play of one position and roll, in legal order.

    The names are what every ply reads; a play's sides are worked out from
    its steps when asked for (`play`, `plays`), since a ply applies one. A
    named tuple, as `Play` is: one is made per position searched.
    """

    mover: Side
    opponent: Side
    """The sides before the play."""
    names: tuple[str, ...]
    """The canonical names, in legal order."""
    orders: tuple[OrderKey, ...]
    """Each play's place (`notation.place`), falling."""
    steps: tuple[tuple[Step, ...], ...]
    """Each play's single-die steps (none for `NONE`)."""

    @classmethod
    def of(cls, mover: Side, opponent: Side, entries: list[Named]) -> PlayTable:
        """The table of distinct plays, sorted here into legal order."""
        entries.sort(key=_place_of, reverse=True)  # no two plays share a place
        orders, names, steps = zip(*entries)  # noqa: B905 (entries are triples)
        return cls(mover, opponent, names, orders, steps)

    def play(self, name: str) -> Play | None:
        """The legal play named `name` exactly (canonically), or None."""
        try:
            index = self.names.index(name)
        except ValueError:
            return None
        return self._play(index)

    @property
    def plays(self) -> tuple[Play, ...]:
        """Every play with both sides after it, in legal order."""
        return tuple(self._play(index) for index in range(len(self.names)))

    @property
    def by_name(self) -> Mapping[str, Play]:
        """The plays by canonical name."""
        return MappingProxyType({play.name: play for play in self.plays})

    def _play(self, index: int) -> Play:
        mover, opponent = _after(self.mover, self.opponent, self.steps[index])
        return Play(self.orders[index], self.names[index], mover, opponent)


def _after(mover: Side, opponent: Side, steps: tuple[Step, ...]) -> tuple[Side, Side]:
    """Both sides once `steps` are played: a hit sends the blot to the opponent's bar."""
    me = bytearray(mover)
    for src, dst, _ in steps:
        me[src] -= 1
        me[dst] += 1
    hits = [dst for _, dst, blot in steps if blot]
    if not hits:
        return bytes(me), opponent
    opp = bytearray(opponent)
    for dst in hits:
        opp[25 - dst] = 0
    opp[BAR] += len(hits)
    return bytes(me), bytes(opp)


_NO_PLAY: list[Named] = [(0, NONE, ())]


@lru_cache(maxsize=64)
def legal_plays(mover: Side, opponent: Side, dice: tuple[int, int]) -> PlayTable:
    """Every legal play of `mover` with `dice` against `opponent`, in legal order.

    Cached for a few recent positions: the arena asks for the list, reads a
    reply, then applies the play, so a position is searched once. The cache is
    kept small on purpose: thousands of cached tables slow every garbage
    collection down more than the hits save.
    """
    high, low = dice if dice[0] >= dice[1] else dice[::-1]
    if high == low:
        entries = double_plays(mover, opponent, high)
    else:
        entries = two_dice_plays(mover, opponent, high, low)
    return PlayTable.of(mover, opponent, entries or list(_NO_PLAY))


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
            f"{mover[point]} you have there: pick a play from the legal list."
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
        raise Illegal("no legal play with these dice moves your checkers that way.")
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
    raise Illegal(f"the play could mean {options}: name the points where it hits.")
