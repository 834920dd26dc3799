"""Hex: adjacency, connection, notation, distToWin and the tactician against hand-worked values."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.core import Illegal, MoveError, Outcome, Unreadable
from games.hex import Hex, HexState
from games.hex.render import board_text
from games.hex.rules import UNREACHABLE, cell_mask, dist_to_win, neighbours, winning_chain

GAME = Hex()
CELLS = [f"{f}{r}" for f in "abcdefg" for r in range(1, 8)]


def play(moves: Iterable[str]) -> HexState:
    """The state after `moves`, alternating from seat 0."""
    s = GAME.initial(1)
    for move in moves:
        s = GAME.apply(s, {GAME.to_act(s)[0]: move})
    return s


def alternate(red: list[str], blue: list[str]) -> list[str]:
    """Red's and blue's moves interleaved, red first."""
    moves = [m for pair in zip(red, blue, strict=False) for m in pair]
    return moves + red[len(blue) :] + blue[len(red) :]


def standings(s: HexState) -> tuple[int, int]:
    return GAME.standing(s, 0), GAME.standing(s, 1)


def random_state(seed: int, plies: int) -> HexState:
    """A state after up to `plies` random moves (fewer if the game ends)."""
    rng = random.Random(seed)
    s = GAME.initial(seed)
    while GAME.to_act(s) and s.ply < plies:
        seat = GAME.to_act(s)[0]
        s = GAME.apply(s, {seat: rng.choice(GAME.legal_moves(s, seat))})
    return s


def plainly_connected(cells: list[list[str]], symbol: str) -> bool:
    """Whether `symbol` joins its edges, by a search over cell names and `neighbours`."""
    owned = {f"{'abcdefg'[f]}{r + 1}" for r in range(7) for f in range(7) if cells[r][f] == symbol}
    start = {c for c in owned if (c[0] == "a" if symbol == "R" else c[1] == "1")}
    seen, todo = set(start), list(start)
    while todo:
        for near in neighbours(todo.pop()):
            if near in owned and near not in seen:
                seen.add(near)
                todo.append(near)
    return any((c[0] == "g" if symbol == "R" else c[1] == "7") for c in seen)


# -- loading and the initial state ------------------------------------------------


def test_registry_loads_the_class_and_refuses_parameters() -> None:
    assert isinstance(games.load("hex"), Hex)
    with pytest.raises(ValueError, match="does not take parameters"):
        games.load("hex", size=11)
    assert (GAME.name, GAME.family, GAME.rules_version, GAME.ply_cap) == ("hex", "board", 1, None)


def test_initial_ignores_the_seed_and_lists_cells_by_file_then_rank() -> None:
    s = GAME.initial(99, game=2)
    assert s == GAME.initial(1)
    assert (s.ply, GAME.to_act(s), GAME.outcome(s)) == (0, (0,), None)
    assert GAME.legal_moves(s, 0) == tuple(CELLS)
    assert GAME.legal_moves(s, 0)[:8] == ("a1", "a2", "a3", "a4", "a5", "a6", "a7", "b1")
    assert GAME.legal_moves(s, 1) == ()


# -- adjacency ------------------------------------------------------------------------


def test_corner_a1_touches_only_b1_and_a2() -> None:
    assert neighbours("a1") == ("a2", "b1")


def test_c4_touches_the_six_cells_of_the_seed() -> None:
    assert set(neighbours("c4")) == {"b4", "d4", "c3", "c5", "b5", "d3"}


def test_adjacency_is_symmetric_and_counts_120_links() -> None:
    degrees = {c: len(neighbours(c)) for c in CELLS}
    assert all(c in neighbours(n) for c in CELLS for n in neighbours(c))
    assert (degrees["a1"], degrees["g7"], degrees["a7"], degrees["g1"]) == (2, 2, 3, 3)
    assert degrees["d1"] == degrees["a4"] == 4
    # 7 x 6 along ranks + 7 x 6 along files + 6 x 6 on the (+1, -1) diagonal
    assert sum(degrees.values()) == 2 * (42 + 42 + 36)
    with pytest.raises(ValueError, match="'h1' is not a hex cell"):
        neighbours("h1")


# -- rules: placing and connecting -------------------------------------------------------


def test_a_stone_stays_and_its_cell_leaves_the_legal_list() -> None:
    s = play(["c4", "d4"])
    view = GAME.view(s, 0)
    assert (view["cells"][3][2], view["cells"][3][3]) == ("R", "B")
    assert "c4" not in GAME.legal_moves(s, 0)
    assert len(GAME.legal_moves(s, 0)) == 47
    with pytest.raises(Illegal, match="c4 already holds a red stone"):
        GAME.apply(s, {0: "c4"})
    with pytest.raises(Illegal, match="by seat 0"):
        GAME.apply(s, {1: "e5"})
    assert s == play(["c4", "d4"])  # apply left it alone


RED_RANK_4 = ["a4", "b4", "c4", "d4", "e4", "f4", "g4"]
BLUE_RANK_1 = ["a1", "b1", "c1", "d1", "e1", "f1"]

# (label, moves, winner, winning ply)
CONNECTIONS = [
    ("red straight along rank 4", alternate(RED_RANK_4, BLUE_RANK_1), 0, 13),
    ("red on the a7-g1 diagonal",
     alternate(["a7", "b6", "c5", "d4", "e3", "f2", "g1"], BLUE_RANK_1), 0, 13),
    ("red's middle stone joins two edge groups",
     alternate(["a4", "b4", "c4", "e4", "f4", "g4", "d4"], BLUE_RANK_1), 0, 13),
    ("blue straight up file d",
     alternate(["a1", "a2", "a3", "a4", "a5", "a6", "a7"], [f"d{r}" for r in range(1, 8)]), 1, 14),
    ("blue on the g1-a7 diagonal",
     alternate(["a1", "a2", "a3", "a4", "a5", "a6", "b1"],
               ["g1", "f2", "e3", "d4", "c5", "b6", "a7"]), 1, 14),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "moves", "winner", "ply"), CONNECTIONS, ids=[c[0] for c in CONNECTIONS]
)
def test_connection_wins(label: str, moves: list[str], winner: int, ply: int) -> None:
    assert GAME.outcome(play(moves[:-1])) is None
    s = play(moves)
    assert s.ply == ply
    assert GAME.outcome(s) == Outcome.win(winner, "connection")
    assert GAME.to_act(s) == ()
    assert GAME.legal_moves(s, 0) == GAME.legal_moves(s, 1) == ()
    with pytest.raises(Illegal, match="game is over"):
        GAME.apply(s, {0: "g7"})


def test_a_gap_is_not_a_connection() -> None:
    # g5 does not touch f4 (f4 touches g4 and g3), so red a4-f4 + g5 is no chain.
    s = play(alternate(["a4", "b4", "c4", "d4", "e4", "f4", "g5"], [*BLUE_RANK_1, "a7"]))
    assert GAME.outcome(s) is None
    assert GAME.outcome(GAME.apply(s, {0: "g3"})) == Outcome.win(0, "connection")


BLUE_ASIDE = ["a7", "b7", "c7", "d7", "e7", "f7", "g7", "a6"]  # blue's moves out of the way

# (label, moves, the chain worked out by hand, from the winner's first edge)
CHAINS = [
    # b1 and c1 hang off the chain: b1 touches a2 and b2, c1 touches b1, b2 and c2, and
    # neither reaches file d (c1's neighbours on it, d1 and none, are not red)
    ("the side branch b1-c1 is left out",
     alternate(["b1", "c1", "a2", "b2", "c2", "d2", "e2", "f2", "g2"], BLUE_ASIDE),
     ("a2", "b2", "c2", "d2", "e2", "f2", "g2")),
    # f2 touches g1 and g2, b2 touches a2 and a3: each tie goes to the first cell in
    # legal order (by file, then rank), g1 and a2
    ("ties go to the first cell in legal order",
     alternate(["g1", "g2", "a3", "a2", "b2", "c2", "d2", "e2", "f2"], BLUE_ASIDE),
     ("a2", "b2", "c2", "d2", "e2", "f2", "g1")),
    ("blue straight up file d",
     alternate(["a1", "a2", "a3", "a4", "a5", "a6", "a7"], [f"d{r}" for r in range(1, 8)]),
     ("d1", "d2", "d3", "d4", "d5", "d6", "d7")),
]  # fmt: skip


@pytest.mark.parametrize(("label", "moves", "chain"), CHAINS, ids=[c[0] for c in CHAINS])
def test_winning_chain_is_a_shortest_path_between_the_edges(
    label: str, moves: list[str], chain: tuple[str, ...]
) -> None:
    assert winning_chain(play(moves[:-1])) == ()
    s = play(moves)
    assert GAME.outcome(s) is not None
    assert winning_chain(s) == chain


def test_no_winning_chain_without_a_winner() -> None:
    assert winning_chain(GAME.initial(1)) == ()
    # red a4-f4 and g5 (not touching f4): six stones on the way, no chain yet
    assert winning_chain(play(alternate([*RED_RANK_4[:6], "g5"], BLUE_RANK_1))) == ()


def test_a_random_game_ends_with_a_chain_of_the_winners_stones_edge_to_edge() -> None:
    for seed in range(40):
        s = random_state(seed, 49)
        result = GAME.outcome(s)
        assert result is not None
        assert result.scores is not None
        winner = 0 if result.scores[0] > 0 else 1
        chain = winning_chain(s)
        cells = GAME.view(s, 0)["cells"]
        assert {cells[int(c[1:]) - 1]["abcdefg".index(c[0])] for c in chain} == {"RB"[winner]}
        assert all(b in neighbours(a) for a, b in itertools.pairwise(chain))
        edge = 0 if winner == 0 else 1  # red's chain runs file a to g, blue's rank 1 to 7
        assert (chain[0][edge], chain[-1][edge]) == (("a", "g") if winner == 0 else ("1", "7"))


def test_random_games_agree_with_a_plain_search_and_never_draw() -> None:
    for seed in range(80):
        rng = random.Random(seed)
        s = GAME.initial(seed)
        while GAME.to_act(s):
            seat = GAME.to_act(s)[0]
            s = GAME.apply(s, {seat: rng.choice(GAME.legal_moves(s, seat))})
            cells = GAME.view(s, 0)["cells"]
            red, blue = plainly_connected(cells, "R"), plainly_connected(cells, "B")
            assert not (red and blue)
            expected = Outcome.win(seat, "connection") if red or blue else None
            assert GAME.outcome(s) == expected
        assert s.ply <= 49


@settings(max_examples=60, deadline=None)
@given(st.permutations(CELLS))
def test_a_full_board_holds_exactly_one_connection(order: list[str]) -> None:
    red = sum(cell_mask(c) for c in order[:25])
    blue = sum(cell_mask(c) for c in order[25:])
    # No empty cell: each distance is 0 (connected) or unreachable, never both 0.
    distances = (dist_to_win(red, blue, 0), dist_to_win(blue, red, 1))
    assert sorted(distances) == [0, UNREACHABLE]


# -- notation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move"),
    [("c4", "c4"), (" c4 ", "c4"), ("C4", "c4"), ("c-4", "c4"), ("(g7)", "g7"), ("'A1'.", "a1")],
)
def test_parse_reads_cells(text: str, move: str) -> None:
    assert GAME.parse(GAME.initial(1), 0, text) == move


@pytest.mark.parametrize("text", ["", "c", "4", "h1", "a8", "a0", "c44", "4c", "pass"])
def test_parse_refuses_what_is_not_a_cell(text: str) -> None:
    with pytest.raises(
        Unreadable, match="one empty <cell>, a file letter a-g then a rank number 1-7"
    ):
        GAME.parse(GAME.initial(1), 0, text)


@pytest.mark.parametrize("text", ["c4 d5", "c4, d5", "c4 or d5"])
def test_parse_refuses_several_cells_as_several_moves(text: str) -> None:
    with pytest.raises(Unreadable, match=f"^{text!r} holds several moves: give exactly one.$"):
        GAME.parse(GAME.initial(1), 0, text)


def test_parse_errors_name_the_reason() -> None:
    s = play(["c4", "d4"])
    with pytest.raises(Illegal, match="read 'c4' from 'C4', but c4 already holds a red stone"):
        GAME.parse(s, 0, "C4")
    with pytest.raises(Illegal, match="d4 already holds a blue stone"):
        GAME.parse(s, 0, "d4")
    with pytest.raises(Illegal, match="not seat 1's turn"):
        GAME.parse(s, 1, "e5")
    with pytest.raises(Unreadable, match="as text"):
        GAME.parse(s, 0, None)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(), seed=st.integers(0, 50), plies=st.integers(0, 49), seat=st.sampled_from([0, 1])
)
def test_parse_only_returns_legal_moves(text: str, seed: int, plies: int, seat: int) -> None:
    s = random_state(seed, plies)
    try:
        move = GAME.parse(s, seat, text)
    except MoveError:
        return
    assert move in GAME.legal_moves(s, seat)


# -- standing: 1000 - 10 x distToWin -------------------------------------------------------


def test_dist_to_win_by_hand() -> None:
    # Empty board: a whole rank (red) or file (blue) is 7 empty cells -> 1000 - 70.
    assert standings(GAME.initial(1)) == (930, 930)
    # Red d4: rank 4 needs 6 more -> 940. Blue still needs one cell on each of 7 ranks,
    # e.g. file a -> 930.
    assert standings(play(["d4"])) == (940, 930)
    # Red c4, e3 (apart, but both touch d3 and d4), blue a1: red needs a4 b4 d4 f3 g3
    # -> 950; blue needs a2..a7 above a1 -> 940.
    assert standings(play(["c4", "a1", "e3"])) == (950, 940)
    # Red a4..f4, blue a7..f7: red needs g4 (1) -> 990. Blue must cross rank 4 at
    # g4 and fill one cell on each of ranks 1-6 (g1 g2 g3 g4 g5 g6, then f7) -> 940.
    s = play(alternate(RED_RANK_4[:6], ["a7", "b7", "c7", "d7", "e7", "f7"]))
    assert standings(s) == (990, 940)


def test_unreachable_is_99() -> None:
    # Blue's file d cuts every red chain from file a to file g: 1000 - 10 x 99 = 10.
    s = play(CONNECTIONS[3][1])
    assert dist_to_win(s.red, s.blue, 0) == UNREACHABLE == 99
    assert standings(s) == (10, 1000)


def test_adjudicate_by_standing_at_the_wall_clock() -> None:
    assert GAME.adjudicate(play(["d4"])) == Outcome.win(0, "wall-clock", "deadline")  # 940 > 930
    assert GAME.adjudicate(GAME.initial(1)) == Outcome.draw("wall-clock", "deadline")  # 930 = 930


def test_standing_refuses_an_unknown_seat() -> None:
    with pytest.raises(ValueError, match="seat 2"):
        GAME.standing(GAME.initial(1), 2)


# -- baseline ---------------------------------------------------------------------------


def test_tactician_breaks_ties_by_legal_order() -> None:
    # Empty board: any stone lies on its own rank, so every move leaves red 6 away; a1 first.
    assert GAME.baseline(GAME.initial(1), 0) == "a1"
    # After red a1 every blue stone still lies on a 7-cell chain (a2 on b1 a2..a7); a2 first.
    assert GAME.baseline(play(["a1"]), 1) == "a2"
    # Red a4..f4: both g3 and g4 touch f4 and win (standing 1000); g3 comes first.
    s = play(alternate(RED_RANK_4[:6], ["a7", "b7", "c7", "d7", "e7", "f7"]))
    assert GAME.baseline(s, 0) == "g3"


def test_tactician_refuses_the_wrong_seat() -> None:
    with pytest.raises(Illegal, match="not seat 1's turn"):
        GAME.baseline(GAME.initial(1), 1)


# -- view and render ---------------------------------------------------------------------


def test_view_lists_the_board_from_rank_1() -> None:
    view = GAME.view(play(["a1", "g7", "c4"]), 1)
    assert view["game"] == "hex"
    assert (view["ply"], view["to_move"], view["you"]) == (3, 1, 1)
    assert view["sides"] == {"0": "red", "1": "blue"}
    assert view["cells"][0] == ["R", ".", ".", ".", ".", ".", "."]
    assert view["cells"][3][2] == "R"
    assert view["cells"][6] == [".", ".", ".", ".", ".", ".", "B"]
    assert len(view["legal"]) == 46
    assert GAME.view(play(CONNECTIONS[0][1]), 0)["to_move"] is None


def test_board_text_puts_a1_bottom_left() -> None:
    text = board_text(GAME.view(play(["a1", "g7"]), 0))
    lines = text.splitlines()
    assert lines[1].startswith("7 ")
    assert lines[1].rstrip().endswith(". B  7")
    assert lines[7].startswith("1  R .")
    assert lines[8].strip() == "a b c d e f g"
    assert "R = red" in text
    assert "B = blue" in text
    assert ". = empty" in text


def test_an_unreadable_reply_is_quoted_as_written() -> None:
    game = games.load("hex")
    with pytest.raises(Unreadable, match="read 'maybe c 9': a hex move is one empty"):
        game.parse(game.initial(1), 0, "maybe c 9")
