"""One run per folder, and what --force-new starts afresh."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from arena.cli import main
from arena.record.ledger import read_current, read_lines
from tests.arena.league.test_resume import _arena, _config, _finished


@pytest.mark.slow  # starts `arena` in a subprocess
def test_a_second_run_on_a_folder_in_use_stops_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, latency=30)
    out = tmp_path / "out"
    first = _arena("run", str(config), "--out", str(out))
    try:
        deadline = time.monotonic() + 60
        while _finished(out) < 1:
            assert first.poll() is None, "the first run ended early"
            assert time.monotonic() < deadline, "the first run made no progress"
            time.sleep(0.02)
        started = time.monotonic()
        assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 2
        assert time.monotonic() - started < 10  # refused before any game, not after a league
        err = capsys.readouterr().err
        assert f"run folder {out} is in use by process {first.pid}" in err
        # Readers take no lock: a report reads the league while it is played.
        assert main(["report", str(out), "--format", "json"]) == 0
    finally:
        first.kill()
        first.wait()
    # The kernel dropped the killed run's lock: the folder resumes.
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0


def test_force_new_starts_events_and_pages_afresh_and_the_ledger_a_generation(
    tmp_path: Path,
) -> None:
    config = tmp_path / "bg.toml"
    config.write_text(
        '[run]\nname = "bg"\nseed = 3\ngames = ["backgammon"]\nmatches = 1\n'
        '[game.backgammon]\ndice = "derived"\n'
        '[policies.a]\nkind = "scripted"\n[policies.b]\nkind = "scripted"\n'
    )
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    assert main(["view", str(out)]) == 0
    first_events = (out / "events.jsonl").read_text().count("run_started")
    assert main(["run", str(config), "--out", str(out), "--no-progress", "--force-new"]) == 0
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert first_events == 1
    assert [e["event"] for e in events].count("run_started") == 1  # started afresh
    assert not (out / "view").exists()
    ledger = read_lines(out / "ledger.jsonl")
    assert [e for e in ledger if e["event"] == "generation"] == [
        {"event": "generation", "generation": 2, "time": ledger[2]["time"]}
    ]
    # The current generation is the new run's own: one commit and one reveal.
    assert [e["event"] for e in read_current(out)] == ["commit", "reveal"]
    assert main(["verify", str(out)]) == 0
