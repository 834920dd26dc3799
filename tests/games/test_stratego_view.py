"""Stratego views, board text and whole games: hidden ranks never leak, engines stay consistent."""

from __future__ import annotations

import json
import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from games.stratego import StrategoState
from games.stratego.board import MOVED, OWNER, REVEALED, SQUARES
from games.stratego.moves import pseudo_moves, start_play
from games.stratego.render import board_text
from tests.games.stratego_positions import FILES, G, play, position


def random_game(seed: int, plies: int) -> StrategoState:
    """Both seats set up by the fallback, then `plies` random moves (fewer if the game ends)."""
    rng = random.Random(seed)
    s = G.initial(seed)
    s = G.apply(s, {0: G.baseline(s, 0), 1: G.baseline(s, 1)})
    for _ in range(plies):
        if not G.to_act(s):
            break
        s = G.apply(s, {s.mover: rng.choice(G.legal_moves(s, s.mover))})
    return s


def shuffle_hidden(s: StrategoState, owner: int, rng: random.Random) -> StrategoState:
    """`s` with `owner`'s unrevealed ranks permuted: moved among moved, still among still."""
    board = list(s.board)
    for moved in (0, MOVED):
        squares = [
            sq for sq in SQUARES
            if board[sq] > 0 and (board[sq] & OWNER) == owner * OWNER
            and not board[sq] & REVEALED and board[sq] & MOVED == moved
        ]  # fmt: skip
        kinds = [board[sq] & 15 for sq in squares]
        rng.shuffle(kinds)
        for sq, kind in zip(squares, kinds, strict=True):
            board[sq] = board[sq] & ~15 | kind
    return replace(s, board=tuple(board))


# --- what a seat sees ------------------------------------------------------------------


def test_board_text_draws_own_codes_and_the_enemy_as_the_seat_knows_it() -> None:
    s = position({"a1": "M", "b1": "B", "e2": "D", "f4": "F", "j10": "Y", "e9": "P", "f7": "U",
                  "a7": "R"})  # fmt: skip
    # Red's Scout runs (revealed), Blue's Sergeant steps (moved, unknown), Red's Sergeant
    # attacks Blue's Major and loses (the Major is revealed).
    s = play(s, "e2-e5", "a7-a6", "f4-f5", "a6-a5", "f5-f6", "a5-a4", "f6-f7")
    assert board_text(G.view(s, 0)).splitlines()[:12] == [
        "      a  b  c  d  e  f  g  h  i  j",
        " 10   .  .  .  .  .  .  .  .  .  ?   10",
        "  9   .  .  .  .  ?  .  .  .  .  .   9",
        "  8   .  .  .  .  .  .  .  .  .  .   8",
        "  7   .  .  .  .  . [7] .  .  .  .   7",
        "  6   .  .  ~  ~  .  .  ~  ~  .  .   6",
        "  5   .  .  ~  ~  2* .  ~  ~  .  .   5",
        "  4   !  .  .  .  .  .  .  .  .  .   4",
        "  3   .  .  .  .  .  .  .  .  .  .   3",
        "  2   .  .  .  .  .  .  .  .  .  .   2",
        "  1   F  B  .  .  .  .  .  .  .  .   1",
        "      a  b  c  d  e  f  g  h  i  j",
    ]
    blue = board_text(G.view(s, 1)).splitlines()
    assert blue[11 - 7] == "  7   .  .  .  .  .  7* .  .  .  .   7"
    assert blue[11 - 5] == "  5   .  .  ~  ~ [2] .  ~  ~  .  .   5"
    assert blue[11 - 4] == "  4   4  .  .  .  .  .  .  .  .  .   4"
    assert blue[11 - 1] == "  1   ?  ?  .  .  .  .  .  .  .  .   1"
    assert "! = unknown enemy piece that has moved" in board_text(G.view(s, 1))


def test_the_view_is_json_and_says_what_is_public() -> None:
    s = play(position({"a1": "M", "e4": "F", "e5": "U", "j10": "Y"}), "e4-e5")
    view = G.view(s, 1)
    assert json.loads(json.dumps(view)) == view
    assert {k: view[k] for k in ("game", "ply", "you", "side", "phase", "to_move")} == {
        "game": "stratego", "ply": 1, "you": 1, "side": "Blue", "phase": "play", "to_move": 1,
    }  # fmt: skip
    assert view["lakes"] == ["c5", "c6", "d5", "d6", "g5", "g6", "h5", "h6"]
    assert view["captured"] == {"you": [], "enemy": ["4"]}
    assert view["enemy_left"]["4"] == 3
    assert view["enemy_left"]["X"] == 1
    assert view["last_move"] == "e4-e5"
    assert json.dumps(G.view(G.initial(3), 0))


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=0, max_value=120))
def test_nothing_a_seat_sees_depends_on_the_opponents_hidden_ranks(seed: int, plies: int) -> None:
    s = random_game(seed, plies)
    rng = random.Random(seed)
    for seat in (0, 1):
        other = shuffle_hidden(s, 1 - seat, rng)
        assert G.view(other, seat) == G.view(s, seat)
        assert board_text(G.view(other, seat)) == board_text(G.view(s, seat))
        if G.to_act(s) == (seat,):
            assert G.baseline(other, seat) == G.baseline(s, seat)


def test_shuffling_hidden_ranks_does_change_the_true_state() -> None:
    s = random_game(11, 10)
    other = shuffle_hidden(s, 1, random.Random(1))
    assert other.board != s.board  # the hidden-information test above is not vacuous
    assert G.view(other, 1) != G.view(s, 1)


# --- whole games -----------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=1, max_value=10**6))
def test_random_games_keep_their_incremental_data_exact(seed: int) -> None:
    s = random_game(seed, 0)
    rng = random.Random(seed)
    for _ in range(400):
        if not G.to_act(s):
            break
        fresh = start_play(0, 1, s.board, s.mover)
        assert (fresh.key, fresh.movable) == (s.key, s.movable)
        legal = G.legal_moves(s, s.mover)
        key = [(FILES.index(m[0]), int(m[1:m.index("-")]), FILES.index(m[m.index("-") + 1]),
                int(m[m.index("-") + 2:])) for m in legal]  # fmt: skip
        assert key == sorted(key)
        assert len(set(legal)) == len(legal)
        assert set(s.legal) <= set(pseudo_moves(s.board, s.movable[s.mover], s.mover))
        s = G.apply(s, {s.mover: G.parse(s, s.mover, rng.choice(legal))})


def test_same_seed_and_moves_give_the_same_game() -> None:
    a, b = random_game(2024, 300), random_game(2024, 300)
    assert a == b
    assert G.outcome(a) == G.outcome(b)
    assert [G.standing(a, seat) for seat in (0, 1)] == [G.standing(b, seat) for seat in (0, 1)]


def test_random_games_end_with_a_known_ending() -> None:
    for seed in range(1, 6):
        s = random_game(seed, 4000)
        result = G.outcome(s)
        assert result is not None
        assert result.ending in {"flag", "no-moves", "no-battle", "ply-cap"}
        assert G.to_act(s) == ()
