"""Ticks per second of the battle engine at map size 45 (162 soldiers).

Two scenarios, each a whole game from the spawn, timed over `apply` calls
only (orders are made before the clock starts where they do not depend on
the position):

- `pincer`: both seats play the pincer baseline every command turn, so the
  armies close and fight (a game ends by wipe or at the tick cap);
- `hold`: both seats hold every squad, so all 162 soldiers live for the full
  300 ticks (the cost of a tick with nothing to resolve).

Prints the median over several runs. Target: 1,600 ticks per second for both.

    python bench/battle.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from games.battle import Battle, BattleState, Orders, SquadOrder, squad_prefix


def _hold(s: BattleState, seat: int) -> Orders:
    prefix = squad_prefix(s.game, seat)
    return Orders(tuple(SquadOrder(f"{prefix}{k}", "hold") for k in range(1, 10)))


def run_pincer(battle: Battle) -> tuple[int, float]:
    """Ticks played and seconds spent in `apply` and `baseline` for one pincer game."""
    s = battle.initial(1)
    start = time.perf_counter()
    while battle.to_act(s):
        s = battle.apply(s, {0: battle.baseline(s, 0), 1: battle.baseline(s, 1)})
    return s.tick, time.perf_counter() - start


def run_hold(battle: Battle) -> tuple[int, float]:
    """Ticks played and seconds spent in `apply` for one game of both sides holding."""
    s = battle.initial(1)
    orders = {0: _hold(s, 0), 1: _hold(s, 1)}
    start = time.perf_counter()
    while battle.to_act(s):
        s = battle.apply(s, orders)
    if s.survivors(0) + s.survivors(1) != s.layout.count:
        raise RuntimeError("a soldier died while both armies held: the hold scenario is broken")
    return s.tick, time.perf_counter() - start


def main() -> None:
    """Print the median ticks per second of each scenario."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="games per scenario (default 7)")
    runs = parser.parse_args().runs
    battle = Battle(map_size=45)
    for name, scenario in (("pincer", run_pincer), ("hold", run_hold)):
        scenario(battle)  # warm-up: imports, numpy's first calls
        rates, ticks = [], 0
        for _ in range(runs):
            ticks, seconds = scenario(battle)
            rates.append(ticks / seconds)
        print(
            f"{name:>6}: {statistics.median(rates):7.0f} ticks/s median of {runs} "
            f"(min {min(rates):.0f}, max {max(rates):.0f}; {ticks} ticks a game)"
        )


if __name__ == "__main__":
    main()
