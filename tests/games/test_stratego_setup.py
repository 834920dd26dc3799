"""Stratego's setup phase: reading setups, orientation, the seeded fallback setup (docs/rules.md#stratego)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import Illegal, Unreadable
from games.stratego import Stratego
from games.stratego.setup import read_setup

G = Stratego()
RANKS = ("FBBBBBBS22", "2222223333", "3444455556", "666777889X")
SETUP = "".join(RANKS)
PIECES = sorted(SETUP)


def own(view: dict[str, object], square: str) -> str:
    """The code of the viewer's own piece on `square`."""
    pieces = view["pieces"]
    assert isinstance(pieces, list)
    mine = [p for p in pieces if p["square"] == square and p["seat"] == view["you"]]
    return str(mine[0]["code"])


def test_setup_phase_asks_both_seats_and_lists_no_moves() -> None:
    s = G.initial(7, game=1)
    assert G.to_act(s) == (0, 1)
    assert G.legal_moves(s, 0) == ()
    assert G.legal_moves(s, 1) == ()
    assert G.outcome(s) is None
    assert G.view(s, 1)["phase"] == "setup"
    assert G.view(s, 1)["to_move"] is None


@pytest.mark.parametrize(
    "text",
    [
        SETUP,
        "/".join(RANKS),
        "\n".join(RANKS),
        " ".join(SETUP),
        ", ".join(RANKS).lower(),
        "FBBBBBBS22 | 2222223333 ; 3444455556 - 666777889x.",
    ],
)
def test_separators_and_case_are_ignored(text: str) -> None:
    assert G.parse(G.initial(1), 0, text) == SETUP


def test_a_list_of_ranks_reads_as_their_concatenation() -> None:
    assert G.parse(G.initial(1), 1, list(RANKS)) == SETUP


def test_unreadable_characters_are_named() -> None:
    with pytest.raises(Unreadable, match="not piece codes: 1 M"):
        G.parse(G.initial(1), 0, SETUP[:-2] + "M1")
    with pytest.raises(Unreadable):
        G.parse(G.initial(1), 0, 42)


def test_a_wrong_multiset_names_the_counts_that_are_off() -> None:
    one_bomb_too_many = SETUP.replace("22", "2B", 1)  # rank 1 ends ...S2B
    with pytest.raises(Illegal, match=r"has 40 with 7 B \(needs 6\), 7 2 \(needs 8\)\.$"):
        G.parse(G.initial(1), 0, one_bomb_too_many)
    with pytest.raises(Illegal, match=r"has 39 with 0 X \(needs 1\)\.$"):
        G.parse(G.initial(1), 0, SETUP[:-1])
    with pytest.raises(Illegal, match=r"has 41 with 2 X \(needs 1\)\.$"):
        G.parse(G.initial(1), 0, SETUP + "X")


@settings(max_examples=40, deadline=None)
@given(st.permutations(PIECES), st.lists(st.sampled_from(" /,;|\n"), min_size=40, max_size=40))
def test_any_permutation_with_separators_reads_back(pieces: list[str], gaps: list[str]) -> None:
    text = "".join(p + gap for p, gap in zip(pieces, gaps, strict=True))
    assert read_setup(text) == "".join(pieces)


def test_red_sets_up_from_rank_1_and_blue_from_rank_10_both_a_to_j() -> None:
    blue_setup = SETUP[::-1]  # X first: so the two orientations cannot be confused
    s = G.apply(G.initial(3), {0: SETUP, 1: blue_setup})
    red, blue = G.view(s, 0), G.view(s, 1)
    red_squares = ("a1", "b1", "h1", "j1", "a2", "a4", "j4")
    assert [own(red, sq) for sq in red_squares] == list("FBS22" + "6X")
    assert [own(blue, sq) for sq in ("a10", "b10", "a9", "a7", "j7")] == list("X96" + "2F")
    assert red["home_ranks"] == [1, 2, 3, 4]
    assert blue["home_ranks"] == [10, 9, 8, 7]
    assert all(p["code"] == "?" for p in red["pieces"] if p["seat"] == 1)
    assert G.to_act(s) == (0,)
    assert s.ply == 0
    assert red["phase"] == "play"


def test_red_moves_first_in_both_games_of_a_match() -> None:
    for game in (1, 2):
        s = G.initial(5, game=game)
        s = G.apply(s, {0: G.baseline(s, 0), 1: G.baseline(s, 1)})
        assert G.to_act(s) == (0,)


def test_apply_needs_both_valid_setups() -> None:
    with pytest.raises(Illegal, match="both seats"):
        G.apply(G.initial(1), {0: SETUP})
    with pytest.raises(Illegal, match="needs 6"):
        G.apply(G.initial(1), {0: SETUP, 1: SETUP.replace("22", "2B", 1)})


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.integers(min_value=1, max_value=2**31 - 1), st.text(max_size=12)),
    st.sampled_from((0, 1)),
    st.sampled_from((1, 2)),
)
def test_the_seeded_setup_is_valid_deterministic_with_bombs_beside_the_flag(
    seed: int | str, seat: int, game: int
) -> None:
    setup = G.random_setup(seed, seat, game)
    assert read_setup(setup) == setup
    assert setup == G.random_setup(seed, seat, game)
    flag = setup.index("F")
    assert flag < 10  # the back rank
    beside = [f for f in (flag - 1, flag + 1) if 0 <= f < 10] + [flag + 10]
    assert all(setup[i] == "B" for i in beside)
    assert G.baseline(G.initial(seed, game=game), seat) == setup


def test_the_seeded_setup_depends_on_seed_game_and_seat() -> None:
    drawn = {G.random_setup(n, seat, game) for n in (1, 2) for seat in (0, 1) for game in (1, 2)}
    assert len(drawn) == 8
    # A pinned value, so a change to the drawing shows up (it must raise rules_version):
    # the flag on a1, bombs on b1 and a2.
    assert G.random_setup(1, 0, 1) == "FB27536B22B4BB567283S26392323244X5647B85"
