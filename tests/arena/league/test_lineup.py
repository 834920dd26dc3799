"""A run folder keeps its policies and prompt templates: even `--resume-anyway` refuses others."""

from __future__ import annotations

import copy
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena.config import ConfigError, parse_config
from arena.league.lineup import LineupChanged
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.store import DB_NAME
from arena.play.prompts import load_template, prompts_dir

pytestmark = pytest.mark.anyio

CONFIG: dict[str, Any] = {
    "run": {"name": "lineup", "seed": 7, "games": ["connect-four"], "matches": 1},
    "deadlines": {"first_reply_s": 1, "decision_s": 5},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "mock": {"kind": "mock"},
    },
}


def _folder(out: Path) -> dict[str, object]:
    """Every file of a run folder byte for byte, and what its store holds (reading a store
    in WAL mode may leave its index files, which hold no results)."""
    files: dict[str, object] = {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.endswith(("-shm", "-wal"))
    }
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        files["store"] = list(db.iterdump())
    return files


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.fixture
def played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished run in `tmp_path/run`, its templates read from `tmp_path/prompts`."""
    shutil.copytree(prompts_dir(), tmp_path / "prompts")
    monkeypatch.chdir(tmp_path)  # `./prompts` is the run's template folder
    load_template.cache_clear()
    return tmp_path / "run"


async def _play(out: Path) -> dict[str, bytes]:
    result = await execute(plan_run(parse_config(CONFIG), out))
    assert not result.failed
    load_template.cache_clear()  # a later session is another process: it reads the files anew
    return _folder(out)


@pytest.mark.parametrize("resume", ["refuse", "anyway"])
async def test_an_added_policy_is_refused_even_anyway(played: Path, resume: str) -> None:
    before = await _play(played)
    config = copy.deepcopy(CONFIG)
    config["policies"]["newcomer"] = {"kind": "scripted", "baseline": "random"}
    with pytest.raises(LineupChanged) as caught:
        plan_run(parse_config(config), played, resume=resume)
    message = str(caught.value)
    assert "adds 'newcomer'" in message
    assert "removes" not in message
    assert "even with --resume-anyway" in message
    assert "another --out folder, or --force-new" in message
    assert _folder(played) == before  # nothing stored is lost


@pytest.mark.parametrize("resume", ["refuse", "anyway"])
async def test_a_removed_policy_is_refused_even_anyway(played: Path, resume: str) -> None:
    before = await _play(played)
    config = copy.deepcopy(CONFIG)
    del config["policies"]["random"]
    with pytest.raises(LineupChanged, match=r"this config removes 'random'\. ") as caught:
        plan_run(parse_config(config), played, resume=resume)
    assert "match positions are counted from the pairs of policies" in str(caught.value)
    assert _folder(played) == before


@pytest.mark.parametrize("resume", ["refuse", "anyway"])
async def test_a_template_edited_between_sessions_is_refused_even_anyway(
    played: Path, resume: str
) -> None:
    before = await _play(played)
    _append(Path("prompts/board/default.md"), "\nThink hard.\n")
    with pytest.raises(LineupChanged) as caught:
        plan_run(parse_config(CONFIG), played, resume=resume)
    message = str(caught.value)
    assert "board/default.md was edited (SHA-256 " in message
    assert "it is read by 'mock'. A run folder keeps the templates" in message  # only 'mock'
    assert "tactician" not in message
    assert "'random'" not in message
    assert "Restore the template, or start a new run folder" in message
    assert _folder(played) == before


async def test_another_template_named_in_the_config_is_refused_anyway(played: Path) -> None:
    await _play(played)
    config = copy.deepcopy(CONFIG)
    config["policies"]["mock"]["prompt"] = "board/terse.md"
    with pytest.raises(
        LineupChanged,
        match=r"'mock' now reads board/terse.md \(SHA-256 \w{12}\) in place of board/default.md",
    ):
        plan_run(parse_config(config), played, resume="anyway")


async def test_a_new_deadline_is_still_resumed_anyway(played: Path) -> None:
    await _play(played)
    config = copy.deepcopy(CONFIG)
    config["deadlines"]["decision_s"] = 9
    with pytest.raises(ConfigError, match=r"Pass --resume-anyway") as caught:
        plan_run(parse_config(config), played)
    assert not isinstance(caught.value, LineupChanged)
    plan = plan_run(parse_config(config), played, resume="anyway")
    assert plan.config.deadlines.decision_s == 9
    plan_run(parse_config(CONFIG), played)  # the same config resumes without a word
