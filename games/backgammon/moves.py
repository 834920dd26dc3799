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

Plays are found as the positions they reach, each once, and only then
named, once each. A play's position follows from its multiset of (from, to)
steps: a blot is hit when a step lands on it, whatever the order.

- Doubles are searched with from-points never rising: four equal steps can
  always be played in that order (entering first, bearing off last), and
  the steps of one die follow from the position they reach, so every leaf
  of the search is a play of its own and no position is compared. The
  search moves checkers in place on two lists and undoes each step, and it
  keeps the checkers' paths as it goes (`notation.join_step`), so each play
  is named where it is found.
- Two different dice, while no checker can bear off, need no search: two
  checkers' steps are legal in either order, so each pair of a high step and
  a low step of the position is one play, and a checker that plays both dice
  is one play per route, or one for both routes when neither stopped on a
  blot. A checker on the bar enters first with either die.
- Two dice near the end (no checker on the bar and at most one outside the
  home board, so a die may bear off after the other) take the plain search:
  both die orders, one step list per position, keyed by the bytes of both
  sides.

A table keeps each play's name and steps; the sides after a play are worked
out when asked for, since a ply applies one play of the list.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from itertools import compress
from operator import itemgetter
from types import MappingProxyType
from typing import NamedTuple

from games.backgammon.notation import (
    BAR,
    NONE,
    OFF,
    PAIR_STEPS,
    POINT_NAMES,
    OrderKey,
    Step,
    WrittenMove,
    join_step,
    name_paths,
    name_steps,
)
from games.backgammon.state import Side
from games.core import Illegal

__all__ = ["Play", "PlayTable", "find_play", "legal_plays"]

_POINTS_DOWN = tuple(range(24, 0, -1))


class Play(NamedTuple):
    """One legal play: its place in the list, its canonical name and both sides after it."""

    order: OrderKey
    name: str
    mover: Side
    opponent: Side


_Entry = tuple[OrderKey, str, tuple[Step, ...]]
"""A play as the search finds it: its place in the list, its name, its steps."""
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
    steps: tuple[tuple[Step, ...], ...]
    """Each play's single-die steps (none for `NONE`)."""

    @classmethod
    def of(cls, mover: Side, opponent: Side, entries: list[_Entry]) -> PlayTable:
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


_NO_PLAY: list[_Entry] = [(0, NONE, ())]


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
        entries = _doubles(mover, opponent, high)
    elif mover[BAR] > 1:
        entries = [_named(steps) for steps in _entering(opponent, high, low)]
    elif mover[BAR] or sum(mover[7:25]) > 1:
        entries = _two_dice(mover, opponent, high, low)
    else:
        entries = [_named(steps) for steps in _near_the_end(mover, opponent, high, low)]
    return PlayTable.of(mover, opponent, entries or list(_NO_PLAY))


# -- two dice -----------------------------------------------------------------


def _entering(opponent: Side, high: int, low: int) -> list[tuple[Step, ...]]:
    """Two or more checkers on the bar: each die enters one where it can, nothing else moves."""
    steps = tuple((BAR, BAR - die, opponent[die]) for die in (high, low) if opponent[die] < 2)
    return [steps] if steps else []


def _steps(held: list[int], opponent: Side, die: int) -> list[Step]:
    """Every step of `die` from the mover's `held` points, none bearing off."""
    return [
        (src, src - die, blockers)
        for src in held
        if src > die and (blockers := opponent[25 - src + die]) < 2
    ]


def _two_dice(mover: Side, opponent: Side, high: int, low: int) -> list[_Entry]:
    """The plays of two different dice while no checker can bear off, each play once."""
    plays: list[_Entry] = []
    joined: set[int] = set()  # start * 26 + end of the plays of one checker through no hit
    held = list(compress(_POINTS_DOWN, mover[24:0:-1]))
    highs, lows = _steps(held, opponent, high), _steps(held, opponent, low)
    if mover[BAR]:
        entries = [
            (die, other, (BAR, BAR - die, opponent[die]))
            for die, other in ((high, low), (low, high))
            if opponent[die] < 2
        ]
        for die, other, entry in entries:
            _pair_with(mover, entry, lows if die == high else highs, plays, joined)
            _on_through(mover, opponent, entry, other, plays, joined)
        return plays or [_named((entry,)) for _, _, entry in entries[:1]]
    for first in highs:
        _pair_with(mover, first, lows, plays, joined)
    for first in highs:
        _on_through(mover, opponent, first, low, plays, joined)
    for first in lows:
        _on_through(mover, opponent, first, high, plays, joined)
    return plays or [_named((step,)) for step in highs or lows]


def _named(steps: tuple[Step, ...]) -> _Entry:
    """A play given by its steps, with its name and place."""
    name, place = name_steps(steps)
    return place, name, steps


def _pair_with(
    mover: Side, first: Step, seconds: list[Step], plays: list[_Entry], joined: set[int]
) -> None:
    """`first` with each step of the other die, as plays.

    A second step from where `first` landed, or onto where it started, is one
    checker moving on through a point the mover held (so no hit there): that
    play is also met from its other route, so it is kept once. The pairs of two
    checkers are named here, from `PAIR_STEPS`: one per legal play of two dice.
    """
    src, dst, hit = first
    alone = mover[src] == 1
    code = src * 26 + dst
    text, as_first, as_second = PAIR_STEPS[hit][code]
    for second in seconds:
        origin, end, blot = second
        if origin == dst:
            if _once(joined, src, end):
                plays.append(_named((first, second)))
        elif end == src:
            if _once(joined, origin, dst):
                plays.append(_named((second, first)))
        elif origin == src and alone:
            continue
        elif end == dst and blot:  # both land on one blot: the first hits it
            plays.append(_named((first, (origin, end, 0))))
        else:  # two checkers' steps, written as `name_pair` writes them
            other = origin * 26 + end
            other_text, other_first, other_second = PAIR_STEPS[blot][other]
            if code > other:
                plays.append((as_first + other_second, f"{text} {other_text}", (first, second)))
            else:
                plays.append((other_first + as_second, f"{other_text} {text}", (first, second)))


def _on_through(
    mover: Side,
    opponent: Side,
    first: Step,
    die: int,
    plays: list[_Entry],
    joined: set[int],
) -> None:
    """The checker of `first` moving on with `die` from a point the mover did not hold.

    Without a hit on the way it reaches what its other route reaches, so that
    play is kept once; with one, the position is its own.
    """
    src, dst, blot = first
    if mover[dst] or dst <= die or opponent[25 - dst + die] > 1:
        return
    end = dst - die
    if blot or _once(joined, src, end):
        plays.append(_named((first, (dst, end, opponent[25 - end]))))


def _once(joined: set[int], start: int, end: int) -> bool:
    """Whether one checker's play from `start` to `end` through no hit is new to `joined`."""
    key = start * 26 + end
    if key in joined:
        return False
    joined.add(key)
    return True


def _near_the_end(mover: Side, opponent: Side, high: int, low: int) -> list[tuple[Step, ...]]:
    """The plays of two different dice when a die may bear off: the plain search, both orders."""
    search = _Search()
    outside = sum(mover[7:])
    for order in ((high, low), (low, high)):
        _walk(list(mover), list(opponent), order, outside, [], search)
    return list(search.found.values()) if search.best[0] else []


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


def _walk(
    me: list[int],
    opp: list[int],
    dice: tuple[int, int],
    outside: int,
    steps: list[Step],
    search: _Search,
) -> None:
    """Play dice[len(steps):] in order, recording every position reached (in place, undone).

    `outside` counts the mover's checkers on points 7-24: bearing off waits for it to reach 0.
    """
    depth = len(steps)
    die = dice[depth]
    moved = False
    for src in _POINTS_DOWN:
        if not me[src]:
            continue
        dst = src - die
        if dst > 0:
            blockers = opp[25 - dst]
            if blockers > 1:
                continue
        elif outside or (dst < 0 and any(me[src + 1 : 7])):
            continue
        else:
            dst, blockers = OFF, 0
        me[src] -= 1
        me[dst] += 1
        if blockers:
            opp[25 - dst] = 0
            opp[BAR] += 1
        steps.append((src, dst, blockers))
        if depth == 0:
            _walk(me, opp, dice, outside - (src > 6 >= dst), steps, search)
        else:
            search.record(me, opp, steps, dice[0] + dice[1])
        steps.pop()
        if blockers:
            opp[BAR] -= 1
            opp[25 - dst] = 1
        me[dst] -= 1
        me[src] += 1
        moved = True
    if not moved:
        search.record(me, opp, steps, sum(dice[:depth]))


# -- doubles ------------------------------------------------------------------


class _Double:
    """The search of one double: its die, the sources, and the plays of the most steps so far.

    Besides the board, the search keeps the checkers' paths (`join_step`)
    and the points hit as it goes, so a play is named from them when found.
    """

    __slots__ = ("codes", "die", "ends", "entries", "hits", "most", "on_board", "sources")

    def __init__(self, die: int, sources: tuple[int, ...]) -> None:
        self.die = die
        self.sources = sources
        self.on_board = sum(1 for src in sources if src > die)
        """How many sources lead to a point (the rest bear off, last since sources fall)."""
        self.most = 0
        self.entries: list[_Entry] = []
        self.codes: list[int] = []
        self.ends: list[int] = []
        self.hits: list[int] = []

    def record(self, steps: list[Step]) -> None:
        """Keep the play unless plays of more steps are known (then drop those of fewer)."""
        if len(steps) <= self.most:
            if len(steps) < self.most or not steps:  # no step at all is no play
                return
        else:
            self.most = len(steps)
            self.entries = []
        name, order = name_paths(self.codes, self.ends, self.hits, self.die)
        self.entries.append((order, name, tuple(steps)))

    def four(self, found: list[_Entry]) -> None:
        """Keep plays of four steps, the most there are."""
        if self.most < 4:
            self.most = 4
            self.entries = found
        else:
            self.entries += found


def _doubles(mover: Side, opponent: Side, die: int) -> list[_Entry]:
    """The plays of a double: checkers on the bar enter first, then the search of the rest."""
    me, opp = list(mover), list(opponent)
    search = _Double(die, _sources(me, opp, die))
    steps: list[Step] = []
    if me[BAR]:
        if opp[die] > 1:  # the entry point is held: nothing moves
            return []
        entering = min(me[BAR], 4)
        steps = [(BAR, BAR - die, opp[die])] + [(BAR, BAR - die, 0)] * (entering - 1)
        search.codes = [BAR * 26 + BAR - die] * entering
        search.ends = [BAR - die] * entering
        if opp[die]:
            search.hits = [BAR - die]
            opp[die], opp[BAR] = 0, opp[BAR] + 1
        me[BAR] -= entering
        me[BAR - die] += entering
    if len(steps) == 4 or me[BAR]:
        search.record(steps)
    elif len(steps) == 3:
        _last_step(me, opp, 0, sum(me[7:]), steps, search)
    else:
        _walk_double(me, opp, 0, sum(me[7:]), steps, search)
    return search.entries


def _sources(me: list[int], opp: list[int], die: int) -> tuple[int, ...]:
    """The points a step of `die` may ever leave, highest first: held or reached, target open."""
    reached = [count > 0 for count in me]
    reached[BAR - die] = reached[BAR - die] or me[BAR] > 0
    sources = []
    for src in _POINTS_DOWN:
        if not reached[src]:
            continue
        dst = src - die
        if dst > 0:
            if opp[25 - dst] > 1:
                continue
            reached[dst] = True
        sources.append(src)
    return tuple(sources)


def _walk_double(
    me: list[int], opp: list[int], start: int, outside: int, steps: list[Step], search: _Double
) -> None:
    """Play the rest of four steps from search.sources[start:], recording every play.

    `outside` counts the mover's checkers on points 7-24 (bearing off waits
    for it to reach 0). Every step is undone on the way back.
    """
    die, sources, codes, ends, hits = (
        search.die,
        search.sources,
        search.codes,
        search.ends,
        search.hits,
    )
    moved = False
    for index in range(start, search.on_board if outside else len(sources)):
        src = sources[index]
        if not me[src]:
            continue
        dst = src - die
        if dst > 0:
            blot = opp[25 - dst]
            entered = src > 6 >= dst
        elif outside or (dst < 0 and any(me[src + 1 : 7])):
            continue
        else:
            dst, blot, entered = OFF, 0, False
        me[src] -= 1
        me[dst] += 1
        if blot:
            opp[25 - dst] = 0
            opp[BAR] += 1
            hits.append(dst)
        steps.append((src, dst, blot))
        path = join_step(codes, ends, src, dst)
        if len(steps) == 3:
            _last_step(me, opp, index, outside - entered, steps, search)
        else:
            _walk_double(me, opp, index, outside - entered, steps, search)
        if path < 0:
            codes.pop()
            ends.pop()
        else:
            codes[path] -= dst - src
            ends[path] = src
        steps.pop()
        if blot:
            hits.pop()
            opp[BAR] -= 1
            opp[25 - dst] = 1
        me[dst] -= 1
        me[src] += 1
        moved = True
    if not moved:
        search.record(steps)


def _last_step(
    me: list[int], opp: list[int], start: int, outside: int, steps: list[Step], search: _Double
) -> None:
    """Every fourth step from search.sources[start:], each a play, named on the spot.

    Nothing is searched after it, so the board is left as it is: this loop
    runs once per play of a double, the engine's hot path.
    """
    die, sources, codes, ends, hits = (
        search.die,
        search.sources,
        search.codes,
        search.ends,
        search.hits,
    )
    played = tuple(steps)
    found: list[_Entry] = []
    for index in range(start, search.on_board if outside else len(sources)):
        src = sources[index]
        if not me[src]:
            continue
        dst = src - die
        if dst > 0:
            blot = opp[25 - dst]
        elif outside or (dst < 0 and any(me[src + 1 : 7])):
            continue
        else:
            dst, blot = OFF, 0
        if blot:
            hits.append(dst)
        path = join_step(codes, ends, src, dst)
        name, order = name_paths(codes, ends, hits, die)
        found.append((order, name, (*played, (src, dst, blot))))
        if path < 0:
            codes.pop()
            ends.pop()
        else:
            codes[path] -= dst - src
            ends[path] = src
        if blot:
            hits.pop()
    if found:
        search.four(found)
    else:
        search.record(steps)


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
