"""A battle position: an immutable value the rules produce and the arena passes around."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from games.battle.layout import SQUADS, Layout
from games.battle.notation import SquadOrder

__all__ = ["BattleState", "Soldier"]


@dataclass(frozen=True, eq=False)
class BattleState:
    """One moment of a battle game, at a command turn or at its end; compared by value.

    `x`, `y` (0-based, y upward) and `hp` (tenths; 0 once dead) are indexed by
    unit id and are read-only: an apply copies them. `orders[seat]` holds the
    nine current orders of that seat's squads (seat 0 is red, the left army).
    `digest` is the latest gameHash link (h0 before the first tick) and
    `chain` the hex links of the ticks the last apply ran, in order (empty in
    an initial state). `reward_milli` is MAgent's reward summed per seat, in
    thousandths. `turn` counts the command turns applied.
    """

    layout: Layout
    seed: int | str
    game: int
    tick: int
    turn: int
    x: NDArray[np.int64]
    y: NDArray[np.int64]
    hp: NDArray[np.int64]
    orders: tuple[tuple[SquadOrder, ...], tuple[SquadOrder, ...]]
    digest: bytes
    chain: tuple[str, ...] = ()
    reward_milli: tuple[int, int] = (0, 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BattleState):
            return NotImplemented
        return (
            self._scalars() == other._scalars()
            and self.layout == other.layout
            and all(
                np.array_equal(a, b) for a, b in zip(self._arrays(), other._arrays(), strict=True)
            )
        )

    def __hash__(self) -> int:
        # equal states have equal digests, and the digest already mixes in every tick
        return hash((self.game, self.tick, self.digest))

    def _scalars(self) -> tuple[object, ...]:
        return (
            self.seed,
            self.game,
            self.tick,
            self.turn,
            self.orders,
            self.digest,
            self.chain,
            self.reward_milli,
        )

    def _arrays(self) -> tuple[NDArray[np.int64], ...]:
        return self.x, self.y, self.hp

    @property
    def ply(self) -> int:
        """Command turns applied so far (the framework's ply count)."""
        return self.turn

    @property
    def hash_hex(self) -> str:
        """The latest gameHash link as hex."""
        return self.digest.hex()

    def alive(self) -> NDArray[np.bool_]:
        """Which soldiers live, by unit id."""
        return self.hp > 0

    def survivors(self, seat: int) -> int:
        """Living soldiers of `seat`'s army."""
        return int(np.count_nonzero((self.hp > 0) & (self.layout.side == seat)))

    def total_hp(self, seat: int) -> int:
        """The hp, in tenths, summed over `seat`'s living soldiers."""
        return int(self.hp[self.layout.side == seat].sum())

    def living_squads(self, seat: int) -> frozenset[int]:
        """Numbers (1..9) of `seat`'s squads that still have a living soldier."""
        groups = self.layout.group[self.hp > 0]
        return frozenset(
            int(g) - seat * SQUADS + 1 for g in np.unique(groups) if g // SQUADS == seat
        )

    def position(self, unit: int) -> tuple[int, int]:
        """Unit `unit`'s 1-based cell (its last cell once dead)."""
        return int(self.x[unit]) + 1, int(self.y[unit]) + 1


@dataclass(frozen=True, slots=True)
class Soldier:
    """A soldier for `Battle.from_soldiers`: a 1-based cell, hp in tenths, an optional squad 1..9.

    With `squad` None the spawn rule assigns one (sorted by distance from the
    army's back edge, then y, then id, cut into nine groups).
    """

    x: int
    y: int
    hp: int = 100
    squad: int | None = None
