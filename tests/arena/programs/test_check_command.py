"""`arena program check PATH...`: several files, each on --game, on the games its `GAMES`
names, else on every game program seats play; one line per file and game."""

from __future__ import annotations

from pathlib import Path

import pytest

import games
from arena.cli import main
from arena.programs import ProgramRefused, declared_games

PLAYERS = Path(__file__).resolve().parents[3] / "players"
RANDOM = (PLAYERS / "random_player.py").read_text()
QUICK = ["--sandbox", "process"]  # a plain child: the checks here are of the command, not bwrap


def _program(folder: Path, name: str, games_line: str = "") -> Path:
    """The example random player, with `games_line` (e.g. a GAMES) put after its docstring."""
    path = folder / name
    docstring_end = RANDOM.index('"""', 3) + 3
    path.write_text(f"{RANDOM[:docstring_end]}\n{games_line}\n{RANDOM[docstring_end:]}")
    return path


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.strip().splitlines()


def test_several_files_one_refused_is_one_line_each_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _program(tmp_path, "good.py")
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef create(ctx):\n    return None\n")
    argv = ["program", "check", str(good), str(bad), "--game", "connect-four", *QUICK]
    assert main(argv) == 1
    lines = _lines(capsys)
    assert len(lines) == 3, lines  # one per file and game, then the count
    assert lines[0].split()[:3] == ["passed", str(good), "connect-four"]
    assert lines[1].split()[:4] == ["REFUSED", str(bad), "connect-four", "-"]
    assert "import of 'os' is refused" in lines[1]  # the first problem, on its line
    assert lines[2] == "2 file(s), 2 check(s): 1 passed, 1 refused"


def test_a_file_the_static_check_refuses_is_one_line_for_every_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef create(ctx):\n    return None\n")  # no GAMES: every game
    good = _program(tmp_path, "good.py", 'GAMES = ("connect-four",)')
    assert main(["program", "check", str(bad), str(good), *QUICK]) == 1
    lines = _lines(capsys)
    assert len(lines) == 3, lines
    assert lines[0].split()[:4] == ["REFUSED", str(bad), "-", "-"]
    assert "import of 'os' is refused" in lines[0]
    assert lines[2] == "2 file(s), 2 check(s): 1 passed, 1 refused"


def test_games_says_which_games_a_file_is_checked_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = _program(tmp_path, "two.py", 'GAMES = ("hex", "connect-four")')
    assert main(["program", "check", str(two), *QUICK]) == 0
    lines = _lines(capsys)
    assert [line.split()[:3] for line in lines[:2]] == [
        ["passed", str(two), "hex"],
        ["passed", str(two), "connect-four"],
    ]
    assert lines[2] == "1 file(s), 2 check(s): 2 passed, 0 refused"


def test_one_file_on_one_game_gets_the_whole_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = _program(tmp_path, "one.py", 'GAMES: tuple[str, ...] = ["connect-four"]')
    assert main(["program", "check", str(one), *QUICK]) == 0
    out = capsys.readouterr().out
    assert "game connect-four  seed 1" in out
    assert out.rstrip().endswith("PASSED")


def test_game_wins_over_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hex_only = _program(tmp_path, "hex_only.py", 'GAMES = ("hex",)')
    assert main(["program", "check", str(hex_only), "--game", "connect-four", *QUICK]) == 0
    assert "game connect-four" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('GAMES = ("connect-four", "hexx")', "GAMES names 'hexx', which program seats do not play"),
        ("GAMES = tuple(['hex'])", "GAMES must be a literal tuple of game names"),
        ("GAMES = ()", "GAMES must be a literal tuple of game names"),
    ],
)
def test_a_bad_games_is_refused_naming_the_file_and_the_games(
    line: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = _program(tmp_path, "wrong.py", line)
    good = _program(tmp_path, "good.py", 'GAMES = ("connect-four",)')
    assert main(["program", "check", str(wrong), str(good), *QUICK]) == 1
    lines = _lines(capsys)
    assert len(lines) == 3, lines
    assert lines[0].startswith(f"REFUSED  {wrong}")
    number = wrong.read_text().splitlines().index(line) + 1
    assert f"{wrong} line {number}: {said}" in lines[0]  # the file and the line of its GAMES
    assert ", ".join(games.program_games()) in lines[0]  # the games it may name
    assert lines[1].split()[:3] == ["passed", str(good), "connect-four"]
    assert lines[2] == "2 file(s), 2 check(s): 1 passed, 1 refused"


def test_declared_games_reads_the_source_and_never_runs_it(tmp_path: Path) -> None:
    loud = tmp_path / "loud.py"
    loud.write_text(
        'raise SystemExit("ran")\nGAMES = ("hex",)\nGAMES = ("hex", "hex", "quoridor")\n'
    )
    assert declared_games(loud) == ("hex", "quoridor")  # the last one, each game once
    assert declared_games(PLAYERS / "greedy.py") is None  # it plays every game
    assert declared_games(tmp_path / "missing.py") is None  # the check says why
    (tmp_path / "broken.py").write_text("GAMES = (\n")
    assert declared_games(tmp_path / "broken.py") is None
    (tmp_path / "odd.py").write_text('GAMES = ("hex", 3)\n')
    with pytest.raises(ProgramRefused, match=r"odd\.py line 1: GAMES must be a literal tuple"):
        declared_games(tmp_path / "odd.py")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["{d}/missing.py"], "missing.py does not exist: pass a player program's file"),
        (["{d}"], "is a folder: pass a player program's file"),
        (["{players}/greedy.py", "--game", "battle"], "--game battle: program seats do not play"),
    ],
    ids=["missing", "folder", "unknown-game"],
)
def test_a_user_error_is_one_line_and_exit_2(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [word.format(d=tmp_path, players=PLAYERS) for word in argv]
    assert main(["program", "check", str(PLAYERS / "random_player.py"), *argv, *QUICK]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any check
    assert captured.err.count("\n") == 1
    assert said in captured.err
