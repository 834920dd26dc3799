"""The progress lines of a run without a terminal: what is in flight, and the fallbacks of
every session."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main

CONFIG = """
[run]
name = "progress"
seed = 3
games = ["connect-four"]
matches = 1
concurrency = 4
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.slow]
kind = "mock"
latency_ms = {latency}
faults = {{ unreadable = 0.5, illegal = 0.3 }}
"""

LINE = re.compile(r"progress: (\d+)/(\d+) episodes done, (\d+) in flight, (\d+) fallbacks")


def _lines(err: str) -> list[tuple[int, int, int, int]]:
    found = [LINE.search(x) for x in err.splitlines()]
    return [tuple(int(g) for g in m.groups()) for m in found if m]  # type: ignore[misc]


def _run(tmp_path: Path, latency: int) -> int:
    config = tmp_path / "run.toml"
    config.write_text(CONFIG.format(latency=latency))
    return main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"])


def test_a_line_comes_while_games_play_and_counts_them_in_flight_until_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.cli import console
    from arena.league import run

    monkeypatch.setattr(console.ProgressLines, "EVERY_S", 0.3)
    monkeypatch.setattr(console.ProgressLines, "TICK_S", 0.05)
    # Each store takes longer than a line's interval, so a line surely comes while an
    # episode is being stored (the moment a loaded machine once caught counted as neither).
    store = run._Session._store_durably

    def slow_store(self: Any, replay: Any) -> Any:
        time.sleep(0.4)
        return store(self, replay)

    monkeypatch.setattr(run._Session, "_store_durably", slow_store)
    assert _run(tmp_path, latency=60) == 0  # two episodes of ~20 slow decisions each
    lines = _lines(capsys.readouterr().err)
    assert lines[-1][:3] == (2, 2, 0)
    while_playing = [x for x in lines if x[0] < x[1]]
    assert while_playing, lines  # lines on the timer, between the episodes' ends
    assert all(done + flying <= total for done, total, flying, _ in while_playing), lines
    # Concurrency 4 takes both episodes as the run starts (how soon depends on the machine:
    # a line may come before). From then on each one not done is in flight, from its first
    # move until it is stored: no line counts one as neither, however late the store.
    taken = [
        i for i, (done, total, flying, _) in enumerate(while_playing) if done + flying == total
    ]
    assert taken, lines  # each game takes ~20 decisions of 60 ms: lines come meanwhile
    rest = while_playing[taken[0] :]
    assert all(done + flying == total for done, total, flying, _ in rest), lines


def test_after_a_resume_the_fallbacks_count_every_session_as_the_standings_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path, latency=0) == 0
    capsys.readouterr()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    stood = sum(sum(r["fallbacks"].values()) for r in summary["standings"]["overall"])
    assert stood > 0
    assert _run(tmp_path, latency=0) == 0  # a resume of the finished run: nothing to play
    err = capsys.readouterr().err
    assert _lines(err)[-1] == (2, 2, 0, stood)
    assert f"{stood} fallbacks (0 this session)" in err
