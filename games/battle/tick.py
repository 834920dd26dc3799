"""The tick engine: the eight steps of a tick (`docs/rules.md#battle`) over numpy arrays.

One `Field` holds mutable copies of a state's positions and hp for the ticks
of one `apply`; the state's own arrays are never written. Every tick:

1. snapshot: who is alive, where, with what hp (the arrays as they stand);
2. every living soldier's action from its squad's directive, all at once
   (vectorised: attack choices over the 8 neighbours, moves over the 12
   offsets), reading the snapshot only;
3. attacks in ascending attacker id, a hit being 20 tenths; a victim at
   hp <= 0 dies at once and frees its cell; a soldier killed earlier in the
   step does not attack, one whose victim died earlier still counts as
   attacking;
4. moves in ascending id; a move succeeds iff its cell is on the board and
   free at that moment;
5. every living soldier that did not attack gains 1 tenth, up to 100;
6. MAgent's rewards, kept in thousandths per army;
7. the tick's gameHash link;
8. (the caller checks the end.)

Order only matters where the pinned sequence can change a result, so only
that part loops in Python: in step 3 the attacks that touch a soldier who may
die this tick (every hit on it landing would leave it at hp <= 0), in step 4
the moves into a cell that another mover also wants or that a mover occupies.
Every other attack and move is applied as one array operation; the docstrings
of `_resolve_attacks` and `_resolve_moves` say why that is exact.

hp is kept in integer tenths and a dead soldier's hp is 0, so "alive" is
`hp > 0` and need not be stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from games.battle.layout import SQUADS, Layout
from games.battle.notation import SquadOrder

__all__ = [
    "ATTACK_OFFSETS",
    "FULL_HP",
    "HIT",
    "MOVE_OFFSETS",
    "RECOVERY",
    "REWARD_MILLI",
    "Directive",
    "Field",
    "directive",
]

FULL_HP = 100
"""A soldier's hp at spawn and its cap, in tenths (10.0)."""
HIT = 20
"""hp one attack takes, in tenths (2.0)."""
RECOVERY = 1
"""hp a soldier that did not attack regains per tick, in tenths (0.1)."""

ATTACK_OFFSETS = ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1))
"""The 8 neighbours, in the rules' tie-break order (y grows upward)."""
MOVE_OFFSETS = (
                        (0, -2),
              (-1, -1), (0, -1),  (1, -1),
    (-2, 0),  (-1, 0),            (1, 0),   (2, 0),
              (-1, 1),  (0, 1),   (1, 1),
                        (0, 2),
)  # fmt: skip  # a table laid out by hand: the cells within distance 2, one row per y
"""The 12 move offsets within distance 2, in the rules' tie-break order."""

REWARD_MILLI = {"step": -5, "dead": -100, "attack": -100, "attack_opponent": 200, "kill": 5000}
"""MAgent's per-soldier rewards in thousandths, so sums stay exact integers.

`step` is paid by every soldier alive at the tick's snapshot, `dead` by each
soldier killed, `attack` by each soldier that attacked (its victim dead or
not), `attack_opponent` per hit that landed on a living enemy, `kill` per
kill. An attack on one's own army would cost `attack` and earn nothing, but
the controller only ever targets enemies, so it cannot happen here.
"""

ADVANCE, ATTACK, MOVE, HOLD, RETREAT = range(5)
_KINDS = {"advance": ADVANCE, "attack": ATTACK, "move": MOVE, "hold": HOLD, "retreat": RETREAT}

_PAD = 2  # the grid has two off-board cells on every side, so offsets never index out
_FAR = 1 << 40  # larger than any squared distance or hp
_AX = np.array([dx for dx, _ in ATTACK_OFFSETS], dtype=np.int64)
_AY = np.array([dy for _, dy in ATTACK_OFFSETS], dtype=np.int64)
_MX = np.array([dx for dx, _ in MOVE_OFFSETS], dtype=np.int64)
_MY = np.array([dy for _, dy in MOVE_OFFSETS], dtype=np.int64)

_RECORD = np.dtype([("id", ">u2"), ("alive", "u1"), ("x", "u1"), ("y", "u1"), ("hp", ">i2")])

Ints = NDArray[np.int64]
Bools = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Directive:
    """A squad's order as the controller uses it: verb code, enemy squad 0..8, 0-based cell."""

    kind: int
    enemy: int = -1
    x: int = -1
    y: int = -1


def directive(order: SquadOrder) -> Directive:
    """The controller's form of a canonical order."""
    kind = _KINDS[order.do]
    if order.enemy is not None:
        return Directive(kind, enemy=int(order.enemy[1:]) - 1)
    if order.to is not None:
        return Directive(kind, x=order.to[0] - 1, y=order.to[1] - 1)
    return Directive(kind)


class Field:
    """The world of one `apply`: mutable copies of positions and hp, stepped tick by tick.

    `directives` holds 18 entries, red squads 1..9 then blue squads 1..9.
    """

    def __init__(
        self,
        layout: Layout,
        x: Ints,
        y: Ints,
        hp: Ints,
        directives: Sequence[Directive],
        digest: bytes,
    ) -> None:
        self.layout = layout
        self.size = layout.map_size
        self.x, self.y, self.hp = x.copy(), y.copy(), hp.copy()
        self.directives = tuple(directives)
        self.digest = digest
        self.reward_milli = [0, 0]
        count = layout.count
        self.grid = np.full((self.size + 2 * _PAD, self.size + 2 * _PAD), -1, dtype=np.int64)
        living = np.flatnonzero(self.hp > 0)
        self.grid[self.x[living] + _PAD, self.y[living] + _PAD] = living
        self._record = np.empty(count, dtype=_RECORD)
        self._record["id"] = np.arange(count)
        # a mover flag per soldier plus one False slot that the grid's -1 (empty) indexes
        self._moving = np.zeros(count + 1, dtype=np.bool_)

    def alive_counts(self) -> tuple[int, int]:
        """Living soldiers of red and of blue."""
        red, blue = np.bincount(self.layout.side[self.hp > 0], minlength=2).tolist()
        return red, blue

    def step(self) -> str:
        """Run one tick (steps 1-7) and return its gameHash link as hex."""
        ids = np.flatnonzero(self.hp > 0)
        side = self.layout.side[ids]
        self._pay(side, "step")
        tx, ty, may_attack, may_move = self._targets(ids)
        victim = self._choose_attacks(ids, side, may_attack)
        fighting = victim >= 0
        movers, mx, my = self._choose_moves(
            ids[~fighting], tx[~fighting], ty[~fighting], may_move[~fighting]
        )
        attacked = self._resolve_attacks(ids[fighting], victim[fighting])
        self._resolve_moves(movers, mx, my)
        healing = (self.hp > 0) & ~attacked
        self.hp = np.minimum(self.hp + RECOVERY * healing, FULL_HP)
        return self._link()

    # -- step 2: the controller -----------------------------------------------

    def _targets(self, ids: Ints) -> tuple[Ints, Ints, Bools, Bools]:
        """Per living soldier: its squad's target cell and whether it may attack / move."""
        group = self.layout.group[ids]
        count = np.bincount(group, minlength=2 * SQUADS).tolist()
        sum_x = np.bincount(group, weights=self.x[ids], minlength=2 * SQUADS).astype(np.int64)
        sum_y = np.bincount(group, weights=self.y[ids], minlength=2 * SQUADS).astype(np.int64)
        sx, sy = sum_x.tolist(), sum_y.tolist()
        army = [
            _centroid(sum(sx[a : a + SQUADS]), sum(sy[a : a + SQUADS]), sum(count[a : a + SQUADS]))
            for a in (0, SQUADS)
        ]
        plan = np.zeros((4, 2 * SQUADS), dtype=np.int64)
        for g, order in enumerate(self.directives):
            if not count[g]:
                continue
            own = g // SQUADS
            enemy = 1 - own
            target = army[enemy]
            if order.kind == ATTACK:
                e = enemy * SQUADS + order.enemy
                if count[e]:
                    target = _centroid(sx[e], sy[e], count[e])
            elif order.kind == MOVE:
                target = (order.x, order.y)
            elif order.kind == RETREAT:
                target = (self.layout.back_x(own), sy[g] // count[g])
            plan[:, g] = (*target, order.kind != RETREAT, order.kind != HOLD)
        per = plan[:, group]
        return per[0], per[1], per[2].astype(np.bool_), per[3].astype(np.bool_)

    def _choose_attacks(self, ids: Ints, side: Ints, may_attack: Bools) -> Ints:
        """Each soldier's victim (lowest hp, ties by offset order), or -1."""
        near = self.grid[self.x[ids, None] + (_AX + _PAD), self.y[ids, None] + (_AY + _PAD)]
        enemy = (near >= 0) & (self.layout.side[near] != side[:, None])
        weakness = np.where(enemy, self.hp[near], _FAR)
        pick = weakness.argmin(axis=1)  # argmin takes the first of equals: the offset order
        rows = np.arange(len(ids))
        found = may_attack & (weakness[rows, pick] < _FAR)
        return np.where(found, near[rows, pick], -1)

    def _choose_moves(
        self, ids: Ints, tx: Ints, ty: Ints, may_move: Bools
    ) -> tuple[Ints, Ints, Ints]:
        """The soldiers that move and their 0-based destinations (closest, ties by order)."""
        ids, tx, ty = ids[may_move], tx[may_move], ty[may_move]
        px, py = self.x[ids], self.y[ids]
        cx, cy = px[:, None] + _MX, py[:, None] + _MY
        here = (px - tx) ** 2 + (py - ty) ** 2
        there = (cx - tx[:, None]) ** 2 + (cy - ty[:, None]) ** 2
        usable = (cx >= 0) & (cx < self.size) & (cy >= 0) & (cy < self.size)
        distance = np.where(usable & (there < here[:, None]), there, _FAR)
        pick = distance.argmin(axis=1)
        rows = np.arange(len(ids))
        going = distance[rows, pick] < _FAR
        return ids[going], cx[rows, pick][going], cy[rows, pick][going]

    # -- steps 3 and 4: resolution --------------------------------------------

    def _resolve_attacks(self, attackers: Ints, victims: Ints) -> Bools:
        """Apply the attacks in ascending attacker id; return who attacked.

        A soldier is at risk when all the hits aimed at it would bring it to
        hp <= 0. An attack whose attacker and victim are both safe lands
        whatever the order (the attacker is alive at its turn, the victim is
        alive and never dies), so those are applied at once; the rest, in id
        order, one by one.
        """
        count = self.layout.count
        attacked = np.zeros(count, dtype=np.bool_)
        hits = np.bincount(victims, minlength=count)
        at_risk = (hits > 0) & (hits * HIT >= self.hp)
        pinned = at_risk[victims] | at_risk[attackers]
        safe_a, safe_v = attackers[~pinned], victims[~pinned]
        self.hp -= HIT * np.bincount(safe_v, minlength=count)
        attacked[safe_a] = True
        side = self.layout.side
        self._pay(side[safe_a], "attack", "attack_opponent")
        for a, v in zip(attackers[pinned].tolist(), victims[pinned].tolist(), strict=True):
            if self.hp[a] <= 0:
                continue  # killed earlier in this step: it does not attack
            attacked[a] = True
            self.reward_milli[side[a]] += REWARD_MILLI["attack"]
            if self.hp[v] <= 0:
                continue  # its victim died earlier in this step: the blow is wasted
            self.reward_milli[side[a]] += REWARD_MILLI["attack_opponent"]
            self.hp[v] -= HIT
            if self.hp[v] <= 0:
                self.hp[v] = 0
                self.grid[self.x[v] + _PAD, self.y[v] + _PAD] = -1
                self.reward_milli[side[a]] += REWARD_MILLI["kill"]
                self.reward_milli[side[v]] += REWARD_MILLI["dead"]
        return attacked

    def _resolve_moves(self, movers: Ints, mx: Ints, my: Ints) -> None:
        """Apply the moves in ascending id.

        A move into a cell that was free after step 3 and that no other mover
        wants succeeds whatever the order, so those go at once, remembering
        which id left each origin. A move into a cell held by a soldier that
        is not moving fails. The rest go one by one in id order; a cell left
        by one of the moves made at once is free only to a higher id.
        """
        alive = self.hp[movers] > 0
        movers, mx, my = movers[alive], mx[alive], my[alive]
        holder = self.grid[mx + _PAD, my + _PAD]
        self._moving[movers] = True
        wanted = mx * self.size + my
        shared = np.bincount(wanted, minlength=self.size * self.size)[wanted] > 1
        free = holder < 0
        at_once = free & ~shared
        in_turn = (free & shared) | self._moving[holder]
        self._moving[movers] = False
        left_by = dict(
            zip(
                (self.x[movers[at_once]] * self.size + self.y[movers[at_once]]).tolist(),
                movers[at_once].tolist(),
                strict=True,
            )
        )
        self._relocate(movers[at_once], mx[at_once], my[at_once])
        grid, x, y = self.grid, self.x, self.y
        for r, cx, cy in zip(
            movers[in_turn].tolist(), mx[in_turn].tolist(), my[in_turn].tolist(), strict=True
        ):
            if grid[cx + _PAD, cy + _PAD] >= 0 or left_by.get(cx * self.size + cy, -1) > r:
                continue
            grid[x[r] + _PAD, y[r] + _PAD] = -1
            grid[cx + _PAD, cy + _PAD] = r
            x[r], y[r] = cx, cy

    def _relocate(self, ids: Ints, nx: Ints, ny: Ints) -> None:
        self.grid[self.x[ids] + _PAD, self.y[ids] + _PAD] = -1
        self.grid[nx + _PAD, ny + _PAD] = ids
        self.x[ids], self.y[ids] = nx, ny

    # -- steps 6 and 7 --------------------------------------------------------

    def _pay(self, sides: Ints, *kinds: str) -> None:
        """Pay each soldier of `sides` (one entry per soldier) the rewards `kinds`."""
        red, blue = np.bincount(sides, minlength=2).tolist()
        milli = sum(REWARD_MILLI[k] for k in kinds)
        self.reward_milli[0] += red * milli
        self.reward_milli[1] += blue * milli

    def _link(self) -> str:
        record = self._record
        record["alive"] = self.hp > 0
        record["x"] = self.x
        record["y"] = self.y
        record["hp"] = self.hp
        self.digest = hashlib.sha256(self.digest + record.tobytes()).digest()
        return self.digest.hex()


def _centroid(sum_x: int, sum_y: int, count: int) -> tuple[int, int]:
    """The rules' integer centroid, 0-based; (0, 0) for an empty army (never targeted)."""
    return (sum_x // count, sum_y // count) if count else (0, 0)
