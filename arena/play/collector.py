"""The garbage collector as a run needs it.

Each decision allocates thousands of objects (its prompt, its request and answer, their
tasks, scopes and frames), some in reference cycles, while what the run set up before its
first game (modules, models, the config, the plan) lives as long as the run does. With
CPython's default thresholds (700, 10, 10) the collector took about a quarter of a run's
CPU at 256 games in flight (`python -m bench.throughput` prints its share), mostly in
full passes over those long-lived objects, and each pass holds the event loop and every
game in flight.

For a run, what exists when it starts is frozen out of the passes (`gc.freeze`), and the
youngest generation is collected after 50,000 allocations instead of 700: the same
garbage is found, in a few dozen passes a run instead of thousands.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["THRESHOLDS", "collector_tuned", "tune_collector"]

THRESHOLDS = (50_000, 20, 20)
"""The collector's thresholds while a run plays: the youngest generation every 50,000
allocations, each older one after 20 passes of the one below."""


class _Held:
    """How many runs in this process hold the tuning, and the thresholds before the first."""

    runs = 0
    for_good = False
    before: tuple[int, ...] = gc.get_threshold()


def tune_collector() -> None:
    """Tune the collector for good, once a process (a cluster's worker, which plays episodes
    until it ends): what exists at the first call frozen, `THRESHOLDS` set."""
    if not _Held.for_good:
        _Held.for_good = True
        _tune()


def _tune() -> None:
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def collector_tuned() -> Iterator[None]:
    """The collector tuned for the block (`tune_collector`), then as it was: the objects
    frozen at the start given back to it, its thresholds restored (the last of nested
    blocks restores)."""
    if _Held.runs == 0 and not _Held.for_good:
        _Held.before = gc.get_threshold()
        _tune()
    _Held.runs += 1
    try:
        yield
    finally:
        _Held.runs -= 1
        if _Held.runs == 0 and not _Held.for_good:
            gc.set_threshold(*_Held.before)
            gc.unfreeze()
