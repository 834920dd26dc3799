"""Reading orders (every kind of repair), squad letters, and pincer's targets."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import Illegal, Unreadable
from games.battle import Battle, BattleState, Orders, Soldier, SquadOrder, squad_prefix

BATTLE = Battle()
SPAWN = BATTLE.initial(1)


def read(raw: object, s: BattleState = SPAWN, seat: int = 0) -> Orders:
    return BATTLE.parse(s, seat, raw)


def test_squad_letters_follow_the_game_index() -> None:
    assert [squad_prefix(1, 0), squad_prefix(1, 1)] == ["A", "B"]
    assert [squad_prefix(2, 0), squad_prefix(2, 1)] == ["B", "A"]
    with pytest.raises(ValueError, match="games are 1 or 2"):
        squad_prefix(3, 0)


def test_clean_orders_read_to_canonical_entries_by_squad() -> None:
    orders = read([
        {"squad": "A3", "do": "attack", "enemy": "b5"},
        {"squad": " a1 ", "do": " HOLD "},
        {"squad": "A2", "do": "move", "to": [30, 22.0]},
        {"squad": "A4", "do": "retreat", "why": "ignored"},
        {"squad": "A5", "do": "advance"},
    ])  # fmt: skip
    assert orders.repairs == ()
    assert orders.to_json() == [
        {"squad": "A1", "do": "hold"},
        {"squad": "A2", "do": "move", "to": [30, 22]},
        {"squad": "A3", "do": "attack", "enemy": "B5"},
        {"squad": "A4", "do": "retreat"},
        {"squad": "A5", "do": "advance"},
    ]
    assert read(orders.to_json()) == orders


def test_an_empty_list_is_valid_and_changes_nothing() -> None:
    assert read([]) == Orders(())
    after = BATTLE.apply(SPAWN, {0: read([]), 1: read([], seat=1)})
    assert [o.do for o in after.orders[0]] == ["advance"] * 9


def test_anything_but_a_list_is_unreadable() -> None:
    for raw in ({"squad": "A1", "do": "hold"}, "advance", None, 3):
        with pytest.raises(Unreadable, match="JSON list"):
            read(raw)


@pytest.mark.parametrize(
    ("entry", "note"),
    [
        ("A1 hold", r"entry 1 \('A1 hold'\) dropped: each entry must be an object"),
        ({"do": "hold"}, r"entry 1 dropped: 'squad' is None, not a squad name; yours are A1..A9"),
        ({"squad": "C1", "do": "hold"}, r"'squad' is 'C1', not a squad name"),
        ({"squad": "B2", "do": "hold"}, r"entry 1 dropped: B2 is a squad of the enemy army"),
        ({"squad": "A1", "do": "charge"}, r"unknown verb 'charge' for A1 \(known: advance, attack"),
        (
            {"squad": "A1", "do": "move", "to": [46, 3]},
            r"cell \(46, 3\) is off the board \(x and y",
        ),
        ({"squad": "A1", "do": "move", "to": [0, 3]}, r"cell \(0, 3\) is off the board"),
    ],
)
def test_dropped_entries_are_recorded(entry: object, note: str) -> None:
    orders = read([entry])
    assert orders.entries == ()
    assert len(orders.repairs) == 1
    assert re.search(note, orders.repairs[0]), orders.repairs[0]


def test_an_order_for_a_dead_squad_is_dropped() -> None:
    # Red squad 1 is the single soldier at (2,2) (squads are cut by distance from the back
    # edge); red squads 2..9 are empty. Orders for A2 are dropped.
    s = BATTLE.from_soldiers([Soldier(2, 2)], [Soldier(40, 40)])
    orders = read([{"squad": "A2", "do": "hold"}, {"squad": "A1", "do": "hold"}], s)
    assert orders.to_json() == [{"squad": "A1", "do": "hold"}]
    assert orders.repairs == ("entry 1 dropped: A2 has no living soldiers",)


@pytest.mark.parametrize(
    ("entry", "note"),
    [
        ({"squad": "A1"}, "entry 2 (A1) has no 'do' verb: A1 keeps its order (hold)"),
        ({"squad": "A1", "do": 7}, "entry 2 (A1) has no 'do' verb"),
        ({"squad": "A1", "do": "attack"}, "'enemy' is None, not B1..B9: A1 keeps its order (hold)"),
        ({"squad": "A1", "do": "attack", "enemy": "A4"}, "'enemy' is 'A4', not B1..B9"),
        ({"squad": "A1", "do": "move"}, "'to' is None, not [x, y]: A1 keeps its order (hold)"),
        ({"squad": "A1", "do": "move", "to": "30,22"}, "'to' is '30,22', not [x, y]"),
        ({"squad": "A1", "do": "move", "to": [3.5, 4]}, "'to' is [3.5, 4], not [x, y]"),
        ({"squad": "A1", "do": "move", "to": [True, 4]}, "'to' is [True, 4], not [x, y]"),
        ({"squad": "A1", "do": "move", "to": [1, 2, 3]}, "'to' is [1, 2, 3], not [x, y]"),
    ],
)
def test_own_squad_with_bad_fields_keeps_its_previous_order(
    entry: dict[str, Any], note: str
) -> None:
    # A1 was told to hold last turn; a bad entry now repairs to that, hold.
    held = BATTLE.apply(SPAWN, {0: read([{"squad": "A1", "do": "hold"}]), 1: read([], seat=1)})
    orders = read([{"squad": "A1", "do": "retreat"}, entry], held)
    assert orders.entries == ()  # the last entry counts, and it keeps the old order
    assert note in orders.repairs[0]
    assert "keeps its order (hold)" in orders.repairs[0]
    assert orders.repairs[1] == "A1 is named in entries 1 and 2: entry 2 counts"
    after = BATTLE.apply(held, {0: orders, 1: read([], held, seat=1)})
    assert after.orders[0][0] == SquadOrder("A1", "hold")


def test_a_squad_named_twice_takes_its_last_entry_but_a_dropped_entry_does_not_count() -> None:
    orders = read([
        {"squad": "A1", "do": "hold"},
        {"squad": "A1", "do": "retreat"},
        {"squad": "A2", "do": "hold"},
        {"squad": "A2", "do": "teleport"},  # dropped: A2 holds
    ])  # fmt: skip
    assert orders.to_json() == [{"squad": "A1", "do": "retreat"}, {"squad": "A2", "do": "hold"}]
    assert orders.repairs == (
        "A1 is named in entries 1 and 2: entry 2 counts",
        "entry 4 dropped: unknown verb 'teleport' for A2 (known: advance, attack, move, hold, "
        "retreat)",
    )


def test_in_game_two_seat_zero_commands_the_b_squads() -> None:
    s = BATTLE.initial(1, game=2)
    orders = BATTLE.parse(s, 0, [{"squad": "B1", "do": "hold"}, {"squad": "A1", "do": "hold"}])
    assert orders.to_json() == [{"squad": "B1", "do": "hold"}]
    assert orders.repairs == ("entry 2 dropped: A1 is a squad of the enemy army; yours are B1..B9",)
    with pytest.raises(Illegal, match=r"seat 0 commands squads B1\.\.B9, not A1"):
        BATTLE.apply(s, {0: Orders((SquadOrder("A1", "hold"),)), 1: Orders(())})


def test_apply_takes_only_orders_values_of_both_seats() -> None:
    with pytest.raises(Illegal, match="pass the Orders that parse"):
        BATTLE.apply(SPAWN, {0: [{"squad": "A1", "do": "hold"}], 1: Orders(())})
    with pytest.raises(Illegal, match="both seats 0 and 1, got seats \\[0\\]"):
        BATTLE.apply(SPAWN, {0: Orders(())})


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 60)
    | st.floats(allow_nan=True)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
NEAR_ORDERS = st.fixed_dictionaries(
    {},
    optional={
        "squad": st.sampled_from(["A1", "a9", "B3", "A0", "A10", " A4", 4]) | JSON,
        "do": st.sampled_from(["advance", "ATTACK", "move", "hold", "retreat", "run"]) | JSON,
        "enemy": st.sampled_from(["B1", "b9", "A2", "B0"]) | JSON,
        "to": st.lists(st.integers(-2, 48) | st.floats(-2, 48), max_size=3) | JSON,
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(NEAR_ORDERS | JSON, max_size=8))
def test_any_list_reads_to_valid_canonical_orders(raw: list[Any]) -> None:
    orders = read(raw)
    numbers = [entry.number for entry in orders.entries]
    assert numbers == sorted(set(numbers))
    for entry in orders.entries:
        assert entry.squad.startswith("A")
        assert entry.enemy is None or entry.enemy[0] == "B"
        assert entry.to is None or all(1 <= v <= 45 for v in entry.to)
    again = read(orders.to_json())
    assert (again.entries, again.repairs) == (orders.entries, ())
    # every entry became an order or left a note (dropped, repaired, or named again later)
    assert len(orders.entries) + len(orders.repairs) >= len(raw)


def test_pincer_targets_at_map_45() -> None:
    # Blue spawns at 1-based x 26..42 (even), y 14..30: centroid x = 0-based sum 33*81 // 81
    # = 33 -> 34; top y 29 + 4 = 33 -> 34; bottom 13 - 4 = 9 -> 10; centroid y 21 -> 22.
    # Red spawns at x 2..18: centroid 0-based 9 -> 10.
    expect = {0: 34, 1: 10}
    for seat, letter in ((0, "A"), (1, "B")):
        x = expect[seat]
        assert BATTLE.baseline(SPAWN, seat).to_json() == [
            {"squad": f"{letter}{k}", "do": "move", "to": [x, y]}
            for k, y in zip(range(1, 10), [34] * 3 + [22] * 3 + [10] * 3, strict=True)
        ]


def test_pincer_clamps_to_the_board_and_skips_dead_squads() -> None:
    # Blue at (30,44) and (34,2): centroid 0-based ((29+33)//2, (43+1)//2) = (31, 22) -> (32, 23);
    # top 43 + 4 = 47 clamps to 44 -> 45; bottom 1 - 4 = -3 clamps to 0 -> 1.
    s = BATTLE.from_soldiers(
        [Soldier(2, 2, squad=1), Soldier(4, 2, squad=5)], [Soldier(30, 44), Soldier(34, 2)]
    )
    assert BATTLE.baseline(s, 0).to_json() == [
        {"squad": "A1", "do": "move", "to": [32, 45]},
        {"squad": "A5", "do": "move", "to": [32, 23]},
    ]
