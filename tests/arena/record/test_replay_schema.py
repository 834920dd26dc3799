"""Replays of every earlier schema stay readable: a field added later has a default, and a
field at its default is not written, so a replay that has nothing to say in it reads as
before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anyio import run

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.record.replay import Replay, load_replay, results_digest

CONFIG = {
    "run": {"name": "schema", "seed": 3, "games": ["connect-four"], "matches": 1},
    "policies": {"a": {"kind": "scripted"}, "b": {"kind": "scripted", "baseline": "random"}},
}


@pytest.fixture(scope="module")
def replay_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("schema")
    run(execute, plan_run(parse_config(CONFIG), out))
    return next((out / "replays").glob("*.json")).read_text()


def test_a_replay_says_its_session_and_its_seats_fingerprints(replay_text: str) -> None:
    data = json.loads(replay_text)
    assert data["session"] == 1
    assert sorted(data["spectator"]["fingerprints"]) == ["a", "b"]


def test_a_replay_from_before_sessions_and_fingerprints_reads_and_writes_as_it_was(
    replay_text: str, tmp_path: Path
) -> None:
    old = json.loads(replay_text)
    del old["session"]
    del old["spectator"]["fingerprints"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    replay = load_replay(path)
    assert replay.session == 0
    assert replay.spectator.fingerprints == {}
    again = json.loads(replay.model_dump_json())
    assert "session" not in again
    assert "fingerprints" not in again["spectator"]
    assert again == old


def test_the_session_is_not_part_of_the_results_digest(replay_text: str) -> None:
    later = json.loads(replay_text) | {"session": 7}
    assert results_digest(json.dumps(later)) == results_digest(replay_text)
    assert Replay.model_validate(later).session == 7
