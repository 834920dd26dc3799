"""The battle's surface: spawn, squads, turns, endings, scores, the gameHash chain, the view.

Imported directly (`games.battle`) until the registry lists "battle".
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
import struct

import numpy as np
import pytest

from games import COMPLETE, DEADLINE, Illegal
from games.battle import Battle, BattleState, Orders, Soldier, SquadOrder, squad_prefix
from games.battle.render import board_text, orders_help

BATTLE = Battle()
SKIRMISH = Battle(map_size=31)


def cells(s: BattleState, side: int) -> list[tuple[int, int]]:
    return [s.position(i) for i in range(s.layout.count) if s.layout.side[i] == side]


def test_parameters_and_identity() -> None:
    assert (Battle.name, Battle.family, Battle.rules_version, Battle.enumerable) == (
        "battle", "battle", 1, False,
    )  # fmt: skip
    assert BATTLE.params() == {"map_size": 45, "turn_ticks": 20, "max_ticks": 300}
    for bad in ({"map_size": 19}, {"map_size": 256}, {"turn_ticks": 0}, {"max_ticks": "300"}):
        with pytest.raises(ValueError, match="use a whole number"):
            Battle(**bad)  # type: ignore[arg-type]


def test_spawn_at_45_is_81_a_side_on_even_cells() -> None:
    # side = int(sqrt(45*45*0.04)) * 2 = 18; red X in range(1, 19, 2), blue X in
    # range(25, 43, 2), Y in range(13, 31, 2): shown 1-based, all even.
    s = BATTLE.initial(1)
    red, blue = cells(s, 0), cells(s, 1)
    assert len(red) == len(blue) == 81
    ys = range(14, 31, 2)
    assert red == [(x, y) for x in range(2, 19, 2) for y in ys]
    assert blue == [(x, y) for x in range(26, 43, 2) for y in ys]
    assert list(s.layout.side) == [0] * 81 + [1] * 81  # red ids first


def test_spawn_at_31_is_30_a_side_and_blue_is_cut() -> None:
    # side = int(sqrt(38.44)) * 2 = 12; red X in range(0, 12, 2) minus X = 0 -> 5 columns of
    # Y in range(9, 21, 2) = 6 rows: 30. Blue X in range(18, 30, 2): 36, cut to the first 30
    # in x-major order, i.e. its last column (X = 28) goes.
    s = SKIRMISH.initial(1)
    ys = range(10, 21, 2)
    assert cells(s, 0) == [(x, y) for x in range(3, 12, 2) for y in ys]
    assert cells(s, 1) == [(x, y) for x in range(19, 28, 2) for y in ys]


def test_squads_at_45_are_columns_rearmost_first() -> None:
    s = BATTLE.initial(1)
    for i in range(s.layout.count):
        x, _ = s.position(i)
        rank = x // 2 if s.layout.side[i] == 0 else (42 - x) // 2 + 1  # blue: x = 42 is rearmost
        assert s.layout.squad[i] + 1 == rank


def test_squads_at_31_cut_30_into_4_4_4_3_3_3_3_3_3() -> None:
    s = SKIRMISH.initial(1)
    red = [(s.layout.squad[i] + 1, s.position(i)) for i in range(30)]
    by_squad = {k: [cell for q, cell in red if q == k] for k in range(1, 10)}
    assert [len(v) for v in by_squad.values()] == [4, 4, 4, 3, 3, 3, 3, 3, 3]
    # sorted by (distance from x = 1, y, id): column x = 3 holds y 10..20, then x = 5
    assert by_squad[1] == [(3, 10), (3, 12), (3, 14), (3, 16)]
    assert by_squad[2] == [(3, 18), (3, 20), (5, 10), (5, 12)]
    # blue's rearmost column is x = 27 (nearest its back edge x = 31)
    blue_1 = [s.position(i) for i in range(30, 60) if s.layout.squad[i] == 0]
    assert blue_1 == [(27, 10), (27, 12), (27, 14), (27, 16)]


def test_both_seats_act_at_every_command_turn_until_the_end() -> None:
    s = BATTLE.initial(5)
    assert (BATTLE.to_act(s), BATTLE.legal_moves(s, 0), BATTLE.outcome(s)) == ((0, 1), (), None)
    ticks = []
    while BATTLE.to_act(s):
        s = BATTLE.apply(s, {0: BATTLE.baseline(s, 0), 1: BATTLE.baseline(s, 1)})
        ticks.append(s.tick)
    assert all(t % 20 == 0 for t in ticks[:-1])
    assert s.ply == len(ticks)
    with pytest.raises(Illegal, match="game is over"):
        BATTLE.apply(s, {0: Orders(()), 1: Orders(())})
    with pytest.raises(Illegal, match="nothing to command"):
        BATTLE.parse(s, 0, [])


def test_apply_leaves_its_input_unchanged_and_states_compare_by_value() -> None:
    s = BATTLE.initial(3)
    before = pickle.dumps(s)
    orders = {0: BATTLE.baseline(s, 0), 1: BATTLE.baseline(s, 1)}
    after = BATTLE.apply(s, orders)
    assert pickle.dumps(s) == before
    assert not s.hp.flags.writeable
    assert not after.x.flags.writeable
    assert after == Battle().apply(Battle().initial(3), orders)
    assert after != s


def test_standing_is_living_hp_in_tenths() -> None:
    s = BATTLE.from_soldiers([Soldier(2, 2, hp=55), Soldier(4, 4)], [Soldier(40, 40, hp=7)])
    assert (BATTLE.standing(s, 0), BATTLE.standing(s, 1)) == (155, 7)
    assert BATTLE.standing(BATTLE.initial(1), 1) == 8100


def test_tick_cap_settles_by_survivors() -> None:
    # Two red against one blue, far apart, everyone holding: nobody fights, the cap ends it.
    battle = Battle(map_size=20, turn_ticks=20, max_ticks=30)
    s = battle.from_soldiers([Soldier(2, 2), Soldier(2, 4)], [Soldier(19, 19)])
    hold = {0: battle.parse(s, 0, [{"squad": "A1", "do": "hold"}, {"squad": "A2", "do": "hold"}]),
            1: battle.parse(s, 1, [{"squad": "B1", "do": "hold"}])}  # fmt: skip
    s = battle.apply(s, hold)
    assert (s.tick, battle.outcome(s)) == (20, None)
    s = battle.apply(s, {0: Orders(()), 1: Orders(())})  # the last, short turn: 10 ticks
    outcome = battle.outcome(s)
    assert s.tick == 30
    assert outcome is not None
    assert (outcome.reason, outcome.ending, outcome.scores) == (COMPLETE, "tickCap", (101, -101))
    assert outcome.detail == "survivors 2-1"


def test_tick_cap_with_equal_survivors_is_a_draw() -> None:
    battle = Battle(map_size=31, max_ticks=20)
    s = battle.initial(1)
    hold = {seat: battle.parse(s, seat, [{"squad": f"{squad_prefix(1, seat)}{k}", "do": "hold"}
                                         for k in range(1, 10)]) for seat in (0, 1)}  # fmt: skip
    s = battle.apply(s, hold)
    outcome = battle.outcome(s)
    assert outcome is not None
    assert (outcome.ending, outcome.scores) == ("tickCap", (0, 0))


def test_wall_clock_adjudicates_by_survivors() -> None:
    s = BATTLE.from_soldiers([Soldier(2, 2)], [Soldier(40, 40), Soldier(40, 42), Soldier(40, 44)])
    outcome = BATTLE.adjudicate(s)
    # blue leads 3-1: 100 * (+1) + 3 - 1 = 102 for seat 1
    assert (outcome.reason, outcome.ending, outcome.scores) == (DEADLINE, "wallClock", (-102, 102))
    # a game already over keeps its own outcome
    done = BATTLE.from_soldiers([Soldier(2, 2)], [])
    assert BATTLE.adjudicate(done) == BATTLE.outcome(done)


def test_wipe_of_both_armies_is_a_draw() -> None:
    # The engine itself can never wipe both at once: every red id attacks before every blue
    # id, so a blue army wiped by red attacks has no one left to strike back in that step.
    # An empty position still reads as the rule says.
    outcome = BATTLE.outcome(BATTLE.from_soldiers([], []))
    assert outcome is not None
    assert (outcome.ending, outcome.scores) == ("wipe", (0, 0))


def play_match(seed: int, first: str, second: str) -> tuple[int, int]:
    """Scores of the match's first and second policy; 'pincer' or 'advance' (empty orders)."""
    totals = [0, 0]
    for game in (1, 2):
        s = BATTLE.initial(seed, game=game)
        # the first policy is seat 0 in game 1 and seat 1 in game 2 (docs/rules.md#matches-and-seeds)
        policy = {0: first, 1: second} if game == 1 else {0: second, 1: first}
        while BATTLE.to_act(s):
            s = BATTLE.apply(s, {
                seat: BATTLE.baseline(s, seat) if policy[seat] == "pincer" else Orders(())
                for seat in (0, 1)
            })  # fmt: skip
        outcome = BATTLE.outcome(s)
        assert outcome is not None
        assert outcome.scores is not None
        assert abs(outcome.scores[0]) <= 181  # 100 + 81
        totals[0] += outcome.scores[0 if game == 1 else 1]
        totals[1] += outcome.scores[1 if game == 1 else 0]
    return totals[0], totals[1]


@pytest.mark.parametrize(("first", "second"), [("pincer", "advance"), ("pincer", "pincer")])
def test_episode_scores_are_zero_sum_within_362(first: str, second: str) -> None:
    a, b = play_match(11, first, second)
    assert a + b == 0
    assert -362 <= a <= 362


def test_game_hash_chain_by_hand() -> None:
    # h0 = sha256("7:1"); tick 1 of a duel leaves both at 80 hp in place, so
    # h1 = sha256(h0 + pack(0, alive 1, X 4, Y 4, 80) + pack(1, 1, 5, 4, 80)), 0-based X, Y.
    battle = Battle(map_size=20, turn_ticks=1)
    s = battle.from_soldiers([Soldier(5, 5)], [Soldier(6, 5)], seed=7)
    h0 = hashlib.sha256(b"7:1").digest()
    assert s.digest == h0
    assert s.chain == ()
    s = battle.apply(s, {0: Orders(()), 1: Orders(())})
    h1 = hashlib.sha256(
        h0 + struct.pack(">HBBBh", 0, 1, 4, 4, 80) + struct.pack(">HBBBh", 1, 1, 5, 4, 80)
    )
    assert s.chain == (h1.hexdigest(),)
    assert s.hash_hex == h1.hexdigest()


def test_game_hash_keeps_a_dead_soldiers_last_cell_with_hp_zero() -> None:
    battle = Battle(map_size=20, turn_ticks=1)
    s = battle.from_soldiers([Soldier(5, 5, hp=20)], [Soldier(6, 5, hp=20)], seed="x")
    h0 = hashlib.sha256(b"x:1").digest()
    s = battle.apply(s, {0: Orders(()), 1: Orders(())})
    expect = hashlib.sha256(h0 + struct.pack(">HBBBhHBBBh", 0, 1, 4, 4, 20, 1, 0, 5, 4, 0))
    assert s.chain == (expect.hexdigest(),)


def test_same_seed_and_orders_give_the_same_chain_and_the_game_index_keys_it() -> None:
    def chain(seed: int, game: int) -> list[str]:
        s, links = BATTLE.initial(seed, game=game), []
        while BATTLE.to_act(s):
            s = BATTLE.apply(s, {0: BATTLE.baseline(s, 0), 1: BATTLE.baseline(s, 1)})
            links.extend(s.chain)
        assert len(links) == s.tick
        return links

    first = chain(9, 1)
    assert chain(9, 1) == first
    assert BATTLE.initial(9, game=2).digest == hashlib.sha256(b"9:2").digest()
    assert chain(9, 2)[0] != first[0]
    assert chain(10, 1)[0] != first[0]


def test_rewards_add_up_per_seat() -> None:
    # 300 ticks of 81 holding soldiers a side: only the step penalty, 81 * 300 * -0.005.
    s = BATTLE.initial(1)
    hold = {seat: Orders(tuple(SquadOrder(f"{squad_prefix(1, seat)}{k}", "hold") for k in range(1, 10)))
            for seat in (0, 1)}  # fmt: skip
    while BATTLE.to_act(s):
        s = BATTLE.apply(s, hold)
    assert s.reward_milli == (-121500, -121500)
    assert BATTLE.magent_reward(s, 1) == pytest.approx(-121.5)


def test_view_shows_both_armies_own_orders_and_a_map() -> None:
    s = BATTLE.initial(1, game=2)
    s = BATTLE.apply(s, {0: BATTLE.parse(s, 0, [{"squad": "B2", "do": "hold"}]), 1: Orders(())})
    view = BATTLE.view(s, 0)
    assert json.loads(json.dumps(view)) == view
    assert (view["alias"], view["squad_letter"], view["side"], view["back_edge_x"]) == (
        "Bravo",
        "B",
        "red",
        1,
    )
    own, enemy = view["own_squads"], view["enemy_squads"]
    assert [row["name"] for row in own] == [f"B{k}" for k in range(1, 10)]
    assert own[1]["order"] == {"squad": "B2", "do": "hold"}
    assert "order" not in enemy[0]
    # B2 held its spawn column x = 4, y 14..30
    assert own[1] | {"order": None} == {
        "name": "B2", "alive": 9, "hp": 900, "centroid": [4, 22], "box": [[4, 14], [4, 30]], "order": None,
    }  # fmt: skip
    rows = view["map"]
    assert len(rows) == 45
    assert all(len(row) == 45 for row in rows)
    assert rows[45 - 14][4 - 1] == "2"  # (4, 14): own squad 2
    assert len(json.dumps(rows)) < 3000
    enemy_view = BATTLE.view(s, 1)
    assert enemy_view["own_squads"][0]["alive"] == view["enemy_squads"][0]["alive"]
    assert enemy_view["map"][45 - 14][4 - 1] == "b"  # the same soldier, an enemy squad 2


def test_board_text_starts_with_the_machine_readable_lines() -> None:
    s = BATTLE.from_soldiers(
        [Soldier(2, 2, squad=1), Soldier(2, 4, squad=3)], [Soldier(40, 40, squad=9)]
    )
    text = board_text(BATTLE.view(s, 0))
    assert text.splitlines()[:3] == ["MAP SIZE: 45", "YOUR SQUADS: A1 A3", "ENEMY SQUADS: B9"]
    assert "A2: gone" in text
    assert "A1: 1 alive, hp 100, centroid (2, 2)" in text
    help_text = orders_help(BATTLE.view(s, 1))
    assert (
        "<your squad> is one of yours (B1..B9), <enemy squad> one of the enemy's (A1..A9)"
        in help_text
    )
    # placeholders, not example orders: an example a squad could obey is copied
    assert '{"squad": "<your squad>", "do": "attack", "enemy": "<enemy squad>"}' in help_text
    assert not re.search(r'"[AB][1-9]"', help_text)


def test_from_soldiers_refuses_impossible_positions() -> None:
    with pytest.raises(ValueError, match="off the 45 x 45 board"):
        BATTLE.from_soldiers([Soldier(46, 1)], [])
    with pytest.raises(ValueError, match=r"share the cells \[\(3, 3\)\]"):
        BATTLE.from_soldiers([Soldier(3, 3)], [Soldier(3, 3)])
    with pytest.raises(ValueError, match=r"hp must be 1\.\.100"):
        BATTLE.from_soldiers([Soldier(3, 3, hp=0)], [])
    with pytest.raises(ValueError, match="a battle match has games 1 and 2"):
        BATTLE.initial(1, game=3)


def test_engine_stays_in_its_arrays() -> None:
    s = BATTLE.initial(1)
    assert s.x.dtype == s.hp.dtype == np.int64
    assert s.layout.count == 162
