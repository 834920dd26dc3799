"""A template edited between sessions is refused once, naming every policy that reads it,
by the template's file name: in a pool's next session and in a league's resume, as
`arena run` prints it (the user fixed one entrant and met the next before)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from arena.cli import main
from arena.play.prompts import load_template, prompts_dir

LEAGUE = """
[run]
name = "templates"
seed = 11
games = ["connect-four"]
matches = 1
{pool}
[deadlines]
first_reply_s = 1
decision_s = 5
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock-half]
kind = "mock"
[policies.mock-faulty]
kind = "mock"
faults = {{ illegal = 0.2 }}
[policies.mock-slow]
kind = "mock"
latency_ms = 1
"""

POOL = "pool = true\nplacement_matches = 1"

TEXT_SEATS = ("mock-half", "mock-faulty", "mock-slow")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`tmp_path` with its own copy of prompts/, as the working folder."""
    shutil.copytree(prompts_dir(), tmp_path / "prompts")
    monkeypatch.chdir(tmp_path)
    load_template.cache_clear()
    return tmp_path


def _run(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    load_template.cache_clear()  # every session is a process of its own: it reads files anew
    code = main(["run", str(config), "--out", "run", "--no-progress", *extra])
    return code, capsys.readouterr().err


def _refusal(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, err = _run(config, capsys, *extra)
    assert code == 2, err
    assert "Traceback" not in err
    return err


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


@pytest.mark.parametrize("pool", [True, False], ids=["pool", "league"])
def test_one_edited_template_is_one_message_naming_every_reader(
    folder: Path, capsys: pytest.CaptureFixture[str], pool: bool
) -> None:
    config = folder / "league.toml"
    config.write_text(LEAGUE.format(pool=POOL if pool else ""))
    code, err = _run(config, capsys)
    assert code == 0, err
    template = folder / "prompts" / "board" / "default.md"
    before = _sha(template)
    template.write_text(template.read_text() + "\nThink two moves ahead.\n")
    after = _sha(template)
    err = _refusal(config, capsys)
    said = f"board/default.md was edited (SHA-256 {before} -> {after}); it is read by "
    assert said in err
    readers = err.split(said, 1)[1]
    assert readers.startswith("'mock-half', 'mock-faulty' and 'mock-slow'"), err
    assert err.count("board/default.md") == 1, err  # once, not once an entrant
    assert "tactician" not in err
    assert "'random'" not in err
    assert "''s" not in err
    assert "templates.board" not in err  # by file name, not by hash alone
    if pool:
        assert "policies 'mock-half', 'mock-faulty' and 'mock-slow' are not the entrants" in err
    else:
        assert "even with --resume-anyway" in err
        assert _refusal(config, capsys, "--resume-anyway") == err


@pytest.mark.parametrize("pool", [True, False], ids=["pool", "league"])
def test_a_swapped_template_shows_the_old_and_new_files_each_with_its_hash(
    folder: Path, capsys: pytest.CaptureFixture[str], pool: bool
) -> None:
    config = folder / "league.toml"
    text = LEAGUE.format(pool=POOL if pool else "")
    config.write_text(text)
    code, err = _run(config, capsys)
    assert code == 0, err
    swapped = text.replace("latency_ms = 1\n", 'latency_ms = 1\nprompt = "board/terse.md"\n')
    config.write_text(swapped)
    err = _refusal(config, capsys)
    old = _sha(folder / "prompts" / "board" / "default.md")
    new = _sha(folder / "prompts" / "board" / "terse.md")
    assert (
        f"'mock-slow' now reads board/terse.md (SHA-256 {new}) in place of "
        f"board/default.md (SHA-256 {old})"
    ) in err
    assert "mock-half" not in err
    assert "mock-faulty" not in err
    assert "tactician" not in err
    assert "'random'" not in err
