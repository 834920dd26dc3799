"""How deadline tests tell time: a virtual clock where they can, one shared margin where not.

A test whose every wait is on anyio's clock and that touches no real socket runs on
`virtual_clock()`: anyio's trio backend with trio's `MockClock(autojump_threshold=0)`,
which jumps to the next deadline as soon as every task waits. Its sleeps take no wall
time and its deadlines are asserted exactly (`pytest.approx` for the float sums), so the
test says the same on a quiet machine and under `stress --cpu 8`. A module opts in by
overriding the `anyio_backend` fixture with it.

Where a real socket, process or thread is involved, the wait is on the wall clock:
such a test injects tiny deadlines and proves that a wait ends by its bound,
`elapsed < bound + MARGIN_S`. The margin is generous on purpose, so that a loaded
machine never turns a bounded wait into a failure; these tests say that waits are
bounded, not how fast anything is. Speed is measured by the benchmarks under
`bench/`, never asserted here. A lower bound (`elapsed >= delay`) needs no margin: a
clock never runs early.
"""

from __future__ import annotations

from typing import Any

MARGIN_S = 1.0
"""How much later than its bound a bounded wait on the wall clock may end."""


def virtual_clock() -> tuple[str, dict[str, Any]]:
    """The backend (anyio's trio) and its options for a test on a virtual clock: its clock
    jumps to the next deadline the moment every task waits (none runs on the wall clock)."""
    from trio.testing import MockClock

    return "trio", {"clock": MockClock(autojump_threshold=0)}
