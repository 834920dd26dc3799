"""The numpy tick engine against a plain, literal reading of the seed's steps.

`reference_tick` below is written straight from `seeds/battle-rules.txt` and
docs/rules.md#battle, one soldier at a time, with no shortcut: every attack and
every move in ascending id. The engine applies most attacks and moves as
array operations and only loops where the order can matter; hypothesis
throws crowded random positions and random orders at both and they must
agree on every position, hp and reward, tick after tick.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from games.battle import Battle, BattleState, Orders, Soldier, SquadOrder, squad_prefix
from games.battle.tick import ATTACK_OFFSETS, MOVE_OFFSETS

SIZE = 20


@dataclass
class World:
    """Plain lists, 0-based cells, for the reference."""

    side: list[int]
    squad: list[int]
    x: list[int]
    y: list[int]
    hp: list[int]
    reward: list[int]


def centroid(members: list[int], w: World) -> tuple[int, int]:
    n = len(members)
    return sum(w.x[i] for i in members) // n, sum(w.y[i] for i in members) // n


def target_of(i: int, order: SquadOrder, w: World, living: list[int]) -> tuple[int, int]:
    enemy_army = [j for j in living if w.side[j] != w.side[i]]
    if order.do == "move":
        assert order.to is not None
        return order.to[0] - 1, order.to[1] - 1
    if order.do == "retreat":
        mates = [j for j in living if w.side[j] == w.side[i] and w.squad[j] == w.squad[i]]
        return (0 if w.side[i] == 0 else SIZE - 1), centroid(mates, w)[1]
    if order.do == "attack":
        assert order.enemy is not None
        squad = [j for j in enemy_army if w.squad[j] == int(order.enemy[1:]) - 1]
        if squad:
            return centroid(squad, w)
    return centroid(enemy_army, w)


def choose(
    i: int, order: SquadOrder, w: World, living: list[int], occ: dict[tuple[int, int], int]
) -> tuple[str, int, int]:
    if order.do != "retreat":
        victim = -1
        for dx, dy in ATTACK_OFFSETS:
            j = occ.get((w.x[i] + dx, w.y[i] + dy), -1)
            if j >= 0 and w.side[j] != w.side[i] and (victim < 0 or w.hp[j] < w.hp[victim]):
                victim = j
        if victim >= 0:
            return "attack", victim, 0
    if order.do == "hold":
        return "none", 0, 0
    tx, ty = target_of(i, order, w, living)
    here = (w.x[i] - tx) ** 2 + (w.y[i] - ty) ** 2
    best = None
    for dx, dy in MOVE_OFFSETS:
        nx, ny = w.x[i] + dx, w.y[i] + dy
        d = (nx - tx) ** 2 + (ny - ty) ** 2
        if 0 <= nx < SIZE and 0 <= ny < SIZE and d < here and (best is None or d < best[0]):
            best = (d, nx, ny)
    return ("move", best[1], best[2]) if best else ("none", 0, 0)


def reference_tick(w: World, orders: list[list[SquadOrder]]) -> None:
    living = [i for i in range(len(w.hp)) if w.hp[i] > 0]
    occ = {(w.x[i], w.y[i]): i for i in living}
    actions = {i: choose(i, orders[w.side[i]][w.squad[i]], w, living, occ) for i in living}
    for i in living:
        w.reward[w.side[i]] -= 5
    attacked = set()
    for i in living:
        kind, v, _ = actions[i]
        if kind != "attack" or w.hp[i] <= 0:
            continue
        attacked.add(i)
        w.reward[w.side[i]] -= 100
        if w.hp[v] <= 0:
            continue
        w.reward[w.side[i]] += 200
        w.hp[v] -= 20
        if w.hp[v] <= 0:
            w.hp[v] = 0
            del occ[(w.x[v], w.y[v])]
            w.reward[w.side[i]] += 5000
            w.reward[w.side[v]] -= 100
    for i in living:
        kind, nx, ny = actions[i]
        if kind == "move" and w.hp[i] > 0 and (nx, ny) not in occ:
            del occ[(w.x[i], w.y[i])]
            occ[(nx, ny)] = i
            w.x[i], w.y[i] = nx, ny
    for i in living:
        if w.hp[i] > 0 and i not in attacked:
            w.hp[i] = min(w.hp[i] + 1, 100)


def world_of(s: BattleState) -> World:
    return World(
        s.layout.side.tolist(), s.layout.squad.tolist(), s.x.tolist(), s.y.tolist(),
        s.hp.tolist(), list(s.reward_milli),
    )  # fmt: skip


@st.composite
def battles(draw: st.DrawFn) -> tuple[BattleState, list[list[SquadOrder]]]:
    cells = draw(
        st.lists(
            st.tuples(st.integers(1, 12), st.integers(1, 12)), min_size=4, max_size=60, unique=True
        )
    )
    hps = draw(st.lists(st.integers(1, 100), min_size=len(cells), max_size=len(cells)))
    cut = draw(st.integers(1, len(cells) - 1))
    soldiers = [Soldier(x, y, hp) for (x, y), hp in zip(cells, hps, strict=True)]
    game = draw(st.sampled_from([1, 2]))
    battle = Battle(map_size=SIZE, turn_ticks=1)
    s = battle.from_soldiers(soldiers[:cut], soldiers[cut:], game=game)
    orders, cell = [], st.integers(1, SIZE)
    for seat in (0, 1):
        own, enemy = squad_prefix(game, seat), squad_prefix(game, 1 - seat)
        squads = []
        for k in range(1, 10):
            do = draw(st.sampled_from(["advance", "attack", "move", "hold", "retreat"]))
            squads.append(
                SquadOrder(
                    f"{own}{k}",
                    do,
                    enemy=f"{enemy}{draw(st.integers(1, 9))}" if do == "attack" else None,
                    to=(draw(cell), draw(cell)) if do == "move" else None,
                )
            )
        orders.append(squads)
    return s, orders


@settings(max_examples=150, deadline=None)
@given(battles())
def test_engine_matches_the_literal_reference(
    case: tuple[BattleState, list[list[SquadOrder]]],
) -> None:
    s, orders = case
    battle = Battle(map_size=SIZE, turn_ticks=1)
    w = world_of(s)
    moves = {seat: Orders(tuple(orders[seat])) for seat in (0, 1)}
    for _ in range(12):
        if not battle.to_act(s):
            break
        s = battle.apply(s, moves)
        reference_tick(w, orders)
        assert (s.x.tolist(), s.y.tolist(), s.hp.tolist()) == (w.x, w.y, w.hp)
        assert list(s.reward_milli) == w.reward
