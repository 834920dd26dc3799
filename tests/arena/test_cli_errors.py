"""Every subcommand turns a user's error into one message that names the problem and its
fix, with exit status 2 and no traceback: a missing file, a config that is not TOML, an
unknown game, a missing template, a busy port, a folder that is no run folder, a folder
in use. In-process through `arena.cli.main`, as the user's command runs it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import main

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
[run]
name = "errors"
seed = 5
games = ["connect-four"]
matches = 1
[deadlines]
first_reply_s = 0.5
retry_s = 0.3
decision_s = 0.8
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.mock]
kind = "mock"
"""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder of what users mistype: a config that is no TOML, one with an unknown game,
    one whose policy names a missing template, and an empty folder."""
    (tmp_path / "bad.toml").write_text('[run\nname = "errors"\n')
    (tmp_path / "unknown.toml").write_text(CONFIG.replace('"connect-four"', '"hexx"'))
    (tmp_path / "nope.toml").write_text(CONFIG + 'prompt = "board/nope.md"\n')
    (tmp_path / "good.toml").write_text(CONFIG)
    (tmp_path / "empty").mkdir()
    return tmp_path


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port this test holds, listening, for as long as it runs."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def _one_message(capsys: pytest.CaptureFixture[str], argv: list[str], *said: str) -> str:
    """`arena ARGV` exits 2 with one message on stderr holding every piece of `said`."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert 1 <= len(lines) <= 2, captured.err  # one message (a config's field on a second line)
    assert lines[0].startswith("arena"), captured.err
    for piece in said:
        assert piece in captured.err, captured.err
    return captured.err


# -- a missing file: a config, or a run folder ------------------------------------------

PROMPT = "prompt --game connect-four --seed 1"
"""`arena prompt` of the first ply, before its --config and --policy."""


def _words(line: str, **values: object) -> list[str]:
    """A command line as the user types it (`{d}`, `{root}`, `{port}` filled in)."""
    return [word.format(**values) for word in line.split()]


@pytest.mark.parametrize(
    "line",
    [
        "run {d}/missing.toml",
        f"{PROMPT} --config {{d}}/missing.toml --policy mock",
        "author {d}/missing.toml --game connect-four",
        "author {d}/missing.toml --game connect-four --show-brief",
    ],
    ids=["run", "prompt", "author", "author-brief"],
)
def test_a_missing_config(line: str, files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _one_message(capsys, _words(line, d=files), "missing.toml does not exist", "check the path")


def test_program_check_of_a_missing_file(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["program", "check", str(ROOT / "players" / "greedy.py"), str(files / "gone.py")]
    _one_message(capsys, argv, "gone.py does not exist", "pass a player program's file")


@pytest.mark.parametrize("command", ["verify", "report", "view", "rebuild", "rescore"])
def test_a_missing_run_folder(
    command: str, files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = _one_message(capsys, [command, str(files / "gone")], "gone does not exist")
    assert "pass a run folder" in said
    assert "runs/quickstart" in said


@pytest.mark.parametrize("command", ["verify", "report", "view", "rebuild", "rescore"])
def test_a_folder_that_is_no_run_folder(
    command: str, files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = _one_message(capsys, [command, str(files / "empty")], "empty is not a run folder")
    assert "`arena run` wrote" in said
    assert "runs/quickstart" in said


# -- a config that is not TOML, an unknown game, a missing template ---------------------


@pytest.mark.parametrize(
    "line",
    [
        "run {d}/bad.toml",
        f"{PROMPT} --config {{d}}/bad.toml --policy mock",
        "author {d}/bad.toml --game connect-four",
    ],
    ids=["run", "prompt", "author"],
)
def test_a_config_that_is_not_toml(
    line: str, files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _words(line, d=files)
    _one_message(capsys, argv, "bad.toml is not valid TOML", "(at line 1, column")


@pytest.mark.parametrize(
    "line",
    [
        "run {d}/unknown.toml --out {d}/out",
        "prompt --game hexx --seed 1",
        f"{PROMPT} --config {{d}}/unknown.toml --policy mock",
        "author {d}/good.toml --game hexx --out {d}/out",
        "author --show-brief --game hexx",
        "program check {root}/players/greedy.py --game hexx",
    ],
    ids=["run", "prompt", "prompt-config", "author", "author-brief", "program-check"],
)
def test_an_unknown_game_names_the_known_ones(
    line: str, files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = _one_message(capsys, _words(line, d=files, root=ROOT), "hexx")
    assert "connect-four" in said  # the games it could have been
    assert not (files / "out").exists()


@pytest.mark.parametrize(
    "line",
    ["run {d}/nope.toml --out {d}/out", f"{PROMPT} --config {{d}}/nope.toml --policy mock"],
    ids=["run", "prompt"],
)
def test_a_missing_template(line: str, files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _words(line, d=files)
    _one_message(
        capsys, argv, "policies.mock.prompt", "'board/nope.md' not found", "check the path"
    )
    assert not (files / "out").exists()


def test_prompt_policy_without_a_config_says_to_add_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _one_message(capsys, _words(f"{PROMPT} --policy mock"), "--policy mock", "add --config CONFIG")


# -- a busy port: the message names the flag that chose it ------------------------------

RUN = "run {root}/configs/mock-llm.toml --out {d}/out --no-progress"
HUMAN = "run {root}/configs/human.toml --out {d}/out --no-progress"


BUSY: dict[str, tuple[str, str]] = {
    "run-mock": (RUN + " --mock-llm --mock-port {port}", "--mock-port"),
    "mock-llm": ("mock-llm --port {port}", "--port"),
    "mock-llm-outage": ("mock-llm --port {port} --down-after 5", "--port"),
    "author-mock": (
        "author {root}/configs/authors.toml --game connect-four --out {d}/out --mock-llm "
        "--mock-port {port}", "--mock-port",
    ),
    "run-play-page": (HUMAN + " --play-port {port}", "--play-port"),
    "run-page-and-mock": (HUMAN + " --mock-llm --mock-port {port}", "--mock-port"),
}  # fmt: skip
"""Each command that serves, on the busy port, and the flag its message must name."""


@pytest.mark.parametrize(("line", "flag"), list(BUSY.values()), ids=list(BUSY))
def test_a_busy_port_names_its_flag(
    line: str, flag: str, files: Path, busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _words(line, d=files, root=ROOT, port=busy_port)
    said = _one_message(capsys, argv, f"cannot listen on 127.0.0.1:{busy_port}")
    assert said.rstrip().endswith(f"pick another {flag}")


def test_a_busy_port_inside_another_server_is_one_message(
    files: Path, busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """The play page starts inside the mock's task group: its error comes in a group."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        mock_port = free.getsockname()[1]
    line = HUMAN + " --mock-llm --mock-port {mock} --play-port {port}"
    argv = _words(line, d=files, root=ROOT, mock=mock_port, port=busy_port)
    said = _one_message(capsys, argv, f"cannot listen on 127.0.0.1:{busy_port}")
    assert said.rstrip().endswith("pick another --play-port")


def test_view_serve_on_a_busy_port_names_its_flag(
    files: Path, busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run = files / "run"
    (run / "replays").mkdir(parents=True)
    said = _one_message(capsys, ["view", str(run), "--serve", "--port", str(busy_port)])
    assert said.rstrip().endswith("pick another --port")


# -- a folder in use: another process holds its lock ------------------------------------

_HOLD = """
import sys
from pathlib import Path
from arena.league.lock import hold_run_folder

with hold_run_folder(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.fixture(scope="module")
def held_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, int]]:
    """A played run folder whose lock another process holds: (config, folder, its pid)."""
    folder = tmp_path_factory.mktemp("held")
    config = folder / "good.toml"
    config.write_text(CONFIG)
    out = folder / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(out)], cwd=ROOT, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield config, out, holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_run_on_a_folder_in_use(
    held_run: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]
) -> None:
    config, out, pid = held_run
    capsys.readouterr()
    argv = ["run", str(config), "--out", str(out), "--no-progress"]
    _one_message(capsys, argv, f"in use by process {pid}", "wait for that run", "another --out")


def test_rebuild_on_a_folder_in_use(
    held_run: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, pid = held_run
    capsys.readouterr()
    said = _one_message(capsys, ["rebuild", str(out)], f"in use by process {pid}")
    assert "rebuild it once that run has ended" in said
    assert "--out" not in said  # rebuild has no such flag
    assert (out / "league.db").exists()  # nothing was removed


# -- a command without user errors of its own: argparse's refusal, no traceback ----------


def test_games_refuses_an_unknown_option_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["games", "--bogus"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --bogus" in err
    assert "Traceback" not in err


def test_verify_on_a_folder_in_use_gives_no_digest(
    held_run: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, pid = held_run
    capsys.readouterr()
    assert main(["verify", str(out)]) == 2
    said = capsys.readouterr()
    assert f"is being played now (process {pid})" in said.err
    assert "digest" not in said.out
    assert "verify it once that run has ended" in said.err


def test_verify_says_a_run_that_stopped_early_played_fewer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "budget.toml"
    config.write_text(CONFIG.replace("matches = 1\n", "matches = 3\nbudget_matches = 1\n", 1))
    out = tmp_path / "out"
    main(["run", str(config), "--out", str(out), "--no-progress"])
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    said = capsys.readouterr().out
    assert "episode(s) played of at most" in said
    assert "budget_matches = 1 reached" in said
    assert "run digest:" in said


def test_verify_says_nothing_of_a_schedule_played_to_its_end(tmp_path: Path) -> None:
    """A pool whose pairs all reached `run.matches` stops with a reason, but played all it
    planned: verify must not say it ended early ("448 played of at most 448")."""
    from arena.cli.verify import _played_of_planned

    games = [{"episode": f"e{i}"} for i in range(4)]
    why = "every pair of active entrants has played its 8 matches (run.matches)"
    for planned, said in ((4, None), (6, "4 episode(s) played of at most 6: the run ended")):
        (tmp_path / "summary.json").write_text(
            json.dumps({"games": games, "episodes": planned, "stopped_by": why})
        )
        line = _played_of_planned(tmp_path)
        assert (line is None) if said is None else (line is not None and line.startswith(said))


@pytest.mark.slow
def test_output_cut_short_by_its_reader_ends_quietly() -> None:
    """`arena games | head -1`: the reader has closed the pipe; arena stops without a
    traceback. The read end is closed before arena starts, so its first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        process = subprocess.run(
            [sys.executable, "-m", "arena.cli", "games"], cwd=ROOT, stdout=write_end,
            stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert process.returncode == 1
    assert "Traceback" not in process.stderr
    assert "BrokenPipe" not in process.stderr
