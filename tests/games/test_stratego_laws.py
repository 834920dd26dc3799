"""The anti-chase laws of `seeds/stratego-rules.txt`: the two-square rule and the continuous chase.

Every sequence is written out move by move; the counts (three crossings,
twelve new positions in a lap around a lake, 36 around the board's edge) are
worked out by hand in the comments.
"""

from __future__ import annotations

import pytest

from games import Illegal, Outcome
from games.stratego import Stratego, StrategoState

G = Stratego()
FILES = "abcdefghij"
LAKES = ("c5", "d5", "c6", "d6", "g5", "h5", "g6", "h6")


def position(pieces: dict[str, str], to_move: int = 0) -> StrategoState:
    """A from_board position holding only `pieces` (square -> Gravon letter)."""
    letters = ["A"] * 100
    for name, letter in [(lake, "_") for lake in LAKES] + list(pieces.items()):
        letters[(int(name[1:]) - 1) * 10 + FILES.index(name[0])] = letter
    return G.from_board("".join(letters), to_move)


def play(s: StrategoState, *moves: str) -> StrategoState:
    for move in moves:
        seat = G.to_act(s)[0]
        s = G.apply(s, {seat: G.parse(s, seat, move)})
    return s


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
    with pytest.raises(Illegal, match=r"two-square rule.*the e4\|e5 boundary on"):
        G.parse(s, 0, "e5-e4")


def test_the_count_is_of_consecutive_turns_of_the_same_piece() -> None:
    s = position({"a1": "M", "e4": "F", "b2": "F", "j10": "Y", "a9": "X", "j9": "R"})
    s = play(s, "e4-e5", "a9-a8", "e5-e4", "j9-j8", "b2-b3", "a8-a7", "e4-e5", "j8-j7")
    assert "e5-e4" in G.legal_moves(s, 0)  # b2-b3 broke the run: this is e4|e5's second in a row
    s = play(s, "e5-e4", "a7-a6", "e4-e5", "j7-j6")
    assert "e5-e4" not in G.legal_moves(s, 0)


def test_a_scout_crosses_every_boundary_it_passes() -> None:
    s = position({"a1": "M", "e2": "D", "j10": "Y", "a9": "X"})
    s = play(s, "e2-e6", "a9-a8", "e6-e3", "a8-a9", "e3-e5", "a9-a8")
    # e2-e6, e6-e3 and e3-e5 all crossed e3|e4 and e4|e5: no move down the file, long or short.
    legal = G.legal_moves(s, 0)
    assert [m for m in legal if m.startswith("e5-e") and int(m[4:]) < 5] == []
    assert [m for m in legal if m.startswith("e5-e")] == [f"e5-e{r}" for r in range(6, 11)]
    with pytest.raises(Illegal, match=r"two-square rule.*the e3\|e4, e4\|e5 boundaries"):
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
    assert s.chase is not None and len(s.chase.keys) == 12  # twelve distinct positions
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
    assert s.key == first and s.chase is not None and s.chase.keys.count(first) == 2
    s = play(s, "f4-f5")
    # e4-e5 is a return too, but the fourth crossing: the two-square rule refuses it.
    assert "e4-e5" not in G.legal_moves(s, 0)
    with pytest.raises(Illegal, match="two-square rule"):
        G.parse(s, 0, "e4-e5")


def test_after_an_evade_a_threat_to_another_piece_continues_the_chase() -> None:
    s = position({"e3": "L", "f4": "W", "e6": "V", "a1": "M", "j10": "Y"})
    s = play(s, "e3-e4", "f4-g4")  # threat on the General, which evades (g4 is not next to e4)
    s = play(s, "e4-e5")  # threat on the Colonel on e6: the alternation goes on
    assert s.chase is not None and len(s.chase.keys) == 2
    s = play(s, "g4-g3")  # the General moves, but the Colonel was the one threatened
    assert s.chase is None


def test_a_new_chase_starts_with_an_empty_memory() -> None:
    s = position({"e5": "L", "f4": "W", "a1": "M", "j10": "Y"})
    s = play(s, "e5-e4", "f4-f5", "e4-e5", "f5-f4")
    assert s.chase is not None and len(s.chase.keys) == 2
    s = play(s, "e5-e6", "f4-f3")  # e6 touches nothing of Blue's: the chase ends here
    s = play(s, "e6-e5", "f3-f4")
    assert s.chase is None
    s = play(s, "e5-e4", "f4-f5", "e4-e5", "f5-f4")  # a new chase: its own memory
    assert s.chase is not None and len(s.chase.keys) == 2


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
        assert s.chase is not None and len(s.chase.keys) == min(k, 32)
        assert s.chase_overflow == max(0, k - 32)
    assert s.chase is not None and s.chase.keys == tuple(after_threat[k] for k in range(5, 37))
    # Threat 37 would recreate the position after threat 1, which the memory has dropped.
    assert "a2-a1" in G.legal_moves(s, 0)
