"""The anti-chase laws of `seeds/stratego-rules.txt`: the two-square rule and the continuous chase.

Every sequence is written out move by move; the counts (three crossings,
twelve new positions in a lap around a lake, 36 around the board's edge) are
worked out by hand in the comments.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace
from itertools import pairwise

import pytest

from games import Illegal, Outcome
from games.stratego import StrategoState
from games.stratego.board import MOVE_NAMES
from games.stratego.moves import pseudo_moves
from tests.games.stratego_positions import FILES, LAKES, G, play, position

# --- the two-square rule -------------------------------------------------------------


@pytest.mark.parametrize(
    "blue",
    [("a9-a8", "a8-a7", "a7-a6"), ("a9-a8", "j9-j8", "a8-a9"), ("j9-j8", "j8-j9", "j9-j8")],
)
def test_the_fourth_crossing_of_a_boundary_is_refused_whatever_blue_does(
    blue: tuple[str, str, str],
) -> None:
    s = position({"a1": "M", "e4": "F", "j10": "Y", "a9": "X", "j9": "R"})
    s = play(s, "e4-e5", blue[0], "e5-e4", blue[1], "e4-e5", blue[2])
    # e5's neighbours: d5 is a lake, e4 would be the fourth crossing of e4|e5.
    assert G.legal_moves(s, 0) == ("e5-e6", "e5-f5")
    with pytest.raises(Illegal, match=r"two-square rule.*the boundary between e4 and e5 on"):
        G.parse(s, 0, "e5-e4")


def test_the_count_is_of_consecutive_turns_of_the_same_piece() -> None:
    s = position({"a1": "M", "e4": "F", "b2": "F", "j10": "Y", "a9": "X", "j9": "R"})
    s = play(s, "e4-e5", "a9-a8", "e5-e4", "j9-j8", "b2-b3", "a8-a7", "e4-e5", "j8-j7")
    assert "e5-e4" in G.legal_moves(s, 0)  # b2-b3 broke the run: this is e4|e5's second in a row
    s = play(s, "e5-e4", "a7-a6", "e4-e5", "j7-j6")
    assert "e5-e4" not in G.legal_moves(s, 0)


def test_crossings_by_different_pieces_do_not_add_up() -> None:
    s = position({"a1": "M", "e1": "D", "e2": "D", "e4": "F", "e5": "R", "j10": "Y", "a9": "X"})
    # Three Red turns in a row cross e4|e5, each by another piece: the Sergeant's attack
    # (both Sergeants die), then the Scout from e2, then the Scout from e1.
    s = play(s, "e4-e5", "a9-a8", "e2-e6", "a8-a7", "e1-e5", "a7-a6")
    assert "e5-e4" in G.legal_moves(s, 0)  # the e1 Scout's second crossing only


def test_a_scout_crosses_every_boundary_it_passes() -> None:
    s = position({"a1": "M", "e2": "D", "j10": "Y", "a9": "X"})
    s = play(s, "e2-e6", "a9-a8", "e6-e3", "a8-a9", "e3-e5", "a9-a8")
    # e2-e6, e6-e3 and e3-e5 all crossed e3|e4 and e4|e5: no move down the file, long or short.
    legal = G.legal_moves(s, 0)
    assert [m for m in legal if m.startswith("e5-e") and int(m[4:]) < 5] == []
    assert [m for m in legal if m.startswith("e5-e")] == [f"e5-e{r}" for r in range(6, 11)]
    with pytest.raises(
        Illegal, match=r"two-square rule.*the boundaries between e3 and e4 and between e4 and e5 on"
    ):
        G.parse(s, 0, "e5-e1")
    with pytest.raises(Illegal, match="two-square rule"):
        G.parse(s, 0, "e5-e4")


def test_attacks_count_as_moves() -> None:
    s = position({"a1": "M", "e4": "L", "e5": "P", "j10": "Y", "j9": "R"})
    s = play(s, "e4-e5", "j9-j8", "e5-e4", "j8-j7", "e4-e5", "j7-j6")
    assert G.view(s, 0)["captured"]["enemy"] == ["2"]
    assert "e5-e4" not in G.legal_moves(s, 0)


def test_a_player_whose_only_moves_the_laws_forbid_loses() -> None:
    s = position({"a1": "M", "j1": "F", "i1": "B", "i2": "B", "j3": "B", "a10": "Y", "e9": "X"})
    s = play(s, "j1-j2", "e9-e8", "j2-j1", "e8-e7", "j1-j2", "e7-e6")
    # j2-j1 would cross j1|j2 a fourth time; i2 and j3 are Red's own bombs.
    assert G.legal_moves(s, 0) == ()
    assert G.outcome(s) == Outcome((-1, 1), "complete", "no-moves", "Red has no legal move")


# --- the continuous-chase rule ---------------------------------------------------------

# The ring of twelve squares around the lake c5 d5 c6 d6, each next to the one before.
RING = ("b4", "c4", "d4", "e4", "e5", "e6", "e7", "d7", "c7", "b7", "b6", "b5")


def lap_start() -> StrategoState:
    """Red's Marshal on b5 (RING[11]) about to chase Blue's General on c4 (RING[1])."""
    return position({"b5": "L", "c4": "W", "j1": "M", "j10": "Y"})


def test_a_chase_around_a_lake_refuses_the_thirteenth_threat() -> None:
    s = lap_start()
    for k in range(1, 13):
        # Threat k: the Marshal steps RING[k-2] -> RING[k-1], next to the General on RING[k].
        threat = f"{RING[(k - 2) % 12]}-{RING[(k - 1) % 12]}"
        assert threat in G.legal_moves(s, 0), f"threat {k}"
        s = play(s, threat)
        # The evade RING[k] -> RING[k+1] leaves every square next to the Marshal.
        s = play(s, f"{RING[k % 12]}-{RING[(k + 1) % 12]}")
    assert s.chase is not None
    assert len(s.chase.keys) == 12
    # Threat 13, b5-b4, would recreate the position after threat 1 (Marshal b4, General c4).
    assert "b5-b4" not in G.legal_moves(s, 0)
    assert "b5-a5" in G.legal_moves(s, 0)
    with pytest.raises(Illegal, match="continuous-chase rule"):
        G.parse(s, 0, "b5-b4")


def test_leaving_the_chase_clears_its_memory() -> None:
    s = lap_start()
    s = play(s, "b5-b4", "c4-d4", "b4-c4", "d4-e4")
    s = play(s, "c4-c3", "e4-e5")  # c3 touches nothing of Blue's: no threat, the chase is over
    assert s.chase is None
    s = play(s, "c3-c4", "e5-e6", "c4-d4")  # d4 is next to nothing: still no chase
    assert s.chase is None


def test_the_return_exception_hands_the_oscillation_to_the_two_square_rule() -> None:
    s = position({"e5": "L", "f4": "W", "a1": "M", "j10": "Y"})
    s = play(s, "e5-e4")  # threat: e4 touches f4; Marshal's 1st crossing of e4|e5
    first = s.key
    s = play(s, "f4-f5", "e4-e5")  # evade (f5 is not next to e4), threat, 2nd crossing
    s = play(s, "f5-f4")  # evade
    # e5-e4 recreates the position after the first threat, but the Marshal returns to
    # the square it left on its previous turn: allowed, and its 3rd crossing of e4|e5.
    assert "e5-e4" in G.legal_moves(s, 0)
    s = play(s, "e5-e4")
    assert s.key == first
    assert s.chase is not None
    assert s.chase.keys.count(first) == 2
    s = play(s, "f4-f5")
    # e4-e5 is a return too, but the fourth crossing: the two-square rule refuses it.
    assert "e4-e5" not in G.legal_moves(s, 0)
    with pytest.raises(Illegal, match="two-square rule"):
        G.parse(s, 0, "e4-e5")


def test_after_an_evade_a_threat_to_another_piece_continues_the_chase() -> None:
    s = position({"e3": "L", "f4": "W", "e6": "V", "a1": "M", "j10": "Y"})
    s = play(s, "e3-e4", "f4-g4")  # threat on the General, which evades (g4 is not next to e4)
    s = play(s, "e4-e5")  # threat on the Colonel on e6: the alternation goes on
    assert s.chase is not None
    assert len(s.chase.keys) == 2
    s = play(s, "g4-g3")  # the General moves, but the Colonel was the one threatened
    assert s.chase is None


def test_a_new_chase_starts_with_an_empty_memory() -> None:
    s = position({"e5": "L", "f4": "W", "a1": "M", "j10": "Y"})
    s = play(s, "e5-e4", "f4-f5", "e4-e5", "f5-f4")
    assert s.chase is not None
    assert len(s.chase.keys) == 2
    s = play(s, "e5-e6", "f4-f3")  # e6 touches nothing of Blue's: the chase ends here
    s = play(s, "e6-e5", "f3-f4")
    assert s.chase is None
    s = play(s, "e5-e4", "f4-f5", "e4-e5", "f5-f4")  # a new chase: its own memory
    assert s.chase is not None
    assert len(s.chase.keys) == 2


# The board's edge, 36 squares, each next to the one before; no square of it is a lake.
EDGE = (
    tuple(f"{f}1" for f in FILES)
    + tuple(f"j{r}" for r in range(2, 11))
    + tuple(f"{f}10" for f in reversed(FILES[:-1]))
    + tuple(f"a{r}" for r in range(9, 1, -1))
)


def test_a_chase_longer_than_its_memory_keeps_the_last_32_and_counts_the_rest() -> None:
    assert len(EDGE) == 36
    s = position({"a2": "L", "b1": "W", "e3": "M", "e8": "Y"})  # Marshal EDGE[35], General EDGE[1]
    after_threat = {}
    for k in range(1, 37):
        s = play(s, f"{EDGE[(k - 2) % 36]}-{EDGE[(k - 1) % 36]}")
        after_threat[k] = s.key
        s = play(s, f"{EDGE[k % 36]}-{EDGE[(k + 1) % 36]}")
        assert s.chase is not None
        assert len(s.chase.keys) == min(k, 32)
        assert s.chase_overflow == max(0, k - 32)
    assert s.chase is not None
    assert s.chase.keys == tuple(after_threat[k] for k in range(5, 37))
    # Threat 37 would recreate the position after threat 1, which the memory has dropped.
    assert "a2-a1" in G.legal_moves(s, 0)


# --- the laws against a literal reference -------------------------------------------------


@dataclass
class RefChase:
    """A chase as the reference sees it: squares by name, positions as whole placements."""

    chaser: int
    by: str
    targets: list[str]
    positions: list[tuple[int, ...]]


class Reference:
    """Both laws re-derived from the move history, literally, without the engine's memories.

    Positions are compared as tuples of the whole board's pieces (no Zobrist
    keys), boundaries as sets of square pairs (no bit masks), and the two-square
    rule looks at the seat's last three moves themselves.
    """

    def __init__(self) -> None:
        self.moves: dict[int, list[tuple[str, str, bool]]] = {0: [], 1: []}
        self.chase: RefChase | None = None

    def record(self, before: StrategoState, move: str, after: StrategoState) -> None:
        seat, (a, b) = before.mover, move.split("-")
        attack = piece(before, b) is not None
        self.moves[seat].append((a, b, piece(after, b) == (seat, True)))
        targets = [] if attack else threatened(after, seat, b)
        chase = self.chase
        if attack:
            self.chase = None
        elif chase is not None and chase.chaser != seat:
            if a in chase.targets and not adjacent(b, chase.by):
                self.chase = RefChase(chase.chaser, chase.by, [b], chase.positions)
            else:
                self.chase = RefChase(seat, b, targets, [placement(after)]) if targets else None
        elif chase is not None and targets:
            self.chase = RefChase(seat, b, targets, [*chase.positions, placement(after)])
        else:
            self.chase = RefChase(seat, b, targets, [placement(after)]) if targets else None

    def refuses(self, s: StrategoState, move: str) -> bool:
        seat, (a, b) = s.mover, move.split("-")
        last = self.moves[seat][-3:]
        same_piece = len(last) == 3 and all(m[2] for m in last) and last[2][1] == a
        same_piece = same_piece and last[0][1] == last[1][0] and last[1][1] == last[2][0]
        if same_piece:
            closed = set.intersection(*(crossings(m[0], m[1]) for m in last))
            if closed & crossings(a, b):
                return True
        chase = self.chase
        if chase is None or chase.chaser != seat or piece(s, b) is not None:
            return False
        if self.moves[seat] and self.moves[seat][-1][:2] == (b, a):
            return False  # the return to the square it left on its previous turn
        board = list(s.board)
        board[cell(b)], board[cell(a)] = board[cell(a)], 0
        after = replace(s, board=tuple(board))
        remembered = chase.positions[-32:]
        return placement(after) in remembered and bool(threatened(after, seat, b))


def piece(s: StrategoState, square: str) -> tuple[int, bool] | None:
    """(owner, movable) of the piece on `square`, or None."""
    v = s.board[cell(square)]
    return None if v <= 0 else (v >> 4 & 1, (v & 15) not in (1, 12))


def threatened(s: StrategoState, seat: int, square: str) -> list[str]:
    return [n for n in neighbours(square) if piece(s, n) == (1 - seat, True)]


def cell(square: str) -> int:
    return (FILES.index(square[0]) + 1) * 12 + int(square[1:])


def neighbours(square: str) -> list[str]:
    f, r = FILES.index(square[0]), int(square[1:])
    near = [(f - 1, r), (f, r - 1), (f, r + 1), (f + 1, r)]
    return [f"{FILES[x]}{y}" for x, y in near if 0 <= x < 10 and 1 <= y <= 10]


def adjacent(x: str, y: str) -> bool:
    return y in neighbours(x)


def crossings(a: str, b: str) -> set[frozenset[str]]:
    """The boundaries (pairs of squares) a straight move from `a` to `b` passes."""
    fa, ra, fb, rb = FILES.index(a[0]), int(a[1:]), FILES.index(b[0]), int(b[1:])
    df, dr = (fb > fa) - (fb < fa), (rb > ra) - (rb < ra)
    path = [(fa + i * df, ra + i * dr) for i in range(max(abs(fb - fa), abs(rb - ra)) + 1)]
    names = [f"{FILES[f]}{r}" for f, r in path]
    return {frozenset(pair) for pair in pairwise(names)}


def placement(s: StrategoState) -> tuple[int, ...]:
    return tuple(v & 31 if v > 0 else v for v in s.board)


SPARSE = [
    {"a1": "M", "j10": "Y", "e4": "L", "f7": "W", "b3": "K", "h8": "X"},
    {"a1": "M", "j10": "Y", "c4": "J", "d7": "V", "e4": "D", "f7": "P", "b2": "K", "i9": "W"},
    {"j1": "M", "a10": "Y", "e3": "L", "e8": "X", "a4": "F", "j7": "R", "b7": "W"},
]
# Blue bombs wall in the ring around the lake c5 d5 c6 d6, so a hunt there laps it.
RING_WALLS = dict.fromkeys(
    sorted({n for sq in RING for n in neighbours(sq)} - set(RING) - set(LAKES)), "N"
)


def find(s: StrategoState, seat: int, kind: int) -> str | None:
    """The square of `seat`'s first piece of `kind` (the test's policy may peek)."""
    for sq in (f"{f}{r}" for f in FILES for r in range(1, 11)):
        v = s.board[cell(sq)]
        if v > 0 and (v & 15) - 1 == kind and (v >> 4 & 1) == seat:
            return sq
    return None


def hunt(s: StrategoState, legal: list[str], rng: random.Random) -> str:
    """Red's Marshal hunts Blue's General; the General evades only when threatened."""
    marshal, general = find(s, 0, 10), find(s, 1, 9)
    quiet = [m for m in legal if s.board[cell(m.split("-")[1])] == 0]
    if marshal is None or general is None or rng.random() < 0.1:
        pick = quiet
    elif s.mover == 0:
        threats = [m for m in quiet if m.startswith(f"{marshal}-") and adjacent(m[3:], general)]
        pick = threats or sorted(quiet, key=lambda m: distance(m.split("-")[1], general))[:1]
    elif adjacent(marshal, general):
        pick = [m for m in quiet if m.startswith(f"{general}-") and not adjacent(m[3:], marshal)]
    else:
        pick = [m for m in quiet if not m.startswith(f"{general}-")]
    return rng.choice(pick or legal)


def distance(x: str, y: str) -> int:
    return abs(FILES.index(x[0]) - FILES.index(y[0])) + abs(int(x[1:]) - int(y[1:]))


def test_both_laws_agree_with_the_literal_reference() -> None:
    bites: Counter[str] = Counter()
    for n in range(30):
        rng = random.Random(n)
        if n % 2:
            s = position(SPARSE[n % len(SPARSE)], to_move=n % 2)
        else:
            at = rng.sample(RING, 2)
            pieces = {at[0]: "L", at[1]: "W", "j1": "M", "i2": "F", "a10": "Y", "i9": "R"}
            s = position({**RING_WALLS, **pieces})
        ref = Reference()
        for _ in range(300):
            if n % 2 == 0:
                s = replace(s, quiet=0)  # no no-battle draw: let the hunt lap the lake for long
            if not G.to_act(s):
                break
            legal = G.legal_moves(s, s.mover)
            pseudo = {MOVE_NAMES[m] for m in pseudo_moves(s.board, s.movable[s.mover], s.mover)}
            expected = {m for m in pseudo if not ref.refuses(s, m)}
            assert set(legal) == expected, f"game {n}, ply {s.ply}: {set(legal) ^ expected}"
            for refused in pseudo - expected:
                with pytest.raises(Illegal) as error:
                    G.parse(s, s.mover, refused)
                bites[str(error.value).split(" breaks the ")[1].split(":")[0]] += 1
            move = hunt(s, list(legal), rng) if n % 2 == 0 else rng.choice(legal)
            after = G.apply(s, {s.mover: move})
            ref.record(s, move, after)
            s = after
    # Both laws did bite in these games (the refusals are named by law).
    assert bites["two-square rule"] > 50, bites
    assert bites["continuous-chase rule"] > 20, bites
