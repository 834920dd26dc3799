"""The garbage collector while a run plays: tuned for the run, then as it was."""

from __future__ import annotations

import gc
from pathlib import Path

import anyio

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.summary import RunResult
from arena.play.collector import THRESHOLDS, collector_tuned


def test_a_block_tunes_the_collector_and_gives_it_back_as_it_was() -> None:
    before = gc.get_threshold()
    assert before != THRESHOLDS
    with collector_tuned():
        assert gc.get_threshold() == THRESHOLDS
        assert gc.get_freeze_count() > 0  # what the run set up is out of the passes
        with collector_tuned():  # a second run in the same process
            pass
        assert gc.get_threshold() == THRESHOLDS  # the inner end leaves the outer's tuning
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_run_plays_with_the_collector_tuned(tmp_path: Path) -> None:
    config = parse_config(
        {
            "run": {"name": "gc", "seed": 3, "games": ["connect-four"], "matches": 2},
            "policies": {
                "a": {"kind": "scripted", "baseline": "random"},
                "b": {"kind": "scripted", "baseline": "random"},
            },
        }
    )
    seen: list[tuple[tuple[int, ...], int]] = []

    def watch(result: RunResult) -> None:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))

    before = gc.get_threshold()
    result = anyio.run(lambda: execute(plan_run(config, tmp_path / "run"), on_episode=watch))
    assert result.played == 4
    assert len(seen) >= result.played  # told at least once an episode
    assert all(t == THRESHOLDS and frozen > 0 for t, frozen in seen)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
