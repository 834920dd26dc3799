"""Quoridor: move tables, every rule of docs/rules.md#quoridor, standing by hand,
the tolerant reader, a cross-check against a slow reference written from the
rules text (full search for every wall), and the engine's fast wall check
held to its plain search over thousands of random positions."""

from __future__ import annotations

import json
import random
import re
from collections import deque
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games import Illegal, MoveError, Outcome, TurnGame, Unreadable
from games.quoridor import Quoridor, QuoridorState
from games.quoridor.board import (
    BLOCKS,
    GOAL_RANKS,
    RIGHT_STEPS,
    SIZE,
    UP_STEPS,
    reaches,
    reaches_goal,
    route,
    set_bits,
)
from games.quoridor.fence import EMPTY_FENCE, POINTS, Fence, fence_after
from games.quoridor.render import board_text
from games.quoridor.rules import (
    CELL_NAMES,
    WALL_NAMES,
    legal_walls,
    legal_walls_plain,
    pawn_targets_plain,
    position,
)

G = Quoridor()
ALL_WALLS = [f"{f}{r}{o}" for f in "abcdefgh" for r in range(1, 9) for o in "hv"]


def play(*moves: str, start: QuoridorState | None = None) -> QuoridorState:
    """The state after `moves`, each by the seat to act."""
    s = G.initial(7) if start is None else start
    for move in moves:
        s = G.apply(s, {G.to_act(s)[0]: move})
    return s


def pawn_moves(s: QuoridorState) -> list[str]:
    """The mover's legal pawn moves (the moves without a wall suffix)."""
    return [m for m in G.legal_moves(s, G.to_act(s)[0]) if len(m) == 2]


def wall_moves(s: QuoridorState) -> list[str]:
    """The mover's legal wall placements."""
    return [m for m in G.legal_moves(s, G.to_act(s)[0]) if len(m) == 3]


# -- a slow reference, straight from the rules text ---------------------------

Cell = tuple[int, int]


def _cell(name: str) -> Cell:
    return "abcdefghi".index(name[0]), int(name[1]) - 1


def _name(c: Cell) -> str:
    return "abcdefghi"[c[0]] + str(c[1] + 1)


def _blocked_steps(walls: Iterable[str]) -> set[frozenset[Cell]]:
    blocked: set[frozenset[Cell]] = set()
    for w in walls:
        x, n = _cell(w[:2])
        if w[2] == "h":
            blocked |= {frozenset({(x, n), (x, n + 1)}), frozenset({(x + 1, n), (x + 1, n + 1)})}
        else:
            blocked |= {frozenset({(x, n), (x + 1, n)}), frozenset({(x, n + 1), (x + 1, n + 1)})}
    return blocked


def _on_board(c: Cell) -> bool:
    return 0 <= c[0] < 9 and 0 <= c[1] < 9


def _open(a: Cell, b: Cell, blocked: set[frozenset[Cell]]) -> bool:
    return _on_board(b) and frozenset({a, b}) not in blocked


def ref_dist(start: Cell, goal_rank: int, blocked: set[frozenset[Cell]]) -> int:
    """BFS steps to the goal rank (0-based), pawns ignored; 99 if unreachable."""
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        c, d = queue.popleft()
        if c[1] == goal_rank:
            return d
        for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            n = (c[0] + dx, c[1] + dy)
            if n not in seen and _open(c, n, blocked):
                seen.add(n)
                queue.append((n, d + 1))
    return 99


def ref_legal(view: dict) -> list[str]:
    """Every legal move of the seat to move, from the rules text, in the rules' order."""
    me, other = view["to_move"], 1 - view["to_move"]
    mine, theirs = _cell(view["pawns"][str(me)]), _cell(view["pawns"][str(other)])
    blocked = _blocked_steps(view["walls"])
    pawn: set[Cell] = set()
    for d in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        n = (mine[0] + d[0], mine[1] + d[1])
        if not _open(mine, n, blocked):
            continue
        if n != theirs:
            pawn.add(n)
            continue
        beyond = (n[0] + d[0], n[1] + d[1])
        if _open(n, beyond, blocked):
            pawn.add(beyond)
            continue
        for side in ((d[1], d[0]), (-d[1], -d[0])):
            diag = (n[0] + side[0], n[1] + side[1])
            if _open(n, diag, blocked):
                pawn.add(diag)
    moves = [_name(c) for c in sorted(pawn)]
    if view["walls_left"][str(me)] == 0:
        return moves
    anchors = {w[:2] for w in view["walls"]}
    goals = {0: 8, 1: 0}
    for w in ALL_WALLS:
        new = _blocked_steps([w])
        if w[:2] in anchors or new & blocked:
            continue
        after = blocked | new
        pawns = {0: mine if me == 0 else theirs, 1: theirs if me == 0 else mine}
        if all(ref_dist(pawns[seat], goals[seat], after) < 99 for seat in (0, 1)):
            moves.append(w)
    return moves


def ref_standing(view: dict, seat: int) -> int:
    goal = 8 if seat == 0 else 0
    dist = ref_dist(_cell(view["pawns"][str(seat)]), goal, _blocked_steps(view["walls"]))
    return 1000 - 10 * dist + 2 * view["walls_left"][str(seat)]


def random_positions(games_count: int, every: int, seed: int) -> list[QuoridorState]:
    """States along random games that mix walls and pawn moves, sampled every few plies."""
    rng, found = random.Random(seed), []
    for _ in range(games_count):
        s = G.initial(seed)
        while seats := G.to_act(s):
            moves = G.legal_moves(s, seats[0])
            walls = [m for m in moves if len(m) == 3]
            pawns = [m for m in moves if len(m) == 2]
            pick = walls if walls and rng.random() < 0.35 else pawns
            s = G.apply(s, {seats[0]: rng.choice(pick)})
            if s.ply % every == 0:
                found.append(s)
    return found


POSITIONS = random_positions(games_count=6, every=7, seed=11)


# -- start, registry, state ---------------------------------------------------


def test_registry_loads_quoridor_and_rejects_params() -> None:
    g = games.load("quoridor")
    assert isinstance(g, Quoridor)
    assert (g.name, g.family, g.rules_version, g.ply_cap) == ("quoridor", "board", 1, 400)
    with pytest.raises(ValueError, match="quoridor"):
        games.load("quoridor", walls=5)


def test_initial_position_ignores_the_seed() -> None:
    s = G.initial(0)
    assert s == G.initial(123456789) == G.initial(-5, game=2)
    assert (s.ply, G.to_act(s), G.outcome(s)) == (0, (0,), None)
    view = G.view(s, 0)
    assert view["pawns"] == {"0": "e1", "1": "e9"}
    assert view["walls_left"] == {"0": 10, "1": 10}
    moves = G.legal_moves(s, 0)
    assert moves == ("d1", "e2", "f1", *ALL_WALLS)
    assert G.legal_moves(s, 1) == ()


def test_apply_leaves_the_state_unchanged_and_counts_plies() -> None:
    s = G.initial(1)
    after = play("e2", "e3h", start=s)
    assert s == G.initial(1)
    assert after.ply == 2
    assert G.view(after, 0)["walls_left"] == {"0": 10, "1": 9}


def test_position_constructor_matches_play() -> None:
    played = play("e3h", "e8", "e2", "c5v")
    built = position("e2", "e8", red_walls=["e3h"], blue_walls=["c5v"], ply=4)
    assert built == played


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("e1", "e1"), "two different cells"),
        (("z1", "e9"), "two different cells"),
        (("e1", "e9", ["e3h", "e3v"]), "already sits"),
        (("e1", "e9", ["e3x"]), "not a wall"),
        (("e9", "e1"), "both stand"),
    ],
)
def test_position_constructor_refuses_unreachable_positions(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        position(*args)


# -- pawn moves and jumps -----------------------------------------------------


@pytest.mark.parametrize(
    ("red", "blue", "red_walls", "blue_walls", "ply", "expected"),
    [
        # plain steps, and the board edge
        ("e1", "e9", [], [], 0, ["d1", "e2", "f1"]),
        ("a1", "e9", [], [], 0, ["a2", "b1"]),
        ("i5", "e9", [], [], 0, ["h5", "i4", "i6"]),
        # walls block steps: e1h blocks e1-e2 (and f1-f2); d1v blocks d1-e1
        ("e1", "e9", ["e1h", "d1v"], [], 0, ["f1"]),
        # straight jump over an adjacent opponent: red e4, blue e5 -> e6
        ("e4", "e5", [], [], 0, ["d4", "e3", "e6", "f4"]),
        # blue (ply 1) jumps down over red: blue e6, red e5 -> e4, no diagonals
        ("e5", "e6", [], [], 1, ["d6", "e4", "e7", "f6"]),
        # no jump when the step mover -> opponent is walled (d4h blocks e4-e5)
        ("e4", "e5", ["d4h"], [], 0, ["d4", "e3", "f4"]),
        # a wall behind the opponent (d5h blocks e5-e6): diagonals d5 and f5 instead
        ("e4", "e5", [], ["d5h"], 0, ["d4", "d5", "e3", "f4", "f5"]),
        # ... and a wall beside the opponent (e5v blocks e5-f5) removes that diagonal
        ("e4", "e5", ["e5v"], ["d5h"], 0, ["d4", "d5", "e3", "f4"]),
        # the opponent on the top edge: no cell beyond, so the diagonals d9, f9
        ("e8", "e9", [], [], 0, ["d8", "d9", "e7", "f8", "f9"]),
        # the opponent on the left edge: jumping left leaves the board -> a4, a6
        ("b5", "a5", [], [], 0, ["a4", "a6", "b4", "b6", "c5"]),
        # blue on a2 over red in the corner a1: straight off board, left off board -> b1
        ("a1", "a2", [], [], 1, ["a3", "b1", "b2"]),
        # the diagonal that would leave the board is simply missing: blue i5, red i4
        ("i4", "i5", [], ["h4h"], 1, ["h5", "i6"]),
    ],
)
def test_pawn_moves(
    red: str,
    blue: str,
    red_walls: list[str],
    blue_walls: list[str],
    ply: int,
    expected: list[str],
) -> None:
    s = position(red, blue, red_walls, blue_walls, ply=ply)
    assert pawn_moves(s) == expected


def test_straight_jump_is_played_and_lands_beyond() -> None:
    # red e2 e3 e4, blue e8 e7 e6; red e5 meets blue; blue jumps to e4
    s = play("e2", "e8", "e3", "e7", "e4", "e6", "e5")
    assert pawn_moves(s) == ["d6", "e4", "e7", "f6"]
    s = play("e4", start=s)
    assert G.view(s, 0)["pawns"] == {"0": "e5", "1": "e4"}


def test_diagonal_side_step_only_when_the_straight_jump_is_unavailable() -> None:
    # red opens with e5h (blocks e5-e6): blue walks e8 e7 e6 d6 d5 e5 and meets red on e4
    s = play("e5h", "e8", "e2", "e7", "e3", "e6", "e4", "d6", "a1h", "d5", "a3h", "e5")
    assert G.view(s, 0)["pawns"] == {"0": "e4", "1": "e5"}
    assert pawn_moves(s) == ["d4", "d5", "e3", "f4", "f5"]
    assert G.parse(s, 0, "f5") == "f5"
    with pytest.raises(Illegal, match="e6"):
        G.parse(s, 0, "e6")


# -- walls --------------------------------------------------------------------


def test_wall_blocks_both_steps_it_names() -> None:
    # e3h blocks e3-e4 and f3-f4: red on e3 cannot go up; on f3 neither; d3 still can
    assert pawn_moves(position("e3", "e9", ["e3h"])) == ["d3", "e2", "f3"]
    assert pawn_moves(position("f3", "e9", ["e3h"])) == ["e3", "f2", "g3"]
    assert "d4" in pawn_moves(position("d3", "e9", ["e3h"]))
    # e3v blocks e3-f3 and e4-f4
    assert pawn_moves(position("e4", "e9", ["e3v"])) == ["d4", "e3", "e5"]
    assert pawn_moves(position("e3", "e9", ["e3v"])) == ["d3", "e2", "e4"]


@pytest.mark.parametrize(
    ("placed", "tried", "why"),
    [
        ("e3h", "e3v", "already sits on that anchor"),  # crossing
        ("e3v", "e3h", "already sits on that anchor"),
        ("e3h", "e3h", "already sits on that anchor"),
        ("e3h", "d3h", "overlaps wall e3h"),  # both block e3-e4
        ("e3h", "f3h", "overlaps wall e3h"),  # shares f3-f4
        ("e3v", "e4v", "overlaps wall e3v"),  # shares e4-f4
        ("e3v", "e2v", "overlaps wall e3v"),  # shares e3-f3
    ],
)
def test_overlapping_and_crossing_walls_are_illegal(placed: str, tried: str, why: str) -> None:
    s = play(placed)
    assert tried not in wall_moves(s)
    with pytest.raises(Illegal, match=why):
        G.parse(s, 1, tried)
    with pytest.raises(Illegal):
        G.apply(s, {1: tried})


@pytest.mark.parametrize(
    ("placed", "touching"),
    [("e3h", ["c3h", "g3h", "d2v", "d3v", "f4v"]), ("e3v", ["e1v", "e5v", "d3h", "f3h"])],
)
def test_touching_walls_are_legal(placed: str, touching: list[str]) -> None:
    legal = wall_moves(play(placed))
    assert all(w in legal for w in touching)


# A fence from the left edge to the right edge between ranks 4 and 5, but for
# one gap: b4h d4h f4h h4h close files b..i, a4v shuts a4|b4 and a5|b5, and
# a5h (blocking a5-a6, b5-b6) would seal the gap above a5.
FENCE = ["b4h", "d4h", "f4h", "h4h", "a4v"]


def test_a_wall_that_cuts_a_pawn_off_is_illegal() -> None:
    s = position("e1", "e9", FENCE, [], ply=0)
    assert "a5h" not in wall_moves(s)
    assert "a6h" in wall_moves(s)  # a wall one rank higher leaves the gap open
    with pytest.raises(Illegal, match="pawn on e1 without a path to rank 9"):
        G.parse(s, 0, "A5H")
    with pytest.raises(Illegal):
        G.apply(s, {0: "a5h"})


def test_cutting_off_only_the_opponent_is_illegal_too() -> None:
    # both pawns above the fence: blue (goal rank 1) would be cut off, red would not
    s = position("e6", "e8", FENCE, [], ply=0)
    with pytest.raises(Illegal, match="pawn on e8 without a path to rank 1"):
        G.parse(s, 0, "a5h")


def test_walls_left_exhausted() -> None:
    ten = ["a1h", "c1h", "e1v", "g1h", "a3h", "c3h", "g3h", "a6h", "c6h", "g6h"]
    s = position("e2", "e9", ten, [], ply=0)
    assert G.view(s, 0)["walls_left"] == {"0": 0, "1": 10}
    assert wall_moves(s) == []
    with pytest.raises(Illegal, match="no walls left"):
        G.parse(s, 0, "e5h")
    s = play("e3", start=s)
    assert "e5h" in wall_moves(s)  # blue still has all ten


def test_walls_run_out_after_ten_placements() -> None:
    walls = [f"{f}{r}h" for f in "aceg" for r in (1, 3, 6)][:10]
    moves: list[str] = []
    for wall, pawn in zip(walls, ["e8", "e9"] * 5, strict=True):  # blue shuffles meanwhile
        moves += [wall, pawn]
    s = play(*moves)
    assert G.view(s, 0)["walls_left"] == {"0": 0, "1": 10}
    assert wall_moves(s) == []


# -- endings ------------------------------------------------------------------


def test_red_wins_on_reaching_rank_9() -> None:
    s = play("d9", start=position("e8", "e9", ply=0))  # a diagonal side-step onto the goal row
    assert G.outcome(s) == Outcome((1, -1), "complete", "goal-row")
    assert G.to_act(s) == ()
    assert G.legal_moves(s, 1) == ()
    with pytest.raises(Illegal, match="over"):
        G.apply(s, {1: "e8"})


def test_blue_wins_on_reaching_rank_1() -> None:
    s = play("c1", start=position("e5", "c2", ply=1))
    assert G.outcome(s) == Outcome((-1, 1), "complete", "goal-row")
    assert G.view(s, 0)["to_move"] is None


def test_ply_cap_at_400_adjudicates_by_standing() -> None:
    # red spends a wall (a1h, off every path), then both pawns shuffle
    s = play("a1h", "e8", "e2", "e9", "e1")
    shuffle = ["e8", "e2", "e9", "e1"]
    s = play(*(shuffle[i % 4] for i in range(394)), start=s)
    assert s.ply == 399
    assert G.outcome(s) is None
    assert G.view(s, 0)["pawns"] == {"0": "e2", "1": "e8"}
    s = play("e9", start=s)  # ply 400: blue back on e9
    # red: dist 7 (e2 -> e9), 9 walls: 1000 - 70 + 18 = 948
    # blue: dist 8 (e9 -> e1), 10 walls: 1000 - 80 + 20 = 940
    assert (G.standing(s, 0), G.standing(s, 1)) == (948, 940)
    assert G.outcome(s) == Outcome((1, -1), "complete", "ply-cap")
    assert G.to_act(s) == ()


def test_ply_cap_with_equal_standing_is_a_draw() -> None:
    s = position("e5", "d5", ply=400)  # both dist 4, 10 walls: 1000 - 40 + 20 = 980 each
    assert G.outcome(s) == Outcome((0, 0), "complete", "ply-cap")


def test_goal_row_on_the_last_ply_beats_the_cap() -> None:
    s = play("e1", start=position("e5", "e2", ply=399))  # blue plays ply 400
    assert s.ply == 400
    assert G.outcome(s) == Outcome((-1, 1), "complete", "goal-row")


def test_adjudicate_is_a_wall_clock_deadline_by_standing() -> None:
    s = play("e2")  # red dist 7: 950; blue dist 8: 940
    assert G.adjudicate(s) == Outcome((1, -1), "deadline", "wall-clock")
    assert G.adjudicate(G.initial(3)) == Outcome((0, 0), "deadline", "wall-clock")


# -- standing -----------------------------------------------------------------


def test_standing_by_hand() -> None:
    # start: dist 8 each, 10 walls: 1000 - 80 + 20 = 940
    s = G.initial(1)
    assert (G.standing(s, 0), G.standing(s, 1)) == (940, 940)
    # red places e3h (blocks e3-e4, f3-f4): red's best route e1 -> d1 -> d9 is 9 steps,
    # 9 walls left: 1000 - 90 + 18 = 928; blue e9 -> d9 -> d1 is 9: 1000 - 90 + 20 = 930
    s = play("e3h")
    assert (G.standing(s, 0), G.standing(s, 1)) == (928, 930)


def test_standing_ignores_pawns_and_follows_a_maze() -> None:
    # a1h c1h e1h g1h shut rank 1 from rank 2 on files a..h; only i1-i2 is open.
    # red on a1: a1 -> i1 is 8 steps, i1 -> i9 another 8: dist 16, 6 walls left:
    # 1000 - 160 + 12 = 852, although blue's pawn stands on i5, in red's way.
    # blue on i5: i5 -> i1 is 4 steps, 10 walls: 1000 - 40 + 20 = 980.
    s = position("a1", "i5", ["a1h", "c1h", "e1h", "g1h"], [], ply=0)
    assert (G.standing(s, 0), G.standing(s, 1)) == (852, 980)
    # blue on e9 instead: e9 -> e2 (7), e2 -> i2 (4), i2 -> i1 (1): dist 12: 1000 - 120 + 20
    s = position("a1", "e9", ["a1h", "c1h", "e1h", "g1h"], [], ply=0)
    assert G.standing(s, 1) == 900


def test_standing_matches_the_reference_on_random_positions() -> None:
    for s in POSITIONS:
        view = G.view(s, 0)
        assert [G.standing(s, seat) for seat in (0, 1)] == [
            ref_standing(view, 0),
            ref_standing(view, 1),
        ]


# -- tactician ----------------------------------------------------------------


def test_tactician_walks_the_shortest_path() -> None:
    # d1 and f1 leave dist 8, e2 leaves 7: e2 is worth 950, a wall at best 938
    assert G.baseline(G.initial(1), 0) == "e2"


def test_tactician_breaks_ties_by_legal_order() -> None:
    # after red's e3h (blocks e3-e4, f3-f4) blue's moves: d9 (dist 8: d9 -> d1),
    # e8 (dist 8: e8 -> e4 -> d4 -> d1), f9 (dist 9: f3-f4 is shut too).
    # d9 and e8 both give 1000 - 80 + 20 = 940; d9 comes first.
    s = play("e3h")
    assert [G.standing(play(m, start=s), 1) for m in ("d9", "e8", "f9")] == [940, 940, 930]
    assert G.baseline(s, 1) == "d9"


def test_tactician_places_a_wall_when_every_pawn_move_loses_ground() -> None:
    # red on a8 (dist 1), blue on a9, a8v shuts a9|b9 (and a8|b8): no straight jump
    # off the board, no diagonal, so red's only pawn move is a7: dist 2, 9 walls,
    # 1000 - 20 + 18 = 998. A wall off red's path keeps dist 1 and leaves 8 walls:
    # 1000 - 10 + 16 = 1006, and a1h is the first legal wall.
    s = position("a8", "a9", ["a8v"], [], ply=0)
    assert pawn_moves(s) == ["a7"]
    assert G.standing(play("a7", start=s), 0) == 998
    assert G.standing(play("a1h", start=s), 0) == 1006
    assert G.baseline(s, 0) == "a1h" == TurnGame.baseline(G, s, 0)


def test_baseline_refuses_the_wrong_seat() -> None:
    with pytest.raises(Illegal, match="seat 1"):
        G.baseline(G.initial(1), 1)


# -- the tolerant reader ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("e2", "e2"),
        (" E2 ", "e2"),
        ("e-2.", "e2"),
        ("E3H", "e3h"),
        ("e3-h", "e3h"),
        ("  e3 v ", "e3v"),
        ('"d1"', "d1"),
        ("A1H", "a1h"),
    ],
)
def test_parse_reads_every_listed_form(text: str, canonical: str) -> None:
    s = G.initial(1)
    assert G.parse(s, 0, text) == canonical


@pytest.mark.parametrize(
    "text", ["", "   ", "pass", "e", "j1", "e0", "e10", "i1h", "a9h", "e3x", "e3hv", "e2e3", 42]
)
def test_parse_refuses_what_does_not_read_as_a_move(text: object) -> None:
    with pytest.raises(Unreadable):
        G.parse(G.initial(1), 0, text)


def test_parse_names_what_it_read_and_why() -> None:
    with pytest.raises(Unreadable, match=r"'j1'.*'J-1'.*<cell>.*<anchor><h\|v>"):
        G.parse(G.initial(1), 0, "J-1")
    with pytest.raises(Illegal, match=r"'e5'.*your pawn on e1 cannot reach e5 this turn\.") as info:
        G.parse(G.initial(1), 0, "E5")
    assert not {"d1", "e2", "f1"} & set(re.findall(r"\w+", str(info.value)))  # no move as advice
    with pytest.raises(Illegal, match="not seat 1's turn"):
        G.parse(G.initial(1), 1, "e8")


def test_apply_refuses_illegal_and_wrong_seat_moves() -> None:
    s = G.initial(1)
    for moves in ({0: "e5"}, {0: "E2"}, {1: "e8"}, {0: "e2", 1: "e8"}, {0: 3}, {}):
        with pytest.raises(Illegal):
            G.apply(s, moves)


@settings(max_examples=150, deadline=None)
@given(text=st.text(), which=st.integers(min_value=0, max_value=len(POSITIONS) - 1))
def test_parse_never_crashes(text: str, which: int) -> None:
    s = POSITIONS[which]
    if not G.to_act(s):
        return
    seat = G.to_act(s)[0]
    try:
        move = G.parse(s, seat, text)
    except MoveError:
        return
    assert move in G.legal_moves(s, seat)


@settings(max_examples=150, deadline=None)
@given(
    move=st.sampled_from(ALL_WALLS + [f"{f}{r}" for f in "abcdefghi" for r in range(1, 10)]),
    noise=st.sampled_from(["", " ", "-", ".", "*"]),
    upper=st.booleans(),
    which=st.integers(min_value=0, max_value=len(POSITIONS) - 1),
)
def test_parse_agrees_with_legal_moves(move: str, noise: str, upper: bool, which: int) -> None:
    s = POSITIONS[which]
    if not G.to_act(s):
        return
    seat = G.to_act(s)[0]
    text = noise.join(move.upper() if upper else move)
    if move in G.legal_moves(s, seat):
        assert G.parse(s, seat, text) == move
    else:
        with pytest.raises(Illegal):
            G.parse(s, seat, text)


# -- cross-check against the reference ----------------------------------------


def test_legal_moves_match_the_reference_on_random_positions() -> None:
    checked = 0
    for s in POSITIONS:
        if G.to_act(s):
            assert list(G.legal_moves(s, G.to_act(s)[0])) == ref_legal(G.view(s, 0))
            checked += 1
    assert checked > 30


def test_random_positions_hold_walls_jumps_and_cut_offs() -> None:
    # the cross-check is only worth something if the sample is varied
    views = [G.view(s, 0) for s in POSITIONS if G.to_act(s)]
    assert max(len(v["walls"]) for v in views) == 20
    adjacent = [v for v in views if _distance(v["pawns"]["0"], v["pawns"]["1"]) == 1]
    assert len(adjacent) >= 2
    refused_for_a_path = 0
    for s, v in zip([s for s in POSITIONS if G.to_act(s)], views, strict=True):
        if v["walls_left"][str(v["to_move"])]:
            anchors, blocked = {w[:2] for w in v["walls"]}, _blocked_steps(v["walls"])
            fitting = [
                w for w in ALL_WALLS if w[:2] not in anchors and not _blocked_steps([w]) & blocked
            ]
            refused_for_a_path += len(fitting) - len(wall_moves(s))
    assert refused_for_a_path >= 5


def _distance(a: str, b: str) -> int:
    (ax, ay), (bx, by) = _cell(a), _cell(b)
    return abs(ax - bx) + abs(ay - by)


# -- the fast wall check against the plain search -----------------------------


@pytest.fixture(scope="module")
def many_positions() -> list[QuoridorState]:
    """Thousands of in-progress states of seeded random games that place a wall on
    about a third of their turns (so walls pile up, join and close loops): every
    state while the mover has walls left, every fifth after."""
    rng, found = random.Random(2024), []
    for _ in range(40):
        s = G.initial(0)
        while seats := G.to_act(s):
            moves = G.legal_moves(s, seats[0])
            walls = [m for m in moves if len(m) == 3]
            if walls or s.ply % 5 == 0:
                found.append(s)
            pick = walls if walls and rng.random() < 0.3 else [m for m in moves if len(m) == 2]
            s = G.apply(s, {seats[0]: rng.choice(pick)})
    return found


def test_fast_wall_check_equals_the_plain_search(many_positions: list[QuoridorState]) -> None:
    with_walls = refused_for_a_path = 0
    for s in many_positions:
        seat = s.ply & 1
        plain = legal_walls_plain(s)  # a flood fill for every wall that fits
        assert legal_walls(s) == plain, G.view(s, 0)
        # the whole list, the plain way: pawn moves by the rules' words, then walls
        mover, other = s.pawns[seat], s.pawns[1 - seat]
        pawns = pawn_targets_plain(mover, other, s.up_blocked, s.right_blocked)
        listed = [CELL_NAMES[c] for c in pawns] + [WALL_NAMES[w] for w in plain]
        assert list(G.legal_moves(s, seat)) == listed, G.view(s, 0)
        if s.walls_left[seat]:
            with_walls += 1
            refused_for_a_path += bin(s.fence.fitting).count("1") - len(plain)
    # worth something only if the sample is large and full of cut-offs
    assert len(many_positions) >= 3000
    assert with_walls >= 2000
    assert refused_for_a_path >= 500


@settings(max_examples=400, deadline=None)
@given(
    cell=st.integers(0, 80),
    seat=st.integers(0, 1),
    blocked=st.lists(st.tuples(st.integers(0, 2**81 - 1), st.integers(0, 2**81 - 1)), min_size=1),
)
def test_the_climbing_flood_fill_agrees_with_the_plain_one(
    cell: int, seat: int, blocked: list[tuple[int, int]]
) -> None:
    # the more masks are and-ed, the fewer steps are blocked: mazes of every density
    up, right = UP_STEPS, RIGHT_STEPS
    for up_mask, right_mask in blocked:
        up, right = up & up_mask, right & right_mask
    assert reaches_goal(cell, seat, up, right) == reaches(cell, GOAL_RANKS[seat], up, right)


def _fence_of(walls: int) -> Fence:
    fence = EMPTY_FENCE
    for wall in set_bits(walls):
        fence = fence_after(fence, wall)
    return fence


def test_kept_fence_and_routes_equal_fresh_ones(many_positions: list[QuoridorState]) -> None:
    # a state's fence and routes are carried from move to move; they must be
    # what a fresh computation gives, whatever the order the walls came in
    for s in many_positions:
        assert s.fence == _fence_of(s.walls)
        fresh = tuple(route(s.pawns[q], q, s.up_blocked, s.right_blocked) for q in (0, 1))
        assert s.routes == (None if s.walls_left == (0, 0) else fresh)


def _labels(walls: int) -> list[int]:
    """A union-find label per lattice point of the placed walls' drawing (edge: 64)."""
    parent = list(range(65))

    def find(p: int) -> int:
        while parent[p] != p:
            p = parent[p]
        return p

    for wall in set_bits(walls):
        a, b, c = POINTS[wall]
        parent[find(a)] = find(b)
        parent[find(c)] = find(b)
    return [find(p) for p in range(65)]


def _parts(s: QuoridorState, wall: int, second: bool) -> bool:
    """Whether placing `wall` leaves the two cells of its first (or second) step unjoined."""
    steps = BLOCKS[wall]
    low = steps & -steps
    cell = ((steps ^ low) if second else low).bit_length() - 1
    neighbour = cell + (SIZE if wall & 1 else 1)
    up_blocked, right_blocked = s.up_blocked, s.right_blocked
    if wall & 1:
        right_blocked |= steps
    else:
        up_blocked |= steps
    return not reaches(cell, 1 << neighbour, up_blocked, right_blocked)


def test_a_segment_on_a_loop_is_exactly_a_step_that_parts_its_cells(
    many_positions: list[QuoridorState],
) -> None:
    # the planar duality the fast check rests on, wall by wall: loops_first and
    # loops_second agree with a union-find of the drawing and with flood fills
    looped = 0
    for s in many_positions[::15]:
        labels, fence = _labels(s.walls), s.fence
        for wall in set_bits(fence.fitting):
            a, b, c = (labels[p] for p in POINTS[wall])
            first, second = fence.loops_first >> wall & 1, fence.loops_second >> wall & 1
            assert first == (a in (b, c)) == _parts(s, wall, second=False)
            assert second == (c in (a, b)) == _parts(s, wall, second=True)
            looped += first | second
    assert looped >= 1000


# -- view and rendering -------------------------------------------------------


def test_view_is_json_and_complete() -> None:
    s = play("e2", "e3h", "c5v")
    view = G.view(s, 1)
    assert json.loads(json.dumps(view)) == view
    assert view["game"] == "quoridor"
    assert (view["ply"], view["to_move"], view["you"]) == (3, 1, 1)
    assert view["sides"] == {"0": "red", "1": "blue"}
    assert view["walls"] == ["c5v", "e3h"]
    assert view["walls_left"] == {"0": 9, "1": 9}
    assert view["goal_rank"] == {"0": 9, "1": 1}
    assert (view["files"], view["ply_cap"]) == ("abcdefghi", 400)
    assert view["cells"][1][4] == "R"
    assert view["cells"][8][4] == "B"
    assert sum(row.count(".") for row in view["cells"]) == 79


def test_board_text_draws_the_lattice() -> None:
    text = board_text(G.view(play("e2", "e3h", "c5v"), 0))
    lines = text.splitlines()
    assert lines[0] == "    +---+---+---+---+---+---+---+---+---+"
    assert lines[1] == "  9 | .   .   .   .   B   .   .   .   . |"
    # c5v blocks c5|d5 and c6|d6, its centre on the corner between them
    assert lines[7] == "  6 | .   .   . | .   .   .   .   .   . |"
    assert lines[8] == "    +   +   +   |   +   +   +   +   +   +"
    assert lines[9] == "  5 | .   .   . | .   .   .   .   .   . |"
    # e3h: one stroke under e4 and f4
    assert lines[12] == "    +   +   +   +   +-------+   +   +   +"
    assert lines[15] == "  2 | .   .   .   .   R   .   .   .   . |"
    assert lines[19] == "      a   b   c   d   e   f   g   h   i"
    assert "Walls placed (2): c5v, e3h" in text
    assert "Walls left: red 9, blue 9" in text
    assert "R = red pawn (seat 0) on e2, goal rank 9" in text
