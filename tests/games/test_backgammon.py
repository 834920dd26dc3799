"""Backgammon: legal plays, notation, reading, results, standing, baseline, view."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.backgammon import (
    Backgammon,
    BackgammonState,
    colour_of,
    derived_card_seed,
    seat_of,
)
from games.backgammon.render import board_text
from games.core import Illegal, Outcome, Unreadable

g = Backgammon()
OPEN = {24: 2, 13: 5, 8: 3, 6: 5}


def opening(dice: tuple[int, int]) -> BackgammonState:
    return g.position(black=OPEN, white=OPEN, to_move="BLACK", dice=dice)


def plays(s: BackgammonState) -> list[str]:
    return list(g.legal_moves(s, g.to_act(s)[0]))


# --- legal plays ------------------------------------------------------------------------


def test_opening_2_1_has_the_15_plays_worked_out_by_hand() -> None:
    assert plays(opening((2, 1))) == [
        "24/23 24/22",
        "24/23 13/11",
        "24/23 8/6",
        "24/23 6/4",
        "24/22 8/7",
        "24/22 6/5",
        "24/21",
        "13/11 8/7",
        "13/11 6/5",
        "13/10",
        "8/7 8/6",
        "8/7 6/4",
        "8/5",
        "6/5 6/4",
        "6/3",
    ]


def test_opening_6_5_has_7_plays_and_1_1_has_42() -> None:
    assert plays(opening((6, 5))) == [
        "24/18 13/8",
        "24/18 8/3",
        "24/13",
        "13/8 13/7",
        "13/7 8/3",
        "13/2",
        "8/3 8/2",
    ]
    assert plays(opening((5, 6))) == plays(opening((6, 5)))
    assert len(plays(opening((1, 1)))) == 42


def test_the_21_opening_rolls_have_447_plays() -> None:
    rolls = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    assert len(rolls) == 21
    assert sum(len(plays(opening(roll))) for roll in rolls) == 447


def test_if_only_one_die_can_be_played_it_must_be_the_larger() -> None:
    # One checker on 10, BLACK's 2 blocked: 10/5 then 5/2 and 10/7 then 7/2 both fail.
    s = g.position(black={10: 1}, white={23: 2}, dice=(3, 5))
    assert plays(s) == ["10/5"]


def test_both_dice_may_be_playable_only_in_one_order() -> None:
    # 24/19 is blocked (WHITE's 6-point), so the 5 can only follow the 2.
    s = g.position(black={24: 1}, white={6: 5}, dice=(5, 2))
    assert plays(s) == ["24/17"]


def test_bar_first_and_entering_with_doubles() -> None:
    s = g.position(black={13: 5, 8: 3, 6: 5}, white=OPEN, bar=(2, 0), dice=(4, 4))
    assert plays(s) == [
        "bar/21(2) 13/9(2)",
        "bar/21(2) 13/9 8/4",
        "bar/21(2) 13/9 6/2",
        "bar/21(2) 13/5",
        "bar/21(2) 8/4(2)",
        "bar/21(2) 8/4 6/2",
        "bar/21(2) 6/2(2)",
    ]
    # Only one checker enters with the 4; the 6 cannot enter (19 is held) nor move another.
    assert plays(g.with_dice(s, (6, 4))) == ["bar/21"]


def test_none_when_nothing_can_move() -> None:
    s = g.position(black={13: 5, 8: 3, 6: 6}, white=OPEN, bar=(1, 0), dice=(6, 6))
    assert plays(s) == ["NONE"]
    assert g.parse(s, 0, " none ") == "NONE"
    assert g.baseline(s, 0) == "NONE"
    with pytest.raises(Illegal, match="only reply is NONE"):
        g.parse(s, 0, "13/7")
    after = g.apply(s, {0: "NONE"})
    assert (after.black, after.white, after.ply, after.colour) == (s.black, s.white, 1, "WHITE")
    with pytest.raises(Illegal, match="NONE is refused"):
        g.parse(opening((3, 1)), 0, "NONE")


def test_bearing_off_with_a_larger_die_only_from_the_highest_point() -> None:
    # 6-1 with checkers on 5 and 3: the 6 bears off the 5 only, never the 3 while 5 is held.
    s = g.position(black={5: 1, 3: 1}, white={1: 2}, dice=(6, 1))
    assert plays(s) == ["5/off 3/2", "5/off"]
    s = g.position(black={6: 2, 5: 1}, white={1: 2}, dice=(6, 5))
    assert plays(s) == ["6/1 6/off", "6/off 5/off"]  # to-points descending: 1 before off


def test_no_bearing_off_with_a_checker_outside() -> None:
    # The 7 must come home before anything bears off; 7/2 then 2/off is written 7/off.
    s = g.position(black={7: 1, 2: 1}, white={1: 2}, dice=(6, 5))
    assert plays(s) == ["7/1 2/off", "7/off"]


# --- notation --------------------------------------------------------------------------


def test_hits_keep_the_intermediate_point() -> None:
    # A WHITE blot on BLACK's 7, BLACK's 11 held: the 2 can only follow the 6.
    s = g.position(black={13: 2, 6: 4}, white={18: 1, 14: 2}, dice=(6, 2))
    assert plays(s) == ["13/7* 6/4", "13/7*/5"]
    after = g.apply(s, {0: "13/7*/5"})
    assert after.white[25] == 1
    assert after.black[5] == 1
    assert after.black[7] == 0


def test_repeats_entering_and_bearing_off_are_written_gnubg_style() -> None:
    assert "8/5(2) 6/3(2)" in plays(opening((3, 3)))
    assert "24/18(2) 13/7(2)" in plays(opening((6, 6)))
    entering = g.position(black={13: 5, 8: 3, 6: 6}, white=OPEN, bar=(1, 0), dice=(3, 1))
    assert plays(entering) == [
        "bar/24 13/10",
        "bar/24 8/5",
        "bar/24 6/3",
        "bar/22 8/7",
        "bar/22 6/5",
        "bar/21",
    ]


def test_no_two_plays_share_a_name_or_a_position() -> None:
    rng = random.Random(3)
    for k in range(5):
        s = g.initial(derived_card_seed(1, k, 1), 1)
        while seats := g.to_act(s):
            table = g.legal_moves(s, seats[0])
            assert len(set(table)) == len(table)
            s = g.apply(s, {seats[0]: rng.choice(table)})


# --- reading ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "8/5 6/5",
        "6/5 8/5",
        "8/5,6/5",
        "8/5, 6/5",
        "8/5\u30006/5",  # full-width space
        "\uff18/\uff15 \uff16/\uff15",  # full-width digits
        "8 / 5  6 / 5",
        "  8/5 6/5. ",
        "8/7/5 6/5",
    ],
)
def test_reader_accepts_the_seed_variants(text: str) -> None:
    assert g.parse(opening((3, 1)), 0, text) == "8/5 6/5"


@pytest.mark.parametrize(
    ("dice", "text", "canonical"),
    [
        ((3, 3), "6/3(2) 8/5(2)", "8/5(2) 6/3(2)"),
        ((3, 3), "8/5 8/5 6/3 6/3", "8/5(2) 6/3(2)"),
        ((3, 3), "8/5 (2), 6/3 (2)", "8/5(2) 6/3(2)"),
        ((3, 2), "13/11/8", "13/8"),
        ((3, 2), "13/10 10/8", "13/8"),
        ((3, 2), "5/3 8/5", "8/3"),  # moves may come in any order
        ((6, 1), "13/7 8/7", "13/7 8/7"),
        ((6, 1), "8/7, 13/7", "13/7 8/7"),
    ],
)
def test_reader_accepts_repeats_and_chains(
    dice: tuple[int, int], text: str, canonical: str
) -> None:
    assert g.parse(opening(dice), 0, text) == canonical


def test_reader_takes_hits_with_or_without_the_star_and_bar_and_off_in_any_case() -> None:
    s = g.position(black={13: 2, 6: 4}, white={18: 1, 14: 2}, dice=(6, 2))
    for text in ("13/7*/5", "13/7/5", "13/5", "13/7 7/5", "13/7* 7/5"):
        assert g.parse(s, 0, text) == "13/7*/5"
    entering = g.position(black={13: 5, 8: 3, 6: 6}, white=OPEN, bar=(1, 0), dice=(3, 1))
    for text in ("bar/22 6/5", "BAR/22 6/5", "Bar/22, 6/5", "25/22 6/5"):
        assert g.parse(entering, 0, text) == "bar/22 6/5"
    home = g.position(black={6: 2, 5: 1}, white={1: 2}, dice=(6, 5))
    for text in ("6/off 5/off", "6/OFF 5/Off", "5/0 6/0", "6/off,5/off"):
        assert g.parse(home, 0, text) == "6/off 5/off"


def test_reader_uses_named_points_to_tell_hits_apart() -> None:
    # Blots on 7 and 11 are both open: 13/5 could pass either, 13/11/5 or 13/7/5 says which.
    s = g.position(black={13: 2, 6: 4}, white={18: 1, 14: 1}, dice=(6, 2))
    assert g.parse(s, 0, "13/11/5") == "13/11*/5"
    assert g.parse(s, 0, "13/7*/5") == "13/7*/5"
    with pytest.raises(Illegal, match="13/11\\*/5 or 13/7\\*/5"):
        g.parse(s, 0, "13/5")
    # With only 7 a blot and 11 open, a plain 13/5 is the quiet play.
    quiet = g.position(black={13: 2, 6: 4}, white={18: 1}, dice=(6, 2))
    assert g.parse(quiet, 0, "13/5") == "13/5"
    assert g.parse(quiet, 0, "13/7/5") == "13/7*/5"


@pytest.mark.parametrize(
    "text", ["", " , ", "hello", "13-7 8-7", "13/7 e4", "play 8/5", "13/26", "off/6", "8/bar"]
)
def test_reader_refuses_what_is_not_a_play(text: str) -> None:
    with pytest.raises(Unreadable):
        g.parse(opening((3, 1)), 0, text)


def test_reader_refuses_illegal_plays_and_other_seats() -> None:
    s = opening((3, 1))
    for text in ("24/18", "13/18", "8/5 8/5 8/5", "6/5(5)", "24/20 24/20"):
        with pytest.raises(Illegal):
            g.parse(s, 0, text)
    with pytest.raises(Illegal, match="not seat 1's turn"):
        g.parse(s, 1, "8/5 6/5")
    with pytest.raises(Unreadable):
        g.parse(s, 0, 85)


def test_apply_takes_only_canonical_plays() -> None:
    s = opening((3, 1))
    with pytest.raises(Illegal, match="parse"):
        g.apply(s, {0: "6/5 8/5"})
    with pytest.raises(Illegal, match="seat 0"):
        g.apply(s, {1: "8/5 6/5"})


# --- results ---------------------------------------------------------------------------


def _bear_off_last(white: dict[int, int], bar: int = 0, game: int = 1) -> Outcome | None:
    s = g.position(black={1: 1}, white=white, bar=(0, bar), dice=(2, 1), game=game)
    assert plays(s) == ["1/off"]
    after = g.apply(s, {g.to_act(s)[0]: "1/off"})
    assert g.to_act(after) == ()
    assert after.dice == ()
    return g.outcome(after)


def test_single_gammon_and_backgammon() -> None:
    assert _bear_off_last({6: 3}) == Outcome((1, -1), "complete", "single", "points=1")
    assert _bear_off_last({12: 15}) == Outcome((1, -1), "complete", "gammon", "points=2")
    # A WHITE checker in BLACK's home board (WHITE's 20 is BLACK's 5), or on the bar.
    assert _bear_off_last({12: 14, 20: 1}) == Outcome((1, -1), "complete", "backgammon", "points=3")
    assert _bear_off_last({12: 14}, bar=1) == Outcome((1, -1), "complete", "backgammon", "points=3")


def test_in_game_2_black_is_seat_1() -> None:
    assert _bear_off_last({6: 3}, game=2) == Outcome((-1, 1), "complete", "single", "points=1")
    assert colour_of(1, 0) == "BLACK"
    assert colour_of(2, 0) == "WHITE"
    assert seat_of(2, "BLACK") == 1
    assert seat_of(1, "white") == 1


def test_the_1000th_ply_ends_in_a_no_contest() -> None:
    s = g.position(black=OPEN, white=OPEN, dice=(3, 1), ply=998)
    s = g.apply(s, {0: "8/5 6/5"})
    assert s.ply == 999
    assert g.to_act(s) == (1,)
    assert g.outcome(s) is None
    s = g.apply(s, {1: g.legal_moves(s, 1)[0]})
    assert s.ply == 1000
    assert g.outcome(s) == Outcome(None, "complete", "no-contest", "ply-cap=1000")
    assert g.to_act(s) == ()
    assert g.legal_moves(s, 0) == ()


def test_adjudicate_is_a_no_contest() -> None:
    outcome = g.adjudicate(opening((3, 1)))
    assert (outcome.scores, outcome.reason, outcome.ending) == (None, "complete", "no-contest")


# --- standing and baseline -------------------------------------------------------------


def test_standing_by_hand() -> None:
    s = g.initial("0123456789abcdef" * 4, 1)
    # 167 pips, no blots, the 6-point made: 1000 - 167 + 8.
    assert g.standing(s, 0) == g.standing(s, 1) == 841
    # BLACK: 6-point made (2), blots on 5 and 13, one on the bar: 12 + 5 + 13 + 25 = 55 pips.
    s = g.position(black={6: 2, 5: 1, 13: 1}, white=OPEN, bar=(1, 0))
    assert g.standing(s, 0) == 1000 - 55 - 12 + 8


def test_baseline_makes_the_5_point_with_3_1() -> None:
    assert g.baseline(opening((3, 1)), 0) == "8/5 6/5"


def test_baseline_breaks_ties_by_list_order() -> None:
    # Every play moves 3 pips and leaves two blots: all tie, the first listed wins.
    s = g.position(black={20: 1, 18: 1}, white={1: 2}, dice=(2, 1))
    assert plays(s) == ["20/19 18/16", "20/17", "18/15"]
    assert g.baseline(s, 0) == "20/19 18/16"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), plies=st.integers(0, 60))
def test_baseline_maximises_the_standing_difference(seed: int, plies: int) -> None:
    rng = random.Random(seed)
    s = g.initial(derived_card_seed(seed, 1, 1), 1 + seed % 2)
    for _ in range(plies):
        if not (seats := g.to_act(s)):
            return
        s = g.apply(s, {seats[0]: rng.choice(g.legal_moves(s, seats[0]))})
    if not (seats := g.to_act(s)):
        return
    seat = seats[0]
    scores = []
    for move in g.legal_moves(s, seat):
        after = g.apply(s, {seat: move})
        scores.append(g.standing(after, seat) - g.standing(after, 1 - seat))
    assert g.baseline(s, seat) == g.legal_moves(s, seat)[scores.index(max(scores))]


# --- purity and views ------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_apply_never_changes_its_input_and_is_deterministic(seed: int) -> None:
    rng = random.Random(seed)
    s = g.initial(derived_card_seed(seed, 2, 1), 1)
    for _ in range(40):
        if not (seats := g.to_act(s)):
            break
        snapshot = (s.black, s.white, s.turn, s.roll, s.ply, s.game, s.game_seed)
        move = rng.choice(g.legal_moves(s, seats[0]))
        first = g.apply(s, {seats[0]: move})
        assert (s.black, s.white, s.turn, s.roll, s.ply, s.game, s.game_seed) == snapshot
        assert g.apply(s, {seats[0]: move}) == first
        s = first


def test_view_holds_what_the_seed_lists() -> None:
    s = g.initial("0123456789abcdef" * 4, 1)  # WHITE (seat 1) opens with 2-3
    view = g.view(s, 1)
    json.dumps(view)
    assert view["you"] == view["colour"] == "WHITE"
    assert view["game"] == 1
    assert view["your_turn"]
    assert view["ply"] == 1
    assert view["dice"] == [2, 3]
    assert view["four_moves"] is False
    assert view["pips"] == {"you": 167, "opponent": 167}
    assert view["bar"] == {"you": 0, "opponent": 0}
    assert view["off"] == {"you": 0, "opponent": 0}
    assert view["board"][0] == {"point": 24, "you": 2, "opponent": 0}
    assert view["board"][-1] == {"point": 1, "you": 0, "opponent": 2}
    assert view["legal_plays"] == list(g.legal_moves(s, 1))
    assert g.view(s, 0)["legal_plays"] == []
    assert not g.view(s, 0)["your_turn"]
    s = g.apply(s, {1: "13/8"})  # BLACK's 5-5 next
    assert g.view(s, 0)["four_moves"] is True


def test_board_text_draws_the_movers_side() -> None:
    text = board_text(g.view(opening((3, 1)), 0))
    assert text.splitlines()[1:5] == [
        "       13  14  15  16  17  18 |  19  20  21  22  23  24",
        "       X5   .   .   .  O3   . |  O5   .   .   .   .  X2",
        "       O5   .   .   .  X3   . |  X5   .   .   .   .  O2",
        "       12  11  10   9   8   7 |   6   5   4   3   2   1",
    ]
    assert "Pips: X 167, O 167." in text
    assert text.endswith("Dice: 3-1")


def test_public_names_are_documented() -> None:
    import games.backgammon as package

    for name in package.__all__:
        value = getattr(package, name)
        if callable(value):
            assert value.__doc__, name


def test_position_refuses_impossible_boards() -> None:
    with pytest.raises(ValueError, match="also hold WHITE"):
        g.position(black={5: 2}, white={20: 1})  # WHITE's 20 is BLACK's 5
    with pytest.raises(ValueError, match="at most 15"):
        g.position(black={5: 16}, white={})
    with pytest.raises(ValueError, match="1-24"):
        g.position(black={0: 1}, white={})
    with pytest.raises(ValueError, match="1-6"):
        g.with_dice(opening((3, 1)), (7, 1))
