"""Named steps at which a test may kill the run, for the kill-and-resume audits.

`COG_TEST_KILL_AT=<step>` in the environment makes the process SIGKILL itself
the first time it reaches that step: `commit` (a card committed, its first
game not begun), `game` (a card's first game kept), `replay` (an episode's
replay file written, its row not yet stored), `store` (the row stored, the
card not yet revealed). Unset, a step costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["KILL_AT", "STEPS", "crash_point"]

KILL_AT = "COG_TEST_KILL_AT"
STEPS = ("commit", "game", "replay", "store")


def crash_point(step: str) -> None:
    """SIGKILL this process here if the environment names `step`."""
    if os.environ.get(KILL_AT) == step:
        os.kill(os.getpid(), signal.SIGKILL)
