"""Match seeds, schedule order and aliases (SPEC 1)."""

from __future__ import annotations

import hashlib

from arena.schedule import aliases, match_seed, schedule


def test_match_seed_formula() -> None:
    digest = hashlib.sha256(b"7:rotate:1").hexdigest()
    assert match_seed(7, "rotate", 1) == int(digest[:8], 16) % 2**31
    assert match_seed(7, "rotate", 1) != match_seed(7, "rotate", 2)
    assert match_seed(7, "hex", 1) != match_seed(7, "rotate", 1)


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
    for k in (1, 2, 3):
        seeds = {m.seed for m in matches if m.k == k}
        assert len(seeds) == 1
    assert all(m.game in ("connect-four", "breakthrough", "hex", "quoridor") for m in matches)


def test_board_episodes_swap_seats() -> None:
    match = next(schedule(5, ["hex"], 1, ["a", "b"]))
    one, two = match.episodes()
    assert one.seats(1) == ("a", "b") and two.seats(2) == ("b", "a")
    assert one.id != two.id


def test_board_aliases_from_the_seed() -> None:
    first = "cog-" + hashlib.sha256(b"42:0").hexdigest()[:4]
    second = "cog-" + hashlib.sha256(b"42:1").hexdigest()[:4]
    assert aliases("hex", 42) == (first, second)


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
