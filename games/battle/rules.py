"""The squad battle: two commanders, nine squads each, on one open grid.

Both seats command at once at tick 0, 20, 40, ... (`to_act` is (0, 1));
`apply` takes both seats' `Orders` (from `parse` or `baseline`) and runs the
ticks up to the next command turn or the end. Seat 0 of a game is red (the
left army, the lower unit ids); which seat is Alpha (squads `A1`..`A9`)
follows the game index, `squad_prefix(game, seat)`. A game ends in a `wipe`
when an army has no living soldier (both at once: a draw), at `tickCap` at
`max_ticks`, or at `wallClock` (reason `deadline`) when the arena's clock
stops the episode; all are settled by survivors. A game's score for seat `s`
is `100 * outcome[s] + survivors[s] - survivors[opp]`, outcome being +1 / 0 /
-1 by survivors; an episode (two games) sums them, within [-362, 362] at map
size 45.

Rules source:
    `docs/rules.md#battle`: the board, the soldier, the clock, the eight steps
    of a tick, the orders, winning; the spawn arithmetic, unit ids, squads, hp
    in integer tenths, the recovery reading, the deterministic controller and
    its tie orders, the orders schema and its repairs, pincer, the view and
    the gameHash chain.

Parameters:
    `map_size` (45: the battle, 81 soldiers a side; 31: the skirmish, 30 a
    side), `turn_ticks` (20 ticks per command turn) and `max_ticks` (300, the
    tick cap).

State:
    `BattleState` (`state`): positions, hp, the current orders and the
    gameHash, at a command turn. The tick engine is `tick`, the spawn `layout`.

Notation:
    Orders are JSON, cells 1-based (`notation`, whose docstring gives the
    schema); `parse` reads them with their repairs. Moves are not enumerable:
    `legal_moves` is always empty.

Standing:
    The seat's total hp in tenths.

Baseline:
    `pincer`: squads 1-3 to 4 above the enemy's top, 7-9 to 4 below its
    bottom, 4-6 to its centroid, all at the enemy centroid's x. The named
    `flank` and the random orders of `random_move` are the other scripted
    commanders (`commanders`, whose docstring gives all three).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from games.battle.commanders import flank, pincer, random_orders
from games.battle.layout import MAX_MAP, MIN_MAP, SQUADS, Layout, spawn_cells
from games.battle.notation import DEFAULT_VERB, Orders, SquadOrder, read_orders, squad_prefix
from games.battle.state import BattleState, Soldier
from games.battle.tick import FULL_HP, Field, directive
from games.battle.view import build_view
from games.core import COMPLETE, DEADLINE, Game, Illegal, MatchFormat, Outcome

__all__ = ["Battle"]

# -- parameters ---------------------------------------------------------------

_WIN = 100  # the per-game score of an outcome, before the survivor differential

# -- the game -----------------------------------------------------------------


class Battle(Game[BattleState]):
    """The battle's rules with their parameters (module docstring)."""

    name: ClassVar[str] = "battle"
    family: ClassVar[str] = "battle"
    rules_version: ClassVar[int] = 1
    enumerable: ClassVar[bool] = False
    match_format: ClassVar[MatchFormat] = MatchFormat(
        games_per_episode=2,
        seat_names=(("Alpha", "Bravo"), ("Bravo", "Alpha")),
        wall_covers_episode=True,
        switch_off_turns=2,
        deadlines=(9.0, 4.0, 14.0),
        run_deadlines=False,
        wall_s=660.0,
        program_timeout_s=None,
    )
    baselines: ClassVar[Mapping[str, str]] = {
        "pincer": "squads 1-3 to 4 above the enemy's top, 7-9 to 4 below its bottom, 4-6 to "
        "its centroid, all at the enemy centroid's x",
        "flank": "squads 1-5 move out past the enemy's weaker wing and along it to 4 behind "
        "its centroid; squads 6-9 hold the centre until tick 100, then advance",
    }

    # -- parameters -----------------------------------------------------------

    def __init__(self, map_size: int = 45, turn_ticks: int = 20, max_ticks: int = 300) -> None:
        for label, value, low, high in (
            ("map_size", map_size, MIN_MAP, MAX_MAP),
            ("turn_ticks", turn_ticks, 1, 10_000),
            ("max_ticks", max_ticks, 1, 1_000_000),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"battle {label} = {value!r}: use a whole number in {low}..{high}")
        self.map_size = map_size
        self.turn_ticks = turn_ticks
        self.max_ticks = max_ticks
        red, blue = spawn_cells(map_size)
        self._spawn = (*red, *blue)
        self._layout = Layout.build(
            map_size, self._spawn, [0] * len(red) + [1] * len(blue), [None] * len(self._spawn)
        )

    def params(self) -> dict[str, Any]:
        """The `map_size`, `turn_ticks` and `max_ticks` a replay records."""
        return {
            "map_size": self.map_size,
            "turn_ticks": self.turn_ticks,
            "max_ticks": self.max_ticks,
        }

    # -- state ----------------------------------------------------------------

    def initial(self, seed: int | str, game: int = 1) -> BattleState:
        """The spawn position of game `game` (1 or 2); `seed` only keys the gameHash."""
        full = [FULL_HP] * len(self._spawn)
        return self._state(self._layout, self._spawn, full, seed=seed, game=game, tick=0)

    def from_soldiers(
        self,
        red: Sequence[Soldier],
        blue: Sequence[Soldier],
        *,
        seed: int | str = 0,
        game: int = 1,
        tick: int = 0,
    ) -> BattleState:
        """A state at a command turn with just these soldiers, every squad on `advance`.

        The test constructor: ids run through `red` then `blue` in the given
        order, cells are 1-based, squads left None follow the spawn rule. The
        state is as normal as `initial`'s; only the positions differ.
        """
        soldiers = [*red, *blue]
        cells = [(s.x - 1, s.y - 1) for s in soldiers]
        for s in soldiers:
            if not (1 <= s.x <= self.map_size and 1 <= s.y <= self.map_size):
                raise ValueError(f"{s} stands off the {self.map_size} x {self.map_size} board")
            if not 1 <= s.hp <= FULL_HP or (s.squad is not None and not 1 <= s.squad <= SQUADS):
                raise ValueError(f"{s}: hp must be 1..{FULL_HP} and squad 1..{SQUADS} or None")
        shared = sorted({(x + 1, y + 1) for x, y in cells if cells.count((x, y)) > 1})
        if shared:
            raise ValueError(f"soldiers share the cells {shared}: one soldier per cell")
        if not 0 <= tick <= self.max_ticks:
            raise ValueError(f"tick {tick} is outside 0..{self.max_ticks}")
        squads = [None if s.squad is None else s.squad - 1 for s in soldiers]
        layout = Layout.build(self.map_size, cells, [0] * len(red) + [1] * len(blue), squads)
        return self._state(layout, cells, [s.hp for s in soldiers], seed=seed, game=game, tick=tick)

    def _state(
        self,
        layout: Layout,
        cells: Sequence[tuple[int, int]],
        hp: Sequence[int],
        *,
        seed: int | str,
        game: int,
        tick: int,
    ) -> BattleState:
        if game not in (1, 2):
            raise ValueError(f"game {game!r}: a battle match has games 1 and 2")
        x = np.array([cell[0] for cell in cells], dtype=np.int64)
        y = np.array([cell[1] for cell in cells], dtype=np.int64)
        life = np.array(hp, dtype=np.int64)
        for array in (x, y, life):
            array.setflags(write=False)
        orders = tuple(
            tuple(SquadOrder(f"{squad_prefix(game, seat)}{k}", DEFAULT_VERB) for k in range(1, 10))
            for seat in (0, 1)
        )
        return BattleState(
            layout=layout,
            seed=seed,
            game=game,
            tick=tick,
            turn=tick // self.turn_ticks,
            x=x,
            y=y,
            hp=life,
            orders=(orders[0], orders[1]),
            digest=hashlib.sha256(f"{seed}:{game}".encode()).digest(),
        )

    # -- rules ----------------------------------------------------------------

    def to_act(self, s: BattleState) -> tuple[int, ...]:
        """Both commanders at once, until the battle ends."""
        return () if self.outcome(s) is not None else (0, 1)

    def legal_moves(self, s: BattleState, seat: int) -> tuple[str, ...]:
        """Always empty: orders are structured (the `notation` module), not enumerable."""
        return ()

    def apply(self, s: BattleState, moves: Mapping[int, Any]) -> BattleState:
        """Both seats' `Orders`; runs the ticks to the next command turn or the end."""
        if not self.to_act(s):
            raise Illegal("the game is over: no orders can be applied")
        if set(moves) != {0, 1}:
            raise Illegal(f"expected orders of both seats 0 and 1, got seats {sorted(moves)}")
        orders = (self._merge(s, 0, moves[0]), self._merge(s, 1, moves[1]))
        field = Field(
            s.layout, s.x, s.y, s.hp, [directive(o) for o in (*orders[0], *orders[1])], s.digest
        )
        tick, chain = s.tick, []
        while True:
            chain.append(field.step())
            tick += 1
            if 0 in field.alive_counts() or tick >= self.max_ticks or tick % self.turn_ticks == 0:
                break
        for array in (field.x, field.y, field.hp):
            array.setflags(write=False)
        return BattleState(
            layout=s.layout,
            seed=s.seed,
            game=s.game,
            tick=tick,
            turn=s.turn + 1,
            x=field.x,
            y=field.y,
            hp=field.hp,
            orders=orders,
            digest=field.digest,
            chain=tuple(chain),
            reward_milli=(
                s.reward_milli[0] + field.reward_milli[0],
                s.reward_milli[1] + field.reward_milli[1],
            ),
        )

    def _merge(self, s: BattleState, seat: int, orders: object) -> tuple[SquadOrder, ...]:
        """`seat`'s nine orders after `orders` (an `Orders` value) replaces some."""
        if not isinstance(orders, Orders):
            raise Illegal(
                f"seat {seat}'s move is a {type(orders).__name__}; pass the Orders that "
                "parse() or baseline() returned"
            )
        prefix = squad_prefix(s.game, seat)
        merged = list(s.orders[seat])
        for entry in orders.entries:
            if entry.squad[:1] != prefix:
                raise Illegal(
                    f"seat {seat} commands squads {prefix}1..{prefix}9, not {entry.squad}"
                )
            merged[entry.number - 1] = entry
        return tuple(merged)

    def _check_seat(self, s: BattleState, seat: int) -> None:
        if seat not in self.to_act(s):
            raise Illegal(f"seat {seat} has nothing to command: the game is over")

    def outcome(self, s: BattleState) -> Outcome | None:
        """`wipe` when an army is gone, `tickCap` at the tick cap, else None."""
        red, blue = s.survivors(0), s.survivors(1)
        if red == 0 or blue == 0:
            return self._settle(s, COMPLETE, "wipe")
        if s.tick >= self.max_ticks:
            return self._settle(s, COMPLETE, "tickCap")
        return None

    def adjudicate(self, s: BattleState) -> Outcome:
        """`wallClock`, by survivors; a game already over keeps its outcome."""
        return self.outcome(s) or self._settle(s, DEADLINE, "wallClock")

    def _settle(self, s: BattleState, reason: str, ending: str) -> Outcome:
        red, blue = s.survivors(0), s.survivors(1)
        margin = red - blue
        score = _WIN * ((margin > 0) - (margin < 0)) + margin
        return Outcome((score, -score), reason, ending, detail=f"survivors {red}-{blue}")

    def reply_key(self, s: BattleState) -> str:
        """Commanders reply with `orders`."""
        return "orders"

    def integrity(self, s: BattleState) -> dict[str, Any]:
        """The gameHash links of the ticks the last apply ran, and MAgent's rewards so far."""
        return {
            "hashes": list(s.chain),
            "magent_reward": [self.magent_reward(s, 0), self.magent_reward(s, 1)],
        }

    def magent_reward(self, s: BattleState, seat: int) -> float:
        """MAgent's rewards summed over `seat`'s soldiers so far (recorded, never scored)."""
        return s.reward_milli[seat] / 1000

    # -- notation -------------------------------------------------------------

    def parse(self, s: BattleState, seat: int, move: object) -> Orders:
        """Read a decoded `orders` list for `seat`: canonical `Orders` with their repairs."""
        self._check_seat(s, seat)
        return read_orders(
            move,
            own=squad_prefix(s.game, seat),
            living=s.living_squads(seat),
            map_size=self.map_size,
            previous=s.orders[seat],
        )

    # -- standing -------------------------------------------------------------

    def standing(self, s: BattleState, seat: int) -> int:
        """The total hp, in tenths, of `seat`'s living soldiers."""
        return s.total_hp(seat)

    # -- baseline -------------------------------------------------------------

    def baseline(self, s: BattleState, seat: int) -> Orders:
        """pincer: squads 1-3 to 4 above the enemy's top, 7-9 to 4 below its bottom, 4-6 to
        its centroid, all at the enemy centroid's x, clamped to the board; all may attack."""
        self._check_seat(s, seat)
        return Orders(pincer(s, seat, self.map_size))

    def named_baseline(self, s: BattleState, seat: int, name: str) -> Orders:
        """The orders of `pincer` (the baseline) or `flank` for `seat` (`commanders`)."""
        commander = {"pincer": pincer, "flank": flank}.get(name)
        if commander is None:
            raise ValueError(f"battle has no baseline {name!r} (named ones: pincer, flank)")
        self._check_seat(s, seat)
        return Orders(commander(s, seat, self.map_size))

    def random_move(self, s: BattleState, seat: int, rng: random.Random) -> Orders:
        """Every living squad a uniformly drawn verb; an attack's enemy among the living enemy
        squads, a move's cell anywhere on the board.

        `rng` is the seat's own seeded generator; the orders are canonical, as `parse` reads
        them, with nothing to repair.
        """
        self._check_seat(s, seat)
        own, enemy = squad_prefix(s.game, seat), squad_prefix(s.game, 1 - seat)
        return Orders(
            random_orders(
                [f"{own}{k}" for k in sorted(s.living_squads(seat))],
                [f"{enemy}{k}" for k in sorted(s.living_squads(1 - seat))],
                self.map_size,
                rng,
            )
        )

    # -- view -----------------------------------------------------------------

    def view(self, s: BattleState, seat: int) -> dict[str, Any]:
        """Everything on the field from `seat`'s side (`view.build_view`); JSON-able."""
        return build_view(s, seat, self.turn_ticks, self.max_ticks)
