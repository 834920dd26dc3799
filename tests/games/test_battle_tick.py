"""The tick's mechanics on small hand-built positions, every expected value worked by hand.

Positions come from `Battle.from_soldiers` (1-based cells; ids run through
the red list, then the blue list). `turn_ticks=1` makes one `apply` one tick.
hp is in tenths: 100 = 10.0, a hit takes 20, recovery gives 1.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.battle import Battle, BattleState, Soldier

ONE_TICK = Battle(map_size=20, turn_ticks=1)


def tick(s: BattleState, red: list[dict[str, Any]], blue: list[dict[str, Any]]) -> BattleState:
    """One tick with these raw orders (both seats' squads keep the rest)."""
    return ONE_TICK.apply(s, {0: ONE_TICK.parse(s, 0, red), 1: ONE_TICK.parse(s, 1, blue)})


def hold_all(letter: str) -> list[dict[str, Any]]:
    return [{"squad": f"{letter}{k}", "do": "hold"} for k in range(1, 10)]


def living_hold(s: BattleState, seat: int, letter: str) -> list[dict[str, Any]]:
    return [o for o in hold_all(letter) if int(o["squad"][1:]) in s.living_squads(seat)]


def test_duel_the_higher_id_dies_on_the_fifth_tick() -> None:
    # Both attack every tick (each is the other's only neighbour), so neither heals:
    # ticks 1-4: 100 -> 80 -> 60 -> 40 -> 20 for both. Tick 5: id 0 (red) hits first,
    # 20 - 20 = 0 <= 0, blue (id 1) dies before its own attack, red stays at 20.
    s = ONE_TICK.from_soldiers([Soldier(5, 5)], [Soldier(6, 5)])
    seen = []
    while ONE_TICK.to_act(s):
        s = tick(s, [], [])
        seen.append(s.hp.tolist())
    assert seen == [[80, 80], [60, 60], [40, 40], [20, 20], [20, 0]]
    assert s.tick == 5
    outcome = ONE_TICK.outcome(s)
    assert outcome is not None
    assert outcome.ending == "wipe"
    assert outcome.scores == (101, -101)  # 100 * (+1) + 1 - 0


def test_duel_runs_to_its_end_inside_one_turn() -> None:
    battle = Battle(map_size=20)  # 20 ticks a turn: the apply stops at the wipe
    s = battle.from_soldiers([Soldier(5, 5)], [Soldier(6, 5)])
    s = battle.apply(s, {0: battle.parse(s, 0, []), 1: battle.parse(s, 1, [])})
    assert (s.tick, len(s.chain), s.hp.tolist()) == (5, 5, [20, 0])
    assert battle.to_act(s) == ()


FIVE_AROUND = [Soldier(9, 9), Soldier(10, 9), Soldier(11, 9), Soldier(9, 10), Soldier(11, 10)]


def test_five_on_one_kill_in_one_tick() -> None:
    # 5 hits x 20 = 100: the blue soldier (id 5) dies before it can strike back.
    s = ONE_TICK.from_soldiers(FIVE_AROUND, [Soldier(10, 10)])
    s = tick(s, living_hold(s, 0, "A"), living_hold(s, 1, "B"))
    assert s.hp.tolist() == [100, 100, 100, 100, 100, 0]
    assert ONE_TICK.outcome(s) is not None


def test_four_on_one_leave_it_at_twenty_and_it_hits_the_first_offset() -> None:
    # 4 x 20 = 80 taken, no recovery (it attacked). All four neighbours have 100 hp, so it
    # picks the first offset in the rules' order, (-1, -1): the soldier at (9, 9), who drops to 80
    # and does not heal either (it attacked too).
    s = ONE_TICK.from_soldiers(FIVE_AROUND[:4], [Soldier(10, 10)])
    s = tick(s, living_hold(s, 0, "A"), living_hold(s, 1, "B"))
    assert s.hp.tolist() == [80, 100, 100, 100, 20]


def test_attack_order_decides_overkill_and_rewards() -> None:
    # Victim (id 3, 30 hp) has three red attackers. id 0: 30 -> 10; id 1: 10 -> -10, dead
    # (kept as 0), kill to red; id 2's blow lands on a corpse: wasted, but id 2 still
    # attacked, so its 50 hp do not recover. The victim never attacks (dead before its turn).
    red = [Soldier(9, 9), Soldier(10, 9), Soldier(11, 9, hp=50)]
    s = ONE_TICK.from_soldiers(red, [Soldier(10, 10, hp=30)])
    s = tick(s, living_hold(s, 0, "A"), living_hold(s, 1, "B"))
    assert s.hp.tolist() == [100, 100, 50, 0]
    # red: 3 steps (-0.005) + 3 attacks (-0.1) + 2 hits (+0.2) + 1 kill (+5) = 5.085
    # blue: 1 step (-0.005) + 1 death (-0.1) = -0.105
    assert s.reward_milli == (5085, -105)
    assert ONE_TICK.magent_reward(s, 0) == pytest.approx(5.085)


def test_a_soldier_killed_earlier_in_the_step_does_not_attack() -> None:
    # Both at 20 hp: red (id 0) strikes first and kills; blue would have killed it back.
    s = ONE_TICK.from_soldiers([Soldier(5, 5, hp=20)], [Soldier(6, 5, hp=20)])
    assert tick(s, [], []).hp.tolist() == [20, 0]
    # A victim that survives the first blow strikes back in the same step: blue 40 -> 20,
    # then blue (id 1) kills red, 20 -> 0.
    s = ONE_TICK.from_soldiers([Soldier(5, 5, hp=20)], [Soldier(6, 5, hp=40)])
    assert tick(s, [], []).hp.tolist() == [0, 20]


def test_the_weakest_neighbour_is_attacked_ties_by_offset_order() -> None:
    # Red (id 0) at (10,10); blue 50 hp at (11,11) = offset (1,1) and at (9,9) = (-1,-1).
    # Tie on hp: (-1,-1) comes first, so id 2 takes the blow: 50 -> 30. Both blues hit red:
    # 100 -> 60. Nobody recovers: everyone attacked.
    s = ONE_TICK.from_soldiers([Soldier(10, 10)], [Soldier(11, 11, hp=50), Soldier(9, 9, hp=50)])
    after = tick(s, hold_all("A")[:1], living_hold(s, 1, "B"))
    assert after.hp.tolist() == [60, 50, 30]
    # Lower hp beats offset order: 40 at (1,1) is chosen over 50 at (-1,-1).
    s = ONE_TICK.from_soldiers([Soldier(10, 10)], [Soldier(11, 11, hp=40), Soldier(9, 9, hp=50)])
    assert tick(s, hold_all("A")[:1], living_hold(s, 1, "B")).hp.tolist() == [60, 20, 50]
    # (0,-1) comes before (-1,0): offsets are ordered by y, then x.
    s = ONE_TICK.from_soldiers([Soldier(10, 10)], [Soldier(9, 10, hp=50), Soldier(10, 9, hp=50)])
    assert tick(s, hold_all("A")[:1], living_hold(s, 1, "B")).hp.tolist() == [60, 50, 30]


FAR_BLUE = [Soldier(20, 20)]  # far from everything; holds


def moved(s: BattleState, red: list[dict[str, Any]]) -> list[tuple[int, int]]:
    after = tick(s, red, living_hold(s, 1, "B"))
    return [after.position(i) for i in range(after.layout.count)]


def test_move_ties_follow_the_pinned_offset_order() -> None:
    # From (5,5) to (8,7), offset (+3,+2): (2,0) lands on (7,5), 1+4 = 5 away; (1,1) on
    # (6,6), 4+1 = 5 away. Equal: (2,0) comes before (1,1) in the order.
    s = ONE_TICK.from_soldiers([Soldier(5, 5, squad=1)], FAR_BLUE)
    assert moved(s, [{"squad": "A1", "do": "move", "to": [8, 7]}])[0] == (7, 5)
    # From (10,10) to (8,7), offset (-2,-3): (0,-2) -> (10,8) is 4+1 = 5 away and (-1,-1)
    # -> (9,9) is 1+4 = 5 away: (0,-2) is first.
    s = ONE_TICK.from_soldiers([Soldier(10, 10, squad=1)], FAR_BLUE)
    assert moved(s, [{"squad": "A1", "do": "move", "to": [8, 7]}])[0] == (10, 8)


def test_a_soldier_on_its_target_does_nothing() -> None:
    s = ONE_TICK.from_soldiers([Soldier(5, 5, squad=1)], FAR_BLUE)
    assert moved(s, [{"squad": "A1", "do": "move", "to": [5, 5]}])[0] == (5, 5)


def test_the_best_cell_is_chosen_even_when_occupied_and_then_the_move_fails() -> None:
    # From (5,5) to (9,5) the best cell is (7,5); a holding friend stands there. The soldier
    # does not fall back to (6,5): it stays.
    s = ONE_TICK.from_soldiers([Soldier(5, 5, squad=1), Soldier(7, 5, squad=2)], FAR_BLUE)
    orders = [{"squad": "A1", "do": "move", "to": [9, 5]}, {"squad": "A2", "do": "hold"}]
    assert moved(s, orders)[:2] == [(5, 5), (7, 5)]


def test_a_cell_freed_in_the_attack_step_is_taken() -> None:
    # Blue (id 2, 20 hp) at (5,5) dies to red id 0 at (6,5). Red id 1 at (3,5) is not next
    # to any enemy; advancing on the enemy centroid (5,5) its best move is (2,0) onto the
    # victim's cell, occupied at the snapshot, free by step 4.
    s = ONE_TICK.from_soldiers([Soldier(6, 5), Soldier(3, 5)], [Soldier(5, 5, hp=20)])
    after = tick(s, [], [])
    assert after.hp.tolist() == [100, 100, 0]
    assert after.position(1) == (5, 5)


def test_a_cell_left_by_a_lower_id_is_taken_and_by_a_higher_id_is_not() -> None:
    # Both advance right, best move (2,0). Front soldier id 0 at (5,5) moves to (7,5) first,
    # so id 1 at (3,5) steps into (5,5).
    s = ONE_TICK.from_soldiers([Soldier(5, 5), Soldier(3, 5)], [Soldier(19, 5)])
    assert moved(s, [])[:2] == [(7, 5), (5, 5)]
    # Swapped ids: id 0 at (3,5) tries (5,5) while id 1 still stands there: it fails.
    s = ONE_TICK.from_soldiers([Soldier(3, 5), Soldier(5, 5)], [Soldier(19, 5)])
    assert moved(s, [])[:2] == [(3, 5), (7, 5)]


def test_two_movers_for_one_free_cell_the_lower_id_wins() -> None:
    # (5,3) and (5,7) both aim at (5,5): moves (0,2) and (0,-2) land on it, distance 0.
    s = ONE_TICK.from_soldiers([Soldier(5, 3, squad=1), Soldier(5, 7, squad=1)], FAR_BLUE)
    assert moved(s, [{"squad": "A1", "do": "move", "to": [5, 5]}])[:2] == [(5, 5), (5, 7)]


def test_recovery_only_for_soldiers_that_did_not_attack() -> None:
    # Red id 0 retreats from its blue neighbour: it does not attack, so after the blue hit
    # (100 -> 80) it recovers 1 -> 81, and steps toward its back edge x = 1 at its own y:
    # (-2,0) from (10,10) to (8,10). Red id 1 (50 hp, alone, holding) recovers to 51.
    # Blue attacked, so it stays at 100 - 0 = 100 (nobody hit it).
    red = [Soldier(10, 10, squad=1), Soldier(3, 18, hp=50, squad=2)]
    s = ONE_TICK.from_soldiers(red, [Soldier(11, 10)])
    after = tick(
        s, [{"squad": "A1", "do": "retreat"}, {"squad": "A2", "do": "hold"}], hold_all("B")[:1]
    )
    assert after.hp.tolist() == [81, 51, 100]
    assert after.position(0) == (8, 10)


def test_recovery_stops_at_full_hp() -> None:
    s = ONE_TICK.from_soldiers([Soldier(3, 3, hp=99, squad=1)], FAR_BLUE)
    once = tick(s, [{"squad": "A1", "do": "hold"}], [])
    assert tick(once, [], []).hp.tolist()[0] == 100


def test_attack_order_targets_the_named_squad_then_advances_when_it_is_gone() -> None:
    # Red at (10,10). Blue squad 1 at (18,2) (x=18 is nearer blue's back edge x=20), squad 2
    # at (14,18). "attack B2": target (14,18), offset (+4,+8): best move (0,2) -> (10,12),
    # 16+36 = 52 away, against (1,1) -> 9+49 = 58.
    s = ONE_TICK.from_soldiers([Soldier(10, 10, squad=1)], [Soldier(18, 2), Soldier(14, 18)])
    assert [s.layout.squad[1], s.layout.squad[2]] == [0, 1]
    after = tick(s, [{"squad": "A1", "do": "attack", "enemy": "B2"}], living_hold(s, 1, "B"))
    assert after.position(0) == (10, 12)
    # B2 gone (only B1 left, at (18,2)): the order advances on the army's centroid (18,2):
    # offset (+8,-8) from (10,10): (1,-1) -> 49+49 = 98 beats (2,0) / (0,-2) -> 36+64 = 100.
    s = ONE_TICK.from_soldiers([Soldier(10, 10, squad=1)], [Soldier(18, 2)])
    assert tick(s, [{"squad": "A1", "do": "attack", "enemy": "B2"}], []).position(0) == (11, 9)
