"""The plays of a double: a search with from-points never rising that names each play it finds.

Rules: `docs/rules.md#backgammon` (sides as in `moves`). Four equal steps can
always be played with from-points never rising (entering first, bearing off
last), and the steps of one die follow from the position they reach, so the
search meets each play once, at a leaf of its own, and compares no
positions. It moves checkers in place on two lists and undoes each step, and
it keeps the checkers' paths as it goes (`notation.join_step`): the order it
plays the steps in is the order the paths are written in, so each play is
named where it is found (`notation.name_paths`). The last step is tried
without moving the board, since nothing is searched after it.
"""

from __future__ import annotations

from games.backgammon.notation import BAR, OFF, Named, Step, join_step, name_paths
from games.backgammon.state import POINTS_DOWN, Side

__all__ = ["double_plays"]


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
        self.entries: list[Named] = []
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

    def four(self, found: list[Named]) -> None:
        """Keep plays of four steps, the most there are."""
        if self.most < 4:
            self.most = 4
            self.entries = found
        else:
            self.entries += found


def double_plays(mover: Side, opponent: Side, die: int) -> list[Named]:
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
    for src in POINTS_DOWN:
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
    found: list[Named] = []
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
