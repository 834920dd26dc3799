"""A program is committed to before it plays and revealed when it retires; verify checks both."""

from __future__ import annotations

import hashlib
import json
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
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


async def test_a_withheld_reveal_is_a_problem_for_verify_and_verify_programs(
    pool: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main

    program = tmp_path / "authored" / "writer-connect-four.py"
    await execute(plan_run(parse_config(_config(program, retired=True)), pool))
    assert audit_folder(pool).problems == []
    lines = (pool / LEDGER).read_text().splitlines(keepends=True)
    (pool / LEDGER).write_text("".join(x for x in lines if '"program_reveal"' not in x))
    retired_at = next(
        n for n, e in numbered(pool) if e["event"] == "entrant_retired" and e["policy"] == "prog"
    )
    withheld = [p for p in audit_folder(pool).problems if "withheld" in p]
    assert len(withheld) == 1
    assert withheld[0].startswith(f"ledger: 'prog' is retired at line {retired_at}, but no ")
    for flags in ([], ["--programs"]):
        assert await anyio.to_thread.run_sync(main, ["verify", str(pool), *flags]) == 1
        assert "its source is withheld" in capsys.readouterr().err
    # The store's word is enough: without the ledger's retirement line the reveal is owed too.
    kept = (pool / LEDGER).read_text().splitlines(keepends=True)
    (pool / LEDGER).write_text("".join(x for x in kept if '"entrant_retired"' not in x))
    assert any("'prog' is retired in the store" in p for p in audit_folder(pool).problems)


def _toml(config: dict[str, Any]) -> str:
    """The few shapes `_config` uses, as TOML."""
    out = []
    for table, body in (
        ("run", config["run"]),
        *((f"policies.{n}", p) for n, p in config["policies"].items()),
    ):
        out.append(f"[{table}]")
        out += [f"{key} = {json.dumps(value)}" for key, value in body.items()]
    return "\n".join(out) + "\n"


async def test_a_changed_private_copy_stops_the_session_before_its_reveal(
    pool: Path, tmp_path: Path
) -> None:
    async def run() -> tuple[int, str]:  # `arena run` as a user runs it (it owns its signals)
        done = await anyio.run_process(
            [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(pool),
             "--no-progress"], check=False,
        )  # fmt: skip
        return done.returncode, done.stderr.decode()

    program = tmp_path / "authored" / "writer-connect-four.py"
    config = tmp_path / "retire.toml"
    config.write_text(_toml(_config(program, retired=True)))
    sha = next(e["sha256"] for e in read_current(pool) if e["event"] == "program_registered")
    copy = source_copy(pool, sha)
    committed = copy.read_bytes()
    copy.write_bytes(committed.replace(b"WEIGHT = ", b"WEIGHT = 100 * "))
    ledger = (pool / LEDGER).read_bytes()
    code, err = await run()
    assert code == 3
    assert f"its private copy {copy} has SHA-256" in err
    assert f"not the {sha[:12]} it committed to" in err
    assert "run the same command to resume" in err
    assert "Traceback" not in err
    assert not [e for e in read_current(pool) if e["event"] == "program_reveal"]
    assert (pool / LEDGER).read_bytes().startswith(ledger)  # nothing published
    copy.unlink()  # a copy gone is refused the same way
    code, err = await run()
    assert (code, "cannot be read" in err) == (3, True)
    copy.write_bytes(committed)  # restored: the same command resumes and reveals
    copy.chmod(0o600)
    assert (await run())[0] == 0
    reveals = [e for e in read_current(pool) if e["event"] == "program_reveal"]
    assert [(e["policy"], e["source"]) for e in reveals] == [("prog", committed.decode())]
    assert audit_folder(pool).problems == []
