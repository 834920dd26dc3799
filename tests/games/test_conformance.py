"""One conformance test over every registered game (DESIGN.md, the games/ contract)."""

from __future__ import annotations

import json
import pickle
import random
from typing import Any

import pytest

import games

MAX_PLIES = 5000


def _seed(name: str, n: int) -> int | str:
    # Backgammon's chance comes from a card seed string; every other game takes an int.
    return f"{n:064x}" if name == "backgammon" else n


def _choose(game: games.Game[Any], state: Any, seat: int, rng: random.Random) -> Any:
    legal = game.legal_moves(state, seat)
    return rng.choice(legal) if legal else game.baseline(state, seat)


def _playout(
    game: games.Game[Any], seed: int | str, rng_seed: int
) -> tuple[list[Any], list[dict[int, Any]]]:
    rng = random.Random(rng_seed)
    state = game.initial(seed, game=1)
    states, moves = [state], []
    while seats := game.to_act(state):
        assert len(states) < MAX_PLIES, f"{game.name}: a random playout did not end"
        chosen = {seat: _choose(game, state, seat, rng) for seat in seats}
        before = pickle.dumps(state)
        state = game.apply(state, chosen)
        assert pickle.dumps(states[-1]) == before, f"{game.name}: apply mutated its input state"
        moves.append(chosen)
        states.append(state)
    return states, moves


NAMES = games.names()


@pytest.mark.parametrize("name", NAMES)
def test_random_playouts_end_with_zero_sum_outcome(name: str) -> None:
    game = games.load(name)
    for n in range(1, 4):
        states, _ = _playout(game, _seed(name, n), n)
        outcome = game.outcome(states[-1])
        assert outcome is not None
        assert outcome.reason in (games.COMPLETE, games.DEADLINE)
        assert outcome.scores is None or sum(outcome.scores) == 0
        for state in states[:-1]:
            assert game.outcome(state) is None


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_and_moves_give_identical_states(name: str) -> None:
    game = games.load(name)
    states, moves = _playout(game, _seed(name, 7), 7)
    again = games.load(name)
    state = again.initial(_seed(name, 7), game=1)
    for expected, chosen in zip(states[1:], moves, strict=True):
        state = again.apply(state, chosen)
        assert state == expected
        assert [again.standing(state, s) for s in (0, 1)] == [
            game.standing(expected, s) for s in (0, 1)
        ]
    assert again.outcome(state) == game.outcome(states[-1])


@pytest.mark.parametrize("name", NAMES)
def test_legal_moves_read_back_and_views_are_json(name: str) -> None:
    game = games.load(name)
    states, _ = _playout(game, _seed(name, 3), 3)
    for state in states[:: max(1, len(states) // 25)]:
        for seat in game.to_act(state):
            legal = game.legal_moves(state, seat)
            if game.enumerable and legal:
                assert len(set(legal)) == len(legal), f"{name}: duplicate legal moves"
                for move in legal[:40]:
                    assert game.parse(state, seat, move) == move
                assert game.baseline(state, seat) in legal
            view = game.view(state, seat)
            assert json.loads(json.dumps(view)) == view
            assert isinstance(games.board_text(name, view), str)


@pytest.mark.parametrize("name", [n for n in NAMES if games.load(n).enumerable])
def test_enumerable_games_list_moves_while_a_seat_must_act(name: str) -> None:
    game = games.load(name)
    states, _ = _playout(game, _seed(name, 5), 5)
    for state in states[:-1]:
        seats = game.to_act(state)
        if name == "stratego" and state.ply == 0:
            continue  # Stratego's setup phase takes free-form setups
        for seat in seats:
            assert game.legal_moves(state, seat), (
                f"{name}: seat {seat} must act but has no legal move"
            )


def _square(move: str) -> tuple[int, int]:
    return ord(move[0]) - ord("a"), int("".join(ch for ch in move[1:] if ch.isdigit()))


ORDER_KEYS = {
    "connect-four": lambda m: ord(m),
    "hex": _square,
    "breakthrough": lambda m: (*_square(m.split("-")[0]), *_square(m.split("-")[1])),
    # Pawn moves first by (file, rank), then walls by (file, rank, h before v).
    "quoridor": lambda m: (m[-1] in "hv", *_square(m.rstrip("hv")), m[-1] == "v"),
}


@pytest.mark.parametrize("name", sorted(ORDER_KEYS))
def test_board_games_list_moves_in_spec_order(name: str) -> None:
    game = games.load(name)
    states, _ = _playout(game, 11, 11)
    for state in states[:-1]:
        (seat,) = game.to_act(state)
        legal = list(game.legal_moves(state, seat))
        assert legal == sorted(legal, key=ORDER_KEYS[name])


BOARD_GAMES = sorted(games.ROTATION)


@pytest.mark.parametrize("name", BOARD_GAMES)
def test_board_baselines_are_the_tactician_of_spec(name: str) -> None:
    """Every board engine may replace TurnGame's tactician with a faster one (SPEC 4): it must
    choose exactly what the generic definition chooses, ties to the first in legal order."""
    game = games.load(name)
    assert isinstance(game, games.TurnGame)
    for n in range(12):
        states, _ = _playout(game, n, 100 + n)
        for state in states[:-1]:
            (seat,) = game.to_act(state)
            assert game.baseline(state, seat) == games.TurnGame.baseline(game, state, seat)


@pytest.mark.parametrize("name", BOARD_GAMES)
def test_turn_states_carry_their_turn_and_result(name: str) -> None:
    """A TurnGame state's `to_act` and `result` agree, and the ply cap is the last ply."""
    game = games.load(name)
    assert isinstance(game, games.TurnGame)
    for n in range(4):
        states, _ = _playout(game, n, 200 + n)
        for state in states:
            assert (state.to_act == ()) == (state.result is not None)
            assert state.to_act in ((), (0,), (1,))
            assert game.ply(state) == state.ply
            if game.ply_cap is not None:
                assert state.ply <= game.ply_cap
                assert state.ply < game.ply_cap or state.result is not None


def test_rotation_follows_the_seed() -> None:
    assert [games.resolve_rotation(s) for s in (4, 5, 6, 7, -1)] == [
        "connect-four",
        "breakthrough",
        "hex",
        "quoridor",
        "quoridor",
    ]
    with pytest.raises(ValueError, match="seed 0"):
        games.resolve_rotation(0)


def test_unknown_game_and_parameters_are_named() -> None:
    with pytest.raises(ValueError, match=r"unknown game 'hexx' \(known: .*hex"):
        games.load("hexx")
    with pytest.raises(ValueError, match="does not take parameters"):
        games.load("hex", size=9)
