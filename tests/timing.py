"""The one margin every deadline test shares.

Deadline tests inject tiny deadlines and prove that a wait ends by its bound:
`elapsed < bound + MARGIN_S`. The margin is generous on purpose, so that a
loaded machine (a shared CI runner, two cores) never turns a bounded wait into
a failure; these tests say that waits are bounded, not how fast anything is.
Speed is measured by the benchmarks under `bench/`, never asserted here.
A lower bound (`elapsed >= delay`) needs no margin: a clock never runs early.
"""

from __future__ import annotations

MARGIN_S = 1.0
"""How much later than its bound a bounded wait may end."""
