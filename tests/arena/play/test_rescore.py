"""`arena rescore`: recorded replies re-read with today's readers, along the recorded moves.

A small league with a faulty mock is played once; each test re-reads it, with
the readers as they are or with a reader change injected, and checks the
kinds of change against expectations worked out here from the replays.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console

import games
from arena.cli import main
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.play import decisions
from arena.play.extract import Extracted
from arena.play.rescore import (
    FALLBACK_TO_MOVE,
    KINDS,
    MOVE_TO_FALLBACK,
    MOVE_TO_OTHER,
    UNCHANGED,
    RunRescore,
    print_table,
    rescore_run,
)
from arena.record.replay import DecisionRecord, Replay, load_replay

LEAGUE: dict[str, Any] = {
    "run": {"name": "rescore", "seed": 5, "games": ["connect-four", "hex"], "matches": 2},
    "deadlines": {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "faulty": {"kind": "mock", "faults": {"unreadable": 0.3, "illegal": 0.2}},
        "shaky": {"kind": "mock", "faults": {"unreadable": 0.3, "illegal": 0.2}},
    },
}

PROSE = "The centre looks strong"
"""In the mock's `unreadable` reply: prose no reader takes today."""

Expected = dict[tuple[str, int], list[tuple[int, int, str]]]
"""(episode, game index) -> (ply, seat, kind) of every text decision, in order."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rescore")
    anyio.run(execute, plan_run(parse_config(LEAGUE), out))
    return out


def _replays(run: Path) -> list[Replay]:
    return [load_replay(p) for p in sorted((run / "replays").glob("*.json"))]


def _decisions(run: Path) -> Iterator[tuple[tuple[str, int], int, DecisionRecord, Any, Any]]:
    """Every text decision with the game and the state it was asked in."""
    for replay in _replays(run):
        game = games.load(replay.game, **replay.params)
        for record in replay.games:
            state = game.initial(replay.chance, game=record.index)
            for ply in record.plies:
                for d in ply.decisions:
                    if d.attempts:
                        yield (replay.episode, record.index), ply.ply, d, game, state
                moves = {d.seat: game.parse(state, d.seat, d.move) for d in ply.decisions}
                state = game.apply(state, moves)


def _expected(run: Path, kind_of: Callable[[DecisionRecord, Any, Any], str]) -> Expected:
    expected: Expected = {}
    for where, ply, d, game, state in _decisions(run):
        expected.setdefault(where, []).append((ply, d.seat, kind_of(d, game, state)))
    return expected


def _check(result: RunRescore, expected: Expected) -> None:
    """Per game: the counts of every kind, and the first change is the earliest one."""
    got = {(g.episode, g.index): g for g in result.games if sum(g.counts.values())}
    assert set(got) == set(expected)
    for where, rows in expected.items():
        game = got[where]
        assert dict(game.counts) == {k: n for k, n in Counter(r[2] for r in rows).items()}, where
        first = next(((p, s, k) for p, s, k in rows if k != UNCHANGED), None)
        shown = (game.first.ply, game.first.seat, game.first.kind) if game.first else None
        assert shown == first, where
        assert game.stopped is None


def _snapshot(run: Path) -> dict[str, tuple[int, str]]:
    return {
        str(p.relative_to(run)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(run.rglob("*"))
        if p.is_file()
    }


def _odd_turn(say: str) -> bool:
    """The mock says `turn N` (its N-th attempt in the game)."""
    number = say.removeprefix("turn ")
    return number.isdigit() and int(number) % 2 == 1


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader change that refuses what was accepted: replies saying an odd turn (in the
    extraction the decision protocol and rescore share)."""
    real = decisions.extract

    def stricter(text: str, key: str = "move") -> Extracted:
        got = real(text, key)
        return dataclasses.replace(got, move=None) if _odd_turn(got.say) else got

    monkeypatch.setattr(decisions, "extract", stricter)


def _strict_kind(d: DecisionRecord, game: Any, state: Any) -> str:
    if d.source == "fallback":
        return UNCHANGED  # a stricter reader never rescues a refused reply
    said = json.loads(d.attempts[-1].reply or "{}").get("say", "")
    return MOVE_TO_FALLBACK if _odd_turn(said) else UNCHANGED


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader change that accepts what was refused: the mock's prose, as the first legal
    move (the recorded moves, canonical, read as before)."""
    real = games.TurnGame.parse

    def reads_prose(self: games.TurnGame[Any], s: Any, seat: int, move: object) -> str:
        if isinstance(move, str) and PROSE in move:
            return self.legal_moves(s, seat)[0]
        return real(self, s, seat, move)

    monkeypatch.setattr(games.TurnGame, "parse", reads_prose)


def _lenient_kind(d: DecisionRecord, game: Any, state: Any) -> str:
    first, *retry = [a.reply or "" for a in d.attempts]
    if PROSE not in first and not (retry and PROSE in retry[0]):
        return UNCHANGED  # the prose is the only reply read differently
    if d.source == "fallback":
        return FALLBACK_TO_MOVE
    now = game.legal_moves(state, d.seat)[0]
    return UNCHANGED if now == d.move else MOVE_TO_OTHER


# -- the tests ----------------------------------------------------------------------------------


def test_todays_readers_change_nothing(run: Path) -> None:
    result = rescore_run(run)
    text_decisions = sum(1 for _ in _decisions(run))
    assert text_decisions > 20  # the league gives the readers something to re-read
    assert result.totals() == {**dict.fromkeys(KINDS, 0), UNCHANGED: text_decisions}
    assert all(g.first is None and g.stopped is None for g in result.games)
    assert result.replays == len(list((run / "replays").glob("*.json")))


@pytest.fixture(scope="module")
def keyed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The battle (its reply key `orders`, structured moves) and backgammon (dice from a
    card's revealed seed), two faulty mocks at each."""
    out = tmp_path_factory.mktemp("keyed")
    policies = {"faulty": LEAGUE["policies"]["faulty"], "shaky": LEAGUE["policies"]["shaky"]}
    config = {**LEAGUE, "run": {**LEAGUE["run"], "games": ["battle", "backgammon"], "matches": 1}}
    anyio.run(execute, plan_run(parse_config({**config, "policies": policies}), out))
    return out


def test_every_reply_key_and_chance_is_read_as_played(keyed_run: Path) -> None:
    result = rescore_run(keyed_run)
    assert {replay.game for replay in _replays(keyed_run)} == {"battle", "backgammon"}
    assert all(g.stopped is None and g.first is None for g in result.games)
    assert result.totals()[UNCHANGED] == sum(1 for _ in _decisions(keyed_run)) > 20


def test_the_league_has_what_the_reader_changes_need(run: Path) -> None:
    sources = Counter(d.source for _, _, d, _, _ in _decisions(run))
    assert sources["reply"]
    assert sources["retry"]
    assert sources["fallback"]
    assert any(PROSE in (a.reply or "") for _, _, d, _, _ in _decisions(run) for a in d.attempts)


@pytest.mark.usefixtures("strict")
def test_a_stricter_reader_turns_moves_into_fallbacks(run: Path) -> None:
    expected = _expected(run, _strict_kind)
    result = rescore_run(run)
    _check(result, expected)
    assert result.totals()[MOVE_TO_FALLBACK] > 0
    assert result.totals()[FALLBACK_TO_MOVE] == result.totals()[MOVE_TO_OTHER] == 0


@pytest.mark.usefixtures("strict")
def test_a_refused_first_reply_would_have_asked_the_retry(run: Path) -> None:
    firsts = [g.first for g in rescore_run(run).games if g.first is not None]
    assert firsts
    for change in firsts:
        assert change.now.move is None
        assert change.now.cause == "unreadable"
        assert change.retry_unasked == (change.recorded.source == "reply")
        assert change.now.reply is not None
        assert change.now.reply == change.recorded.reply


@pytest.mark.usefixtures("lenient")
def test_a_lenient_reader_turns_fallbacks_into_moves(run: Path) -> None:
    expected = _expected(run, _lenient_kind)
    result = rescore_run(run)
    _check(result, expected)
    assert result.totals()[FALLBACK_TO_MOVE] > 0
    assert result.totals()[MOVE_TO_FALLBACK] == 0
    rescued = [g.first for g in result.games if g.first and g.first.kind == FALLBACK_TO_MOVE]
    assert rescued
    assert all(PROSE in (c.now.reply or "") for c in rescued)


@pytest.mark.usefixtures("lenient")
def test_a_retry_move_read_differently_is_another_move(run: Path) -> None:
    expected = _expected(run, _lenient_kind)
    if not any(k == MOVE_TO_OTHER for rows in expected.values() for _, _, k in rows):
        pytest.skip("no retry after a prose reply moved other than the first legal move")
    assert rescore_run(run).totals()[MOVE_TO_OTHER] > 0


@pytest.mark.parametrize("change", [None, "strict", "lenient"])
def test_rescore_changes_no_file(
    change: str | None,
    run: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if change is not None:
        request.getfixturevalue(change)
    before = _snapshot(run)
    for fmt in ("table", "json"):
        assert _handler(["rescore", str(run), "--format", fmt]) == 0
    assert _snapshot(run) == before
    capsys.readouterr()


def _handler(argv: list[str]) -> int:
    """Through the subcommand as `arena` builds it."""
    return main(argv)


@pytest.mark.usefixtures("strict")
def test_json_is_the_whole_rescore(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert _handler(["rescore", str(run), "--format", "json"]) == 0
    dump = json.loads(capsys.readouterr().out)
    result = rescore_run(run)
    assert dump["totals"] == result.totals()
    assert dump["replays"] == result.replays
    assert len(dump["games"]) == len(result.games)
    for game in dump["games"]:
        assert set(game["counts"]) == set(KINDS)
    changed = [g for g in dump["games"] if g["first_change"]]
    assert changed
    first = changed[0]["first_change"]
    assert first["kind"] == MOVE_TO_FALLBACK
    assert first["now_move"] is None
    assert {"ply", "seat", "alias", "recorded", "now", "reply", "retry_unasked"} <= set(first)
    total = Counter[str]()
    for game in dump["games"]:
        total.update(game["counts"])
    assert dict(total) == dump["totals"]


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("width", [60, 200])
def test_the_table_fits_the_console(run: Path, width: int) -> None:
    out = io.StringIO()
    print_table(rescore_run(run), Console(file=out, width=width))
    text = out.getvalue()
    assert all(len(line) <= width for line in text.splitlines())
    assert "First changed decision per game" in text
    assert MOVE_TO_FALLBACK in text
    assert "no model was asked" in " ".join(text.split())


def test_the_table_without_changes_says_so(run: Path) -> None:
    out = io.StringIO()
    print_table(rescore_run(run), Console(file=out, width=120))
    assert "0 would change" in out.getvalue()
    assert "First changed decision" not in out.getvalue()


@pytest.mark.parametrize(
    ("folder", "problem"),
    [("missing", "does not exist"), ("empty", "is not a run folder")],
)
def test_a_folder_that_is_no_run_is_one_clean_line(
    folder: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert _handler(["rescore", str(tmp_path / folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert problem in lines[0]
    assert "runs/quickstart" in lines[0]  # the fix: which folder to pass


def test_a_replay_that_cannot_be_read_is_named(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    broken = sorted((copy / "replays").glob("*.json"))[0]
    broken.write_text("{not json")
    assert _handler(["rescore", str(copy)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert broken.name in err
    assert "arena verify" in err


def test_a_game_this_engine_cannot_follow_stops_there(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    path = sorted((copy / "replays").glob("connect-four*.json"))[0]
    data = json.loads(path.read_text())
    data["games"][0]["plies"][2]["decisions"][0]["move"] = "z9"
    path.write_text(json.dumps(data))
    games_ = {(g.episode, g.index): g for g in rescore_run(copy).games}
    stopped = games_[(data["episode"], data["games"][0]["index"])]
    assert stopped.stopped is not None
    assert "ply 3" in stopped.stopped
    assert "'z9'" in stopped.stopped
    # the other games are re-read whole
    assert sum(g.stopped is not None for g in games_.values()) == 1
