"""Leagues on a real Ray cluster of this machine: equal to their local runs, a worker killed
by its pid mid-run, the driver killed and resumed.

The cluster is started once for the module (`ray.init` with two CPUs, as CI's machine has);
each league is played as a user plays it, `arena run ... --ray-address`, in its own process.
Without Ray these tests skip, except where COG_REQUIRE_RAY=1 (CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.cli.verify import audit_folder
from arena.config import load_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.league.store import LeagueStore
from arena.record.ledger import read_current
from tests.arena.league.test_resume import _finished
from tests.golden import replay_digest

ROOT = Path(__file__).resolve().parents[3]
PLAYERS = ROOT / "players"
RUN_S = 300
"""The longest one league of these tests may take (they take seconds)."""

try:
    import ray
except ImportError:  # pragma: no cover - CI installs the extra
    ray = None


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A Ray cluster of this machine, two CPUs: its address."""
    if ray is None:
        if os.environ.get("COG_REQUIRE_RAY"):
            pytest.fail("COG_REQUIRE_RAY is set but Ray is not installed: pip install -e '.[ray]'")
        pytest.skip("Ray is not installed (pip install -e '.[ray]')")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")  # fmt: skip
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


SCRIPTED = """
[run]
name = "scripted"
seed = 11
games = ["connect-four", "breakthrough", "stratego"]
matches = 1
concurrency = 2
[policies.tactician]
kind = "scripted"
baseline = "default"
[policies.random]
kind = "scripted"
baseline = "random"
[policies.mock]
kind = "mock"
"""

PROGRAMS = f"""
[run]
name = "programs"
seed = 31
games = ["connect-four", "backgammon"]
matches = 1
concurrency = 2
[game.backgammon]
dice = "derived"
[policies.greedy]
kind = "program"
path = "{PLAYERS / "greedy.py"}"
[policies.random]
kind = "program"
path = "{PLAYERS / "random_player.py"}"
[policies.tactician]
kind = "scripted"
baseline = "default"
"""

SLOW_PLAYER = """
def create(ctx):
    return Slow(ctx)


class Slow:
    def __init__(self, ctx):
        self.ctx = ctx

    def choose_move(self, view):
        total = 0
        for n in range(600_000):  # some tens of ms a move: a card lasts seconds
            total += n
        return view["legal_moves"][total % len(view["legal_moves"])]
"""


def _slow_league(tmp_path: Path, games: str) -> Path:
    """Two slow programs and the greedy one, so that a kill lands mid-episode."""
    (tmp_path / "slow.py").write_text(SLOW_PLAYER)
    (tmp_path / "slow2.py").write_text(SLOW_PLAYER.replace("total % len", "(total + 1) % len"))
    return _write(tmp_path, f"""
[run]
name = "slow"
seed = 5
games = [{games}]
matches = 1
concurrency = 2
[game.backgammon]
dice = "derived"
[policies.slow]
kind = "program"
path = "slow.py"
[policies.slow2]
kind = "program"
path = "slow2.py"
[policies.greedy]
kind = "program"
path = "{PLAYERS / "greedy.py"}"
""")  # fmt: skip


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "league.toml"
    path.write_text(text)
    return path


def _local(config: Path, out: Path) -> None:
    plan = plan_run(load_config(config), out)
    result = anyio.run(lambda: execute(plan, check_endpoints=False))
    assert result.failed == []
    assert result.played > 0


def _arena_ray(config: Path, out: Path, address: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out),
               "--ray-address", address, "--no-progress"]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(process: subprocess.Popen[bytes]) -> str:
    _, err = process.communicate(timeout=RUN_S)
    assert process.returncode == 0, err.decode()[-3000:]
    return err.decode()


def _digests(out: Path, prefix: str = "") -> dict[str, str]:
    return {
        p.name: replay_digest(p)
        for p in sorted((out / "replays").glob(f"{prefix}*.json"))
        if "~" not in p.name
    }


def _stored(out: Path) -> list[str]:
    store = LeagueStore.open_readonly(out)
    try:
        return [row["id"] for row in store.episode_rows()]
    finally:
        store.close()


def _events(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def _summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return data


@pytest.mark.parametrize("league", [SCRIPTED, PROGRAMS], ids=["scripted", "programs"])
def test_a_league_on_ray_equals_its_local_run(tmp_path: Path, cluster: str, league: str) -> None:
    config = _write(tmp_path, league)
    _local(config, tmp_path / "local")
    _finish(_arena_ray(config, tmp_path / "ray", cluster))
    local, on_ray = _digests(tmp_path / "local"), _digests(tmp_path / "ray")
    assert len(local) >= 9
    assert on_ray == local
    assert _summary(tmp_path / "ray")["ratings"] == _summary(tmp_path / "local")["ratings"]
    assert audit_folder(tmp_path / "ray").problems == []
    # The workers' events reach the driver's log: every game's end, each named by its worker.
    events = _events(tmp_path / "ray")
    games = [e for e in events if e["event"] == "game_finished"]
    played = sum(
        len(json.loads(p.read_text())["games"]) for p in (tmp_path / "ray/replays").iterdir()
    )
    assert len(games) == played
    assert all(":" in e.get("worker", "") and e["run"] == json.loads(
        (tmp_path / "ray/config.resolved.json").read_text())["run"]["name"] for e in games)  # fmt: skip
    (started,) = [e for e in events if e["event"] == "run_started"]
    assert started["executor"] == cluster


def _worker_pids(episode_prefix: str) -> list[int]:
    """The Ray workers playing an episode whose id starts with `episode_prefix` (a worker's
    process title is `ray::<task name>`, and the task is named after its episode)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith(f"ray::{episode_prefix}"):
            found.append(int(entry.name))
    return found


def _wait_for(condition: Any, what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


def test_a_worker_killed_by_its_pid_loses_nothing_and_doubles_nothing(
    tmp_path: Path, cluster: str
) -> None:
    config = _slow_league(tmp_path, '"connect-four", "backgammon"')
    out = tmp_path / "ray"
    driver = _arena_ray(config, out, cluster)
    # A board game's worker, mid-game (the schedule plays connect-four first).
    (board_pid, *_) = _wait_for(lambda: _worker_pids("connect-four"), "a connect-four worker")
    os.kill(board_pid, signal.SIGKILL)
    # A card that finished its first game: its worker dies mid-way through the second.
    kept = _wait_for(lambda: list((out / "partial-cards").glob("backgammon-*.json")), "a kept game")
    card = kept[0].name.rpartition("~a")[0]
    (pid,) = _wait_for(lambda: _worker_pids(card), f"the worker playing {card}")
    os.kill(pid, signal.SIGKILL)
    _finish(driver)

    stored = _stored(out)
    assert len(stored) == len(set(stored))
    scheduled = plan_run(load_config(config), tmp_path / "fresh").episode_count()
    assert len([e for e in stored if "~" not in e]) == scheduled
    assert f"{card}~cancelled-a1" in stored
    cut = json.loads((out / "replays" / f"{card}~cancelled-a1.json").read_text())
    assert [g["result"]["ending"] == "no-contest" for g in cut["games"]] == [False, True]
    lost = [e for e in _events(out) if e["event"] == "episode_lost"]
    assert len(lost) == 2
    assert all("WorkerCrashedError" in e["error"] for e in lost)
    assert audit_folder(out).problems == []
    # The board game played again is the game a local run plays.
    _local(config, tmp_path / "local")
    assert _digests(out, "connect-four") == _digests(tmp_path / "local", "connect-four")


def test_a_driver_killed_mid_run_resumes_as_a_local_run_does(tmp_path: Path, cluster: str) -> None:
    config = _slow_league(tmp_path, '"connect-four", "backgammon"')
    out = tmp_path / "ray"
    driver = _arena_ray(config, out, cluster)
    _wait_for(lambda: _finished(out) >= 3, "three stored episodes")
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    before = set(_stored(out))
    err = _finish(_arena_ray(config, out, cluster))
    assert "resuming slow" in err
    stored = _stored(out)
    assert len(stored) == len(set(stored))
    assert before <= set(stored)
    scheduled = plan_run(load_config(config), tmp_path / "fresh").episode_count()
    assert len([e for e in stored if "~" not in e]) == scheduled
    assert audit_folder(out).problems == []
    _local(config, tmp_path / "local")
    assert _digests(out, "connect-four") == _digests(tmp_path / "local", "connect-four")
    # A card the kill cut is cancelled and replaced; every other card is the local run's.
    cut = {e["card"] for e in read_current(out) if e.get("status") == "cancelled"}
    cards = {k: v for k, v in _digests(out, "backgammon").items() if k[:-5] not in cut}
    local_cards = _digests(tmp_path / "local", "backgammon")
    assert cards == {k: local_cards[k] for k in cards}


def test_a_cluster_nobody_runs_is_a_clear_error_at_once(tmp_path: Path) -> None:
    if ray is None and not os.environ.get("COG_REQUIRE_RAY"):
        pytest.skip("Ray is not installed (pip install -e '.[ray]')")
    config = _write(tmp_path, SCRIPTED)
    started = time.monotonic()
    process = _arena_ray(config, tmp_path / "run", "127.0.0.1:1")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "no Ray cluster answers at 127.0.0.1:1" in err.decode()
    assert "ray start --head" in err.decode()
    assert time.monotonic() - started < 30
    assert not (tmp_path / "run" / "replays").exists()
