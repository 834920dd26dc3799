"""Templates, placeholders and the exact prompt a seat gets (docs/rules.md#the-prompt)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from arena.cli import main
from arena.play.prompts import PromptError, load_template, prompts_dir


def test_default_template_hash_is_its_content_hash() -> None:
    template = load_template("board/default.md")
    text = (prompts_dir() / "board" / "default.md").read_bytes()
    assert template.sha256 == hashlib.sha256(text).hexdigest()


def test_unknown_placeholder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prompts" / "board").mkdir(parents=True)
    (tmp_path / "prompts" / "board" / "bad.md").write_text(
        "Board: $board\nOpponent model: $opponent_model\n"
    )
    monkeypatch.chdir(tmp_path)
    load_template.cache_clear()
    try:
        with pytest.raises(PromptError, match=r"unknown placeholder\(s\) \$opponent_model"):
            load_template("board/bad.md")
    finally:
        load_template.cache_clear()


def test_arena_prompt_prints_the_exact_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "--game", "rotate", "--seed", "6", "--ply", "3"]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[0]
    assert first.startswith("GAME: hex (game 1 of 2) | YOU ARE: cog-")
    assert "seat 0, red" in first
    assert "LEGAL MOVES: " in text
    assert "REPLY KEY: move" in text
    assert "1. " in text
    assert "2. " in text


def test_arena_prompt_refuses_a_finished_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "--game", "connect-four", "--seed", "1", "--ply", "500"]) == 2
    assert "--ply 500" in capsys.readouterr().err
