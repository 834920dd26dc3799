"""A run cut short says so everywhere: `verify`, `report`, the league page and its A/B
sentences; a store of other replays is refused by `report`; a run stopped before its first
game verifies; a file in replays/ that is not a replay is named, never a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from arena.cli import main
from arena.league.summary import foreign_store, run_status
from arena.viewer.league import league_data
from tests.arena.league.runs import PLANNED, copy_run, cut_short, play

KILLED = "played 5 of at most 12; the last session did not finish: run the same command to resume"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("status"))


@pytest.fixture
def run(played: Path, tmp_path: Path) -> Path:
    return copy_run(played, tmp_path / "copy")


def test_a_whole_run_is_not_partial(played: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = run_status(played)
    assert (status.played, status.planned, status.died, status.partial) == (
        PLANNED, PLANNED, False, False,
    )  # fmt: skip
    assert main(["verify", str(played)]) == 0
    assert "did not finish" not in capsys.readouterr().out
    assert main(["report", str(played)]) == 0
    out, err = capsys.readouterr()
    assert "partial" not in out + err
    assert league_data(played, {}, set())[0]["partial"] is None


def test_a_killed_run_is_partial_in_verify_report_the_page_and_its_ab_sentence(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut_short(run, keep=5)  # kill -9 at 5 of 12: the session row left open
    assert run_status(run).sentence() == KILLED
    assert main(["verify", str(run)]) == 0  # what was played verifies
    assert KILLED in capsys.readouterr().out
    assert main(["report", str(run)]) == 0
    out, err = capsys.readouterr()
    assert f"arena report: {run}: a partial run: {KILLED}" in err
    assert f"A partial run: {KILLED}." in " ".join(out.split())  # the A/B sentence
    assert main(["report", str(run), "--format", "json"]) == 0
    json.loads(capsys.readouterr().out)  # the JSON stays whole: the sentence is on stderr
    data, _ = league_data(run, {}, set())
    assert data["partial"] == KILLED
    assert all(ab["sentence"].endswith(f"A partial run: {KILLED}.") for ab in data["ab"])
    assert data["ab"]


def test_a_stopped_session_reads_as_the_killed_one_does(run: Path) -> None:
    cut_short(run, keep=5)
    with closing(sqlite3.connect(run / "league.db")) as db, db:
        db.execute("UPDATE sessions SET ended = started")
    assert run_status(run).sentence() is None  # ended, and summary.json says nothing
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps(summary | {"interrupted": True}))
    assert run_status(run).sentence() == KILLED.replace(
        "did not finish", "was stopped before the schedule's end"
    )


def test_a_report_on_a_store_of_other_replays_refuses_to_print_its_standings(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = play(tmp_path / "other")  # the same config and seed: the same episode ids
    capsys.readouterr()
    shutil.copy(other / "league.db", run / "league.db")
    said = foreign_store(run)
    assert said is not None
    assert said.startswith(f"{run / 'league.db'} does not belong to the replays in ")
    assert main(["report", str(run)]) == 2
    out, err = capsys.readouterr()
    assert "does not belong to the replays" in err
    assert f"`arena rebuild {run}` re-creates it" in err
    assert "tactician" not in out  # no standings
    for replay in (run / "replays").glob("*.json"):
        replay.rename(replay.with_name("x" + replay.name))
    assert "none of its 12 episode(s) has a replay there" in str(foreign_store(run))
    config = json.loads((run / "config.resolved.json").read_text())
    config["run"]["seed"] = 99
    (run / "config.resolved.json").write_text(json.dumps(config))
    assert "belongs to another run: run 'cut', seed 7, while" in str(foreign_store(run))


def test_one_edited_replay_is_verify_s_not_a_foreign_store(run: Path) -> None:
    path = sorted((run / "replays").glob("*.json"))[0]
    data = json.loads(path.read_text())
    data["games"][0]["wall_s"] = 123.0
    path.write_text(json.dumps(data))
    assert foreign_store(run) is None


def test_verify_of_a_run_stopped_before_its_first_game(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a misconfigured endpoint leaves (exit 3 before any game): no replays/ folder."""
    cut_short(run, keep=0)
    with closing(sqlite3.connect(run / "league.db")) as db, db:
        db.execute("UPDATE sessions SET ended = started")
    shutil.rmtree(run / "replays")
    assert main(["verify", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"arena verify: {run}: 0 replays; the run stopped before its first game (see "
        f"{run / 'events.jsonl'}); 0 problem(s)"
    )
    # A store that claims a game the folder has no replay of is a problem all the same.
    with closing(sqlite3.connect(run / "league.db")) as db, db:
        db.execute(
            "INSERT INTO episodes (id, match_index, match_id, entry, game, k, seed, first, "
            "second, replay, integrity, finished) VALUES ('ghost', 0, 'm', 'connect-four', "
            "'connect-four', 1, 1, 'plain', 'mine', 'r', '{}', 0)"
        )
    assert main(["verify", str(run)]) == 1
    assert "episode ghost is stored, its replay is missing" in capsys.readouterr().err


def _not_object(path: Path) -> None:
    path.write_text("[1, 2, 3]")


def _deep(path: Path) -> None:
    path.write_text("[" * 200_000 + "]" * 200_000)


def _not_utf8(path: Path) -> None:
    path.write_bytes(b"\xff\xfe{}")


def _wrong_fields(path: Path) -> None:
    path.write_text(json.dumps({"schema_version": 1, "games": "none"}))


@pytest.mark.parametrize(
    ("write", "why"),
    [
        (_not_object, "a JSON list, not the JSON object a replay is"),
        (_deep, "its JSON nests deeper than a replay may (64 levels)"),
        (_not_utf8, "not UTF-8 text"),
        (_wrong_fields, "not a replay of this arena"),
    ],
)
def test_verify_and_view_name_a_file_that_is_not_a_replay_and_go_on(
    run: Path, write: Callable[[Path], None], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = run / "replays" / "aa-bad.json"
    write(bad)
    assert main(["verify", str(run)]) == 1
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1  # one problem line
    assert lines[0].startswith(f"  {bad}: cannot be read as a replay: ")
    assert why in lines[0]
    assert f"{PLANNED + 1} replay(s), {PLANNED} good, 1 bad; 1 problem(s)" in out
    assert main(["verify", str(bad)]) == 1
    assert why in capsys.readouterr().err
    assert main(["view", str(run)]) == 0
    out, err = capsys.readouterr()
    assert f"arena view: warning: {bad} cannot be read as a replay: " in err
    assert why in err
    assert "Traceback" not in err
    assert (run / "view" / "index.html").exists()
