"""The battle's scripted commanders: random orders, flank, and what they do against pincer."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.battle import Battle, BattleState, Orders, Soldier, squad_prefix

BATTLE = Battle()
SKIRMISH = Battle(map_size=31)


def _commander(name: str) -> Any:
    """A function (game, state, seat, rng) -> Orders playing `name` (`random`: seeded)."""

    def play(game: Battle, s: BattleState, seat: int, rng: random.Random) -> Orders:
        if name == "random":
            return game.random_move(s, seat, rng)
        return game.named_baseline(s, seat, name)

    return play


def _after(game: Battle, turns: int, seed: int) -> BattleState:
    """The position after `turns` command turns of random orders on both sides."""
    rng = random.Random(seed)
    s = game.initial(seed, game=1 + seed % 2)
    for _ in range(turns):
        if not game.to_act(s):
            break
        s = game.apply(s, {seat: game.random_move(s, seat, rng) for seat in (0, 1)})
    return s


def _episode(game: Battle, first: str, second: str, seed: int) -> list[int]:
    """`first`'s score in games 1 and 2 of a match against `second` (seat 0 in game 1)."""
    scores = []
    for index in (1, 2):
        s = game.initial(seed, game=index)
        mine = 0 if index == 1 else 1
        rngs = {mine: random.Random(f"{seed}:{index}:a"), 1 - mine: random.Random(f"{seed}:b")}
        plays = {mine: _commander(first), 1 - mine: _commander(second)}
        while game.to_act(s):
            s = game.apply(s, {seat: plays[seat](game, s, seat, rngs[seat]) for seat in (0, 1)})
        outcome = game.outcome(s)
        assert outcome is not None
        assert outcome.scores is not None
        scores.append(outcome.scores[mine])
    return scores


def _is_canonical(game: Battle, s: BattleState, seat: int, orders: Orders) -> None:
    """`orders` names every living squad once and reads back unchanged, with no repair."""
    again = game.parse(s, seat, orders.to_json())
    assert (again.entries, again.repairs) == (orders.entries, ())
    assert [e.number for e in orders.entries] == sorted(s.living_squads(seat))
    enemies = {f"{squad_prefix(s.game, 1 - seat)}{k}" for k in s.living_squads(1 - seat)}
    assert all(e.enemy in enemies for e in orders.entries if e.enemy is not None)


# -- random orders --------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    size=st.sampled_from([20, 31, 45, 60]),
    turns=st.integers(0, 12),
    seed=st.integers(0, 10**6),
    seat=st.sampled_from([0, 1]),
)
def test_random_orders_are_valid_by_construction(
    size: int, turns: int, seed: int, seat: int
) -> None:
    game = Battle(map_size=size)
    s = _after(game, turns, seed)
    if game.to_act(s):
        _is_canonical(game, s, seat, game.random_move(s, seat, random.Random(seed)))


def test_random_orders_follow_their_seed() -> None:
    s = BATTLE.initial(4)
    drawn = [BATTLE.random_move(s, 0, random.Random(seed)) for seed in range(20)]
    assert drawn == [BATTLE.random_move(s, 0, random.Random(seed)) for seed in range(20)]
    assert len({orders.entries for orders in drawn}) == 20
    assert {e.do for orders in drawn for e in orders.entries} == {
        "advance", "attack", "move", "hold", "retreat",
    }  # fmt: skip


def test_random_orders_are_not_pincer() -> None:
    s = SKIRMISH.initial(9)
    for seed in range(10):
        assert SKIRMISH.random_move(s, 1, random.Random(seed)) != SKIRMISH.baseline(s, 1)


# -- flank ----------------------------------------------------------------------------


def test_flank_at_spawn_sends_the_rear_out_above_and_holds_the_front() -> None:
    # The blue army is symmetric about its centroid, so the wing is the upper one (ties:
    # above); no red lead soldier stands 2 beyond blue's top (y 30 -> 32) yet, so squads
    # 1-5 (the columns x = 2..10) head straight up to the top edge, y = 45.
    assert BATTLE.named_baseline(BATTLE.initial(1), 0, "flank").to_json() == [
        *({"squad": f"A{k}", "do": "move", "to": [2 * k, 45]} for k in range(1, 6)),
        *({"squad": f"A{k}", "do": "hold"} for k in range(6, 10)),
    ]


def test_flank_turns_the_weaker_wing_once_out_and_advances_from_tick_100() -> None:
    # Blue: two full soldiers low, one weak one high; centroid 0-based ((39+39+39)//3,
    # (4+6+30)//3) = (39, 13): the upper half holds 10 hp, the lower 200, so the wing is
    # above, its row 2 beyond blue's top (0-based 30 -> 32, shown 33). Red's A1 has a
    # soldier on that row (out: along it, to 4 behind the centroid, x 43 -> 44); A2 is not
    # (straight up to the edge at its x); A7 holds, and advances from tick 100.
    red = [Soldier(10, 33, squad=1), Soldier(10, 20, squad=1), Soldier(6, 20, squad=2),
           Soldier(20, 20, squad=7)]  # fmt: skip
    blue = [Soldier(40, 5), Soldier(40, 7), Soldier(40, 31, hp=10)]
    for tick, centre in ((0, "hold"), (100, "advance")):
        s = BATTLE.from_soldiers(red, blue, tick=tick)
        assert BATTLE.named_baseline(s, 0, "flank").to_json() == [
            {"squad": "A1", "do": "move", "to": [44, 33]},
            {"squad": "A2", "do": "move", "to": [6, 45]},
            {"squad": "A7", "do": centre},
        ]
    # with the weak soldier low instead, the wing is below: row 0-based 4 - 2 = 2 (shown 3)
    s = BATTLE.from_soldiers(red, [Soldier(40, 25), Soldier(40, 27), Soldier(40, 5, hp=10)])
    assert BATTLE.named_baseline(s, 0, "flank").to_json()[1] == {
        "squad": "A2", "do": "move", "to": [6, 1],
    }  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(size=st.sampled_from([20, 31, 45, 60]), turns=st.integers(0, 12), seed=st.integers(0, 10**6))
def test_flank_orders_are_valid_by_construction(size: int, turns: int, seed: int) -> None:
    game = Battle(map_size=size)
    s = _after(game, turns, seed)
    for seat in game.to_act(s):
        _is_canonical(game, s, seat, game.named_baseline(s, seat, "flank"))


def test_flank_beats_pincer_in_some_games_and_loses_others() -> None:
    # The battle has no chance (the seed only keys the gameHash), so every seed plays the
    # same games: flank wins both on the battle map and one of two on the skirmish map,
    # where pincer's mirror match is a win for red in each game.
    results = {
        size: [_episode(Battle(map_size=size), "flank", "pincer", seed) for seed in (1, 8, 13)]
        for size in (31, 45)
    }
    for size, episodes in results.items():
        assert episodes[0] == episodes[1] == episodes[2], size
    played = [score for episodes in results.values() for score in episodes[0]]
    assert any(score > 0 for score in played)
    assert any(score < 0 for score in played)
    mirror = [
        s for size in (31, 45) for s in _episode(Battle(map_size=size), "pincer", "pincer", 1)
    ]
    assert played != mirror


def test_flank_beats_random_orders_on_the_whole() -> None:
    scores = [s for seed in range(4) for s in _episode(SKIRMISH, "flank", "random", seed)]
    assert sum(score > 0 for score in scores) > len(scores) // 2


def test_named_baselines_are_pincer_and_flank() -> None:
    s = BATTLE.initial(2)
    assert list(BATTLE.baselines) == ["pincer", "flank"]
    assert BATTLE.baseline_name == "pincer"
    assert BATTLE.named_baseline(s, 1, "pincer") == BATTLE.baseline(s, 1)
    assert BATTLE.named_baseline(s, 1, "flank") != BATTLE.baseline(s, 1)
    with pytest.raises(ValueError, match=r"no baseline 'tactician' \(named ones: pincer, flank\)"):
        BATTLE.named_baseline(s, 0, "tactician")
