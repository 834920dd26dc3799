"""`arena verify RUN` checks everything a run folder claims and reports every problem."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.cli.verify import audit_folder
from arena.league.store import LeagueStore
from arena.record.audit import audit_run
from arena.record.ledger import LEDGER, read_lines

CONFIG = """\
[run]
name = "audit"
seed = 8
games = ["connect-four", "backgammon"]
matches = 1
concurrency = 4
[deadlines]
first_reply_s = 1
retry_s = 0.5
decision_s = 1.5
[policies.tactician]
kind = "scripted"
[policies.mock]
kind = "mock"
faults = { illegal = 0.2 }
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    config = folder / "audit.toml"
    config.write_text(CONFIG)
    assert main(["run", str(config), "--out", str(folder / "run"), "--no-progress"]) == 0
    return folder / "run"


@pytest.fixture
def run(played: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(played, copy)
    return copy


def _board_replay(run: Path) -> Path:
    return next(p for p in sorted((run / "replays").glob("connect-four*.json")))


def _edit(path: Path, change: Callable[[dict[str, object]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _first_attempt(data: dict[str, object]) -> dict[str, object]:
    plies = data["games"][0]["plies"]  # type: ignore[index]
    mock = next(d for p in plies for d in p["decisions"] if d["attempts"])
    return mock["attempts"][0]  # type: ignore[no-any-return]


def test_an_untouched_run_passes_with_its_digest(
    played: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = audit_folder(played)
    assert (audit.replays, audit.good, audit.problems) == (3, 3, [])  # 2 board games, 1 card
    assert main(["verify", str(played), "--expect", audit.digest]) == 0
    assert f"run digest: {audit.digest} (as expected)" in capsys.readouterr().out
    assert main(["verify", str(played), "--expect", "0" * 64]) == 1


def _prompt(data: dict[str, object]) -> None:
    attempt = _first_attempt(data)
    attempt["prompt"] = str(attempt["prompt"]).replace("GAME", "GAMES", 1)


def _reply(data: dict[str, object]) -> None:
    attempt = _first_attempt(data)
    attempt["reply"] = str(attempt["reply"]) + " "


def _say(data: dict[str, object]) -> None:
    plies = data["games"][0]["plies"]  # type: ignore[index]
    next(d for p in plies for d in p["decisions"] if d["attempts"])["say"] = "edited"


@pytest.mark.parametrize(
    ("change", "found"),
    [(_prompt, "prompt differs from its recorded hash"), (_reply, "digest"), (_say, "digest")],
)
def test_an_edited_prompt_reply_or_say_is_caught(
    run: Path, change: Callable[[dict[str, object]], None], found: str
) -> None:
    _edit(_board_replay(run), change)
    audit = audit_folder(run)
    assert audit.bad == 1
    assert any(found in p for p in audit.problems), audit.problems


def test_every_problem_is_reported_not_only_the_first(run: Path) -> None:
    replays = sorted((run / "replays").glob("connect-four*.json"))
    for path in replays:
        _edit(path, _say)
    audit = audit_folder(run)
    assert (audit.good, audit.bad) == (1, 2)
    assert len(audit.problems) == 2


def test_a_deleted_replay_and_an_edited_score_are_caught(run: Path) -> None:
    _board_replay(run).unlink()
    with closing(sqlite3.connect(run / "league.db")) as db, db:
        db.execute(
            "UPDATE games SET scores = '[0, 0]' WHERE episode LIKE 'backgammon%' AND game_index = 1"
        )
    problems = audit_folder(run).problems
    assert any("is stored, its replay is missing" in p for p in problems), problems
    assert any("league store's results" in p for p in problems), problems


def test_two_matches_stored_at_one_position_are_caught_naming_both(run: Path) -> None:
    """What a resume that counted the positions anew would leave: two matches at one index."""
    with closing(LeagueStore.open_readonly(run)) as store:
        rows = store.episode_rows()
    board = next(r for r in rows if str(r["id"]).startswith("connect-four"))
    other = next(r for r in rows if r["match_id"] != board["match_id"])
    with closing(sqlite3.connect(run / "league.db")) as db, db:
        for table, key in (("episodes", "id"), ("games", "episode")):
            db.execute(
                f"UPDATE {table} SET match_index = ? WHERE {key} = ?",
                (board["match_index"], other["id"]),
            )
    problems = [p for p in audit_folder(run).problems if "one position" in p]
    assert len(problems) == 2, problems  # the other match's two games, each met by one
    assert problems[0] == (
        f"{run / 'league.db'}: episodes {' and '.join(sorted([board['id'], other['id']]))} "
        f"are different matches ({', '.join(sorted([board['match_id'], other['match_id']]))}) "
        f"stored at one position, match {board['match_index']} game 1: "
        "the standings would read them as one match"
    )
    assert f"match {board['match_index']} game 2:" in problems[1]


def test_a_missing_store_is_one_problem_that_names_the_fix(run: Path) -> None:
    for name in ("league.db", "league.db-wal", "league.db-shm"):
        (run / name).unlink(missing_ok=True)
    audit = audit_folder(run)
    assert audit.problems == [
        f"{run / 'league.db'} is missing: `arena rebuild {run}` re-creates it from the replays"
    ]
    assert audit.good == audit.replays == 3


class _Claims:
    """A store's claims with one episode more than the folder holds."""

    def __init__(self, store: LeagueStore) -> None:
        self.rows = [*store.episode_rows(), {"id": "ghost", "match_index": 9, "digest": None}]
        self.results = store.stored_results()

    def episode_rows(self) -> list[dict[str, Any]]:
        return self.rows

    def stored_results(self) -> dict[str, dict[int, tuple[object, ...]]]:
        return self.results


def test_the_audit_reads_the_store_only_through_what_it_is_handed(played: Path) -> None:
    with closing(LeagueStore.open_readonly(played)) as store:
        claims = _Claims(store)
    audit = audit_run(played, played / "league.db", claims)
    assert audit.problems == [
        f"{played / 'league.db'}: episode ghost is stored, its replay is missing"
    ]
    assert audit.digest == audit_folder(played).digest


def test_a_deleted_ledger_or_an_altered_seed_is_caught(run: Path) -> None:
    events = read_lines(run / LEDGER)
    (run / LEDGER).unlink()
    assert any("is missing" in p for p in audit_folder(run).problems)
    reveal = next(e for e in events if e["event"] == "reveal")
    reveal["seed"] = "f" * 64
    (run / LEDGER).write_text("".join(json.dumps(e) + "\n" for e in events))
    problems = audit_folder(run).problems
    assert any("does not match its commitment" in p for p in problems), problems


def test_an_edited_replay_rewritten_in_the_store_too_is_told_by_the_published_digest(
    run: Path,
) -> None:
    published = audit_folder(run).digest
    path = _board_replay(run)
    _edit(path, _say)
    # Someone who can write both rewrites the store's digest to match the edited file...
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with closing(sqlite3.connect(run / "league.db")) as db, db:
        db.execute("UPDATE episodes SET digest = ? WHERE id = ?", (digest, path.stem))
    audit = audit_folder(run)
    assert audit.problems == []  # ...the folder agrees with itself
    assert audit.digest != published  # but not with what was published


def test_rebuild_recreates_the_store_and_the_report_is_identical(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run), "--format", "json"]) == 0
    before = capsys.readouterr().out
    (run / "league.db").unlink()
    assert main(["report", str(run)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["rebuild", str(run)]) == 0
    said = capsys.readouterr().out
    assert "re-created from 3 replay(s)" in said
    assert "recomputed from the replays as they now are" in said
    assert main(["report", str(run), "--format", "json"]) == 0
    assert capsys.readouterr().out == before
    assert audit_folder(run).problems == []


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_store_names_the_file_and_the_fix(
    run: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = run / "league.db"
    for name in ("league.db-wal", "league.db-shm"):
        (run / name).unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3] if damage == "truncated" else b"\x00garbage" * 512)
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{db} is damaged" in err or "cannot be read" in err
    assert f"arena rebuild {run}" in err or "arena rebuild RUN" in err
    assert "Traceback" not in err


def test_an_undecodable_config_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "binary.toml"
    config.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    assert main(["run", str(config)]) == 2
    assert f"{config} is not UTF-8 text" in capsys.readouterr().err


def _failed_attempts(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        a
        for g in data["games"]
        for p in g["plies"]
        for d in p["decisions"]
        for a in d["attempts"]
        if a["cause"] is not None
    ]


def _made_up_cause(data: dict[str, Any]) -> None:
    _failed_attempts(data)[0]["cause"] = "gremlins"


def test_a_made_up_cause_fails_verify_naming_it_for_the_folder_and_the_file(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = next(
        p for p in sorted((run / "replays").glob("*.json")) if "unreadable" in p.read_text()
    )
    _edit(path, _made_up_cause)
    audit = audit_folder(run)
    assert audit.bad == 1
    assert any("gremlins" in p and path.name in p for p in audit.problems), audit.problems
    assert main(["verify", str(run)]) == 1
    assert "gremlins" in capsys.readouterr().err
    assert main(["verify", str(path)]) == 1
    said = capsys.readouterr()
    assert "gremlins" in said.out + said.err
    assert "Traceback" not in said.out + said.err
