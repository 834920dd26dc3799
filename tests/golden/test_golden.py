"""The shipped configs give the replays recorded in `digests.json` (see `tests.golden`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.golden import DIGESTS, play_all


def test_every_config_gives_the_recorded_replays(tmp_path: Path) -> None:
    expected = json.loads(DIGESTS.read_text(encoding="utf-8"))
    played = play_all(tmp_path)
    assert sorted(played) == sorted(expected)
    for name, digests in played.items():
        assert sorted(digests) == sorted(expected[name]), f"{name}: other episodes were played"
        changed = [e for e, d in digests.items() if d != expected[name][e]]
        assert not changed, (
            f"{name}: {len(changed)} of {len(digests)} replays changed, e.g. {changed[:3]}; "
            "if on purpose, run `python -m tests.golden` and say so in the commit"
        )
