"""A replay keeps a bounded part of a huge reply: its two ends, its length and its SHA-256,
and the move read from the whole; `arena verify` re-derives every move all the same."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from arena.cli.verify import audit_folder
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.replay import REPLY_END, REPLY_KEPT, kept_reply
from tests.chaos.hostile import hostile_process

pytestmark = pytest.mark.anyio


def test_a_short_reply_is_kept_whole_and_a_long_one_by_its_ends() -> None:
    assert kept_reply("d") == ("d", None, None)
    edge = "x" * REPLY_KEPT
    assert kept_reply(edge) == (edge, None, None)
    long = "a" * REPLY_END + "middle" * 5000 + "b" * REPLY_END
    kept, chars, whole = kept_reply(long)
    assert kept.startswith("a" * REPLY_END)
    assert kept.endswith("b" * REPLY_END)
    assert "characters of the reply left out" in kept
    assert len(kept) < REPLY_KEPT
    assert chars == len(long)
    assert whole == hashlib.sha256(long.encode()).hexdigest()


@pytest.mark.slow
async def test_a_game_of_megabyte_replies_leaves_a_replay_under_200_kb(tmp_path: Path) -> None:
    async with hostile_process() as url:
        config = parse_config({
            "run": {"name": "padded", "seed": 4, "games": ["connect-four"], "matches": 1},
            "deadlines": {"first_reply_s": 20, "retry_s": 10, "decision_s": 30},
            "policies": {
                "tactician": {"kind": "scripted", "baseline": "tactician"},
                "model": {"kind": "llm", "provider": "openai", "model": "m",
                          "base_url": f"{url}/padded/v1"},
            },
        }, keys=False)  # fmt: skip
        out = tmp_path / "run"
        result = await execute(plan_run(config, out), check_endpoints=False)
    assert not result.failed
    replays = sorted((out / "replays").glob("*.json"))
    assert replays
    for path in replays:
        assert path.stat().st_size < 200_000, f"{path.name}: {path.stat().st_size:,} bytes"
        data = json.loads(path.read_text())
        attempts = [
            a
            for ply in data["games"][0]["plies"]
            for d in ply["decisions"]
            for a in d["attempts"]
            if a.get("reply") is not None
        ]
        assert attempts
        for a in attempts:  # every reply was a megabyte, and every one played its move
            assert a["reply_chars"] > 1_000_000
            assert len(a["reply_sha256"]) == 64
            assert a["cause"] is None
    assert audit_folder(out).problems == []
