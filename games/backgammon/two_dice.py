"""The plays of two different dice: paired from the position's steps, or searched near the end.

Rules: `docs/rules.md#backgammon` (sides as in `moves`). While no checker can
bear off, two dice need no search: two checkers' steps are legal in either
order, so each pair of a high step and a low step of the position is one
play, and a checker that plays both dice is one play per route (through
`start - high` or `start - low`), or one for both routes when neither stopped
on a blot. A checker on the bar enters first with either die; two or more on
the bar enter one each, and nothing else moves. Near the end (no checker on
the bar and at most one outside the home board, so a die may bear off after
the other) the plain search runs instead: both die orders in place on two
lists, one step list per position, keyed by the bytes of both sides.

Each play is named once, as it is found; two checkers' steps are written
from `notation.PAIR_STEPS`.
"""

from __future__ import annotations

from itertools import compress

from games.backgammon.notation import BAR, OFF, PAIR_STEPS, Named, Step, name_steps
from games.backgammon.state import POINTS_DOWN, Side

__all__ = ["two_dice_plays"]


def two_dice_plays(mover: Side, opponent: Side, high: int, low: int) -> list[Named]:
    """Every legal play of `mover` with the dice `high` > `low`, named, in no order (or none)."""
    if mover[BAR] > 1:
        return [_named(steps) for steps in _entering(opponent, high, low)]
    if mover[BAR] or sum(mover[7:25]) > 1:
        return _paired(mover, opponent, high, low)
    return [_named(steps) for steps in _near_the_end(mover, opponent, high, low)]


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


def _paired(mover: Side, opponent: Side, high: int, low: int) -> list[Named]:
    """The plays of two different dice while no checker can bear off, each play once."""
    plays: list[Named] = []
    joined: set[int] = set()  # start * 26 + end of the plays of one checker through no hit
    held = list(compress(POINTS_DOWN, mover[24:0:-1]))
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


def _named(steps: tuple[Step, ...]) -> Named:
    """A play given by its steps, with its name and place."""
    name, place = name_steps(steps)
    return place, name, steps


def _pair_with(
    mover: Side, first: Step, seconds: list[Step], plays: list[Named], joined: set[int]
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
    plays: list[Named],
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
    for src in POINTS_DOWN:
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
