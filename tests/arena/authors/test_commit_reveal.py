"""A program is committed to before it plays and revealed when it retires; verify checks both."""

from __future__ import annotations

import hashlib
import json
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena.authors import write_programs
from arena.cli.verify import audit_folder
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.store import DB_NAME, LeagueStore
from arena.programs.reveal import replay_revealed
from arena.record.ledger import LEDGER, numbered, read_current, source_copy
from arena.record.replay import load_replay
from arena.redact import Redactor

pytestmark = pytest.mark.anyio


def _config(program: Path, *, retired: bool = False) -> dict[str, Any]:
    return {
        "run": {"name": "reveal", "seed": 4, "games": ["connect-four"], "pool": True,
                "matches": 2, "placement_matches": 2},
        "policies": {
            "writer": {"kind": "mock"},
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "prog": {"kind": "program", "path": str(program), "retired": retired},
        },
    }  # fmt: skip


@pytest.fixture
async def pool(tmp_path: Path) -> Path:
    """A pool whose program `prog` was written by the mock `writer`: one session played."""
    authored = tmp_path / "authored"
    config = parse_config(_config(authored / "writer-connect-four.py"))
    (result,) = await write_programs(
        config, "connect-four", ["writer"], authored, redactor=Redactor()
    )
    assert result.verdict == "passed"
    out = tmp_path / "run"
    played = await execute(
        plan_run(parse_config(_config(authored / "writer-connect-four.py")), out)
    )
    assert not played.failed
    return out


def _program_games(out: Path) -> list[tuple[Any, dict[str, Any]]]:
    found = []
    for path in sorted((out / "replays").glob("*.json")):
        replay = load_replay(path)
        for record in replay.games:
            for seat, block in record.programs.items():
                found.append(
                    (
                        replay,
                        block | {"policy": replay.spectator.policies[str(record.index)][int(seat)]},
                    )
                )
    return found


async def test_every_game_of_a_program_names_the_commit_it_played_under(pool: Path) -> None:
    ledger = dict(numbered(pool))
    games = _program_games(pool)
    assert games
    with closing(LeagueStore.open_readonly(pool)) as store:
        finished = {row["id"]: row["finished"] for row in store.episode_rows()}
    for replay, block in games:
        commit = ledger[block["commit"]]
        assert commit["event"] == "program_registered"
        assert (commit["policy"], commit["sha256"]) == ("prog", block["sha256"])
        assert commit["time"] < finished[replay.episode]
    assert source_copy(pool, games[0][1]["sha256"]).stat().st_mode & 0o777 == 0o600
    assert audit_folder(pool).problems == []
    assert not [e for e in read_current(pool) if e["event"] == "program_reveal"]


async def test_a_retired_program_is_revealed_and_its_games_play_again_from_the_source(
    pool: Path, tmp_path: Path
) -> None:
    program = tmp_path / "authored" / "writer-connect-four.py"
    committed = program.read_text()
    program.write_text(committed + "\n# edited after it was committed\n")  # no effect: the copy
    await execute(plan_run(parse_config(_config(program, retired=True)), pool))
    reveals = [e for e in read_current(pool) if e["event"] == "program_reveal"]
    assert [(e["policy"], e["source"]) for e in reveals] == [("prog", committed)]
    assert audit_folder(pool).problems == []
    replays = [(p, load_replay(p)) for p in sorted((pool / "replays").glob("*.json"))]
    sources = {(e["policy"], e["sha256"]): e["source"] for e in reveals}
    found = await replay_revealed(replays, sources)
    assert found.games == len(_program_games(pool))
    assert found.moves > found.games
    assert found.problems == []
    # A source that plays otherwise than the games recorded is caught move by move.
    other = committed.replace("WEIGHT = ", "WEIGHT = 100 * ")
    forged = {(p, hashlib.sha256(other.encode()).hexdigest()): other for (p, _) in sources}
    relabelled = [(path, r) for path, r in replays]
    for _, replay in relabelled:
        for record in replay.games:
            for block in record.programs.values():
                block["sha256"] = next(iter(forged))[1]
    assert (await replay_revealed(relabelled, forged)).problems


def _rewrite_ledger(out: Path, change: Any) -> None:
    lines = (out / LEDGER).read_text().splitlines()
    events = [json.loads(line) for line in lines]
    (out / LEDGER).write_text("".join(json.dumps(change(e)) + "\n" for e in events))


async def test_an_edited_reveal_or_a_commit_after_the_game_is_caught(
    pool: Path, tmp_path: Path
) -> None:
    program = tmp_path / "authored" / "writer-connect-four.py"
    await execute(plan_run(parse_config(_config(program, retired=True)), pool))

    def edit_source(e: dict[str, Any]) -> dict[str, Any]:
        return e | {"source": e["source"] + "\n"} if e["event"] == "program_reveal" else e

    _rewrite_ledger(pool, edit_source)
    assert any("source revealed for 'prog'" in p for p in audit_folder(pool).problems)

    def late_commit(e: dict[str, Any]) -> dict[str, Any]:
        return e | {"time": e["time"] + 10**6} if e["event"] == "program_registered" else e

    _rewrite_ledger(pool, late_commit)
    assert any("came after the game was stored" in p for p in audit_folder(pool).problems)
    assert (pool / DB_NAME).exists()


async def test_the_pool_page_shows_a_revealed_source_and_no_other(
    pool: Path, tmp_path: Path
) -> None:
    from arena.viewer.league import league_data

    program = tmp_path / "authored" / "writer-connect-four.py"
    data, _ = league_data(pool, {}, {})
    assert all(e["source"] is None for e in data["pool"]["entrants"])  # active: never shown
    await execute(plan_run(parse_config(_config(program, retired=True)), pool))
    data, _ = league_data(pool, {}, {})
    shown = {e["name"]: e["source"] for e in data["pool"]["entrants"]}
    assert shown == {"writer": None, "tactician": None, "prog": program.read_text()}


async def test_the_authors_report_puts_a_model_beside_its_program(
    pool: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main

    assert main(["report", str(pool), "--what", "authors", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["author"], row["player"], row["program"]) == ("writer", "writer", "prog")
    summary = json.loads((pool / "summary.json").read_text())
    assert row["program_bt_rating"] == summary["ratings"]["bt"]["prog"]["rating"]
    # A model and its own program are same-author: their games are played, not rated.
    games = [g for g in summary["games"] if set(g["policies"]) == {"writer", "prog"}]
    assert games
    assert all(g["same_author"] for g in games)
