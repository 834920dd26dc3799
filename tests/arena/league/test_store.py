"""The league store: the episodes a resume plays again, and stores written by older versions."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.store import DB_NAME, LeagueStore
from arena.record.validity import INFRASTRUCTURE_NC

pytestmark = pytest.mark.anyio


async def _run(out: Path) -> None:
    config = {
        "run": {"name": "store", "seed": 5, "games": ["connect-four"], "matches": 2},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "faulty": {"kind": "mock", "faults": {"unreadable": 0.3, "illegal": 0.2}},
        },
    }
    result = await execute(plan_run(parse_config(config), out))
    assert not result.failed
    assert result.fallbacks > 0


async def test_spoiled_episodes_are_the_infrastructure_no_contests(tmp_path: Path) -> None:
    await _run(tmp_path)
    store = LeagueStore.open_for_run(tmp_path)
    try:
        assert store.spoiled_episodes() == set()
        episodes = sorted(store.finished_episodes())
        with sqlite3.connect(tmp_path / DB_NAME) as db:
            db.execute(
                "UPDATE games SET ending = 'no-contest', detail = ? WHERE episode = ?",
                (f"{INFRASTRUCTURE_NC}3 of the 9 decisions ...", episodes[0]),
            )
            db.execute(  # a no-contest for another reason is not played again
                "UPDATE games SET ending = 'no-contest', detail = 'withdrawn' WHERE episode = ?",
                (episodes[1],),
            )
        assert store.spoiled_episodes() == {episodes[0]}
    finally:
        store.close()


async def test_a_store_from_before_sides_reads_and_is_brought_up_to_date(tmp_path: Path) -> None:
    await _run(tmp_path)
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("ALTER TABLE fallbacks DROP COLUMN side")
    store = LeagueStore.open_readonly(tmp_path)  # `arena report` on an old folder
    try:
        rows = list(store.fallback_rows())
    finally:
        store.close()
    assert rows
    assert {r["side"] for r in rows} == {None}
    assert {r["cause"] for r in rows} <= {"unreadable", "illegal"}
    store = LeagueStore.open_for_run(tmp_path)  # a resume adds the column
    try:
        assert len(list(store.fallback_rows())) == len(rows)
    finally:
        store.close()
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        assert "side" in {row[1] for row in db.execute("PRAGMA table_info(fallbacks)")}


async def test_a_config_stored_before_new_settings_resumes_unchanged(tmp_path: Path) -> None:
    await _run(tmp_path)
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        (stored,) = db.execute("SELECT config FROM run WHERE id = 1").fetchone()
        old = json.loads(stored)
        del old["run"]["max_infra_share"]  # a store written before the setting existed
        db.execute("UPDATE run SET config = ? WHERE id = 1", (json.dumps(old),))
    config = {
        "run": {"name": "store", "seed": 5, "games": ["connect-four"], "matches": 2},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "faulty": {"kind": "mock", "faults": {"unreadable": 0.3, "illegal": 0.2}},
        },
    }
    plan_run(parse_config(config), tmp_path)  # its default is no change
    config["run"]["max_infra_share"] = 0.5
    with pytest.raises(ConfigError, match=r"run.max_infra_share: 0.25 -> 0.5"):
        plan_run(parse_config(config), tmp_path)  # another value is


def test_a_resume_accepts_new_connection_settings_but_not_a_new_model() -> None:
    """How an endpoint is reached (TLS, client certificate, gateway headers, idle
    connections, the trust) never decides what it answers: a resume takes changes to it."""
    from arena.league.lineup import RESUME_ACCEPTS, config_changes

    old = {"run": {"trust": "certifi"}, "policies": {"m": {"model": "a", "ca_bundle": None}}}
    new = {
        "run": {"trust": "system"},
        "policies": {
            "m": {"model": "a", "ca_bundle": "/etc/ca.pem", "headers": {"x-tenant": "lab"}}
        },
    }
    assert config_changes(old, new, ignore=RESUME_ACCEPTS) == []
    moved = {**new, "policies": {"m": {**new["policies"]["m"], "model": "b"}}}
    assert config_changes(old, moved, ignore=RESUME_ACCEPTS) == ['policies.m.model: "a" -> "b"']


def _beside(out: Path) -> set[str]:
    return {p.name for p in out.iterdir() if p.name.startswith(DB_NAME)}


async def test_a_finished_run_leaves_one_database_file_that_readers_leave_alone(
    tmp_path: Path,
) -> None:
    await _run(tmp_path)
    assert _beside(tmp_path) == {DB_NAME}  # checkpointed and out of WAL mode
    assert not (tmp_path / ".lock").exists()  # an ended run leaves no lock behind
    for _ in range(2):  # readers, which cannot checkpoint, make no WAL files now
        reader = LeagueStore.open_readonly(tmp_path)
        episodes = reader.finished_episodes()
        reader.close()
        assert _beside(tmp_path) == {DB_NAME}
    assert len(episodes) == 4
    store = LeagueStore.open_for_run(tmp_path)  # a resume writes in WAL mode again
    assert (tmp_path / f"{DB_NAME}-wal").exists()
    store.close()
    assert _beside(tmp_path) == {DB_NAME}


async def test_a_writer_closing_while_a_reader_reads_keeps_the_wal_and_loses_nothing(
    tmp_path: Path,
) -> None:
    await _run(tmp_path)
    store = LeagueStore.open_for_run(tmp_path)
    reader = LeagueStore.open_readonly(tmp_path)
    assert len(reader.finished_episodes()) == 4
    store.close()  # the reader's connection refuses the change of journal mode
    assert len(reader.finished_episodes()) == 4
    reader.close()
    again = LeagueStore.open_for_run(tmp_path)
    assert len(again.finished_episodes()) == 4
    again.close()
    assert _beside(tmp_path) == {DB_NAME}


def test_an_ended_run_removes_its_lock_and_a_killed_ones_is_taken_over(tmp_path: Path) -> None:
    from arena.league.lock import LOCK_NAME, RunFolderBusy, hold_run_folder, holder_of

    with hold_run_folder(tmp_path):
        assert (tmp_path / LOCK_NAME).exists()
    assert not (tmp_path / LOCK_NAME).exists()
    (tmp_path / LOCK_NAME).write_text("4242")  # what a killed run leaves: a file nobody holds
    assert holder_of(tmp_path) is None
    with hold_run_folder(tmp_path):  # a resume takes it over
        pass
    assert not (tmp_path / LOCK_NAME).exists()
    # a second holder is refused while the first holds, with or without a file left
    with hold_run_folder(tmp_path):
        import subprocess
        import sys

        held = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from arena.league.lock import hold_run_folder\n"
                f"with hold_run_folder(__import__('pathlib').Path({str(tmp_path)!r})): pass",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert held.returncode != 0
        assert RunFolderBusy.__name__ in held.stderr
