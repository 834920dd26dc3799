"""Templates, placeholders and the exact prompt a seat gets (docs/rules.md#the-prompt)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from string import Template

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from arena.cli import main
from arena.play.prompts import (
    _VALUES,
    PLACEHOLDERS,
    PromptError,
    SeatContext,
    _substitute,
    load_template,
    prompts_dir,
    render_prompt,
)


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


_PIECES = st.lists(
    st.sampled_from(["$$", "$", "{", "}", "\n", " ", "text", "é"])
    | st.sampled_from(sorted(PLACEHOLDERS)).map(lambda n: f"${n}")
    | st.sampled_from(sorted(PLACEHOLDERS)).map(lambda n: f"${{{n}}}"),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(pieces=_PIECES)
def test_a_template_renders_from_its_cut_pieces_as_string_template_does(
    pieces: list[str],
) -> None:
    template = Template("".join(pieces))
    if not template.is_valid() or not set(template.get_identifiers()) <= PLACEHOLDERS:
        return  # load_template refuses these
    values = {name: f"<{name} $x>" for name in PLACEHOLDERS}
    assert _substitute(template, values) == template.substitute(values)


def test_every_placeholder_has_a_value() -> None:
    assert set(_VALUES) == PLACEHOLDERS


def test_the_prompt_is_the_same_with_the_standings_handed_in() -> None:
    game = games.load("connect-four")
    state = game.apply(
        game.initial(3, game=1), {0: game.legal_moves(game.initial(3, game=1), 0)[2]}
    )
    template = load_template("board/default.md")
    common = {"game_index": 1, "aliases": ("cog-a", "cog-b"), "history": ("c",), "notes": ""}
    asked = SeatContext.of(game, state, 1, **common)  # type: ignore[arg-type]
    handed = SeatContext.of(
        game,
        state,
        1,
        standings=(game.standing(state, 0), game.standing(state, 1)),
        **common,  # type: ignore[arg-type]
    )
    assert render_prompt(template, asked) == render_prompt(template, handed)
    assert "$" not in render_prompt(template, asked).text.replace("$$", "")


def test_the_stable_part_note_ends_where_the_stable_part_ends() -> None:
    from arena.play.preview import preview_prompt, stable_note

    prompt = preview_prompt(game="connect-four", seed=3)[0]
    note = stable_note(prompt)
    last = prompt.text[: prompt.stable].splitlines()[-1].strip()
    quoted = note[note.index("ending '") + len("ending '") : note.index("'; a policy")]
    assert last.endswith(quoted.removeprefix("... "))  # the line's own end, whole words
    assert quoted.endswith(".")  # the rules' sentence ends there, not mid-word
