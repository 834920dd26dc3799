"""The writer's group commit: episodes that finish while a group is being stored are kept as
the next group, every replay of it on the disk (its folder synced once) before the one
transaction that stores them all; each episode still counted and announced on its own."""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

import arena.league.store as store_module
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.store import LeagueStore
from arena.record import crash
from arena.record.replay import Replay

POLICIES = {"a": {"kind": "scripted"}, "b": {"kind": "scripted", "baseline": "random"}}


def _plan(tmp_path: Path, matches: int, concurrency: int) -> Any:
    config = {
        "run": {
            "name": "grouped",
            "seed": 5,
            "games": ["connect-four"],
            "matches": matches,
            "concurrency": concurrency,
        },
        "deadlines": {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.8},
        "policies": POLICIES,
    }
    return plan_run(parse_config(config), tmp_path)


def test_episodes_finished_during_a_store_are_kept_as_one_group_files_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps: list[tuple[str, str]] = []
    groups: list[int] = []
    keep_all, record = LeagueStore.keep_all, LeagueStore.record
    write, sync = store_module.write_atomic, store_module.fsync_folder

    def slow_keep_all(store: LeagueStore, replays: Sequence[Replay], out: Path) -> Any:
        groups.append(len(replays))
        if len(groups) == 1:
            time.sleep(0.5)  # the other episodes (scripted: milliseconds each) end meanwhile
        return keep_all(store, replays, out)

    def logged_write(path: Path, text: str, **options: Any) -> None:
        steps.append(("file", path.stem))
        write(path, text, **options)

    def logged_sync(folder: Path) -> None:
        steps.append(("folder", folder.name))
        sync(folder)

    def logged_record(store: LeagueStore, replay: Replay, path: Path, digest: str) -> Any:
        steps.append(("row", replay.episode))
        return record(store, replay, path, digest)

    monkeypatch.setattr(LeagueStore, "keep_all", slow_keep_all)
    monkeypatch.setattr(store_module, "write_atomic", logged_write)
    monkeypatch.setattr(store_module, "fsync_folder", logged_sync)
    monkeypatch.setattr(LeagueStore, "record", logged_record)
    plan = _plan(tmp_path, matches=3, concurrency=8)  # 6 episodes, all in flight at once
    result = anyio.run(execute, plan)

    assert result.played == 6
    assert result.failed == []
    assert sum(groups) == 6
    assert max(groups) > 1, groups  # those that ended while the first group was stored
    # Per group: every file, then one sync of the replays' folder, then every row.
    at = 0
    for size in groups:
        group = steps[at : at + 2 * size + 1]
        assert [kind for kind, _ in group] == ["file"] * size + ["folder"] + ["row"] * size
        assert [name for kind, name in group if kind == "file"] == [
            name for kind, name in group if kind == "row"
        ]
        assert group[size] == ("folder", "replays")
        at += 2 * size + 1
    assert at == len(steps)
    with _open(plan.out) as stored:
        assert len(stored.finished_episodes()) == 6


def _open(out: Path) -> closing[LeagueStore]:
    return closing(LeagueStore.open_readonly(out))


def test_a_group_the_store_refuses_is_stored_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One episode that cannot be stored fails alone; the others of its group are stored."""
    record = LeagueStore.record
    keep_all = LeagueStore.keep_all
    groups: list[int] = []

    def slow_keep_all(store: LeagueStore, replays: Sequence[Replay], out: Path) -> Any:
        groups.append(len(replays))
        if len(groups) == 1:
            time.sleep(0.5)
        return keep_all(store, replays, out)

    def refuse_one(store: LeagueStore, replay: Replay, path: Path, digest: str) -> Any:
        if replay.episode.endswith("k2-a-vs-b-g1"):
            raise ValueError("surrogates not allowed")
        return record(store, replay, path, digest)

    monkeypatch.setattr(LeagueStore, "keep_all", slow_keep_all)
    monkeypatch.setattr(LeagueStore, "record", refuse_one)
    plan = _plan(tmp_path, matches=3, concurrency=8)
    result = anyio.run(execute, plan)
    assert max(groups) > 1, groups
    assert [f.episode for f in result.failed] == ["connect-four-k2-a-vs-b-g1"]
    assert "surrogates not allowed" in result.failed[0].error
    assert result.played == 5
    with _open(plan.out) as stored:
        assert len(stored.finished_episodes()) == 5


@pytest.mark.parametrize(
    ("armed", "limits"),
    [
        ({"store": 3}, 3),  # the third store ends its group: three stored at the kill
        ({"replay": 3}, 2),  # two stored, the third file begins the next group
        ({"replay": 1}, 1),
        ({}, None),
    ],
)
def test_an_armed_kill_bounds_the_group(
    monkeypatch: pytest.MonkeyPatch, armed: dict[str, int], limits: int | None
) -> None:
    monkeypatch.setattr(crash, "_LEFT", dict(armed))
    assert crash.group_limit() == limits
