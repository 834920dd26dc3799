"""Breakthrough 6 x 6: move tables, every rule and ending, standing by hand, parser properties."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games import Illegal, MoveError, Outcome, Unreadable
from games.breakthrough import Breakthrough, Position, from_rows
from games.breakthrough import rules as bt
from games.breakthrough.render import board_text

G = Breakthrough()
INITIAL = G.initial(7)


def play(*moves: str, start: Position = INITIAL) -> Position:
    """The position after `moves` (canonical), each applied for the side to move."""
    s = start
    for move in moves:
        s = G.apply(s, {G.to_act(s)[0]: move})
    return s


def random_position(seed: int, plies: int) -> Position:
    """A position reached by up to `plies` random moves (stops at the end)."""
    rng, s = random.Random(seed), INITIAL
    for _ in range(plies):
        seats = G.to_act(s)
        if not seats:
            break
        s = G.apply(s, {seats[0]: rng.choice(G.legal_moves(s, seats[0]))})
    return s


def reference_moves(s: Position) -> list[str]:
    """Legal moves straight from the rules text on a 2-D grid, sorted as docs/rules.md#breakthrough says."""
    grid = G.view(s, 0)["cells"]  # grid[rank][file]
    seat = s.ply % 2
    own, other, step = ("R", "B", 1) if seat == 0 else ("B", "R", -1)
    moves = []
    for f in range(6):
        for r in range(6):
            if grid[r][f] != own or not 0 <= r + step < 6:
                continue
            for tf in (f - 1, f, f + 1):
                if not 0 <= tf < 6:
                    continue
                target = grid[r + step][tf]
                if target == "." or (tf != f and target == other):
                    moves.append((f, r, tf, r + step))
    return [f"{'abcdef'[a]}{b + 1}-{'abcdef'[c]}{d + 1}" for a, b, c, d in sorted(moves)]


def reference_standing(s: Position, seat: int) -> int:
    """The seed's formula over the grid, advance from the owner's back rank."""
    grid = G.view(s, 0)["cells"]
    symbol = "RB"[seat]
    advances = [
        r if seat == 0 else 5 - r for r in range(6) for f in range(6) if grid[r][f] == symbol
    ]
    return 100 * len(advances) + 10 * sum(advances) + 40 * max(advances, default=0)


# --- the game object ------------------------------------------------------------


def test_registry_loads_the_class_with_its_constants() -> None:
    g = games.load("breakthrough")
    assert isinstance(g, Breakthrough)
    assert (g.name, g.family, g.rules_version, g.ply_cap) == ("breakthrough", "board", 1, 300)
    with pytest.raises(ValueError, match="does not take parameters"):
        games.load("breakthrough", size=8)


def test_initial_ignores_the_seed_and_checks_the_game_index() -> None:
    assert G.initial(1) == G.initial(2**31 - 1, game=2) == G.initial(-5)
    assert INITIAL.ply == 0
    assert G.to_act(INITIAL) == (0,)
    with pytest.raises(ValueError, match="game index 3"):
        G.initial(1, game=3)


def test_initial_view_has_red_on_ranks_1_2_and_blue_on_5_6() -> None:
    view = G.view(INITIAL, 1)
    assert json.loads(json.dumps(view)) == view
    assert view["cells"] == [["R"] * 6, ["R"] * 6, ["."] * 6, ["."] * 6, ["B"] * 6, ["B"] * 6]
    assert view | {"cells": None} == {
        "game": "breakthrough",
        "ply": 0,
        "to_move": 0,
        "you": 1,
        "sides": {"0": "red", "1": "blue"},
        "files": "abcdef",
        "cells": None,
        "pieces": {"0": 12, "1": 12},
        "goal_rank": {"0": 6, "1": 1},
        "ply_cap": 300,
    }


def test_same_position_by_transposition_is_equal() -> None:
    assert play("a2-a3", "f5-f4", "b2-b3") == play("b2-b3", "f5-f4", "a2-a3")
    assert play("a2-a3") != play("a2-b3")


# --- legal-move order -------------------------------------------------------------


def test_initial_red_moves_in_from_file_from_rank_to_file_order() -> None:
    # Only rank-2 pieces move; a2 and f2 have one diagonal each, b2..e2 two.
    assert G.legal_moves(INITIAL, 0) == (
        "a2-a3", "a2-b3", "b2-a3", "b2-b3", "b2-c3", "c2-b3", "c2-c3", "c2-d3",
        "d2-c3", "d2-d3", "d2-e3", "e2-d3", "e2-e3", "e2-f3", "f2-e3", "f2-f3",
    )  # fmt: skip
    assert G.legal_moves(INITIAL, 1) == ()


def test_blue_moves_go_down_in_the_same_order() -> None:
    s = play("c2-c3")
    assert G.legal_moves(s, 1) == (
        "a5-a4", "a5-b4", "b5-a4", "b5-b4", "b5-c4", "c5-b4", "c5-c4", "c5-d4",
        "d5-c4", "d5-d4", "d5-e4", "e5-d4", "e5-e4", "e5-f4", "f5-e4", "f5-f4",
    )  # fmt: skip


def test_order_sorts_by_from_rank_within_a_file_before_the_next_file() -> None:
    s = from_rows(["......", ".B....", "......", "R.....", "......", "R.R..."])
    assert G.legal_moves(s, 0) == (
        "a1-a2", "a1-b2", "a3-a4", "a3-b4", "c1-b2", "c1-c2", "c1-d2",
    )  # fmt: skip


# --- moving and capturing ---------------------------------------------------------


def test_no_straight_capture_for_either_side() -> None:
    s = play("a2-a3", "a5-a4")
    assert "a3-a4" not in G.legal_moves(s, 0)
    with pytest.raises(
        Illegal,
        match=r"a4 holds a blue piece, and a straight step cannot capture \(a diagonal one can\)\.$",
    ):
        G.parse(s, 0, "a3a4")
    with pytest.raises(Illegal, match="a3-a4 is not legal here: a4 holds a blue piece"):
        G.apply(s, {0: "a3-a4"})
    s = play("b2-b3", start=s)
    assert "a4-a3" not in G.legal_moves(s, 1)
    with pytest.raises(Illegal, match="a3 holds a red piece, and a straight step cannot capture"):
        G.parse(s, 1, "a4-a3")


def test_straight_or_diagonal_onto_own_piece_is_illegal() -> None:
    with pytest.raises(Illegal, match="a2 holds red's own piece"):
        G.parse(INITIAL, 0, "a1-a2")
    with pytest.raises(Illegal, match="b2 holds red's own piece"):
        G.parse(INITIAL, 0, "a1-b2")


def test_diagonal_capture_removes_the_enemy_piece() -> None:
    s = play("a2-a3", "b5-b4")
    assert "a3-b4" in G.legal_moves(s, 0)
    after = play("a3-b4", start=s)
    assert after.ply == 3
    assert G.outcome(after) is None
    view = G.view(after, 0)
    assert view["cells"][3][1] == "R"
    assert view["cells"][2][0] == "."
    assert view["pieces"] == {"0": 12, "1": 11}
    # and blue captures the same way, downward
    back = play("a5-b4", start=after)
    assert G.view(back, 0)["pieces"] == {"0": 11, "1": 11}


STEP_UP = (
    "it is not a step of one rank up, toward rank 6. "
    "A red piece steps one rank up, toward rank 6, straight or diagonally."
)
"""Whole sentences: the old text ended "...: b2-b1 does not" and read as cut off."""


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("b2-b1", STEP_UP),
        ("b2-b4", STEP_UP),
        ("b2-d3", STEP_UP),
        ("b2-c2", STEP_UP),
        ("c3-c4", "c3 holds no piece, not one of red's."),
        ("c5-c6", "c5 holds a blue piece, not one of red's."),
    ],
)
def test_illegal_moves_say_why(move: str, reason: str) -> None:
    with pytest.raises(Illegal) as info:
        G.parse(INITIAL, 0, move)
    assert str(info.value).startswith(f"{move} is not legal here: ")
    assert str(info.value).endswith(reason)


# --- endings ----------------------------------------------------------------------


def test_red_wins_on_reaching_rank_6() -> None:
    s = play("a2-a3", "f5-f4", "a3-a4", "f4-f3", "a4-b5", "f3-e2", "b5-a6")
    assert G.outcome(s) == Outcome((1, -1), "complete", "home-rank")
    assert G.to_act(s) == ()
    assert G.legal_moves(s, 1) == ()
    assert G.view(s, 1)["to_move"] is None
    assert G.view(s, 1)["cells"][5][0] == "R"
    with pytest.raises(Illegal, match="game is over"):
        G.apply(s, {1: "a5-a4"})
    with pytest.raises(Illegal, match=r"game is over \(home-rank\)"):
        G.parse(s, 1, "a5-a4")


def test_blue_wins_on_reaching_rank_1() -> None:
    s = play("a2-a3", "f5-f4", "a3-a4", "f4-f3", "b2-b3", "f3-e2", "b3-b4", "e2-d1")
    assert G.outcome(s) == Outcome((-1, 1), "complete", "home-rank")
    assert s.ply == 8


def test_taking_the_last_piece_wins_for_either_side() -> None:
    red_to_move = from_rows(["......", "......", ".B....", "..R...", "......", "......"])
    assert G.outcome(play("c3-b4", start=red_to_move)) == Outcome.win(0, "no-pieces")
    blue_to_move = from_rows(["......", "......", "...B..", "..R...", "......", "......"], ply=9)
    assert G.outcome(play("d4-c3", start=blue_to_move)) == Outcome.win(1, "no-pieces")


def test_home_rank_comes_before_no_pieces() -> None:
    s = from_rows(["B.....", ".R....", "......", "......", "......", "......"])
    assert G.outcome(play("b5-a6", start=s)) == Outcome.win(0, "home-rank")


def test_no_moves_is_unreachable_but_the_rule_still_decides() -> None:
    # The most advanced piece of a side has no own piece ahead, so one of its
    # diagonals is always open: no reachable position leaves the mover blocked
    # (checked over random games below). The rule is exercised on a position
    # that play cannot produce, red to move with its only piece on rank 6.
    blocked = bt._settle(red=bt.GOAL[0] & -bt.GOAL[0], blue=bt._bit(3, 3), ply=0)
    assert blocked.result == Outcome.win(1, "no-moves")
    for seed in range(200):
        s = random_position(seed, 300)
        outcome = G.outcome(s)
        assert outcome is not None
        assert outcome.ending != "no-moves"


def test_from_rows_refuses_positions_play_cannot_reach() -> None:
    with pytest.raises(ValueError, match=r"red is to move .* already stands on its goal"):
        from_rows(["R.....", "......", "......", "......", "......", "B....."])
    with pytest.raises(ValueError, match="blue made the last move"):
        from_rows(["......", "......", "......", "......", "......", "R....."])
    with pytest.raises(ValueError, match="not 6 rows of 6 characters"):
        from_rows(["......"] * 5 + ["R....x"])


def test_games_end_well_before_the_ply_cap() -> None:
    # Every move advances a piece: at most 42 non-winning steps a side, so <= 85 plies.
    lengths = [random_position(seed, 300).ply for seed in range(300)]
    assert max(lengths) <= 85


# --- ply cap and wall clock -----------------------------------------------------


CAP_ROWS = ["......", "B.....", "....B.", "......", ".R....", "R....."]
# red a1 (advance 0), b2 (1): 200 + 10 x 1 + 40 x 1 = 250
# blue a5 (advance 1), e4 (2): 200 + 10 x 3 + 40 x 2 = 310


def test_ply_cap_adjudicates_by_standing() -> None:
    s = from_rows(CAP_ROWS, ply=299)
    assert (G.standing(s, 0), G.standing(s, 1)) == (250, 310)
    assert G.to_act(s) == (1,)
    assert G.outcome(s) is None
    # blue a5-a4: advances 2 + 2 = 4 -> 200 + 40 + 80 = 320
    capped = play("a5-a4", start=s)
    assert capped.ply == 300
    assert G.standing(capped, 1) == 320
    assert G.outcome(capped) == Outcome((-1, 1), "complete", "ply-cap")
    assert G.to_act(capped) == ()
    assert G.legal_moves(capped, 0) == ()
    with pytest.raises(Illegal, match="game is over"):
        G.apply(capped, {0: "a1-a2"})


def test_ply_cap_with_equal_standings_is_a_draw_and_a_rule_ending_wins() -> None:
    level = from_rows(["......", "B.....", "......", "......", "R.....", "......"], ply=300)
    # red a2: 100 + 10 + 40 = 150; blue a5: 100 + 10 + 40 = 150
    assert G.outcome(level) == Outcome.draw("ply-cap")
    s = from_rows(["B.....", ".R....", "......", "......", "......", "R....."], ply=298)
    assert G.outcome(play("b5-a6", start=s)) == Outcome.win(0, "home-rank")


def test_adjudicate_is_by_standing_at_the_wall_clock() -> None:
    assert G.adjudicate(INITIAL) == Outcome((0, 0), "deadline", "wall-clock")
    assert G.adjudicate(play("a2-a3")) == Outcome((1, -1), "deadline", "wall-clock")
    assert G.adjudicate(from_rows(CAP_ROWS, ply=12)) == Outcome.win(1, "wall-clock", "deadline")


# --- standing -------------------------------------------------------------------


def test_standing_by_hand() -> None:
    # initial, each side: 12 pieces, six with advance 0 and six with 1:
    # 1200 + 10 x 6 + 40 x 1 = 1300
    assert G.standing(INITIAL, 0) == G.standing(INITIAL, 1) == 1300
    # after a2-a3 red advances: 5 x 1 + 2 = 7 -> 1200 + 70 + 40 x 2 = 1350
    assert G.standing(play("a2-a3"), 0) == 1350
    s = from_rows([".B....", "......", "..R...", "....B.", ".....B", "R....."], ply=1)
    # red a1 (0), c4 (3): 200 + 10 x 3 + 40 x 3 = 350
    # blue b6 (0), e3 (3), f2 (4): 300 + 10 x 7 + 40 x 4 = 530
    assert (G.standing(s, 0), G.standing(s, 1)) == (350, 530)


def test_standing_of_a_side_without_pieces_is_zero() -> None:
    s = play("c3-b4", start=from_rows(["......", "......", ".B....", "..R...", "......", "......"]))
    # blue: no pieces, max of nothing counts 0; red c3 -> b4 advance 3: 100 + 30 + 120
    assert (G.standing(s, 1), G.standing(s, 0)) == (0, 250)


# --- tactician --------------------------------------------------------------------


def test_tactician_takes_the_first_of_tied_moves() -> None:
    # every opening move scores 1350 for red, so the first in order
    assert G.baseline(INITIAL, 0) == "a2-a3"
    # blue: every move ties at 1350 too
    assert G.baseline(play("a2-a3"), 1) == "a5-a4"


def test_tactician_prefers_pushing_the_front_piece_over_capturing() -> None:
    s = from_rows(["B.....", "......", "...B..", "..R...", "......", "R....."])
    # a1 moves add 10; c3 moves add 10 + 40 (new max); the capture c3-d4 ties
    # with c3-b4 (captures do not change red's terms), so c3-b4, first in order.
    assert G.legal_moves(s, 0) == ("a1-a2", "a1-b2", "c3-b4", "c3-c4", "c3-d4")
    assert G.baseline(s, 0) == "c3-b4"
    with pytest.raises(Illegal, match="not seat 1's turn: seat 0 moves"):
        G.baseline(s, 1)


# --- reading moves --------------------------------------------------------------


@pytest.mark.parametrize("text", ["b2-c3", "B2C3", " b2 c3 ", "b2 -> c3", "(B2, C3)\n", "b2–c3"])
def test_tolerant_reader_accepts_the_seed_forms(text: str) -> None:
    assert G.parse(INITIAL, 0, text) == "b2-c3"


@pytest.mark.parametrize("text", ["", "b2", "b2c3d4", "g2g3", "a0a1", "b7c8", "b2xc3", "pass"])
def test_unreadable_text_names_what_was_read(text: str) -> None:
    with pytest.raises(Unreadable, match="a breakthrough move is <from>-<to>, the cell a piece"):
        G.parse(INITIAL, 0, text)


def test_parse_refuses_non_text_and_the_wrong_seat() -> None:
    with pytest.raises(Unreadable, match="expected the move as text, got int"):
        G.parse(INITIAL, 0, 23)
    with pytest.raises(Illegal, match="not seat 1's turn: seat 0 moves"):
        G.parse(INITIAL, 1, "b5-b4")


def test_apply_takes_only_canonical_moves_of_the_seat_to_act() -> None:
    with pytest.raises(Illegal, match="apply takes canonical moves"):
        G.apply(INITIAL, {0: "B2C3"})
    with pytest.raises(Illegal, match="apply takes canonical moves"):
        G.apply(INITIAL, {0: ["b2-c3"]})
    with pytest.raises(Illegal, match="expected exactly one move, by seat 0"):
        G.apply(INITIAL, {1: "b5-b4"})
    with pytest.raises(Illegal, match="expected exactly one move"):
        G.apply(INITIAL, {0: "b2-c3", 1: "b5-b4"})
    assert G.apply(INITIAL, {0: "b2-c3"}) != INITIAL  # and INITIAL itself is untouched
    assert G.legal_moves(INITIAL, 0)[0] == "a2-a3"


@settings(max_examples=150, deadline=None)
@given(text=st.text(), seed=st.integers(0, 50), plies=st.integers(0, 30))
def test_parse_returns_a_legal_move_or_raises_move_error(text: str, seed: int, plies: int) -> None:
    s = random_position(seed, plies)
    seat = s.ply % 2
    try:
        move = G.parse(s, seat, text)
    except MoveError:
        return
    assert move in G.legal_moves(s, seat)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), plies=st.integers(0, 6))
def test_parse_reads_every_legal_move_in_loose_form(seed: int, plies: int) -> None:
    s = random_position(seed, plies)
    for seat in G.to_act(s):
        for move in G.legal_moves(s, seat):
            assert G.parse(s, seat, f" {move.upper().replace('-', ' -> ')} ") == move


# --- engine against the rules text ---------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_engine_agrees_with_a_grid_reading_of_the_rules(seed: int) -> None:
    rng, s = random.Random(seed), INITIAL
    while seats := G.to_act(s):
        legal = G.legal_moves(s, seats[0])
        assert list(legal) == reference_moves(s)
        assert [G.standing(s, k) for k in (0, 1)] == [reference_standing(s, k) for k in (0, 1)]
        s = G.apply(s, {seats[0]: rng.choice(legal)})
    assert G.outcome(s) is not None
    assert s.result == G.outcome(s)
    assert [G.standing(s, k) for k in (0, 1)] == [reference_standing(s, k) for k in (0, 1)]


# --- rendering ----------------------------------------------------------------------


def test_board_text_puts_a1_bottom_left_with_ranks_files_and_legend() -> None:
    text = board_text(G.view(play("a2-a3", "f5-e4"), 0))
    assert text.splitlines() == [
        "6 | B B B B B B",
        "5 | B B B B B .",
        "4 | . . . . B .",
        "3 | R . . . . .",
        "2 | . R R R R R",
        "1 | R R R R R R",
        "    a b c d e f",
        "R = red (seat 0, moves toward rank 6), B = blue (seat 1, moves toward rank 1), . = empty",
    ]
