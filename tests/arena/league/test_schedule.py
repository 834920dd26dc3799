"""Match seeds, schedule order and aliases (docs/rules.md#matches-and-seeds)."""

from __future__ import annotations

import hashlib

import games
from arena.league.schedule import match_seed, schedule


def aliases(game: str, seed: int, index: int = 1) -> tuple[str, str]:
    return games.load(game).match_format.aliases(seed, index)


def test_match_seed_formula() -> None:
    # int(sha256("7:rotate:1").hexdigest()[:8], 16) % 2**31, worked out by hand: the
    # digest starts a9f1c8f1 = 2,851,195,121, and 2,851,195,121 - 2**31 = 703,711,473.
    assert hashlib.sha256(b"7:rotate:1").hexdigest()[:8] == "a9f1c8f1"
    assert match_seed(7, "rotate", 1) == 703_711_473
    assert match_seed(7, "rotate", 2) == 380_239_951
    assert match_seed(7, "hex", 1) == 1_717_337_087


def test_schedule_order_entry_then_k_then_pairs() -> None:
    got = [
        (m.entry, m.k, m.first, m.second)
        for m in schedule(3, ["hex", "connect-four"], 2, ["a", "b", "c"])
    ]
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    expected = [(e, k, *p) for e in ("hex", "connect-four") for k in (1, 2) for p in pairs]
    assert got == expected
    assert [m.index for m in schedule(3, ["hex", "connect-four"], 2, ["a", "b", "c"])] == list(
        range(12)
    )


def test_every_pair_faces_the_same_seed_and_rotation_resolves() -> None:
    matches = list(schedule(11, ["rotate"], 3, ["a", "b", "c"]))
    by_k = {k: {(m.seed, m.game) for m in matches if m.k == k} for k in (1, 2, 3)}
    # seed % 4 picks the rotation: 819766892 % 4 = 0 (connect-four), 244365744 % 4 = 0,
    # 1812970333 % 4 = 1 (breakthrough).
    assert by_k == {
        1: {(819_766_892, "connect-four")},
        2: {(244_365_744, "connect-four")},
        3: {(1_812_970_333, "breakthrough")},
    }


def test_board_episodes_swap_seats() -> None:
    match = next(schedule(5, ["hex"], 1, ["a", "b"]))
    one, two = match.episodes()
    assert one.seats(1) == ("a", "b")
    assert two.seats(2) == ("b", "a")
    assert one.id != two.id


def test_board_aliases_from_the_seed() -> None:
    assert hashlib.sha256(b"42:0").hexdigest()[:4] == "5473"
    assert hashlib.sha256(b"42:1").hexdigest()[:4] == "03dd"
    assert aliases("hex", 42) == ("cog-5473", "cog-03dd")


def test_alias_collision_takes_the_next_digits() -> None:
    # Seed 245375 is the first whose two seats hash to the same 4 digits (8366):
    # sha256("245375:1") begins 8366c5d3, so seat 1 takes c5d3.
    assert hashlib.sha256(b"245375:0").hexdigest()[:4] == "8366"
    assert aliases("hex", 245375) == ("cog-8366", "cog-c5d3")


def test_named_aliases_follow_the_game_index() -> None:
    assert aliases("battle", 1, 1) == ("Alpha", "Bravo")
    assert aliases("battle", 1, 2) == ("Bravo", "Alpha")
    assert aliases("backgammon", 1, 2) == ("WHITE", "BLACK")
    assert aliases("stratego", 1, 2) == ("Red", "Blue")
