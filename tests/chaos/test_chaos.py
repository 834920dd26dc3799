"""The chaos suite: whatever a provider does, the run finishes, every decision stays in its
bound, the cause is recorded, `arena verify` passes, and no key shows anywhere.

Every fault mode of the hostile server (`hostile.py`) is played for each wire protocol,
all at once: a league of the tactician against one model behind that mode.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from arena.cli.verify import audit_folder
from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import RunResult, execute
from arena.record.causes import INFRASTRUCTURE_CAUSES
from arena.record.replay import load_replay
from tests.chaos.hostile import MODES, hostile_process
from tests.timing import MARGIN_S

pytestmark = pytest.mark.anyio

KEY = "sk-chaos-marker-0123456789"
PROTOCOLS = ("openai", "anthropic", "gemini")
WAITING = {"first_reply_s": 0.5, "retry_s": 0.3, "decision_s": 0.9}
"""For the modes that never answer in time: short, so that they cost seconds."""
ANSWERING = {"first_reply_s": 4.0, "retry_s": 2.0, "decision_s": 6.0}
"""For the modes that answer at once (well, badly or after quick retries): wide, so that
with a dozen leagues at once on two cores no answer, and no retry loop, is ever late."""


def _deadlines(mode: str) -> dict[str, float]:
    waits = EXPECTED[mode] == "timeout" or "timeout" in ALSO.get(mode, set())
    return WAITING if waits else ANSWERING


CAP = 64 * 1024

EXPECTED: dict[str, str | None] = {
    "never": "timeout",
    "stall": "timeout",
    "drip": "timeout",
    "endless": "provider_error",
    "over_cap": "provider_error",
    "invalid_json": "provider_error",
    "deep_json": "provider_error",
    "surrogate": None,
    "non_utf8": None,
    "429_long": "rate_limited",
    "429_zero": "rate_limited",
    "5xx_burst": None,
    "reset": "transport",  # or a timeout, when time runs out in a retry of it
    "http10": None,
    "content_null": "empty",
    "tool_call": "empty",
    "echo_key": None,
}
"""The cause each mode leaves on the model's decisions (None: every decision its own)."""

ALSO: dict[str, set[str | None]] = {"reset": {"timeout"}}
"""Causes a mode may leave besides its own: a dropped connection is retried, and the
decision's time may run out in a retry."""

MISCONFIGURED = {
    "endless": "bodies that are no completion",
    "over_cap": "bodies that are no completion",
    "invalid_json": "bodies that are no completion",
    "deep_json": "bodies that are no completion",
    "reset": "exchanges dropped before the body ended",
}
"""Modes that answer every completion with a body that is no completion, or reset every
reply before its body ends, and what the stop says: after `breaker_failures` of them in a
row the run stops (misconfigured), instead of waiting on an endpoint that answers every
probe."""

BREAKER = {"not_connected", "transport"}
"""Causes an open circuit leaves: a question not sent, a request in flight cut."""


def _base_url(url: str, mode: str, protocol: str) -> str:
    return f"{url}/{mode}/v1" if protocol == "openai" else f"{url}/{mode}"


def _config(name: str, policies: dict[str, Any], deadlines: dict[str, float]) -> dict[str, Any]:
    return {
        "run": {"name": name, "seed": 4, "games": ["connect-four"], "matches": 1,
                "concurrency": 8},
        "deadlines": deadlines,
        "policies": {"tactician": {"kind": "scripted", "baseline": "tactician"}, **policies},
    }  # fmt: skip


MODEL = "marker-model-7f3a"
"""A model name no prompt may carry, whatever failed."""


def _model(url: str, mode: str, protocol: str) -> dict[str, Any]:
    return {
        "kind": "llm", "provider": protocol, "model": MODEL, "api_key_env": "CHAOS_KEY",
        "base_url": _base_url(url, mode, protocol), "max_response_bytes": CAP,
    }  # fmt: skip


def _files_with_the_key(folder: Path) -> list[Path]:
    marker = KEY.encode()
    return [p for p in folder.rglob("*") if p.is_file() and marker in p.read_bytes()]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAOS_KEY", KEY)


async def test_every_fault_mode_of_every_protocol(tmp_path: Path) -> None:
    results: dict[tuple[str, str], RunResult] = {}
    async with hostile_process() as url:
        # A dozen leagues at a time, the ones that wait out every deadline first: enough
        # at once to finish quickly, few enough that no sound answer is late on two cores.
        limit = anyio.CapacityLimiter(12)

        async def play(mode: str, protocol: str) -> None:
            policies = {"model": _model(url, mode, protocol)}
            config = _config(f"{mode}-{protocol}", policies, _deadlines(mode))
            plan = plan_run(parse_config(config), tmp_path / mode / protocol)
            async with limit:  # the faults are the games' (the preflight has tests of its own)
                results[(mode, protocol)] = await execute(plan, check_endpoints=False)

        slow_first = sorted(MODES, key=lambda m: _deadlines(m) is ANSWERING)
        async with anyio.create_task_group() as tg:
            for mode in slow_first:
                for protocol in PROTOCOLS:
                    tg.start_soon(play, mode, protocol)
    for (mode, protocol), result in results.items():
        where = f"{mode} over {protocol}"
        out = tmp_path / mode / protocol
        assert not result.failed, f"{where}: {result.failed}"
        if mode in MISCONFIGURED:
            assert result.misconfigured, f"{where}: {result.stopped}"
            assert MISCONFIGURED[mode] in result.stopped, where
            assert "base_url" in result.stopped, where
            assert result.interrupted, f"{where}: resumable, as after a kill"
        else:
            assert not result.stopped, f"{where}: {result.stopped}"
            # A game the infrastructure spoiled is a no-contest, played again at most
            # replay_no_contest (2) times: the two games, and up to two replays of each.
            assert result.played == 2 + result.replays, where
            assert result.replays <= 2 * 2, where
            if EXPECTED[mode] in INFRASTRUCTURE_CAUSES:
                assert result.replays == 2 * 2, f"{where}: every play of both games is spoiled"
        causes: set[str | None] = set()
        for path in sorted((out / "replays").glob("*.json")):
            for game in load_replay(path).games:
                for ply in game.plies:
                    for d in ply.decisions:
                        if not d.attempts:
                            continue  # the tactician's
                        assert d.latency_s < _deadlines(mode)["decision_s"] + MARGIN_S, where
                        causes.update(a.cause for a in d.attempts)
                        for a in d.attempts:  # neither the model's name nor its endpoint
                            assert MODEL not in (a.prompt or ""), where
                            assert url.removeprefix("http://") not in (a.prompt or ""), where
        allowed = {EXPECTED[mode], *ALSO.get(mode, ())}
        if EXPECTED[mode] in INFRASTRUCTURE_CAUSES:
            allowed |= BREAKER  # three such failures in a row open the endpoint's circuit
        if causes or mode not in MISCONFIGURED:  # a stopped run may have stored no game
            assert EXPECTED[mode] in causes, f"{where}: causes {causes}"
            assert causes <= allowed, f"{where}: causes {causes}"
        assert audit_folder(out).problems == [], where
        assert _files_with_the_key(out) == [], where


def test_no_key_on_the_console_or_in_any_file(tmp_path: Path) -> None:
    async def run() -> subprocess.CompletedProcess[str]:
        async with hostile_process() as url:
            policies = {
                "echo": _model(url, "echo_key", "openai"),
                "busy": _model(url, "429_zero", "anthropic"),
                "burst": _model(url, "5xx_burst", "gemini"),
            }
            config = tmp_path / "chaos.toml"
            config.write_text(_toml(_config("console", policies, ANSWERING)))
            command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out",
                       str(tmp_path / "out"), "--no-progress", "--verbose", "--no-preflight"]  # fmt: skip
            env = {**os.environ, "CHAOS_KEY": KEY}
            return await anyio.run_process(command, env=env, check=False)  # type: ignore[return-value]

    done = anyio.run(run)
    # every game of the throttled model is a no-contest: the run says so and exits 1
    assert done.returncode == 1, done.stderr[-2000:]
    assert b"every game between burst and busy was a no-contest" in done.stderr
    assert b"every game between busy and echo was a no-contest" in done.stderr
    assert KEY.encode() not in done.stdout
    assert KEY.encode() not in done.stderr
    assert _files_with_the_key(tmp_path / "out") == []
    echoed = [
        p for p in (tmp_path / "out" / "replays").glob("*.json") if b"[redacted]" in p.read_bytes()
    ]
    assert echoed, "the echoing model's replies were stored, with its key redacted"


def _toml(data: dict[str, Any]) -> str:
    lines = []
    for table, values in data.items():
        if table == "policies":
            for name, policy in values.items():
                lines.append(f"[policies.{name}]")
                lines += [f"{k} = {_value(v)}" for k, v in policy.items()]
            continue
        lines.append(f"[{table}]")
        lines += [f"{k} = {_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def _value(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)
