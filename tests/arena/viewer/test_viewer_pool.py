"""The pool page's data: a standing pool's entrants, statuses and rating history, from
summary.json and, while its first session runs, from the replays; a league has none."""

from __future__ import annotations

import atexit
import copy
import json
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import anyio

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.viewer import build_site
from arena.viewer.pool import pool_data
from tests.arena.viewer.test_viewer import _cached_run, _page_data

POOL: dict[str, Any] = {
    "run": {
        "name": "tiny-pool", "seed": 5, "games": ["connect-four"], "pool": True, "matches": 2,
        "placement_matches": 1, "round_matches": 2, "target": 0.9, "concurrency": 4,
    },
    "deadlines": {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "<b>mock": {"kind": "mock", "author": "Ada & <i>co</i>"},
    },
}  # fmt: skip
"""Session 1 of the tiny pool; session 2 adds `late` and retires `random`. A name and an
author with markup: the page must show them as text."""


def second_session() -> dict[str, Any]:
    """The tiny pool's second session: one newcomer, one retirement."""
    config = copy.deepcopy(POOL)
    config["policies"]["random"]["retired"] = True
    config["policies"]["late"] = {"kind": "mock", "faults": {"unreadable": 0.2}}
    return config


def play_pool(out: Path) -> Path:
    """The tiny pool's two sessions, played into `out`."""
    for config in (POOL, second_session()):
        result = anyio.run(execute, plan_run(parse_config(config), out))
        assert not result.failed
    return out


@cache
def cached_pool() -> Path:
    """The tiny pool for the whole test session (copy it before changing it); removed at exit."""
    root = Path(tempfile.mkdtemp(prefix="cog-view-pool-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return play_pool(root / "pool")


def _copy(tmp_path: Path) -> Path:
    run = tmp_path / "pool"
    shutil.copytree(cached_pool(), run, ignore=shutil.ignore_patterns("view"))
    return run


def test_a_pool_page_has_its_entrants_statuses_and_history(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    data = _page_data(build_site(run) / "index.html")
    summary = json.loads((run / "summary.json").read_text())
    pool = data["pool"]
    assert data["kind"] == "pool"
    assert {e["name"]: e["status"] for e in pool["entrants"]} == {
        "tactician": "active", "random": "retired", "<b>mock": "active", "late": "active",
    }  # fmt: skip
    assert pool["stored"] == ["tactician", "random", "<b>mock", "late"]
    assert pool["sessions"] == [1, 2]
    assert pool["settings"] == summary["pool"]
    by_name = {e["name"]: e for e in pool["entrants"]}
    assert by_name["<b>mock"]["author"] == "Ada & <i>co</i>"
    assert by_name["late"]["first_session"] == 2
    assert by_name["random"]["retired"] == "retired = true in the config"
    own_play = {r["policy"]: r["own_play"] for r in summary["standings"]["overall"]}
    assert {e["name"]: e["own_play"] for e in pool["entrants"]} == own_play


def test_the_entrants_are_in_the_standings_order(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    pool = _page_data(build_site(run) / "index.html")["pool"]
    summary = json.loads((run / "summary.json").read_text())
    order = [r["policy"] for r in summary["standings"]["overall"]]
    assert [e["name"] for e in pool["entrants"]] == order
    ratings = [e["bt"]["rating"] for e in pool["entrants"]]
    assert ratings == sorted(ratings, reverse=True)


def test_a_line_starts_at_its_first_session_and_a_retired_one_stops_at_its_last(
    tmp_path: Path,
) -> None:
    run = _copy(tmp_path)
    pool = _page_data(build_site(run) / "index.html")["pool"]
    summary = json.loads((run / "summary.json").read_text())
    lines = pool["lines"]
    assert [p["session"] for p in lines["tactician"]] == [1, 2]
    assert [p["session"] for p in lines["late"]] == [2]
    assert [p["session"] for p in lines["random"]] == [1]  # retired before session 2
    after = {entry["session"]: entry["bt"] for entry in summary["history"]}
    assert "random" in after[2]  # the fit of sessions 1..2 still rates it: the page cuts it
    assert lines["tactician"][1] == {"session": 2, **after[2]["tactician"]}


def test_a_pool_in_its_first_session_is_drawn_from_its_replays(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    whole = _page_data(build_site(run) / "index.html")["pool"]
    (run / "summary.json").unlink()
    data = _page_data(build_site(run) / "index.html")
    assert data["in_progress"]
    assert data["kind"] == "pool"
    assert data["pool"]["entrants"] == whole["entrants"]
    assert data["pool"]["lines"] == whole["lines"]
    assert data["pool"]["settings"] is None  # the rounds' numbers come with summary.json


def test_a_pool_without_a_store_names_its_entrants_from_the_config(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    (run / "summary.json").unlink()
    for path in run.glob("league.db*"):
        path.unlink()
    entrants = _page_data(build_site(run) / "index.html")["pool"]["entrants"]
    assert {e["name"]: e["status"] for e in entrants}["random"] == "retired"
    assert all(e["fingerprint"] is None for e in entrants)


def test_an_unrated_entrant_goes_last() -> None:
    rated = {"rating": 1500.0, "low": 1400.0, "high": 1600.0, "on_prior": False}
    summary = {
        "standings": {"overall": [{"policy": "b", "own_play": 1.0}, {"policy": "a", "own_play": 0.5}]},
        "entrants": [
            {"name": "new", "status": "placement", "first_session": 3, "last_session": None,
             "bt": None},
            {"name": "a", "status": "active", "first_session": 1, "last_session": 2, "bt": rated},
            {"name": "b", "status": "active", "first_session": 1, "last_session": 2,
             "bt": {**rated, "rating": 1600.0}},
        ],
        "history": [],
    }  # fmt: skip
    pool = pool_data(summary)
    assert [e["name"] for e in pool["entrants"]] == ["b", "a", "new"]
    assert pool["lines"]["new"] == []
    assert pool["entrants"][2]["own_play"] is None


def test_a_league_page_has_no_pool(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(_cached_run("board")[0], run, ignore=shutil.ignore_patterns("view"))
    data = _page_data(build_site(run) / "index.html")
    assert data["kind"] == "league"
    assert data["pool"] is None
