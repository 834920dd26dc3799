"""Connect-four: rules, notation, standing and baseline against hand-worked values."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.connect_four import ConnectFour, ConnectFourState
from games.connect_four.render import board_text
from games.connect_four.rules import WEIGHTS, WINDOW_CELLS, winning_cells
from games.core import Illegal, MoveError, Outcome, Unreadable

GAME = ConnectFour()


def play(moves: Iterable[str]) -> ConnectFourState:
    """The state after `moves`, alternating from seat 0."""
    s = GAME.initial(1)
    for move in moves:
        s = GAME.apply(s, {GAME.to_act(s)[0]: move})
    return s


def cell(s: ConnectFourState, name: str) -> str:
    """The symbol on cell `name` ("d3") in the view."""
    return str(GAME.view(s, 0)["cells"][int(name[1]) - 1]["abcdefg".index(name[0])])


def naive_fours(cells: list[list[str]]) -> set[str]:
    """Symbols holding four in a line, by a plain scan independent of the bitboards."""
    found = set()
    for r in range(6):
        for f in range(7):
            for df, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                line = [(f + i * df, r + i * dr) for i in range(4)]
                if all(0 <= lf < 7 and 0 <= lr < 6 for lf, lr in line):
                    symbols = {cells[lr][lf] for lf, lr in line}
                    if len(symbols) == 1 and symbols != {"."}:
                        found |= symbols
    return found


def random_state(seed: int, plies: int) -> ConnectFourState:
    """A state after up to `plies` random moves (fewer if the game ends)."""
    rng = random.Random(seed)
    s = GAME.initial(seed)
    while GAME.to_act(s) and s.ply < plies:
        seat = GAME.to_act(s)[0]
        s = GAME.apply(s, {seat: rng.choice(GAME.legal_moves(s, seat))})
    return s


# -- loading and the initial state ------------------------------------------------


def test_registry_loads_the_class_and_refuses_parameters() -> None:
    assert isinstance(games.load("connect-four"), ConnectFour)
    with pytest.raises(ValueError, match="does not take parameters"):
        games.load("connect-four", rows=7)
    with pytest.raises(TypeError):
        ConnectFour(rows=7)  # type: ignore[call-arg]


def test_class_attributes() -> None:
    assert (GAME.name, GAME.family, GAME.rules_version) == ("connect-four", "board", 1)
    assert GAME.ply_cap is None


def test_initial_ignores_the_seed() -> None:
    s = GAME.initial(12345, game=2)
    assert s == GAME.initial(0) == GAME.initial(-7)
    assert s.ply == 0
    assert GAME.to_act(s) == (0,)
    assert GAME.outcome(s) is None
    assert GAME.legal_moves(s, 0) == ("a", "b", "c", "d", "e", "f", "g")
    assert GAME.legal_moves(s, 1) == ()


# -- rules ------------------------------------------------------------------------


def test_disc_drops_to_the_lowest_empty_cell() -> None:
    s = play("dd")
    assert (cell(s, "d1"), cell(s, "d2"), cell(s, "d3")) == ("R", "B", ".")
    assert s.ply == 2
    assert GAME.to_act(s) == (0,)


def test_a_full_file_leaves_the_legal_list_in_order() -> None:
    s = play("dddddd")  # R B R B R B up file d: no four
    assert GAME.outcome(s) is None
    assert GAME.legal_moves(s, 0) == ("a", "b", "c", "e", "f", "g")
    # The retry lists the legal moves; the refusal names none of them, so none reads as advice.
    with pytest.raises(Illegal, match=r"but file d is full: pick an open file\.$"):
        GAME.apply(s, {0: "d"})


def test_apply_refuses_wrong_seat_non_text_and_leaves_the_state_alone() -> None:
    s = play("d")
    with pytest.raises(Illegal, match="by seat 1"):
        GAME.apply(s, {0: "a"})
    with pytest.raises(Illegal):
        GAME.apply(s, {0: "a", 1: "a"})
    with pytest.raises(Illegal):
        GAME.apply(s, {1: 3})
    with pytest.raises(Illegal):
        GAME.apply(s, {1: "D"})  # apply takes canonical moves only; parse reads "D"
    after = GAME.apply(s, {1: "a"})
    assert s == play("d")
    assert after != s


# (name, moves, winner, winning ply): every line direction, both seats, and a
# win completed in the middle of the line rather than at its end.
FOURS = [
    ("horizontal a1-d1", "aabbccd", 0, 7),
    ("horizontal, middle disc last", "aabbddc", 0, 7),
    ("vertical a1-a4", "abababa", 0, 7),
    # R a1, B b1, R b2, B c1, R d1, B c2, R c3, B d2, R e1, B d3, R d4
    ("up-right a1-d4", "abbcdccdedd", 0, 11),
    # R a1, B g1, R f1, B f2, R e1, B d1, R e2, B e3, R d2, B c1, R d3, B d4
    ("down-right d4-g1 by blue", "agffedeedcdd", 1, 12),
]


@pytest.mark.parametrize(("label", "moves", "winner", "ply"), FOURS, ids=[f[0] for f in FOURS])
def test_four_in_a_row_in_every_direction(label: str, moves: str, winner: int, ply: int) -> None:
    assert GAME.outcome(play(moves[:-1])) is None
    s = play(moves)
    assert s.ply == ply
    assert GAME.outcome(s) == Outcome.win(winner, "four-in-a-row")
    assert GAME.to_act(s) == ()
    assert GAME.legal_moves(s, 0) == GAME.legal_moves(s, 1) == ()
    with pytest.raises(Illegal, match="game is over"):
        GAME.apply(s, {0: "a"})


def test_guard_bit_stops_a_line_wrapping_between_files() -> None:
    # Red holds a4, a5, a6 and b1: consecutive in a naive 6-bit packing, no line here.
    s = play("bagagaagaca")
    assert (cell(s, "a4"), cell(s, "a5"), cell(s, "a6"), cell(s, "b1")) == ("R",) * 4
    assert GAME.outcome(s) is None


# Red/blue alternate; the final board (rank 6 at the top) has no line of four:
#   6 B B R R R B B
#   5 R R R B B B R
#   4 R B B B R B B
#   3 R R R B R R R
#   2 B B B R B B B
#   1 B R R R B R R
#     a b c d e f g
FULL = "begggacadgddfdgbadaedfagfccfbccacfefeeebbb"


def test_board_full_is_a_draw() -> None:
    assert GAME.outcome(play(FULL[:-1])) is None
    s = play(FULL)
    view = GAME.view(s, 0)
    assert naive_fours(view["cells"]) == set()
    assert all(symbol != "." for row in view["cells"] for symbol in row)
    assert GAME.outcome(s) == Outcome.draw("board-full")
    assert GAME.to_act(s) == ()


# (name, moves, the winning cells worked out by hand)
WINNING = [
    # R a1, B a2, R b1, B b2, R c1, B c2, R d1
    ("horizontal a1-d1", "aabbccd", ("a1", "b1", "c1", "d1")),
    # R a1, B b1, R a2, B b2, R a3, B b3, R a4
    ("vertical a1-a4", "abababa", ("a1", "a2", "a3", "a4")),
    # R a1, B g1, R f1, B f2, R e1, B d1, R e2, B e3, R d2, B c1, R d3, B d4
    ("down-right d4-g1 by blue", "agffedeedcdd", ("d4", "e3", "f2", "g1")),
    # R a1, B a2, R b1, B b2, R c1, B c2, R e1, B e2, R f1, B g1, R d1: d1 fills three
    # windows at once (a1-d1, b1-e1, c1-f1), so six cells in all
    ("one disc, three lines", "aabbcceefgd", ("a1", "b1", "c1", "d1", "e1", "f1")),
]


@pytest.mark.parametrize(("label", "moves", "cells"), WINNING, ids=[w[0] for w in WINNING])
def test_winning_cells_are_the_winners_lines(label: str, moves: str, cells: tuple[str]) -> None:
    assert winning_cells(play(moves[:-1])) == ()
    s = play(moves)
    assert GAME.outcome(s) is not None
    assert winning_cells(s) == cells


def test_no_winning_cells_without_a_winner() -> None:
    assert winning_cells(GAME.initial(1)) == ()
    assert winning_cells(play(FULL)) == ()  # a draw


def test_random_games_agree_with_a_plain_scan() -> None:
    for seed in range(150):
        rng = random.Random(seed)
        s = GAME.initial(seed)
        while GAME.to_act(s):
            seat = GAME.to_act(s)[0]
            s = GAME.apply(s, {seat: rng.choice(GAME.legal_moves(s, seat))})
            fours = naive_fours(GAME.view(s, 0)["cells"])
            result = GAME.outcome(s)
            if fours:
                assert fours == {"R" if seat == 0 else "B"}
                assert result == Outcome.win(seat, "four-in-a-row")
            else:
                assert result in (None, Outcome.draw("board-full"))
                assert (result is None) == (s.ply < 42)


# -- notation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move"),
    [("d", "d"), ("D", "d"), (" d ", "d"), ("4", "d"), ("1", "a"), ("7", "g"), ("'G'.", "g"),
     ("(e)", "e"), ("\"b\"", "b")],
)  # fmt: skip
def test_parse_reads_letters_and_digits(text: str, move: str) -> None:
    assert GAME.parse(GAME.initial(1), 0, text) == move


@pytest.mark.parametrize("text", ["", "h", "0", "8", "dd", "44", "d1", "file d", "column 4"])
def test_parse_refuses_what_is_not_a_file(text: str) -> None:
    with pytest.raises(Unreadable, match=r"one <file letter>, a letter a-g \(or a digit 1-7"):
        GAME.parse(GAME.initial(1), 0, text)


def test_parse_errors_name_the_reason() -> None:
    s = play("dddddd")
    with pytest.raises(Illegal, match="read 'd' from '4', but file d is full"):
        GAME.parse(s, 0, "4")
    with pytest.raises(Illegal, match="not seat 1's turn"):
        GAME.parse(s, 1, "a")
    with pytest.raises(Unreadable, match="as text"):
        GAME.parse(s, 0, 4)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(), seed=st.integers(0, 50), plies=st.integers(0, 42), seat=st.sampled_from([0, 1])
)
def test_parse_only_returns_legal_moves(text: str, seed: int, plies: int, seat: int) -> None:
    s = random_state(seed, plies)
    try:
        move = GAME.parse(s, seat, text)
    except MoveError:
        return
    assert move in GAME.legal_moves(s, seat)


# -- standing ---------------------------------------------------------------------------


def test_there_are_69_windows() -> None:
    assert len(WINDOW_CELLS) == len(set(WINDOW_CELLS)) == 69
    # 4 per rank x 6 ranks + 3 per file x 7 files + 12 up-right + 12 down-right
    horizontal = [w for w in WINDOW_CELLS if len({c[1] for c in w}) == 1]
    vertical = [w for w in WINDOW_CELLS if len({c[0] for c in w}) == 1]
    assert (len(horizontal), len(vertical)) == (24, 21)
    assert ("a1", "b1", "c1", "d1") in WINDOW_CELLS
    assert ("d1", "e1", "f1", "g1") in WINDOW_CELLS
    assert ("g3", "g4", "g5", "g6") in WINDOW_CELLS
    assert ("a1", "b2", "c3", "d4") in WINDOW_CELLS
    assert ("d3", "e4", "f5", "g6") in WINDOW_CELLS
    assert ("a4", "b3", "c2", "d1") in WINDOW_CELLS
    assert ("d6", "e5", "f4", "g3") in WINDOW_CELLS
    assert not any("h" in c[0] or c[1] in "07" for w in WINDOW_CELLS for c in w)
    assert sum("d1" in w for w in WINDOW_CELLS) == 7  # 4 horizontal, 1 vertical, 1 + 1 diagonal


def test_standing_by_hand() -> None:
    assert WEIGHTS == (0, 1, 4, 16, 10000)
    s = GAME.initial(1)
    assert GAME.standing(s, 0) == GAME.standing(s, 1) == 0  # 69 empty windows, w[0] = 0
    # Red d1 lies in 7 windows, each with k = 1: 7 x 1.
    s = play("d")
    assert (GAME.standing(s, 0), GAME.standing(s, 1)) == (7, 0)
    # Blue d2: red keeps its windows except d1-d4 (6 x 1). Blue's windows through d2
    # without d1: 4 on rank 2, d2-d5, c1-f4, d2-g5, a5-d2, b4-e1: 9 x 1.
    s = play("dd")
    assert (GAME.standing(s, 0), GAME.standing(s, 1)) == (6, 9)
    # Red a1 b1 c1, blue a2 b2. Red: a1-d1 k=3 (16), b1-e1 k=2 (4), c1-f1 (1),
    # c1-c4 (1), b1-e4 (1), c1-f4 (1) = 24. Blue: a2-d2 k=2 (4), b2-e2 (1),
    # a2-a5 (1), b2-b5 (1), a2-d5 (1), b2-e5 (1) = 9.
    s = play("aabbc")
    assert (GAME.standing(s, 0), GAME.standing(s, 1)) == (24, 9)
    # Red wins a1-d1 over blue a2 b2 c2: 10000 + b1-e1 16 + c1-f1 4 + d1-g1 1
    # + d1-d4 1 + c1-f4 1 + d1-g4 1 = 10024.
    s = play("aabbccd")
    assert GAME.standing(s, 0) == 10024


def test_standing_refuses_an_unknown_seat() -> None:
    with pytest.raises(ValueError, match="seat 2"):
        GAME.standing(GAME.initial(1), 2)


def test_adjudicate_by_standing_at_the_wall_clock() -> None:
    assert GAME.adjudicate(play("d")) == Outcome.win(0, "wall-clock", "deadline")  # 7 > 0
    assert GAME.adjudicate(play("dd")) == Outcome.win(1, "wall-clock", "deadline")  # 6 < 9
    assert GAME.adjudicate(GAME.initial(1)) == Outcome.draw("wall-clock", "deadline")  # 0 = 0


# -- baseline ---------------------------------------------------------------------------


def test_tactician_takes_the_best_move() -> None:
    # Empty board: d1 lies in 7 windows, more than any other bottom cell.
    assert GAME.baseline(GAME.initial(1), 0) == "d"
    # Red a1 b1 c1 with blue a2 b2 c2: d1 completes a four (10000).
    assert GAME.baseline(play("aabbcc"), 0) == "d"


def test_tactician_breaks_ties_by_legal_order() -> None:
    # After red b1, blue's standing after b2 is 5 (a2-d2, b2-e2, b2-b5, a1-d4,
    # b2-e5) and after d1 also 5 (c1-f1, d1-g1, d1-d4, d1-g4, a4-d1): b comes first.
    s = play("b")
    after = {m: GAME.standing(GAME.apply(s, {1: m}), 1) for m in GAME.legal_moves(s, 1)}
    assert after == {"a": 2, "b": 5, "c": 3, "d": 5, "e": 4, "f": 4, "g": 3}
    assert GAME.baseline(s, 1) == "b"


def test_tactician_refuses_the_wrong_seat() -> None:
    with pytest.raises(Illegal, match="not seat 1's turn"):
        GAME.baseline(GAME.initial(1), 1)


# -- view and render ---------------------------------------------------------------------


def test_view_lists_the_board_from_rank_1() -> None:
    view = GAME.view(play("ddc"), 1)
    assert view["game"] == "connect-four"
    assert (view["ply"], view["to_move"], view["you"]) == (3, 1, 1)
    assert view["sides"] == {"0": "red", "1": "blue"}
    assert view["cells"][0] == [".", ".", "R", "R", ".", ".", "."]
    assert view["cells"][1] == [".", ".", ".", "B", ".", ".", "."]
    assert len(view["cells"]) == 6
    assert view["legal"] == list("abcdefg")
    assert GAME.view(play("aabbccd"), 0)["to_move"] is None


def test_board_text_puts_a1_bottom_left() -> None:
    text = board_text(GAME.view(play("ad"), 0))
    lines = text.splitlines()
    assert lines[0].startswith("6 |")
    assert lines[5] == "1 | R . . B . . . |"
    assert lines[6].strip() == "a b c d e f g"
    assert "R = red" in text
    assert "B = blue" in text
    assert ". = empty" in text


def test_an_unreadable_reply_is_quoted_as_written() -> None:
    game = games.load("connect-four")
    with pytest.raises(Unreadable, match="read 'I think the best move is column d': a connect"):
        game.parse(game.initial(1), 0, "  I think the best move is column d ")
