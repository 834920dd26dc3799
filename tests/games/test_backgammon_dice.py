"""Backgammon's verifiable dice (docs/rules.md#verifiable-dice, its worked example) and card verification."""

from __future__ import annotations

import dataclasses
import random

import pytest

from games.backgammon import Backgammon, BackgammonState
from games.backgammon.dice import (
    Roll,
    commitment,
    derived_card_seed,
    draw_dice,
    game_seed,
    opener,
    roll_for_ply,
)
from games.backgammon.verify import CardPly, card_ply, verify_card

SEED = "0123456789abcdef" * 4


def test_commitment_of_the_spec_example() -> None:
    digest = commitment(SEED)
    assert digest.startswith("a8ae6e6e")
    assert digest.endswith("f77c8e")
    assert len(digest) == 64


def test_game_seeds_of_the_spec_example() -> None:
    first, second = game_seed(SEED, 1), game_seed(SEED, 2)
    assert first.startswith("f9135152")
    assert first.endswith("f781c3")
    assert second.startswith("a65d0041")
    assert second.endswith("a9f4f2")


def test_game_1_opens_black_2_white_3_at_nonce_0_and_white_starts() -> None:
    seed_1 = game_seed(SEED, 1)
    opening = roll_for_ply(seed_1, 1)
    assert opening == Roll(ply=1, nonce=0, dice=(2, 3))
    assert opener(opening) == 1  # WHITE
    rolls = [roll_for_ply(seed_1, ply).dice for ply in (2, 3, 4)]
    assert rolls == [(5, 5), (2, 3), (6, 6)]


def test_game_2_rerolls_the_opening_double() -> None:
    seed_2 = game_seed(SEED, 2)
    assert draw_dice(seed_2, 1, 0) == ((1, 1), 1)  # a double at nonce 0: roll again
    opening = roll_for_ply(seed_2, 1)
    assert opening == Roll(ply=1, nonce=1, dice=(5, 1))
    assert opener(opening) == 0  # BLACK
    rolls = [roll_for_ply(seed_2, ply).dice for ply in (2, 3, 4)]
    assert rolls == [(3, 2), (4, 6), (4, 6)]


def test_states_carry_the_example_rolls() -> None:
    g = Backgammon()
    s = g.initial(SEED, game=1)
    assert (s.dice, s.colour, s.ply) == ((2, 3), "WHITE", 0)
    assert g.to_act(s) == (1,)  # game 1: seat 1 is WHITE
    s = g.apply(s, {1: g.legal_moves(s, 1)[0]})
    assert (s.dice, s.colour, s.ply, s.roll) == ((5, 5), "BLACK", 1, Roll(2, 0, (5, 5)))
    s2 = g.initial(SEED, game=2)
    assert (s2.dice, s2.colour, s2.roll.nonce if s2.roll else None) == ((5, 1), "BLACK", 1)
    assert g.to_act(s2) == (1,)  # game 2: seat 1 is BLACK


def test_derived_card_seed_is_sha256_of_the_label() -> None:
    import hashlib

    expected = hashlib.sha256(b"42:backgammon:3:2").hexdigest()
    assert derived_card_seed(42, 3, 2) == expected
    assert derived_card_seed(42, 3, 1) != expected
    assert Backgammon().derived_chance(42, 3, 2) == expected  # the hook `arena prompt` asks


def test_a_card_seed_is_64_hex_digits_of_either_case() -> None:
    import games
    from games.backgammon.dice import is_card_seed

    assert is_card_seed is games.is_card_seed  # the shape of every card, named by both
    assert games.is_card_seed(SEED)
    assert games.is_card_seed(SEED.upper())
    for not_one in (SEED[:-1], SEED + "0", "g" * 64, 12345, None):
        assert not games.is_card_seed(not_one)


def test_initial_refuses_an_integer_seed() -> None:
    with pytest.raises(ValueError, match="64 hex digits"):
        Backgammon().initial(12345, game=1)
    with pytest.raises(ValueError, match="1 or 2"):
        Backgammon().initial(SEED, game=3)


# --- verification ---------------------------------------------------------------------


def _play_card(seed: str, plies: int) -> list[CardPly]:
    g = Backgammon()
    rng = random.Random(7)
    records: list[CardPly] = []
    for game in (1, 2):
        s: BackgammonState = g.initial(seed, game)
        while (seats := g.to_act(s)) and s.ply < plies:
            play = rng.choice(g.legal_moves(s, seats[0]))
            after = g.apply(s, {seats[0]: play})
            records.append(card_ply(g, s, play, after))
            s = after
    return records


def test_verify_accepts_an_honest_card() -> None:
    records = _play_card(SEED, 40)
    assert len(records) == 80
    assert verify_card(commitment(SEED), SEED, records) is None


def test_verify_step_1_and_2_check_the_commitment() -> None:
    records = _play_card(SEED, 4)
    failure = verify_card("not a digest", SEED, records)
    assert failure is not None
    assert failure.step == 1
    wrong = commitment(SEED[::-1])
    failure = verify_card(wrong, SEED, records)
    assert failure is not None
    assert failure.step == 2
    assert wrong in failure.message


def test_verify_step_3_catches_a_changed_roll() -> None:
    records = _play_card(SEED, 30)
    k = 11
    d1, d2 = records[k].dice
    changed = (d1 % 6 + 1, d2)
    records[k] = dataclasses.replace(records[k], dice=changed)
    failure = verify_card(commitment(SEED), SEED, records)
    assert failure is not None
    assert (failure.step, failure.game, failure.ply) == (3, records[k].game, records[k].ply)


def test_verify_step_3_catches_an_opening_taken_from_the_raw_block() -> None:
    # Game 2's raw first block is the double (1, 1); the opening roll is (5, 1) at nonce 1.
    records = _play_card(SEED, 3)
    k = next(i for i, r in enumerate(records) if r.game == 2 and r.ply == 1)
    records[k] = dataclasses.replace(records[k], nonce=0, dice=(1, 1))
    failure = verify_card(commitment(SEED), SEED, records)
    assert failure is not None
    assert (failure.step, failure.game, failure.ply) == (3, 2, 1)


def test_verify_step_4_catches_a_changed_play() -> None:
    g = Backgammon()
    records = _play_card(SEED, 30)
    k = 9
    record = records[k]
    # Swap in another legal play from the same position: the recorded board_after no longer fits.
    s = g.initial(SEED, record.game)
    for earlier in records[:k]:
        if earlier.game == record.game:
            s = g.apply(s, {g.to_act(s)[0]: earlier.play})
    others = [m for m in g.legal_moves(s, g.to_act(s)[0]) if m != record.play]
    assert others, "pick a ply with a choice"
    records[k] = dataclasses.replace(record, play=others[0])
    failure = verify_card(commitment(SEED), SEED, records)
    assert failure is not None
    assert (failure.step, failure.ply) == (4, record.ply)


def test_verify_step_4_catches_an_illegal_play_and_a_doctored_board() -> None:
    records = _play_card(SEED, 10)
    bad = dataclasses.replace(records[2], play="24/1")
    failure = verify_card(commitment(SEED), SEED, [*records[:2], bad, *records[3:]])
    assert failure is not None
    assert failure.step == 4
    assert "not a legal play" in failure.message
    board = dict(records[5].board_after)
    points = list(board["points"])
    points[0], points[1] = points[1], points[0]
    assert points != board["points"]
    doctored = dataclasses.replace(records[5], board_after={**board, "points": points})
    failure = verify_card(commitment(SEED), SEED, [*records[:5], doctored, *records[6:]])
    assert failure is not None
    assert failure.step == 4
    assert failure.ply == records[5].ply
