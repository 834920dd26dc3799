"""What a newcomer meets first: clean one-line refusals, help with defaults, `arena games`,
`arena prompt` for every game, `--mock-port`, and resuming with another concurrency."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import games
from arena.cli import main
from games.backgammon import derived_card_seed

ROOT = Path(__file__).resolve().parents[2]

SMALL = """
[run]
name = "newcomer"
seed = 5
games = {games}
matches = {matches}
concurrency = {concurrency}
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


def _small(tmp_path: Path, *, games: str = '["connect-four"]', matches: int = 1,
           concurrency: int = 2, extra: str = "") -> Path:  # fmt: skip
    path = tmp_path / f"small-{matches}-{concurrency}.toml"
    text = SMALL.format(games=games, matches=matches, concurrency=concurrency)
    path.write_text(text + extra)
    return path


def _arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`arena` as a user runs it: its own process, its exit status and its text."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
        timeout=120, env={**os.environ, **(env or {})},
    )  # fmt: skip


def _one_clean_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# -- refusals: one line, never a traceback -----------------------------------------------


@pytest.mark.slow  # starts `arena` in a subprocess
def test_an_unknown_game_in_prompt_is_one_line_naming_the_known_ones() -> None:
    line = _one_clean_line(_arena("prompt", "--game", "nope", "--seed", "3"))
    assert "unknown game 'nope'" in line
    assert "connect-four" in line
    assert "rotate" in line


@pytest.mark.slow  # starts `arena` in a subprocess
def test_bad_mock_faults_on_run_are_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = str(ROOT / "configs" / "mock-llm.toml")
    line = _one_clean_line(
        _arena("run", config, "--out", str(out), "--mock-llm", "--mock-faults", "429=2")
    )
    assert "--mock-faults: fault rate 429=2" in line
    line = _one_clean_line(_arena("run", config, "--out", str(out), "--mock-faults", "429=0.1"))
    assert "add --mock-llm" in line
    assert not out.exists()


def test_force_new_with_resume_anyway_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "configs/quickstart.toml", "--force-new", "--resume-anyway"])
    assert exit_.value.code == 2
    assert "--resume-anyway: not allowed with argument --force-new" in capsys.readouterr().err


def test_a_game_table_no_entry_plays_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _small(tmp_path, extra="[game.hex]\ndecision_s = 20\n")
    assert main(["run", str(config), "--out", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert "[game.hex]: no entry of run.games = ['connect-four'] ever plays 'hex'" in err
    assert "remove the table" in err
    assert not (tmp_path / "never").exists()
    # rotate stands for the four board games, and for no other
    rotate = _small(tmp_path, games='["rotate"]', extra="[game.stratego]\ndecision_s = 20\n")
    assert main(["run", str(rotate), "--out", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert "'stratego' (rotate stands for connect-four, breakthrough, hex, quoridor)" in err


def test_a_game_table_rotate_may_play_is_accepted() -> None:
    from arena.config import parse_config

    data = {
        "run": {"name": "t", "seed": 2, "games": ["rotate"]},
        "game": {"quoridor": {"decision_s": 20}},  # whichever game this seed's matches resolve to
        "policies": {"a": {"kind": "scripted"}, "b": {"kind": "mock"}},
    }
    assert parse_config(data).game["quoridor"].decision_s == 20


def test_missing_api_keys_are_named_all_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("COG_NEWCOMER_A", "COG_NEWCOMER_B"):
        monkeypatch.delenv(name, raising=False)
    models = "".join(
        f'[policies.{name}]\nkind = "llm"\nprovider = "openai"\nmodel = "m"\n'
        f'api_key_env = "{key}"\n'
        for name, key in (("one", "COG_NEWCOMER_A"), ("two", "COG_NEWCOMER_B"))
    )
    config = _small(tmp_path, extra=models)
    assert main(["run", str(config), "--out", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert "the API keys of 2 policies are not set" in err
    assert "policies.one.api_key_env names COG_NEWCOMER_A" in err
    assert "policies.two.api_key_env names COG_NEWCOMER_B" in err
    assert "export COG_NEWCOMER_A=... COG_NEWCOMER_B=..." in err


# -- help and listings --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("report", ["(default table)", "(default standings)", "summary.json"]),
        ("run", ["(default 8765)", "(default 30.0)", "base_url"]),
        ("view", ["(default 8000)"]),
        ("mock-llm", ["(default 8765)", "(default 0)"]),
        ("prompt", ["the match seed", "--card-seed"]),
    ],
)
def test_help_gives_what_each_option_is_and_its_default(
    command: str, shown: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps at the terminal width
    for part in shown:
        assert part in text, part


def test_games_says_what_each_game_is_and_its_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    blocks = {line.split()[0]: line for line in out.splitlines() if not line.startswith(" ")}
    assert "board gauntlet" in blocks["connect-four"]
    assert "squad battle" in blocks["battle"]
    assert "baseline tactician" in out
    assert "baseline pincer" in out
    assert "baseline default: the play maximising" in out  # backgammon's own
    assert "rotate" in blocks


def test_games_says_what_each_baseline_plays_in_each_game(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["games"]) == 0
    said: dict[str, dict[str, str]] = {}  # game -> "baseline ..." -> what it plays
    for line in capsys.readouterr().out.splitlines():
        if not line.startswith(" "):
            game = said.setdefault(line.split()[0], {})
        elif line.strip().startswith("baseline "):
            head, _, how = line.strip().partition(": ")
            game[head] = how
    for name in games.names():
        game_ = games.load(name)
        own = game_.baseline_name
        assert said[name][f"baseline {own} (default)" if own else "baseline default"], name
        for other in list(game_.baselines)[1:]:
            assert said[name][f"baseline {other}"] == game_.baselines[other], name
        assert said[name]["baseline random"], name
    assert "hold the centre" in said["battle"]["baseline flank"]
    assert said["battle"]["baseline random"].startswith("every living squad a uniformly drawn verb")
    assert said["hex"]["baseline random"].startswith("a uniformly drawn legal move")


# -- arena prompt ------------------------------------------------------------------------


def _prompt(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["prompt", *args]) == 0
    return capsys.readouterr().out


def test_backgammon_prompt_takes_an_integer_seed_or_a_card_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    derived = _prompt(capsys, "--game", "backgammon", "--seed", "3")
    assert derived.startswith("GAME: backgammon (game 1 of 2) | YOU ARE: ")
    same_card = _prompt(
        capsys, "--game", "backgammon", "--seed", "3", "--card-seed", derived_card_seed(3, 1, 1)
    )
    assert same_card == derived  # card 1 of a `dice = "derived"` run with master seed 3
    other = _prompt(capsys, "--game", "backgammon", "--seed", "3", "--card-seed", "ab" * 32)
    assert other != derived


def test_a_card_seed_is_pointed_at_its_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["prompt", "--game", "backgammon", "--seed", "ab" * 32])
    assert "pass it as --card-seed" in capsys.readouterr().err
    assert main(["prompt", "--game", "hex", "--seed", "3", "--card-seed", "ab" * 32]) == 2
    assert "hex is not dealt in cards" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("game", "you_are"),
    [
        ("battle", "YOU ARE: Alpha, seat 0"),
        ("stratego", "YOU ARE: Red, seat 0"),
        ("backgammon", "YOU ARE: BLACK, seat 0"),
    ],
)
def test_the_first_line_says_each_thing_once(
    game: str, you_are: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _prompt(capsys, "--game", game, "--seed", "3").splitlines()[0]
    assert first.endswith(f"| {you_are}"), first


def test_the_first_line_keeps_a_side_the_alias_does_not_say(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = _prompt(capsys, "--game", "hex", "--seed", "3").splitlines()[0]
    assert first.startswith("GAME: hex (game 1 of 2) | YOU ARE: cog-")
    assert first.endswith(", seat 0, red"), first


# -- --mock-port, and a resume with another concurrency -----------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow  # starts `arena` in a subprocess
def test_mock_port_reaches_every_model_policy(tmp_path: Path) -> None:
    models = (
        '[policies.openai]\nkind = "llm"\nprovider = "openai"\nmodel = "mock-1"\n'
        'base_url = ["http://127.0.0.1:8765/v1", "http://gpu-2:8000/v1"]\n'
        '[policies.anthropic]\nkind = "llm"\nprovider = "anthropic"\nmodel = "mock-1"\n'
        'api_key_env = "COG_NEWCOMER_NEVER_SET"\n'  # the mock needs no key
    )
    config = _small(tmp_path, extra=models)
    out = tmp_path / "out"
    port = _free_port()
    done = _arena(
        "run", str(config), "--out", str(out), "--no-progress", "--mock-llm",
        "--mock-port", str(port),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    policies = json.loads((out / "config.resolved.json").read_text())["policies"]
    assert policies["openai"]["base_url"] == f"http://127.0.0.1:{port}/v1"  # replicas: one mock
    assert policies["anthropic"]["base_url"] == f"http://127.0.0.1:{port}"  # the default's path
    summary = json.loads((out / "summary.json").read_text())
    rows = {r["policy"]: r for r in summary["standings"]["overall"]}
    assert rows["openai"]["fallbacks_by_side"]["infrastructure"] == 0
    assert rows["anthropic"]["asked"] > 0


def test_a_resume_takes_another_concurrency_and_names_only_what_matters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["run", str(_small(tmp_path)), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    faster = _small(tmp_path, concurrency=7)
    assert main(["run", str(faster), "--out", str(out), "--no-progress"]) == 0
    assert "0 episode(s) played now, 2 finished earlier" in capsys.readouterr().out
    stored = json.loads((out / "config.resolved.json").read_text())
    assert stored["run"]["concurrency"] == 7  # what the session ran with
    changed = _small(tmp_path, concurrency=3, matches=2)
    assert main(["run", str(changed), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "run.matches: 1 -> 2" in err
    assert "concurrency" not in err


PROGRAM_RUN = """
[run]
name = "paths"
games = ["connect-four"]
matches = 1
[policies.tactician]
kind = "scripted"
[policies.greedy]
kind = "program"
path = "{path}"
"""


@pytest.mark.slow  # starts `arena` in a subprocess
def test_a_program_path_starts_at_the_config_files_folder(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (tmp_path / "players").mkdir()
    (tmp_path / "players" / "greedy.py").write_text((ROOT / "players" / "greedy.py").read_text())
    config = configs / "run.toml"
    config.write_text(PROGRAM_RUN.format(path="../players/greedy.py"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(tmp_path / "out"),
         "--no-progress"],
        cwd=elsewhere, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out" / "replays").glob("*.json"))) == 2  # one match, two games


@pytest.mark.slow  # starts `arena` in a subprocess
def test_a_program_path_written_from_the_current_folder_is_refused_with_the_fix(
    tmp_path: Path,
) -> None:
    config = tmp_path / "configs" / "run.toml"
    config.parent.mkdir()
    config.write_text(PROGRAM_RUN.format(path="players/greedy.py"))
    done = _arena("run", str(config), "--out", str(tmp_path / "out"))
    line = _one_clean_line(done)
    assert "policies.greedy.path: cannot read program" in line
    assert f"starts at the config file's folder, {config.parent}" in line
    expected = os.path.relpath(ROOT / "players" / "greedy.py", config.parent)
    assert f"write path = {expected!r}" in line


def test_without_a_terminal_a_run_prints_progress_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.cli import console

    monkeypatch.setattr(console.ProgressLines, "EVERY_S", 0.0)  # a line at every change
    config = _small(tmp_path, matches=2)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "episodes done" in x]
    done = [int(x.split(": ", 1)[1].split("/", 1)[0]) for x in lines]
    assert done == sorted(done), lines
    assert done[-1] == 4
    assert len(set(done)) >= 3  # lines as it goes, not only the last one
    assert all("/4 episodes done" in x for x in lines)


@pytest.mark.slow  # starts `arena` in a subprocess
@pytest.mark.parametrize("width", [80, 120])
def test_the_end_of_run_tables_fit_the_terminal(tmp_path: Path, width: int) -> None:
    config = _small(tmp_path, games='["connect-four", "hex"]', extra=(
        '[policies.faulty]\nkind = "mock"\nfaults = { illegal = 0.3, unreadable = 0.2 }\n'
    ))  # fmt: skip
    done = _arena("run", str(config), "--out", str(tmp_path / "out"), "--no-progress",
                  env={"COLUMNS": str(width)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    tables = done.stdout.split("episode(s) played now")[0]  # then the run folder's path
    assert max(len(line) for line in tables.splitlines()) <= width, done.stdout
    assert "…" not in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for row in summary["standings"]["overall"]:
        assert f"{row['mean_score']:+.3f}" in done.stdout
        assert f"{row['wins']}-{row['draws']}-{row['losses']}" in done.stdout
    assert ("not shown at 80 columns" in done.stdout) == (width == 80)


def test_events_join_on_seat_and_name_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _small(
        tmp_path, extra='[policies.faulty]\nkind = "mock"\nfaults = { illegal = 0.4 }\n'
    )
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 0
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    seats = [e for e in events if e["event"] in
             ("decision_requested", "reply_received", "fallback_recorded")]  # fmt: skip
    assert seats
    assert all(isinstance(e["seat"], int) for e in seats)
    assert all(e["policy"] in ("tactician", "mock", "faulty") and e["alias"] for e in seats)
    capsys.readouterr()
    assert main(["report", str(out), "--what", "fallbacks", "--format", "json"]) == 0
    stored = {
        (r["episode"], r["game_index"], r["ply"], r["seat"]): r
        for r in json.loads(capsys.readouterr().out)
    }
    logged = [e for e in seats if e["event"] == "fallback_recorded"]
    assert len(logged) == len(stored) > 0
    for e in logged:  # the log joins the report on the same keys and agrees
        row = stored[(e["episode"], e["game_index"], e["ply"], e["seat"])]
        assert (e["policy"], e["alias"], e["cause"]) == (row["policy"], row["alias"], row["cause"])
    for e in (e for e in events if e["event"] == "game_finished"):
        replay = json.loads((out / "replays" / f"{e['episode']}.json").read_text())
        game = next(g for g in replay["games"] if g["index"] == e["game_index"])
        assert e["aliases"] == game["aliases"]
        assert e["policies"] == replay["spectator"]["policies"][str(e["game_index"])]


def test_the_resume_anyway_help_names_the_settings_that_need_no_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    flag = said[said.index("--resume-anyway resume") :]
    for setting in ("run.concurrency", "run.executor", "run.endpoint_down_s", "base_url"):
        assert setting in flag[:600], setting
