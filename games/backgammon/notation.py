"""Backgammon notation: the canonical name of a play, and the tolerant reader.

Rules: `docs/rules.md#backgammon`. Points are the mover's own numbers (24
farthest, 1 nearest), the bar is 25 and off is 0.

Naming. A play is a multiset of single-die steps. One checker's consecutive
steps are joined into one move, keeping an intermediate point only where it
hit (`13/7*/5`); identical moves are grouped (`6/3(2)`); moves are written by
from-point, then to-point, descending. When several step sequences reach the
same position, the name is the joined form with the fewest moves, then the one
whose (from, to) pairs, read in order, are highest. That leaves one tie,
which this module settles: the same pairs with the hit written in different
places (`14/10* 12/10` or `14/10 12/10*`, `14/8 12/10*` or `14/10*/8 12/10`).
The form with fewer intermediate points wins, then the one whose hit marks
stand on earlier moves, then the one whose intermediate points, read in order,
are highest.

The namer gets there without trying every sequence. Joining more steps
always saves a move, so at each point as many arriving checkers as there are
steps leaving go on; the highest pairs come from letting the checkers that
started lowest go on and the others stop, so each path stops as high as it
can; a hit is marked on a checker that stops there if any (no intermediate
point), on the one written first. The test suite checks this against an
exhaustive search over every step order and every assignment of steps to
checkers.

Doubles are named from their paths: `join_step` adds the steps one at a
time, from-points never rising (the order the move search plays them in),
and keeps the paths in written order as it goes, so `name_paths` writes them
without sorting; `name_steps` names any one play from its steps.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from games.core import Illegal, Unreadable

__all__ = [
    "BAR",
    "NONE",
    "OFF",
    "POINT_NAMES",
    "OrderKey",
    "Step",
    "WrittenMove",
    "join_step",
    "name_paths",
    "name_steps",
    "read_play",
]

BAR = 25
OFF = 0
NONE = "NONE"
"""The only legal reply when no checker can move."""

POINT_NAMES: tuple[str, ...] = ("off", *(str(p) for p in range(1, 25)), "bar")
"""How point p (mover's numbering, bar 25, off 0) is written."""

Step = tuple[int, int, int]
"""One die's move: (from, to, 1 if it hit a blot else 0)."""

OrderKey = tuple[tuple[int, ...], int, tuple[bool, ...], tuple[tuple[int, ...], ...]]
"""(pairs read in order, minus the count of intermediate points, hit marks, intermediate
points): the higher, the earlier a play stands in the legal list."""


# -- naming -------------------------------------------------------------------


_Move = tuple[int, int, bool, tuple[int, ...]]
"""(from, to, hit at the end, intermediate points where it hit)."""

_REPEATS = ("", "", "(2)", "(3)", "(4)")
_NO_MARKS = tuple((False,) * n for n in range(5))
_NO_STOPS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(((),) * n for n in range(5))


_PLAIN: tuple[tuple[str, ...], ...] = tuple(
    tuple(f"{POINT_NAMES[origin]}/{POINT_NAMES[end]}" for end in range(26)) for origin in range(26)
)
"""_PLAIN[from][to] is "from/to": naming is the engine's hot path, so the strings are made once."""

_PLAIN_CODED: tuple[str, ...] = tuple(text for row in _PLAIN for text in row)
"""_PLAIN_CODED[from * 26 + to] is "from/to"."""


def _written(move: _Move, count: int) -> str:
    origin, end, hit_at_end, stops = move
    if stops:
        text = POINT_NAMES[origin] + "".join(f"/{POINT_NAMES[stop]}*" for stop in stops)
        text += "/" + POINT_NAMES[end]
    else:
        text = _PLAIN[origin][end]
    if hit_at_end:
        text += "*"
    return text if count == 1 else f"{text}({count})"


def _two_moves(steps: Sequence[Step]) -> list[_Move]:
    """The joined moves of one or two steps, sorted as written."""
    if len(steps) == 1:
        origin, end, hit = steps[0]
        return [(origin, end, hit == 1, ())]
    (a, b, hit_b), (c, d, hit_d) = steps
    if c == b:  # one checker went on from where it landed
        return [(a, d, hit_d == 1, (b,) if hit_b else ())]
    if a == d:  # the same, found in the other order
        return [(c, b, hit_b == 1, (a,) if hit_d else ())]
    if b == d and (hit_b or hit_d):  # both landed on a blot: the mark goes on the first written
        high, low = max(a, c), min(a, c)
        return [(high, b, True, ()), (low, b, False, ())]
    first, second = (a, b, hit_b == 1, ()), (c, d, hit_d == 1, ())
    return [first, second] if first >= second else [second, first]


def name_steps(steps: Sequence[Step]) -> tuple[str, OrderKey]:
    """The canonical name of the play made of `steps` (in any order), and its place in the list."""
    if len(steps) > 2:  # always doubles
        return _name_equal_steps(sorted(steps, reverse=True))
    moves = _two_moves(steps)
    if len(moves) == 1:  # the common shapes are spelled out: naming is the hot path
        (a, b, hit, stops) = move = moves[0]
        return _written(move, 1), ((a, b), -len(stops), (hit,), (stops,))
    first, second = moves
    (a, b, hit_b, stops_b), (c, d, hit_d, stops_d) = moves
    name = _written(first, 2) if first == second else f"{_written(first, 1)} {_written(second, 1)}"
    return name, ((a, b, c, d), -len(stops_b) - len(stops_d), (hit_b, hit_d), (stops_b, stops_d))


def _name_equal_steps(steps: Sequence[Step]) -> tuple[str, OrderKey]:
    """The name and list place of steps of one die, given with from-points never rising."""
    origins: list[int] = []
    ends: list[int] = []
    hits: list[int] = []
    for src, dst, hit in steps:
        join_step(origins, ends, src, dst)
        if hit:
            hits.append(dst)
    return name_paths(origins, ends, hits, steps[0][0] - steps[0][1])


def join_step(origins: list[int], ends: list[int], src: int, dst: int) -> int:
    """Join a step of doubles to the paths so far; the index of the path it moved on, or -1.

    Steps come with from-points never rising. A step from a point where
    checkers arrived carries on the arrived checker that started lowest: paths
    start in falling order, so that is the last path ending there. Else it
    starts a path of its own (-1: undo by popping both lists).
    """
    if src in ends:
        index = len(ends) - 1 - ends[::-1].index(src)
        ends[index] = dst
        return index
    origins.append(src)
    ends.append(dst)
    return -1


def name_paths(
    origins: list[int], ends: list[int], hits: list[int], die: int
) -> tuple[str, OrderKey]:
    """The name and list place of the checkers' paths of a double, as `join_step` builds them.

    `join_step` keeps the paths in written order: origins never rise, and of
    equal origins the last path moves on first, so their ends never rise
    either. `hits` are the points hit, falling (a step that bears off never
    hits, so `die` may be read off any step that does not bear off).
    """
    if not hits:
        return _plain(origins, ends)
    count = len(origins)
    marks = [False] * count
    stops: list[tuple[int, ...]] = [()] * count
    for point in hits:
        if point in ends:  # marked on the first written path stopping there
            marks[ends.index(point)] = True
            continue
        for index in range(count):  # else an intermediate point of the first path through it
            if origins[index] > point > ends[index] and (origins[index] - point) % die == 0:
                stops[index] = (*stops[index], point)
                break
    return _described(list(zip(origins, ends, marks, stops, strict=True)))


def _plain(origins: list[int], ends: list[int]) -> tuple[str, OrderKey]:
    """The name and list place of paths without hits, in written order."""
    parts: list[str] = []
    flat: list[int] = []
    previous, count = -1, 0
    for origin, end in zip(origins, ends, strict=True):
        flat += (origin, end)
        code = origin * 26 + end
        if code != previous:
            if count:
                parts.append(_PLAIN_CODED[previous] + _REPEATS[count])
            previous, count = code, 0
        count += 1
    parts.append(_PLAIN_CODED[previous] + _REPEATS[count])
    paths = len(origins)
    return " ".join(parts), (tuple(flat), 0, _NO_MARKS[paths], _NO_STOPS[paths])


def _described(moves: list[_Move]) -> tuple[str, OrderKey]:
    """The name and list order of joined moves (sorted as written), grouping repeats."""
    parts: list[str] = []
    previous, count = moves[0], 0
    for move in moves:
        if move != previous:
            parts.append(_written(previous, count))
            previous, count = move, 0
        count += 1
    parts.append(_written(previous, count))
    pairs = tuple([point for move in moves for point in move[:2]])
    stops = tuple([move[3] for move in moves])
    depth = -sum([len(via) for via in stops])
    return " ".join(parts), (pairs, depth, tuple([move[2] for move in moves]), stops)


# -- reading ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WrittenMove:
    """One move as a reply wrote it: the points it names, in order, and how often it is played."""

    points: tuple[int, ...]
    """From-point, any intermediate points, to-point (bar 25, off 0)."""
    starred: frozenset[int]
    """Points the reply marked with `*`."""
    count: int


_SEPARATORS = re.compile(r"[\s,;、]+")
_TOKEN = re.compile(r"([a-z0-9]+\*?)((?:/[a-z0-9]+\*?)+)(?:\((\d+)\))?")
_NONE_WORDS = frozenset({"none", "nomove", "nomoves", "pass", "noplay"})


def _tidy(text: str) -> str:
    """Fold width and case, and glue `/`, `*` and `(n)` to their points."""
    text = unicodedata.normalize("NFKC", text).lower().strip().strip(".")
    text = re.sub(r"\s*/\s*", "/", text)
    text = re.sub(r"\s*\*", "*", text)
    return re.sub(r"\s*\(\s*(\d+)\s*\)", r"(\1)", text)


def _point(word: str, first: bool, last: bool, token: str) -> int:
    if word == "bar" and first:
        return BAR
    if word == "off" and last and not first:
        return OFF
    if word.isdigit() and (1 <= int(word) <= 24 or (int(word) == 25 and first)):
        return int(word)
    if word.isdigit() and int(word) == 0 and last and not first:
        return OFF
    raise Unreadable(
        f"{word!r} in {token!r} is not a point: write 1-24 in your own numbering, "
        "'bar' to enter and 'off' to bear off (for example 'bar/22', '6/off')"
    )


def _read_token(token: str) -> WrittenMove:
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise Unreadable(
            f"{token!r} is not a move: write from/to in your own numbering, such as "
            "'13/7', '8/5*', '6/3(2)', 'bar/22' or '6/off'"
        )
    words = (match.group(1) + match.group(2)).split("/")
    points = tuple(
        _point(word.rstrip("*"), i == 0, i == len(words) - 1, token) for i, word in enumerate(words)
    )
    for a, b in pairwise(points):
        if b >= a:
            raise Illegal(
                f"{token!r} moves from {POINT_NAMES[a]} to {POINT_NAMES[b]}: checkers move "
                "from higher to lower points in your own numbering (24 farthest, 1 nearest)"
            )
    count = int(match.group(3) or 1)
    if not 1 <= count <= 4:
        raise Illegal(f"{token!r} repeats a move {count} times: a roll moves at most 4 checkers")
    starred = frozenset(p for p, word in zip(points, words, strict=True) if word.endswith("*"))
    return WrittenMove(points, starred, count)


def read_play(text: str) -> tuple[WrittenMove, ...] | None:
    """Read a play in any of the accepted forms; None means `NONE` (no checker can move).

    Accepted: spaces, commas or full-width spaces between moves, any case,
    with or without `*`, repeats `6/3(2)`, chains `13/11/8`, `bar` (or 25)
    and `off` (or 0). Raises Unreadable for text that is not a play at all
    and Illegal for a move that runs backwards.
    """
    tidy = _tidy(text)
    if not tidy:
        raise Unreadable("the move is empty: write a play such as '13/7 8/7', or NONE")
    if _SEPARATORS.sub("", tidy) in _NONE_WORDS:
        return None
    moves = tuple(_read_token(token) for token in _SEPARATORS.split(tidy) if token)
    if not moves:
        raise Unreadable(f"{text!r} holds no move: write a play such as '13/7 8/7', or NONE")
    return moves
