"""What a newcomer reads: the columns of the standings explained, and the AI CUP named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_report_help_has_a_legend_of_the_standings_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = capsys.readouterr().out
    for column in ("BT [95%]", "Elo K=24 seq.", "own play", "fallbacks", "decoding"):
        assert column in text
    assert "docs/rules.md#standings" in text


def test_the_rules_legend_names_every_column_of_the_table() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    legend = text[text.index("### Standings") :]
    rows = set(re.findall(r"^\| ([^|]+?) \|", legend, flags=re.MULTILINE))
    for column in ("BT [95%]", "Elo K=24 seq.", "decoding", "forfeits", "own play", "NC"):
        assert column in rows, column


def test_arena_games_says_what_the_ai_cup_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    text = capsys.readouterr().out
    assert "AI CUP (a programming competition" in text
