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
from itertools import compress, pairwise

from games.core import Illegal, Unreadable

__all__ = [
    "BAR",
    "NONE",
    "OFF",
    "PAIR_STEPS",
    "POINT_NAMES",
    "Named",
    "OrderKey",
    "Step",
    "WrittenMove",
    "join_step",
    "name_pair",
    "name_paths",
    "name_steps",
    "place",
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

OrderKey = int
"""A play's place in the legal list: the higher, the earlier. One integer (see `place`) that
orders plays as (moves read in order, minus the count of intermediate points, hit marks,
intermediate points) does, so the list sorts on plain integers."""


Named = tuple[OrderKey, str, tuple[Step, ...]]
"""A play as the move search names it: its place in the list, its name, its steps."""


# -- naming -------------------------------------------------------------------


_REPEATS = ("", "", "(2)", "(3)", "(4)")
_NO_STOPS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(((),) * n for n in range(5))

# A place's digits, most significant first: the moves (each its code + 1, 0 past the last
# move: a play of fewer moves reads lower, as a shorter tuple does), 7 minus the count of
# intermediate points, the hit marks (a bit each), each move's intermediate points (each
# point + 1, three at most). Four moves of four steps, so every digit stays in its range.
_MOVE_STOPS = 26**3
_BY_MARKS = _MOVE_STOPS**4
_BY_DEPTH = 16 * _BY_MARKS
_BY_MOVES = 8 * _BY_DEPTH
_PLAIN = 7 * _BY_DEPTH
"""The place's digits past the moves for a play without intermediate points or hit marks."""
_MOVE_PLACES = tuple(
    tuple((code + 1) * 677 ** (3 - index) * _BY_MOVES for code in range(26 * 26))
    for index in range(4)
)
"""_MOVE_PLACES[i][code]: what the i-th move written adds to its play's place."""
_MARK_PLACES = tuple(_BY_MARKS << (3 - index) for index in range(4))
_TAILS = tuple(
    _PLAIN + _MARK_PLACES[0] * (marks >> 1) + _MARK_PLACES[1] * (marks & 1) for marks in range(4)
)
"""The place's digits past the moves for up to two moves without intermediate points, by
the first two moves' marks (2 for the first, 1 for the second)."""
_STOPS_PLACES = tuple(_MOVE_STOPS ** (3 - index) for index in range(4))


_WRITTEN: tuple[tuple[str, ...], tuple[str, ...]] = (
    tuple(f"{POINT_NAMES[code // 26]}/{POINT_NAMES[code % 26]}" for code in range(26 * 26)),
    tuple(f"{POINT_NAMES[code // 26]}/{POINT_NAMES[code % 26]}*" for code in range(26 * 26)),
)
"""_WRITTEN[hit][from * 26 + to] is "from/to", with "*" after it if it hit: naming is the
engine's hot path, so the strings are made once."""
PAIR_STEPS: tuple[tuple[tuple[str, int, int], ...], ...] = tuple(
    tuple(
        (
            _WRITTEN[hit][code],
            _MOVE_PLACES[0][code] + _TAILS[2 * hit],
            _MOVE_PLACES[1][code] + _MARK_PLACES[1] * hit,
        )
        for code in range(26 * 26)
    )
    for hit in (0, 1)
)
"""PAIR_STEPS[hit][from * 26 + to]: a step as one of two checkers' steps, made once: its
text, and its part of the pair's place if written first or second. The pair is written
`f"{first} {second}"`, the step of the higher code first, and its place is the sum of the
parts (`name_pair`; the move search composes its pairs from this table the same way)."""


def place(codes: Sequence[int], marks: Sequence[bool], stops: Sequence[tuple[int, ...]]) -> int:
    """The list place of moves (coded from * 26 + to) in written order, from their parts."""
    value: int = sum(map(tuple.__getitem__, _MOVE_PLACES, codes)) + _PLAIN
    return value + sum(compress(_MARK_PLACES, marks)) + _stops_place(stops)


def _stops_place(stops: Sequence[tuple[int, ...]]) -> int:
    """What the moves' intermediate points change in a place (their count, then the points)."""
    value = -sum(map(len, stops)) * _BY_DEPTH
    for index, points in enumerate(stops):
        digits = 0
        for point in (*points, -1, -1)[:3]:
            digits = digits * 26 + point + 1
        value += digits * _STOPS_PLACES[index]
    return value


def name_steps(steps: Sequence[Step]) -> tuple[str, OrderKey]:
    """The canonical name of the play made of `steps` (in any order), and its place in the list."""
    if len(steps) > 2:  # always doubles
        return _name_equal_steps(sorted(steps, reverse=True))
    if len(steps) == 1:
        (a, b, hit) = steps[0]
        return _WRITTEN[hit][a * 26 + b], _MOVE_PLACES[0][a * 26 + b] + _TAILS[2 * hit]
    (a, b, hit_b), (c, d, hit_d) = steps
    if c == b:  # one checker went on from where it landed
        return _one_checker(a, b, d, hit_b, hit_d)
    if a == d:  # the same, found in the other order
        return _one_checker(c, a, b, hit_d, hit_b)
    if b == d and (hit_b or hit_d):  # both landed on a blot: the mark goes on the first written
        high, low = (a, c) if a >= c else (c, a)
        return name_pair((high, b, 1), (low, b, 0))
    if (a, b) == (c, d):  # two checkers alike: doubles of which only two steps play
        code = a * 26 + b
        return _WRITTEN[0][code] + "(2)", _MOVE_PLACES[0][code] + _MOVE_PLACES[1][code] + _PLAIN
    return name_pair(steps[0], steps[1])


def name_pair(first: Step, second: Step) -> tuple[str, OrderKey]:
    """The name and list place of two checkers' steps, neither going on from the other's.

    The caller settles two steps landing on one blot (only the first written
    hits it); here each step is written as it is, the higher first.
    """
    (a, b, hit_b), (c, d, hit_d) = first, second
    high, low = a * 26 + b, c * 26 + d
    if high < low:
        high, low, hit_b, hit_d = low, high, hit_d, hit_b
    text, as_first, _ = PAIR_STEPS[hit_b][high]
    other, _, as_second = PAIR_STEPS[hit_d][low]
    return f"{text} {other}", as_first + as_second


def _one_checker(
    start: int, via: int, end: int, via_hit: int, end_hit: int
) -> tuple[str, OrderKey]:
    """The name and list place of one checker's two steps through `via`."""
    code = start * 26 + end
    if not via_hit:
        return _WRITTEN[end_hit][code], _MOVE_PLACES[0][code] + _TAILS[2 * end_hit]
    name = f"{POINT_NAMES[start]}/{POINT_NAMES[via]}*/{POINT_NAMES[end]}" + "*" * end_hit
    return name, place((code,), (end_hit == 1,), ((via,),))


def _name_equal_steps(steps: Sequence[Step]) -> tuple[str, OrderKey]:
    """The name and list place of steps of one die, given with from-points never rising."""
    codes: list[int] = []
    ends: list[int] = []
    hits: list[int] = []
    for src, dst, hit in steps:
        join_step(codes, ends, src, dst)
        if hit:
            hits.append(dst)
    return name_paths(codes, ends, hits, steps[0][0] - steps[0][1])


def join_step(codes: list[int], ends: list[int], src: int, dst: int) -> int:
    """Join a step of doubles to the paths so far; the index of the path it moved on, or -1.

    A path is kept as its move's code (from * 26 + to) and its end. Steps come
    with from-points never rising. A step from a point where checkers arrived
    carries on the arrived checker that started lowest: paths start in falling
    order, so that is the last path ending there. Else it starts a path of its
    own. Undo: `codes[index] -= dst - src` and `ends[index] = src`, or pop both.
    """
    if src in ends:
        index = len(ends) - 1
        while ends[index] != src:
            index -= 1
        ends[index] = dst
        codes[index] += dst - src
        return index
    codes.append(src * 26 + dst)
    ends.append(dst)
    return -1


def name_paths(
    codes: list[int], ends: list[int], hits: list[int], die: int
) -> tuple[str, OrderKey]:
    """The name and list place of the checkers' paths of a double, as `join_step` builds them.

    `join_step` keeps the paths in written order: origins never rise, and of
    equal origins the last path moves on first, so their ends never rise
    either; equal moves stand side by side. `hits` are the points hit,
    falling (no step that bears off hits, so `die` is any hitting step's).
    """
    texts, value, alike = _moves(codes)
    if not hits:
        return _grouped(texts) if alike else " ".join(texts), value
    stops: list[tuple[int, ...]] = []
    for point in hits:
        if point in ends:  # marked on the first written path stopping there
            index = ends.index(point)
            value += _MARK_PLACES[index]
            texts[index] += "*"
        else:  # else an intermediate point of the first written path through it
            stops = stops or list(_NO_STOPS[len(codes)])
            index = _through(codes, ends, point, die)
            stops[index] = (*stops[index], point)
            texts[index] = _with_stops(codes[index], stops[index])
    name = _grouped(texts) if alike else " ".join(texts)  # a mark only tells moves apart
    return name, value + _stops_place(stops) if stops else value


_W0 = _WRITTEN[0]
_M0, _M1, _M2, _M3 = _MOVE_PLACES


def _moves(codes: list[int]) -> tuple[list[str], int, bool]:
    """Each move's text, the place of the moves without marks or intermediate points, and
    whether two moves are alike (they would stand side by side).

    Spelled out for each count of moves: a play of a double is named here,
    the engine's hot path.
    """
    count = len(codes)
    if count == 4:
        a, b, c, d = codes
        texts = [_W0[a], _W0[b], _W0[c], _W0[d]]
        return texts, _M0[a] + _M1[b] + _M2[c] + _M3[d] + _PLAIN, a == b or b == c or c == d
    if count == 3:
        a, b, c = codes
        return [_W0[a], _W0[b], _W0[c]], _M0[a] + _M1[b] + _M2[c] + _PLAIN, a == b or b == c
    if count == 2:
        a, b = codes
        return [_W0[a], _W0[b]], _M0[a] + _M1[b] + _PLAIN, a == b
    return [_W0[codes[0]]], _M0[codes[0]] + _PLAIN, False


def _through(codes: list[int], ends: list[int], point: int, die: int) -> int:
    """The first path passing through `point` (its origin above, its end below, one die apart)."""
    for index, code in enumerate(codes):
        origin = code // 26
        if origin > point > ends[index] and (origin - point) % die == 0:
            return index
    raise ValueError(f"no path passes through point {point}")


def _with_stops(code: int, stops: tuple[int, ...]) -> str:
    """How a move is written with intermediate points where it hit (its end not yet marked).

    Stops are added before the end's mark: hits come falling, the end last.
    """
    via = "".join([f"/{POINT_NAMES[stop]}*" for stop in stops])
    return f"{POINT_NAMES[code // 26]}{via}/{POINT_NAMES[code % 26]}"


def _grouped(texts: list[str]) -> str:
    """Moves written in order, equal neighbours grouped as `6/3(2)`."""
    parts: list[str] = []
    previous, count = texts[0], 0
    for text in texts:
        if text != previous:
            parts.append(previous + _REPEATS[count])
            previous, count = text, 0
        count += 1
    parts.append(previous + _REPEATS[count])
    return " ".join(parts)


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
        f"{word!r} in {token!r} is not a point: write a point 1-24 in your own numbering, "
        "bar as the <from> of a checker entering and off as the <to> of one bearing off."
    )


def _read_token(token: str) -> WrittenMove:
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise Unreadable(
            f"{token!r} is not a move: write each move as <from>/<to> in your own numbering, "
            "with * after a point where it hits and (<n>) after a move played n times; bar is "
            "the <from> of a checker entering, off the <to> of one bearing off."
        )
    words = (match.group(1) + match.group(2)).split("/")
    points = tuple(
        _point(word.rstrip("*"), i == 0, i == len(words) - 1, token) for i, word in enumerate(words)
    )
    for a, b in pairwise(points):
        if b >= a:
            raise Illegal(
                f"{token!r} moves from {POINT_NAMES[a]} to {POINT_NAMES[b]}: checkers move "
                "from higher to lower points in your own numbering (24 farthest, 1 nearest)."
            )
    count = int(match.group(3) or 1)
    if not 1 <= count <= 4:
        raise Illegal(f"{token!r} repeats a move {count} times: a roll moves at most 4 checkers.")
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
        raise Unreadable(
            "the move is empty: write one play, its moves as <from>/<to> separated by spaces, "
            "or NONE when no checker can move."
        )
    if _SEPARATORS.sub("", tidy) in _NONE_WORDS:
        return None
    moves = tuple(_read_token(token) for token in _SEPARATORS.split(tidy) if token)
    if not moves:
        raise Unreadable(
            f"{text!r} holds no move: write one play, its moves as <from>/<to> separated by "
            "spaces, or NONE when no checker can move."
        )
    return moves
