"""The fast play generator and namer against the plain one they replaced, kept here as a reference.

`reference_plays` below is the engine as it was before plays were paired and
doubles named from their paths: a search of both die orders in place, one
step sequence per resulting position (keyed by the bytes of both sides), and
every play named from its steps by joining them one point at a time. It is
slow and plain. Seeded random games, walked with the reference's own plays
on raw sides (so the engine never picks the positions), must give the same
legal list at every position: the same names, in the same order, each
reaching the same two sides. The walk meets the bar, bearing off and
doubles often; the test counts them so a change in the walk cannot quietly
drop a kind of position.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from games.backgammon.moves import legal_plays
from games.backgammon.notation import place
from games.backgammon.state import OPENING

BAR, OFF = 25, 0
NAMES = ("off", *(str(p) for p in range(1, 25)), "bar")

Step = tuple[int, int, int]
Move = tuple[int, int, bool, tuple[int, ...]]
Play = tuple[str, bytes, bytes]


# --- the reference search -----------------------------------------------------------------


class _Search:
    """The positions reached with the most dice (then the largest total), one step list each."""

    def __init__(self) -> None:
        self.best = (0, 0)
        self.found: dict[bytes, tuple[Step, ...]] = {}

    def record(self, me: list[int], opp: list[int], steps: list[Step], total: int) -> None:
        rank = (len(steps), total)
        if rank < self.best:
            return
        if rank > self.best:
            self.best = rank
            self.found = {}
        self.found.setdefault(bytes(me) + bytes(opp), tuple(steps))


def _walk(
    me: list[int],
    opp: list[int],
    dice: tuple[int, ...],
    top: int,
    outside: int,
    steps: list[Step],
    search: _Search,
) -> None:
    """Play dice[len(steps):] from points at most `top`, recording every position reached."""
    depth = len(steps)
    die = dice[depth]
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
        if depth + 1 == len(dice):
            search.record(me, opp, steps, sum(dice))
        else:
            entered = 1 if src > 6 >= dst else 0
            _walk(me, opp, dice, src if doubles else BAR, outside - entered, steps, search)
        steps.pop()
        if blockers:
            opp[BAR] -= 1
            opp[25 - dst] = 1
        me[dst] -= 1
        me[src] += 1
        moved = True
    if not moved:
        search.record(me, opp, steps, sum(dice[:depth]))


def reference_plays(mover: bytes, opponent: bytes, dice: tuple[int, int]) -> list[Play]:
    """The legal list the old way: (name, mover after, opponent after), in legal order."""
    search = _Search()
    orders = [dice * 2] if dice[0] == dice[1] else [dice, dice[::-1]]
    for order in orders:
        _walk(list(mover), list(opponent), order, BAR, sum(mover[7:]), [], search)
    if search.best[0] == 0:
        return [("NONE", mover, opponent)]
    named = [(_name_steps(steps), key) for key, steps in search.found.items()]
    named.sort(key=lambda item: item[0][1], reverse=True)
    return [(name, key[:26], key[26:]) for (name, _), key in named]


# --- the reference namer ------------------------------------------------------------------


def _written(move: Move, count: int) -> str:
    origin, end, hit_at_end, stops = move
    text = NAMES[origin] + "".join(f"/{NAMES[stop]}*" for stop in stops) + "/" + NAMES[end]
    text += "*" if hit_at_end else ""
    return text if count == 1 else f"{text}({count})"


def _two_moves(steps: Sequence[Step]) -> list[Move]:
    if len(steps) == 1:
        origin, end, hit = steps[0]
        return [(origin, end, hit == 1, ())]
    (a, b, hit_b), (c, d, hit_d) = steps
    if c == b:
        return [(a, d, hit_d == 1, (b,) if hit_b else ())]
    if a == d:
        return [(c, b, hit_b == 1, (a,) if hit_d else ())]
    if b == d and (hit_b or hit_d):
        return [(max(a, c), b, True, ()), (min(a, c), b, False, ())]
    first, second = (a, b, hit_b == 1, ()), (c, d, hit_d == 1, ())
    return [first, second] if first >= second else [second, first]


def _join_doubles(steps: Sequence[Step]) -> list[Move]:
    """Join one die's steps (from-points falling) into paths: arrivals go on, lowest first."""
    hits = {to for _, to, hit in steps if hit}
    moves: list[Move] = []
    landed: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    index = 0
    while index < len(steps):
        point, to, _ = steps[index]
        leaving = 1
        while index + leaving < len(steps) and steps[index + leaving][0] == point:
            leaving += 1
        index += leaving
        arriving = landed.pop(point, [])
        going = min(len(arriving), leaving)
        moving, staying = arriving[:going], arriving[going:]
        if point in hits and staying:
            origin, stops = staying.pop()
            moves.append((origin, point, True, stops))
        elif point in hits:
            origin, stops = moving[-1]
            moving[-1] = (origin, (*stops, point))
        moves.extend((origin, point, False, stops) for origin, stops in staying)
        landed.setdefault(to, []).extend([(point, ())] * (leaving - going) + moving)
    for point, paths in landed.items():
        last = len(paths) - 1
        moves.extend((o, point, point in hits and i == last, s) for i, (o, s) in enumerate(paths))
    moves.sort(reverse=True)
    return moves


def _name_steps(steps: Sequence[Step]) -> tuple[str, tuple[object, ...]]:
    """(name, the rules' order key as a tuple) of the play made of `steps`."""
    if len(steps) > 2:
        ordered = sorted(steps, reverse=True)
        sources = {origin for origin, _, _ in ordered}
        if any(to in sources for _, to, _ in ordered):
            moves = _join_doubles(ordered)
        else:
            moves = [(origin, to, hit == 1, ()) for origin, to, hit in ordered]
    else:
        moves = _two_moves(steps)
    parts: list[str] = []
    previous, count = moves[0], 0
    for move in moves:
        if move != previous:
            parts.append(_written(previous, count))
            previous, count = move, 0
        count += 1
    parts.append(_written(previous, count))
    pairs = tuple(point for move in moves for point in move[:2])
    stops = tuple(move[3] for move in moves)
    key = (pairs, -sum(len(via) for via in stops), tuple(m[2] for m in moves), stops)
    return " ".join(parts), key


# --- the comparison -----------------------------------------------------------------------


def _engine(mover: bytes, opponent: bytes, dice: tuple[int, int]) -> list[Play]:
    table = legal_plays(mover, opponent, dice)
    plays = [(play.name, play.mover, play.opponent) for play in table.plays]
    assert list(table.names) == [name for name, _, _ in plays]
    assert [p.order for p in table.plays] == sorted((p.order for p in table.plays), reverse=True)
    return plays


def _kinds(mover: bytes, dice: tuple[int, int]) -> list[str]:
    """The kinds of position and roll a case is, as the engine tells them apart."""
    kinds = ["doubles" if dice[0] == dice[1] else "two dice"]
    if mover[BAR]:
        kinds.append("bar")
    elif not any(mover[7:25]):
        kinds.append("bearing off")
    elif sum(mover[7:25]) == 1:
        kinds.append("one checker outside")
    return kinds


def test_the_engine_lists_what_the_reference_lists_along_random_games() -> None:
    rng = random.Random(20260512)
    seen: Counter[str] = Counter()
    for _ in range(20):
        mover, opponent = OPENING, OPENING
        for ply in itertools.count():
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            rolls = [dice, (rng.randint(1, 6), rng.randint(1, 6))]
            if ply % 2:  # a double more often than one roll in six
                rolls.append((rng.randint(1, 6),) * 2)
            lists = [reference_plays(mover, opponent, roll) for roll in rolls]
            for roll, expected in zip(rolls, lists, strict=True):
                assert _engine(mover, opponent, roll) == expected, (
                    list(mover),
                    list(opponent),
                    roll,
                )
                seen.update(_kinds(mover, roll))
                seen["no play"] += expected[0][0] == "NONE"
            _, after, other = rng.choice(lists[0])
            if after[OFF] == 15:
                break
            mover, opponent = other, after
    assert seen["doubles"] + seen["two dice"] > 4_000, seen
    kinds = ("doubles", "bar", "bearing off", "one checker outside", "no play")
    assert min(seen[kind] for kind in kinds) > 100, seen


def test_the_reference_knows_the_opening_table() -> None:
    rolls = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    assert sum(len(reference_plays(OPENING, OPENING, roll)) for roll in rolls) == 447
    assert len(reference_plays(OPENING, OPENING, (1, 1))) == 42


# --- the list place -----------------------------------------------------------------------

_MOVES = st.lists(st.integers(0, 26 * 26 - 1), min_size=1, max_size=4)


@st.composite
def _keys(draw: st.DrawFn, count: int) -> tuple[list[int], list[bool], list[tuple[int, ...]]]:
    codes = draw(st.lists(st.integers(0, 26 * 26 - 1), min_size=count, max_size=count))
    marks = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    budget = draw(st.integers(0, 4 - count))
    stops: list[tuple[int, ...]] = [() for _ in range(count)]
    for _ in range(budget):
        index = draw(st.integers(0, count - 1))
        if len(stops[index]) < 3:
            low = stops[index][-1] - 1 if stops[index] else 24
            if low >= 1:
                stops[index] = (*stops[index], draw(st.integers(1, low)))
    return codes, marks, stops


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(_keys(n), _keys(n))), _MOVES, _MOVES)
def test_place_orders_plays_as_the_rules_key_does(
    same_count: tuple[tuple[list[int], list[bool], list[tuple[int, ...]]], ...],
    codes_a: list[int],
    codes_b: list[int],
) -> None:
    # Moves decide first, fewer moves read lower, as tuples do.
    a, b = (
        place(codes_a, [False] * len(codes_a), [()] * len(codes_a)),
        place(codes_b, [False] * len(codes_b), [()] * len(codes_b)),
    )
    assert (a > b) == (tuple(codes_a) > tuple(codes_b))
    assert (a == b) == (codes_a == codes_b)
    # With as many moves, the whole key: moves, fewer intermediate points, marks, the points.
    (codes, marks, stops), (codes_2, marks_2, stops_2) = same_count

    def key(c: list[int], m: list[bool], s: list[tuple[int, ...]]) -> tuple[object, ...]:
        return (tuple(c), -sum(map(len, s)), tuple(m), tuple(s))

    first, second = place(codes, marks, stops), place(codes_2, marks_2, stops_2)
    assert (first > second) == (key(codes, marks, stops) > key(codes_2, marks_2, stops_2))
    assert (first == second) == (key(codes, marks, stops) == key(codes_2, marks_2, stops_2))
