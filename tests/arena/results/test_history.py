"""The ratings over time in O(matches): Elo events, session snapshots, and reports that read
the stored ratings instead of fitting them again."""

from __future__ import annotations

import json
import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, NoReturn

import anyio
import pytest

import arena.results.pool
import arena.results.tables
from arena.cli import main
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.store import DB_NAME, LeagueStore
from arena.results.history import elo_events, session_history
from arena.results.ratings import MatchOutcome, elo, elo_history

LEAGUE: dict[str, Any] = {
    "run": {"name": "history", "seed": 11, "games": ["connect-four"], "matches": 2},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "faulty": {"kind": "mock", "faults": {"unreadable": 0.3, "illegal": 0.2}},
    },
}


def _random_matches(seed: int, policies: int, count: int) -> list[MatchOutcome]:
    rng = random.Random(seed)
    names = [f"p{n}" for n in range(policies)]
    out = []
    for index in rng.sample(range(3 * count), count):  # indices out of order, with gaps
        first, second = rng.sample(names, 2)
        results = tuple(rng.choice((1.0, 0.5, 0.0, 0.0, 1.0, None)) for _ in range(2))
        out.append(MatchOutcome(index, first, second, results, rng.random() < 0.05))
    return out


def test_elo_events_are_elo_history_bit_for_bit_with_two_policies_an_event() -> None:
    matches = _random_matches(3, 9, 300)
    final, events = elo_events(matches)
    history = elo_history(matches)
    assert [i for i, _ in events] == [i for i, _ in history]
    folded: dict[str, float] = {}
    for (_, moved), (_, everyone) in zip(events, history, strict=True):
        assert len(moved) == 2
        folded |= moved
        assert all(everyone[p] == folded[p] for p in folded)  # exactly, not approximately
    assert final == elo(matches)
    assert list(final) == list(elo(matches))  # the same order: first appearance


def test_elo_events_by_hand() -> None:
    # 1500 v 1500: expected 0.5; first wins both games: +24 * 0.5 * 2 = +24.
    # Then second (1476) v a newcomer (1500) draws twice: expected 1/(1+10^(24/400)),
    # delta = 24 * 2 * (0.5 - expected).
    a, b, c = "a", "b", "c"
    matches = [MatchOutcome(0, a, b, (1.0, 1.0)), MatchOutcome(1, b, c, (0.5, 0.5))]
    expected = 1.0 / (1.0 + 10 ** (24 / 400))
    delta = 48 * (0.5 - expected)
    final, events = elo_events(matches)
    assert events[0] == (0, {a: 1524.0, b: 1476.0})
    assert events[1][1] == pytest.approx({b: 1476.0 + delta, c: 1500.0 - delta})
    assert final == pytest.approx({a: 1524.0, b: 1476.0 + delta, c: 1500.0 - delta})


def test_session_history_lists_the_sessions_that_played() -> None:
    kept = [
        (2, {"bt": {"a": {"rating": 10.0, "low": 0.0, "high": 20.0, "on_prior": False}}}),
        (1, {"bt": {}, "elo": {"a": 1500.0}}),
        (3, {"bt": {"a": {"rating": 1.0, "low": 0.0, "high": 2.0}}}),
    ]
    history = session_history(kept, played=[1, 2])
    assert [h["session"] for h in history] == [1, 2]
    assert history[1]["bt"] == {"a": {"rating": 10.0, "low": 0.0, "high": 20.0}}
    assert history[0]["elo"] == {"a": 1500.0}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("history")
    anyio.run(execute, plan_run(parse_config(LEAGUE), out))
    return out


def _rows(out: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        return db.execute(sql).fetchall()


def test_the_store_keeps_two_rows_a_rated_match_and_the_session_s_ratings(run: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    events = summary["ratings"]["elo_events"]
    assert "elo_history" not in summary["ratings"]
    assert events
    assert all(len(moved) == 2 for _, moved in events)
    rows = _rows(run, "SELECT match_index, policy, elo FROM rating_events")
    assert len(rows) == 2 * len(events)
    assert {(i, p): e for i, p, e in rows} == {
        (i, p): e for i, moved in events for p, e in moved.items()
    }
    (session, stamp, kept), *_ = _rows(run, "SELECT session, stamp, ratings FROM rating_sessions")
    assert session == 1
    assert json.loads(kept)["bt"] == summary["ratings"]["bt"]
    assert [h["session"] for h in summary["history"]] == [1]
    store = LeagueStore.open_readonly(run)
    try:
        assert stamp == store.results_stamp()
        last: dict[str, float] = {}
        for _, policy, value in store.rating_events():
            last[policy] = value
        assert last == summary["ratings"]["elo"]  # the events fold into today's Elo
    finally:
        store.close()


def _no_fit(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError("a report fitted the ratings")


def _report(capsys: pytest.CaptureFixture[str], run: Path, *args: str) -> str:
    capsys.readouterr()
    assert main(["report", str(run), *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("what", ["h2h", "games", "fallbacks", "entrants", "standings"])
def test_a_report_reads_the_stored_ratings_and_never_fits(
    run: Path, what: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena.results.tables, "bradley_terry", _no_fit)
    monkeypatch.setattr(arena.results.tables, "bt_difference", _no_fit)
    monkeypatch.setattr(arena.results.pool, "bradley_terry", _no_fit)
    rows = json.loads(_report(capsys, run, "--what", what, "--format", "json"))
    assert rows
    _report(capsys, run, "--what", what)  # the table too
    if what == "standings":
        summary = json.loads((run / "summary.json").read_text())
        overall = [r for r in rows if r["game"] == "overall"]
        assert [r["policy"] for r in overall] == [
            r["policy"] for r in summary["standings"]["overall"]
        ]
        bt = summary["ratings"]["bt"]
        assert {r["policy"]: r["bt_rating"] for r in overall} == {
            p: r["rating"] for p, r in bt.items()
        }


def test_standings_fit_again_when_results_were_stored_since(
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    with closing(sqlite3.connect(copy / DB_NAME)) as db, db:
        # a game stored again after the session's end (as a killed later session leaves it)
        db.execute("INSERT OR REPLACE INTO games SELECT * FROM games LIMIT 1")
    fits: list[int] = []
    real = arena.results.tables.bradley_terry

    def counted(*args: Any, **kwargs: Any) -> Any:
        fits.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(arena.results.tables, "bradley_terry", counted)
    _report(capsys, copy, "--what", "h2h")
    assert fits == []
    _report(capsys, copy, "--what", "standings")
    assert fits == [1]


@pytest.mark.anyio
async def test_a_store_from_before_the_snapshots_opens_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "old"
    config = parse_config(LEAGUE)
    await execute(plan_run(config, out))
    with closing(sqlite3.connect(out / DB_NAME)) as db, db:
        db.execute("DROP TABLE rating_sessions")  # as an older version wrote it
        db.execute(  # every policy after every match, as it was kept then
            "INSERT OR IGNORE INTO rating_events SELECT r.match_index, p.name, 1500.0 "
            "FROM rating_events r, policies p"
        )
    store = LeagueStore.open_readonly(out)  # `arena report` on the old folder
    try:
        assert store.snapshots() == []
        assert store.latest_snapshot() is None
    finally:
        store.close()
    assert main(["report", str(out), "--what", "standings"]) == 0  # fits: nothing kept
    bigger = {**LEAGUE, "run": {**LEAGUE["run"], "matches": 3}}
    result = await execute(plan_run(parse_config(bigger), out, resume="anyway"))  # session 2
    assert not result.failed
    sessions = [s for (s,) in _rows(out, "SELECT session FROM rating_sessions ORDER BY 1")]
    assert sessions == [1, 2]  # session 1's filled in once, from its own games
    events = _rows(out, "SELECT match_index, COUNT(*) FROM rating_events GROUP BY 1")
    assert {n for _, n in events} == {2}


@pytest.mark.anyio
async def test_a_pool_s_session_end_fits_once_not_once_per_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.arena.league.test_pool import POOL, _with

    out = tmp_path / "pool"
    await execute(plan_run(parse_config(POOL), out))
    await execute(
        plan_run(parse_config(_with(late={"kind": "scripted", "baseline": "random"})), out)
    )
    fits: list[int] = []
    real = arena.results.tables.bradley_terry

    def counted(*args: Any, **kwargs: Any) -> Any:
        fits.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(arena.results.tables, "bradley_terry", counted)
    monkeypatch.setattr(arena.results.pool, "bradley_terry", _no_fit)
    third = _with(late={"kind": "scripted", "baseline": "random"}, more={"kind": "mock"})
    await execute(plan_run(parse_config(third), out))
    assert fits == [1]  # this session's ratings; sessions 1 and 2 are read from the store
    summary = json.loads((out / "summary.json").read_text())
    assert [h["session"] for h in summary["history"]] == [1, 2, 3]
    assert "late" not in summary["history"][0]["bt"]
    assert "more" in summary["history"][2]["bt"]
