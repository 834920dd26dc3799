"""Stratego movement, battles, notation, endings, standing and baseline (docs/rules.md#stratego).

Positions are built with `from_board` from a few pieces in Gravon letters
(Red B Bomb, C Spy, D Scout, E Miner, F Sergeant, I Major, L Marshal, M Flag;
Blue N..Y the same); every expected list and value below is worked out by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from games import Illegal, Outcome, Unreadable
from games.stratego import StrategoState
from tests.games.stratego_positions import FILES, LAKES, G, play, position


def seen(s: StrategoState, seat: int, square: str) -> dict[str, object] | None:
    """The piece on `square` as `seat`'s view shows it."""
    return next((p for p in G.view(s, seat)["pieces"] if p["square"] == square), None)


# --- movement and notation ---------------------------------------------------------


def test_legal_moves_in_from_file_from_rank_to_file_to_rank_order() -> None:
    s = position({"a1": "M", "c2": "F", "c3": "D", "e3": "Q", "j10": "Y"})
    # Sergeant c2: b2, c1, (c3 own), d2. Scout c3: a3 b3 left, c4 up (c5 lake), d3 then e3 attack.
    assert G.legal_moves(s, 0) == (
        "c2-b2", "c2-c1", "c2-d2", "c3-a3", "c3-b3", "c3-c4", "c3-d3", "c3-e3",
    )  # fmt: skip
    assert G.legal_moves(s, 1) == ()
    blue = position({"a1": "M", "c2": "F", "c3": "D", "e3": "Q", "j10": "Y"}, to_move=1)
    assert G.legal_moves(blue, 1) == ("e3-d3", "e3-e2", "e3-e4", "e3-f3")


def test_ranks_compare_as_numbers_in_the_legal_order() -> None:
    s = position({"a1": "M", "a9": "F", "a10": "F", "j10": "Y"})
    assert G.legal_moves(s, 0) == ("a9-a8", "a9-b9", "a10-b10")


def test_bombs_and_flag_never_move() -> None:
    s = position({"a1": "M", "b1": "B", "b2": "F", "j10": "Y"})
    assert [m for m in G.legal_moves(s, 0) if m.startswith(("a1", "b1"))] == []
    with pytest.raises(Illegal, match="Bomb on b1 never moves"):
        G.parse(s, 0, "b1-c1")


def test_lakes_block_scouts_and_steps() -> None:
    s = position({"a1": "M", "c4": "D", "b5": "D", "j10": "Y"})
    legal = G.legal_moves(s, 0)
    assert "c4-c5" not in legal
    assert "c4-c7" not in legal
    assert [m for m in legal if m.startswith("b5-") and m[3] > "b"] == []  # c5 is a lake
    with pytest.raises(Illegal, match="cannot reach c7"):
        G.parse(s, 0, "c4-c7")


def test_scout_runs_the_open_line_and_may_attack_at_its_end() -> None:
    s = position({"a1": "M", "e2": "D", "e7": "P", "j10": "Y"})
    ups = [m for m in G.legal_moves(s, 0) if m.startswith("e2-e")]
    assert ups == ["e2-e1", "e2-e3", "e2-e4", "e2-e5", "e2-e6", "e2-e7"]
    after = play(s, "e2-e7")
    assert G.view(after, 0)["battles"][0]["result"] == "both die"


@pytest.mark.parametrize("text", ["e4-e5", "E4E5", "e4xe5", " e4 - e5 ", "e4 e5", "E4XE5"])
def test_the_reader_takes_the_usual_spellings(text: str) -> None:
    s = position({"a1": "M", "e4": "F", "e5": "R", "j10": "Y"})
    assert G.parse(s, 0, text) == "e4-e5"


@pytest.mark.parametrize("text", ["", "e4", "k4-k5", "e0-e1", "e11-e10", "attack!", "e4-e5-e6"])
def test_unreadable_moves(text: str) -> None:
    s = position({"a1": "M", "e4": "F", "j10": "Y"})
    with pytest.raises(Unreadable):
        G.parse(s, 0, text)


def test_parse_refuses_with_the_reason() -> None:
    s = position({"a1": "M", "e4": "F", "e3": "F", "j10": "Y"})
    with pytest.raises(Illegal, match="no piece of yours on f4"):
        G.parse(s, 0, "f4-f5")
    with pytest.raises(Illegal, match="cannot reach e3"):
        G.parse(s, 0, "e4-e3")
    with pytest.raises(Illegal, match="cannot reach e6"):
        G.parse(s, 0, "e4-e6")
    with pytest.raises(Illegal, match="not seat 1's turn"):
        G.parse(s, 1, "j10-j9")
    with pytest.raises(Illegal):
        G.apply(s, {0: "e4-e6"})


# --- battles -------------------------------------------------------------------------


def test_spy_beats_the_marshal_only_when_attacking() -> None:
    spy_attacks = play(position({"a1": "M", "e4": "C", "e5": "X", "j10": "Y"}), "e4-e5")
    assert seen(spy_attacks, 1, "e5") == {
        "square": "e5", "seat": 0, "code": "S", "moved": True, "revealed": True,
    }  # fmt: skip
    marshal_attacks = play(position({"a1": "M", "e4": "C", "e5": "X", "j10": "Y"}, 1), "e5-e4")
    assert seen(marshal_attacks, 0, "e4") == {
        "square": "e4", "seat": 1, "code": "X", "moved": True, "revealed": True,
    }  # fmt: skip
    defended = play(position({"a1": "M", "e4": "L", "e5": "O", "j10": "Y"}), "e4-e5")
    assert seen(defended, 1, "e5") == {
        "square": "e5", "seat": 0, "code": "X", "moved": True, "revealed": True,
    }  # fmt: skip


def test_only_a_miner_survives_a_bomb() -> None:
    mined = play(position({"a1": "M", "e4": "E", "e5": "N", "j10": "Y"}), "e4-e5")
    assert seen(mined, 1, "e5") == {
        "square": "e5", "seat": 0, "code": "3", "moved": True, "revealed": True,
    }  # fmt: skip
    assert seen(mined, 1, "e4") is None
    assert G.view(mined, 0)["captured"] == {"you": [], "enemy": ["B"]}
    blown = play(position({"a1": "M", "e4": "L", "e5": "N", "j10": "Y"}), "e4-e5")
    assert seen(blown, 1, "e4") is None
    assert seen(blown, 0, "e5") == {
        "square": "e5", "seat": 1, "code": "B", "moved": False, "revealed": True,
    }  # fmt: skip
    assert G.view(blown, 0)["captured"] == {"you": ["X"], "enemy": []}


def test_equal_ranks_both_die_and_higher_rank_wins() -> None:
    both = play(position({"a1": "M", "e4": "I", "e5": "U", "j10": "Y"}), "e4-e5")
    assert seen(both, 0, "e4") is None
    assert seen(both, 0, "e5") is None
    assert G.view(both, 0)["captured"] == {"you": ["7"], "enemy": ["7"]}
    held = play(position({"a1": "M", "e4": "F", "e5": "U", "j10": "Y"}), "e4-e5")
    assert seen(held, 0, "e5") == {
        "square": "e5", "seat": 1, "code": "7", "moved": False, "revealed": True,
    }  # fmt: skip
    assert G.view(held, 1)["battles"] == [
        {"ply": 1, "by": 0, "move": "e4-e5", "attacker": "4", "defender": "7",
         "result": "defender wins"},
    ]  # fmt: skip


def test_capturing_the_flag_wins() -> None:
    s = play(position({"a1": "M", "e2": "D", "e9": "Y", "j10": "N"}), "e2-e9")
    assert G.outcome(s) == Outcome((1, -1), "complete", "flag", "Red took the flag")
    assert G.to_act(s) == ()
    assert G.legal_moves(s, 1) == ()
    with pytest.raises(Illegal, match="game is over"):
        G.apply(s, {1: "j10-j9"})


def test_a_scout_moving_far_is_revealed_a_step_is_not() -> None:
    s = position({"a1": "M", "e2": "D", "f2": "D", "j10": "Y", "a10": "R"})
    far = play(s, "e2-e5")
    assert seen(far, 1, "e5") == {
        "square": "e5", "seat": 0, "code": "2", "moved": True, "revealed": True,
    }  # fmt: skip
    near = play(s, "f2-f3")
    assert seen(near, 1, "f3") == {
        "square": "f3", "seat": 0, "code": "?", "moved": True, "revealed": False,
    }  # fmt: skip


# --- endings -------------------------------------------------------------------------


def test_a_hundred_plies_without_a_battle_draw() -> None:
    s = position({"j1": "M", "a1": "F", "a10": "Y", "j10": "R"})
    red = ["a1-a2", "a2-b2", "b2-b1", "b1-a1"]  # a 4-cycle never crosses a boundary thrice
    blue = ["j10-j9", "j9-i9", "i9-i10", "i10-j10"]
    for ply in range(100):
        assert G.outcome(s) is None
        s = play(s, (red if ply % 2 == 0 else blue)[ply // 2 % 4])
    assert s.ply == 100
    assert G.outcome(s) == Outcome((0, 0), "complete", "no-battle")


def test_a_battle_resets_the_no_battle_count() -> None:
    s = position({"a1": "M", "e4": "F", "e6": "R", "j10": "Y", "a10": "R"})
    s = play(s, "e4-e5", "a10-a9")
    assert G.view(s, 0)["no_battle_plies"] == 2
    s = play(s, "e5-e6")
    assert G.view(s, 0)["no_battle_plies"] == 0


def test_the_4000th_ply_draws() -> None:
    s = replace(position({"a1": "M", "e4": "F", "j10": "Y", "a10": "R"}), ply=3999)
    assert G.outcome(s) is None
    s = play(s, "e4-e5")
    assert G.outcome(s) == Outcome((0, 0), "complete", "ply-cap")


def test_no_legal_move_loses_and_none_for_either_draws() -> None:
    stuck = position({"a1": "M", "a2": "B", "j10": "Y", "j9": "R"})
    assert G.outcome(stuck) == Outcome((-1, 1), "complete", "no-moves", "Red has no legal move")
    assert G.to_act(stuck) == ()
    both = position({"a1": "M", "a2": "B", "j10": "Y", "j9": "N"}, to_move=1)
    neither = "neither side has a legal move"
    assert G.outcome(both) == Outcome((0, 0), "complete", "no-moves", neither)


def test_wall_clock_adjudicates_by_standing() -> None:
    s = position({"a1": "M", "a2": "B", "b1": "B", "e4": "L", "e3": "C", "j10": "Y", "j9": "P",
                  "i9": "Q"})  # fmt: skip
    assert G.standing(s, 0) == 1000 + 20 + 20 + 170 + 100
    assert G.standing(s, 1) == 1000 + 10 + 25
    assert G.adjudicate(s) == Outcome((1, -1), "deadline", "wall-clock")
    even = position({"a1": "M", "j10": "Y"})
    assert G.adjudicate(even) == Outcome((0, 0), "deadline", "wall-clock")


# --- baseline ------------------------------------------------------------------------


def test_baseline_attacks_a_revealed_piece_it_beats_never_an_unknown_one() -> None:
    s = position({"j1": "M", "a4": "L", "a5": "P", "e6": "F", "e9": "P", "j10": "Y"}, to_move=1)
    s = play(s, "e9-e7")  # the Scout runs two squares and is revealed
    # a4-a5 comes first in legal order and would win, but that Scout was never seen.
    assert G.baseline(s, 0) == "e6-e7"


def test_baseline_moves_forward_into_an_empty_square_else_plays_the_first_move() -> None:
    blue = position({"j1": "M", "j10": "Y", "a9": "R", "a8": "N", "c9": "R"}, to_move=1)
    # Blue moves toward rank 1: a9-a10 and a9-b9 are not forward, c9-c8 is.
    assert G.legal_moves(blue, 1)[:4] == ("a9-a10", "a9-b9", "c9-b9", "c9-c8")
    assert G.baseline(blue, 1) == "c9-c8"
    sideways = position({"a2": "M", "a1": "F", "b2": "B", "j10": "Y"})
    assert G.legal_moves(sideways, 0) == ("a1-b1",)
    assert G.baseline(sideways, 0) == "a1-b1"
    with pytest.raises(Illegal):
        G.baseline(sideways, 1)


def test_from_board_names_what_is_wrong() -> None:
    empty = "".join("_" if f"{f}{r}" in LAKES else "A" for r in range(1, 11) for f in FILES)
    with pytest.raises(ValueError, match="100 letters, rank 1 first; got 99"):
        G.from_board(empty[:-1], 0)
    with pytest.raises(ValueError, match=r"letter 1 \('Z'\) is not a Gravon letter"):
        G.from_board("Z" + empty[1:], 0)
    with pytest.raises(ValueError, match=r"letter 43 \('A'\) must be '_' exactly on the lakes"):
        G.from_board(empty[:42] + "A" + empty[43:], 0)  # c5 is a lake
    with pytest.raises(ValueError, match="to_move must be seat 0"):
        G.from_board(empty, 2)
    assert G.from_board("\n".join(empty[i : i + 10] for i in range(0, 100, 10)), 1).mover == 1
