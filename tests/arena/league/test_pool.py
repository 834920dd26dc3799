"""A standing pool: entrants added and retired across sessions, every stored game rated."""

from __future__ import annotations

import copy
import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import games
from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.pool import PoolRefused
from arena.league.rebuild import rebuild_run
from arena.league.run import execute
from arena.league.store import DB_NAME

pytestmark = pytest.mark.anyio

POOL: dict[str, Any] = {
    "run": {
        "name": "pool", "seed": 5, "games": ["connect-four"], "pool": True, "matches": 6,
        "placement_matches": 2, "round_matches": 4, "target": 0.9,
    },
    "deadlines": {"first_reply_s": 1, "decision_s": 5},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "mock": {"kind": "mock"},
    },
}  # fmt: skip


def _with(**policies: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(POOL)
    for name, spec in policies.items():
        config["policies"][name] = spec
    return config


async def _session(config: dict[str, Any], out: Path, **options: Any) -> dict[str, Any]:
    result = await execute(plan_run(parse_config(config), out, **options))
    assert not result.failed
    return json.loads((out / "summary.json").read_text())


def _matches(out: Path) -> list[tuple[Any, ...]]:
    """The pool's schedule: (seq, id, session, phase), by sequence number."""
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        return db.execute("SELECT seq, id, session, phase FROM matches ORDER BY seq").fetchall()


def _stored_order(out: Path) -> list[tuple[int, int]]:
    """(session, match index) of every stored episode, in the order they were stored."""
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        return db.execute("SELECT session, match_index FROM episodes ORDER BY rowid").fetchall()


def _digests(out: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((out / "replays").glob("*.json"))
    }


async def test_a_newcomer_plays_its_placement_first_and_the_pool_keeps_the_rest(
    tmp_path: Path,
) -> None:
    out = tmp_path / "pool"
    first = await _session(POOL, out)
    before = _digests(out)
    assert first["pool"]["placement_matches"] == 3 * 2  # three pairs, two matches each
    schedule = _matches(out)
    assert [phase for _, _, _, phase in schedule[:6]] == ["placement"] * 6
    assert [seq for seq, *_ in schedule] == list(range(len(schedule)))

    second = await _session(_with(newcomer={"kind": "mock", "faults": {"illegal": 0.2}}), out)
    schedule = _matches(out)
    new = [row for row in schedule if row[2] == 2]
    # Numbered after the first session's matches, never renumbered; placement first.
    assert [seq for seq, *_ in new] == list(range(len(schedule) - len(new), len(schedule)))
    placement = [row for row in new if row[3] == "placement"]
    assert len(placement) == 3 * 2
    assert all("-vs-newcomer" in row[1] for row in placement)
    assert [row[3] for row in new[: len(placement)]] == ["placement"] * len(placement)
    # Every placement episode was stored before any other episode of the session.
    stored = [index for session, index in _stored_order(out) if session == 2]
    placed = {seq for seq, *_ in placement}
    cut = max(n for n, index in enumerate(stored) if index in placed)
    assert all(index in placed for index in stored[: cut + 1])
    # The first session's replays are byte for byte what they were.
    after = _digests(out)
    assert {name: after[name] for name in before} == before
    # The ratings cover every entrant, and every stored game.
    assert set(second["ratings"]["bt"]) == {"tactician", "random", "mock", "newcomer"}
    assert len(second["games"]) == 2 * len(schedule)
    statuses = {e["name"]: (e["status"], e["first_session"]) for e in second["entrants"]}
    assert statuses["newcomer"][1] == 2
    assert statuses["tactician"] == ("active", 1)
    assert [h["session"] for h in second["history"]] == [1, 2]
    assert "newcomer" not in second["history"][0]["bt"]


async def test_a_changed_entrant_is_refused_naming_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "pool"
    await _session(POOL, out)
    with pytest.raises(PoolRefused, match=r"'mock'.*latency_ms: added.*mock-v2.*retired = true"):
        plan_run(parse_config(_with(mock={"kind": "mock", "latency_ms": 5})), out)
    config = copy.deepcopy(POOL)
    del config["policies"]["mock"]
    with pytest.raises(PoolRefused, match=r"removes entrants 'mock'.*retired = true"):
        plan_run(parse_config(config), out)


async def test_a_new_version_under_a_new_name_retires_the_old_one(tmp_path: Path) -> None:
    out = tmp_path / "pool"
    await _session(POOL, out)
    played_before = len(_matches(out))
    config = _with(
        mock={"kind": "mock", "retired": True}, **{"mock-v2": {"kind": "mock", "latency_ms": 5}}
    )
    summary = await _session(config, out)
    later = [row for row in _matches(out) if row[2] == 2]
    assert later
    assert not [row for row in later if "-mock-vs-" in row[1] or row[1].endswith("-vs-mock")]
    assert len(_matches(out)) > played_before
    entrant = {e["name"]: e for e in summary["entrants"]}
    assert entrant["mock"]["status"] == "retired"
    assert entrant["mock"]["retired"] == "retired = true in the config"
    assert "mock" in {row["policy"] for row in summary["standings"]["overall"]}
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    retired = [e for e in ledger if e.get("event") == "entrant_retired"]
    assert [(e["policy"], e["kind"], e["session"]) for e in retired] == [("mock", "config", 2)]
    # Retirement is for good: taking `retired = true` away again is refused.
    with pytest.raises(PoolRefused, match="retired in session 2"):
        plan_run(parse_config(_with(**{"mock-v2": {"kind": "mock", "latency_ms": 5}})), out)


async def test_a_pool_refuses_resume_anyway_and_a_bare_force_new(tmp_path: Path) -> None:
    out = tmp_path / "pool"
    await _session(POOL, out)
    with pytest.raises(PoolRefused, match="--resume-anyway is refused in a pool"):
        plan_run(parse_config(POOL), out, resume="anyway")
    with pytest.raises(ConfigError, match="--discard-pool"):
        plan_run(parse_config(POOL), out, resume="new")
    plan = plan_run(parse_config(POOL), out, resume="new", discard_pool=True)
    assert plan.session == 1
    other = copy.deepcopy(POOL)
    other["run"]["target"] = 0.8
    with pytest.raises(PoolRefused, match=r"run\.target: 0\.9 -> 0\.8"):
        plan_run(parse_config(other), out)


async def test_another_rules_version_stops_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "pool"
    await _session(POOL, out)
    engine = type(games.load("connect-four"))
    monkeypatch.setattr(engine, "rules_version", engine.rules_version + 1)
    with pytest.raises(PoolRefused, match=r"rules version 1; this engine's is 2.*new pool"):
        plan_run(parse_config(POOL), out)


async def test_a_finished_league_becomes_a_pool_once_its_entrants_are_unchanged(
    tmp_path: Path,
) -> None:
    out = tmp_path / "league"
    league = copy.deepcopy(POOL)
    league["run"] = {"name": "pool", "seed": 5, "games": ["connect-four"], "matches": 2}
    await _session(league, out)
    played = _matches(out)
    assert played == []  # a league numbers its matches by the schedule
    changed = _with(mock={"kind": "mock", "latency_ms": 3})
    with pytest.raises(PoolRefused, match="'mock' is not the entrant"):
        plan_run(parse_config(changed), out)
    summary = await _session(_with(newcomer={"kind": "scripted", "baseline": "random"}), out)
    schedule = _matches(out)
    adopted = [row for row in schedule if row[3] == "league"]
    assert len(adopted) == 3 * 2  # the league's six matches, at the places it gave them
    assert [row[0] for row in adopted] == list(range(6))
    assert [row[3] for row in schedule[6:12]] == ["placement"] * 6
    assert set(summary["ratings"]["bt"]) == {"tactician", "random", "mock", "newcomer"}


async def test_a_rebuilt_pool_has_the_grown_pools_tables(tmp_path: Path) -> None:
    out = tmp_path / "pool"
    await _session(POOL, out)
    grown = await _session(
        _with(mock={"kind": "mock", "retired": True}, late={"kind": "mock", "author": "acme"}),
        out,
    )
    copy_of = tmp_path / "copy"
    copy_of.mkdir()
    for path in out.rglob("*"):
        if path.is_file() and not path.name.startswith(DB_NAME):
            target = copy_of / path.relative_to(out)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    rebuild_run(copy_of)
    rebuilt = json.loads((copy_of / "summary.json").read_text())
    for key in ("standings", "ratings", "h2h", "entrants", "history"):
        assert rebuilt[key] == grown[key], key
    assert _matches(copy_of) == _matches(out)  # places, sessions and placement, as played
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        entrants = db.execute("SELECT * FROM policies ORDER BY name").fetchall()
        sessions = db.execute("SELECT number FROM sessions").fetchall()
    with closing(sqlite3.connect(f"file:{copy_of / DB_NAME}?mode=ro", uri=True)) as db:
        assert db.execute("SELECT * FROM policies ORDER BY name").fetchall() == entrants
        assert db.execute("SELECT number FROM sessions").fetchall() == sessions == [(1,), (2,)]
    assert ("late", "acme") in [(e[0], e[2]) for e in entrants]
    # The rebuilt pool refuses a changed entrant as the original does, and plays session 3.
    changed = _with(
        mock={"kind": "mock", "retired": True},
        late={"kind": "mock", "author": "acme", "latency_ms": 3},
    )
    for folder in (out, copy_of):
        with pytest.raises(PoolRefused, match="'late' is not the entrant"):
            plan_run(parse_config(changed), folder)
    same = _with(mock={"kind": "mock", "retired": True}, late={"kind": "mock", "author": "acme"})
    assert plan_run(parse_config(same), copy_of).session == 3


def _roster_pool(tmp_path: Path) -> dict[str, Any]:
    config = copy.deepcopy(POOL)
    config["run"]["roster_cap"] = 1
    config["policies"] = {
        "acme-strong": {"kind": "scripted", "baseline": "tactician", "author": "acme"},
        "acme-weak": {"kind": "scripted", "baseline": "random", "author": "acme"},
        "other": {"kind": "mock", "author": "someone"},
    }
    return config


async def test_the_roster_rule_retires_the_authors_lowest_rated_entrant(tmp_path: Path) -> None:
    out = tmp_path / "pool"
    summary = await _session(_roster_pool(tmp_path), out)
    entrant = {e["name"]: e for e in summary["entrants"]}
    assert entrant["acme-weak"]["status"] == "retired"
    assert entrant["acme-weak"]["retired"].startswith("roster: author 'acme' had 2 active")
    assert entrant["acme-strong"]["status"] == entrant["other"]["status"] == "active"
    assert summary["pool"]["retired_by_roster"] == ["acme-weak"]
    # Retired once its placement was over: it played its placement, and nothing after.
    mine = [row[3] for row in _matches(out) if "acme-weak" in row[1]]
    assert mine == ["placement"] * 4
    ledger = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    retired = [e for e in ledger if e.get("event") == "entrant_retired"]
    assert [(e["policy"], e["kind"]) for e in retired] == [("acme-weak", "roster")]
    assert retired[0]["why"] == entrant["acme-weak"]["retired"]


def test_a_retirement_is_a_typed_value_and_one_stored_before_types_reads_as_one() -> None:
    from arena.league.pool import CONFIG_WHY, Retirement

    roster = Retirement("roster", "roster: author 'acme' had 2 active entrants", 3)
    assert Retirement.from_json(roster.to_json()) == roster
    assert Retirement.by_config(2) == Retirement("config", CONFIG_WHY, 2)
    # Stored before retirements had a kind: the config's says so in words, the roster's not.
    assert Retirement.from_json({"why": CONFIG_WHY, "session": 2}).kind == "config"
    assert Retirement.from_json({"why": "roster: author 'acme' ...", "session": 3}).kind == "roster"
    with pytest.raises(ValueError, match="retirement kind 'vote'"):
        Retirement.from_json({"kind": "vote", "why": "?", "session": 1})


async def test_the_roster_rule_breaks_a_tie_by_the_earliest_added(tmp_path: Path) -> None:
    from arena.league.pool import PoolRounds
    from arena.league.run import begin
    from arena.league.store import LeagueStore
    from tests.arena.results.leagues import match_games

    out = tmp_path / "pool"
    plan = plan_run(parse_config(_roster_pool(tmp_path)), out)
    store = LeagueStore.open_for_run(out)
    try:
        begin(plan, store, lambda replay: None)
        rounds = PoolRounds(plan, store)
        order = ["acme-strong", "acme-weak", "other"]
        # Both acme entrants split a match with `other`: equal ratings.
        even = match_games(0, "acme-strong", "other", (1.0, 0.0))
        even += match_games(1, "acme-weak", "other", (1.0, 0.0))
        assert rounds._roster(even, order, list(order)) == ["acme-weak", "other"]
        assert rounds.retired == ["acme-strong"]
        # Never one without a rated match: with none rated, nobody goes; with only the
        # stronger one unrated, the rated one goes though it won.
        rounds = PoolRounds(plan, store)
        assert rounds._roster([], order, list(order)) == order
        assert rounds.retired == []
        won = match_games(2, "acme-weak", "other", (1.0, 1.0))
        assert rounds._roster(won, order, list(order)) == ["acme-strong", "other"]
    finally:
        store.close()


KILLED = """\
[run]
name = "pool"
seed = 5
games = ["connect-four"]
pool = true
matches = 6
placement_matches = 2
round_matches = 4
target = 0.99
[deadlines]
first_reply_s = 1
decision_s = 5
[policies.tactician]
kind = "scripted"
baseline = "tactician"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock]
kind = "mock"
[policies.faulty]
kind = "mock"
faults = { illegal = 0.3 }
"""


def _arena_run(config: Path, out: Path, kill_at: str | None = None) -> int:
    import os
    import subprocess
    import sys

    from arena.record.crash import KILL_AT

    env = {k: v for k, v in os.environ.items() if k != KILL_AT}
    if kill_at:
        env[KILL_AT] = kill_at
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out),
               "--no-progress"]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, timeout=300).returncode


def _outcome(out: Path) -> tuple[object, ...]:
    """What must not depend on a kill: the schedule (sequence number, match, phase), every
    stored game's result, and the ratings."""
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        games_ = db.execute(
            "SELECT episode, game_index, match_index, scores, reason, plies FROM games ORDER BY 1, 2"
        ).fetchall()
    summary = json.loads((out / "summary.json").read_text())
    schedule = [(seq, match, phase) for seq, match, _, phase in _matches(out)]
    return schedule, games_, summary["ratings"]["bt"], summary["ratings"]["elo"]


@pytest.mark.slow  # `arena run` in subprocesses, killed and resumed
@pytest.mark.parametrize("kill_at", ["scheduled@1", "placed", "scheduled@2"])
def test_a_pool_session_killed_and_resumed_plays_what_an_unbroken_one_plays(
    tmp_path: Path, kill_at: str
) -> None:
    config = tmp_path / "pool.toml"
    config.write_text(KILLED, encoding="utf-8")
    _arena_run(config, tmp_path / "unbroken")
    assert _arena_run(config, tmp_path / "killed", kill_at) == -9  # SIGKILL at the crash point
    assert _arena_run(config, tmp_path / "killed") == 0
    unbroken, killed = _outcome(tmp_path / "unbroken"), _outcome(tmp_path / "killed")
    assert len(unbroken[0]) > 12  # the placement (6 pairs x 2) and at least one round
    assert killed == unbroken
