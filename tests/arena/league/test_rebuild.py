"""`arena rebuild RUN`: the store re-created from the replays and the ledger, completely, the
old one kept beside it; a file that is not a replay is refused by name."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import arena.record.replay
from arena.cli import main
from arena.cli.verify import audit_folder
from arena.config import ConfigError, load_config
from arena.league.plan import plan_run
from arena.league.rebuild import KEPT_PREFIX
from arena.league.summary import run_status
from arena.play.prompts import load_template
from tests.arena.league.runs import PLANNED, copy_run, cut_short, play


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("rebuild"))


@pytest.fixture
def run(played: Path, tmp_path: Path) -> Path:
    return copy_run(played, tmp_path / "copy")


def _rows(out: Path, query: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(f"file:{out / 'league.db'}?mode=ro", uri=True)) as db:
        return db.execute(query).fetchall()


def _refusal(out: Path) -> str:
    """Why the same command, run again on `out`, is refused (the folder's name left out)."""
    load_template.cache_clear()  # as a new process reads it
    with pytest.raises(ConfigError) as refused:
        plan_run(load_config(out.parent / "cut.toml"), out)
    return str(refused.value).replace(str(out), "RUN")


def test_a_rebuilt_run_refuses_an_edited_template_as_the_original_does(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut_short(run, keep=5)  # killed at 5 of 12 episodes
    original = copy_run(run, tmp_path / "original")
    for name in ("league.db", "league.db-wal", "league.db-shm"):
        (run / name).unlink(missing_ok=True)
    assert main(["rebuild", str(run)]) == 0
    assert "re-created from 5 replay(s)" in capsys.readouterr().out
    query = "SELECT name, kind, author, templates, fingerprint, played_as, added, retired FROM policies ORDER BY name"
    assert _rows(run, query) == _rows(original, query)
    assert json.loads(str(_rows(run, "SELECT templates FROM policies WHERE name = 'mine'")[0][0]))
    # Unedited, both resume, as the same session.
    assert plan_run(load_config(run.parent / "cut.toml"), run).session == 2
    assert plan_run(load_config(original.parent / "cut.toml"), original).session == 2
    for out in (run, original):
        with (out.parent / "mine.md").open("a") as template:
            template.write("Edited after the run began.\n")
    said = _refusal(run)
    assert said == _refusal(original)
    assert "./mine.md was edited" in said  # named by its file, with who reads it
    assert "even with --resume-anyway" in said
    assert main(["run", str(run.parent / "cut.toml"), "--out", str(run), "--resume-anyway"]) == 2
    assert "other prompt templates" in capsys.readouterr().err


def test_the_store_replaced_is_kept_beside_the_new_one(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = b"\x00not a store" * 300
    (run / "league.db").write_bytes(garbage)
    assert main(["rebuild", str(run)]) == 0
    (kept,) = run.glob(f"{KEPT_PREFIX}*")
    assert f"the store it replaced is kept as {kept}" in capsys.readouterr().out
    assert kept.read_bytes() == garbage
    assert audit_folder(run).problems == []
    assert not list(run.glob(".rebuild-*"))  # the building folder is gone


def test_a_session_that_died_is_still_unfinished_after_a_rebuild(run: Path) -> None:
    cut_short(run, keep=7)
    assert run_status(run).died
    assert main(["rebuild", str(run)]) == 0
    status = run_status(run)
    assert (status.died, status.played, status.planned) == (True, 7, PLANNED)
    assert _rows(run, "SELECT number FROM sessions") == [(1,)]


def _deep(path: Path) -> None:
    path.write_text("[" * 200_000 + "]" * 200_000)


def _list(path: Path) -> None:
    path.write_text("[1, 2, 3]")


def _large(path: Path) -> None:
    path.write_text(json.dumps({"schema_version": 1, "pad": "x" * 2_000_000}))


@pytest.mark.parametrize(
    ("write", "why"),
    [
        (_list, "a JSON list, not the JSON object a replay is"),
        (_deep, "its JSON nests deeper than a replay may"),
        (_large, "more than a replay may have (1,000,000)"),
    ],
)
def test_a_file_that_is_not_a_replay_is_refused_by_name_and_nothing_changes(
    run: Path,
    write: object,
    why: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arena.record.replay, "MAX_REPLAY_BYTES", 1_000_000)
    bad = run / "replays" / "zz-bad.json"
    write(bad)  # type: ignore[operator]
    store = (run / "league.db").read_bytes()
    assert main(["rebuild", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena: {bad} cannot be read as a replay (")
    assert why in err
    assert "move it out of replays/ to rebuild without it" in err
    assert "Traceback" not in err
    assert (run / "league.db").read_bytes() == store
    assert not list(run.glob(f"{KEPT_PREFIX}*"))
