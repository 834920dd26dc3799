"""A crash point kills at the time its environment names: the first time, or the n-th."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.record.crash import KILL_AT

ROOT = Path(__file__).resolve().parents[3]
THRICE = """\
from arena.record.crash import crash_point
for n in (1, 2, 3):
    crash_point("store")
    print(n, flush=True)
"""


def _reach_store_thrice(kill_at: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, KILL_AT: kill_at}
    command = [sys.executable, "-c", THRICE]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    ("kill_at", "printed", "code"),
    [
        ("store@3", "1\n2\n", -9),  # killed at the third, before it printed
        ("store", "", -9),  # plain: the first time, as before counts existed
        ("store@1", "", -9),
        ("store@4", "1\n2\n3\n", 0),  # never reached a fourth time
        ("replay@1", "1\n2\n3\n", 0),  # another step is armed
    ],
)
def test_a_crash_point_kills_the_nth_time_it_is_reached(
    kill_at: str, printed: str, code: int
) -> None:
    done = _reach_store_thrice(kill_at)
    assert (done.stdout, done.returncode) == (printed, code), done.stderr


@pytest.mark.parametrize("kill_at", ["stroe", "store@0", "store@", "store@x", "@3"])
def test_a_kill_at_naming_no_crash_point_is_refused(kill_at: str) -> None:
    done = _reach_store_thrice(kill_at)
    assert done.returncode == 1
    assert f"{KILL_AT}={kill_at!r} names no crash point" in done.stderr
