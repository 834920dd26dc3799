"""Replays recorded before a change of the reply readers read the same after it."""

from __future__ import annotations

import tarfile
from pathlib import Path

from arena.play.rescore import rescore_run

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "rescore-before-decoding"


def test_the_quickstart_replays_of_before_decoding_rescore_unchanged(tmp_path: Path) -> None:
    with tarfile.open(FIXTURE / "quickstart.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    rescored = rescore_run(tmp_path)
    assert rescored.replays == 48
    totals = rescored.totals()
    changed = {kind: n for kind, n in totals.items() if kind != "unchanged" and n}
    assert changed == {}
    assert totals["unchanged"] > 1000
    assert all(game.stopped is None for game in rescored.games)
