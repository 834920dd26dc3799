"""Named steps at which a test may kill the run, for the kill-and-resume audits.

`COG_TEST_KILL_AT=<step>` in the environment makes the process SIGKILL itself
the first time it reaches that step, `COG_TEST_KILL_AT=<step>@<n>` the n-th
time in this process (`store@3`: two episodes stored, killed once the third
is). The steps: `commit` (a card committed, its first game not begun), `game`
(a card's first game kept), `replay` (an episode's replay file written, its
row not yet stored), `store` (the row stored, the card not yet revealed); in a standing pool,
`scheduled` (a round's matches stored, none started) and `placed` (every
placement match stored, the next round not yet picked).

The variable is read once, when this module is imported; a value that names
no step is refused then, so a misspelt kill cannot silently never happen.
Unset, a step costs one dictionary lookup.
"""

from __future__ import annotations

import os
import re
import signal

__all__ = ["EPISODE_STEPS", "KILL_AT", "POOL_STEPS", "STEPS", "crash_point", "group_limit"]

KILL_AT = "COG_TEST_KILL_AT"
EPISODE_STEPS = ("commit", "game", "replay", "store")
"""The steps every run with a card reaches (the cards' and the store's)."""
POOL_STEPS = ("scheduled", "placed")
"""The steps only a standing pool reaches."""
STEPS = (*EPISODE_STEPS, *POOL_STEPS)


def _armed(value: str) -> dict[str, int]:
    """The step `value` names, with how many times it is reached, the fatal one included."""
    if not value:
        return {}
    named = re.fullmatch(r"(\w+)(?:@([1-9][0-9]*))?", value)
    if named is None or named[1] not in STEPS:
        raise ValueError(
            f"{KILL_AT}={value!r} names no crash point: use <step> or <step>@<n> (n >= 1), "
            f"with a step of {', '.join(STEPS)}"
        )
    return {named[1]: int(named[2] or 1)}


_LEFT = _armed(os.environ.get(KILL_AT, ""))
"""The armed step and how many more times it may be reached, the fatal one included."""


def crash_point(step: str) -> None:
    """SIGKILL this process here if the environment names `step` and this is its time."""
    if step in _LEFT:
        _LEFT[step] -= 1
        if _LEFT[step] == 0:
            os.kill(os.getpid(), signal.SIGKILL)


def group_limit() -> int | None:
    """The most finished episodes the writer may keep as one group (`LeagueStore.keep_all`)
    with a `replay` or `store` kill armed, so that it still finds exactly the episodes its
    count says stored: a group ends with the fatal `store`, and the fatal `replay` begins
    one (the episodes before it stored, none after). None when neither is armed."""
    if "store" in _LEFT:
        return _LEFT["store"]
    if "replay" in _LEFT:
        return max(_LEFT["replay"] - 1, 1)
    return None
