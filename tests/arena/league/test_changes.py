"""A league's resume and a pool's next session take the same changes of config: what the
table of settings declares `connects` or `runs`, and refuse what `plays` or `counts`;
a pool also takes a raised `matches`, `target` and `round_matches`, and plays on."""

from __future__ import annotations

import copy
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena.config import ConfigError, parse_config
from arena.config.settings import SETTINGS
from arena.league.plan import plan_run
from arena.league.pool import PoolRefused
from arena.league.run import begin, execute, open_session
from arena.league.store import DB_NAME, LeagueStore

pytestmark = pytest.mark.anyio

RUN: dict[str, Any] = {
    "run": {"name": "changes", "seed": 5, "games": ["connect-four"], "matches": 2},
    "deadlines": {"first_reply_s": 1, "decision_s": 5},
    "policies": {
        "model": {"kind": "llm", "provider": "anthropic", "model": "m", "layout": "chat",
                  "base_url": "http://127.0.0.1:9"},
        "mock": {"kind": "mock"},
        "tactician": {"kind": "scripted", "baseline": "tactician"},
    },
}  # fmt: skip


def _config(pool: bool, path: str = "", value: Any = None) -> dict[str, Any]:
    """The run's config (a pool's with `pool`), `path` (dotted) set to `value`."""
    config = copy.deepcopy(RUN)
    config["run"]["pool"] = pool
    if path:
        *where, key = path.split(".")
        table = config
        for part in where:
            table = table.setdefault(part, {})
        table[key] = value
    return config


def _stored(config: dict[str, Any], out: Path) -> None:
    """A run folder whose first session began (its config and entrants stored), no game
    played: what the next session is checked against."""
    plan = open_session(plan_run(parse_config(config, keys=False), out))
    store = LeagueStore.open_for_run(out)
    try:
        begin(plan, store, lambda replay: None)
    finally:
        store.close()


def _taken(config: dict[str, Any], out: Path) -> bool:
    """Whether the next session is let in (True) or refused (False)."""
    try:
        plan_run(parse_config(config, keys=False), out)
    except ConfigError:
        return False
    return True


CHANGES = [
    # connects: where and how requests go
    ("connects", "policies.model.base_url", "http://127.0.0.1:10"),
    ("connects", "policies.model.api_key_env", "SOME_KEY"),
    ("connects", "policies.model.headers", {"x-tenant": "lab"}),
    ("connects", "policies.model.idle_expiry_s", 2.0),
    ("connects", "run.trust", "system"),
    # runs: how the run is carried out or reported
    ("runs", "policies.model.max_connections", 2),
    ("runs", "policies.model.price", {"input_per_mtok": 1.0, "output_per_mtok": 2.0}),
    ("runs", "policies.model.prompt_cache", True),
    ("runs", "run.concurrency", 3),
    ("runs", "run.endpoint_down_s", 60.0),
    ("runs", "run.budget_matches", 100),
    # plays: how a policy plays, or the games themselves
    ("plays", "policies.model.temperature", 0.5),
    ("plays", "policies.model.model", "m-2"),
    ("plays", "policies.mock.latency_ms", 5),
    ("plays", "policies.tactician.baseline", "random"),
    ("plays", "deadlines.decision_s", 9),
    ("plays", "run.seed", 6),
    # counts: which games are played and what they count for
    ("counts", "policies.mock.author", "lab"),
    ("counts", "run.max_infra_share", 0.5),
    ("counts", "run.record_prompts", False),
]  # fmt: skip


def _declared(path: str) -> str:
    """The table's path of a config path: a policy's name is `*`."""
    parts = path.split(".")
    return ".".join(["policies", "*", *parts[2:]] if parts[0] == "policies" else parts)


@pytest.mark.parametrize(("effect", "path", "value"), CHANGES, ids=[c[1] for c in CHANGES])
def test_a_resume_and_a_pool_session_take_and_refuse_the_same_change(
    tmp_path: Path, effect: str, path: str, value: Any
) -> None:
    assert SETTINGS[_declared(path)].effect == effect
    taken = effect in ("connects", "runs")
    for pool in (False, True):
        out = tmp_path / ("pool" if pool else "league")
        _stored(_config(pool), out)
        assert _taken(_config(pool), out)  # the same config goes on
        assert _taken(_config(pool, path, value), out) == taken, "pool" if pool else "league"


async def test_a_refused_play_change_names_it_in_a_league_and_in_a_pool(tmp_path: Path) -> None:
    _stored(_config(False), tmp_path / "league")
    with pytest.raises(ConfigError, match=r"policies\.model\.temperature: null -> 0\.5"):
        plan_run(parse_config(_config(False, "policies.model.temperature", 0.5), keys=False),
                 tmp_path / "league")  # fmt: skip
    _stored(_config(True), tmp_path / "pool")
    with pytest.raises(PoolRefused, match=r"'model' is not the entrant.*temperature: added"):
        plan_run(parse_config(_config(True, "policies.model.temperature", 0.5), keys=False),
                 tmp_path / "pool")  # fmt: skip


@pytest.mark.parametrize(("path", "raised", "lowered"), [
    ("run.matches", 3, 1), ("run.target", 0.95, 0.8), ("run.round_matches", 16, 4),
])  # fmt: skip
def test_a_pool_takes_a_raise_a_league_does_not(
    tmp_path: Path, path: str, raised: Any, lowered: Any
) -> None:
    _stored(_config(True), tmp_path / "pool")
    assert _taken(_config(True, path, raised), tmp_path / "pool")
    with pytest.raises(PoolRefused, match=rf"{path}: .* -> {lowered} \(a pool takes it raised"):
        plan_run(parse_config(_config(True, path, lowered), keys=False), tmp_path / "pool")
    _stored(_config(False), tmp_path / "league")
    assert not _taken(_config(False, path, raised), tmp_path / "league")


POOL: dict[str, Any] = {
    "run": {
        "name": "pool", "seed": 5, "games": ["connect-four"], "pool": True, "matches": 2,
        "placement_matches": 2, "round_matches": 4, "target": 0.999,
    },
    "deadlines": {"first_reply_s": 1, "decision_s": 5},
    "policies": {
        "tactician": {"kind": "scripted", "baseline": "tactician"},
        "random": {"kind": "scripted", "baseline": "random"},
        "mock": {"kind": "mock"},
    },
}  # fmt: skip


def _schedule(out: Path) -> list[tuple[str, int, str]]:
    with closing(sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)) as db:
        return db.execute("SELECT id, session, phase FROM matches ORDER BY seq").fetchall()


async def test_a_pool_that_played_every_pair_to_its_matches_plays_on_when_raised(
    tmp_path: Path,
) -> None:
    out = tmp_path / "pool"
    first = await execute(plan_run(parse_config(POOL), out))
    assert not first.failed
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["stopped_by"]
        == "every pair of active entrants has played its 2 matches (run.matches)"
    )
    before = _schedule(out)
    assert len(before) == 3 * 2  # the placement: every pair its two matches, nothing more
    raised = copy.deepcopy(POOL)
    raised["run"]["matches"] = 4
    raised["run"]["concurrency"] = 2  # and a setting that changes no one's play
    second = await execute(plan_run(parse_config(raised), out))
    assert not second.failed
    after = _schedule(out)
    assert after[: len(before)] == before  # the first session's matches, as they were
    new = after[len(before) :]
    assert new
    assert all(session == 2 and phase == "round" for _, session, phase in new)
    pairs: dict[str, int] = {}
    for match_id, _, _ in after:
        pair = match_id.split("-", 3)[-1]  # connect-four-k<n>-<first>-vs-<second>
        pairs[pair] = pairs.get(pair, 0) + 1
    assert max(pairs.values()) <= 4  # no pair past the new cap
    assert sum(pairs.values()) > 3 * 2
    assert second.played > 0
