"""A small league of mock seats, played once per test module and copied for each test."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from arena.cli import main

CONFIG = """\
[run]
name = "cut"
seed = 7
games = ["connect-four"]
matches = 2
concurrency = 2
[deadlines]
first_reply_s = 1
retry_s = 0.5
decision_s = 1.5
[policies.plain]
kind = "mock"
[policies.mine]
kind = "mock"
prompt = { board = "./mine.md" }
[policies.tactician]
kind = "scripted"
"""
"""`plain` and `mine` differ in their prompt only: an A/B pair. 3 pairs x 2 matches x 2
games: 12 episodes."""

PLANNED = 12


def play(folder: Path, name: str = "run") -> Path:
    """The league played in `folder/name` (its config and template beside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    template = folder / "mine.md"
    if not template.exists():
        default = Path(__file__).resolve().parents[3] / "prompts" / "board" / "default.md"
        template.write_text(default.read_text() + "\nThink twice.\n")
    (folder / "cut.toml").write_text(CONFIG)
    out = folder / name
    assert main(["run", str(folder / "cut.toml"), "--out", str(out), "--no-progress"]) == 0
    return out


def copy_run(played: Path, into: Path) -> Path:
    """A copy of the played folder (config and template beside it, as they were)."""
    shutil.copytree(played.parent, into, dirs_exist_ok=True)
    return into / played.name


def cut_short(out: Path, keep: int) -> None:
    """What `kill -9` leaves: the last `PLANNED - keep` episodes never played (neither
    replay nor row) and the session never ended."""
    with closing(sqlite3.connect(out / "league.db")) as db, db:
        gone = [row[0] for row in db.execute("SELECT id FROM episodes ORDER BY match_index, id")][
            keep:
        ]
        for episode in gone:
            for table, key in (("fallbacks", "episode"), ("games", "episode"), ("episodes", "id")):
                db.execute(f"DELETE FROM {table} WHERE {key} = ?", (episode,))
            (out / "replays" / f"{episode}.json").unlink()
        db.execute("UPDATE sessions SET ended = NULL")
