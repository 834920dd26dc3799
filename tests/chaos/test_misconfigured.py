"""An endpoint that answers, but never usefully, stops the run at once: exit status 3, one
`endpoint_misconfigured` event with the fix, every finished game kept, and the same command
resumes once the endpoint is fixed. A gateway that times out before the model answers is
found out after a replay is spoiled again, and its wait is named."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.cli.verify import audit_folder
from arena.record.causes import INFRASTRUCTURE
from arena.record.replay import load_replay
from arena.record.validity import BREAKER_NOTES
from tests.chaos.hostile import GATEWAY_WAIT_S

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    """The hostile server in a process of its own; its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.chaos.hostile"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        yield process.stdout.readline().decode().strip()
    finally:
        process.kill()
        process.wait(timeout=10)


ROOMY = "first_reply_s = 3\nretry_s = 2\ndecision_s = 5"


def _config(folder: Path, url: str, mode: str, deadlines: str = ROOMY) -> Path:
    path = folder / f"{mode}.toml"
    path.write_text(
        f"""
[run]
name = "{mode}"
seed = 5
games = ["connect-four"]
matches = 2
concurrency = 2
[deadlines]
{deadlines}
[policies.tactician]
kind = "scripted"
[policies.model]
kind = "llm"
provider = "openai"
model = "m"
base_url = "{url}/{mode}/v1"
"""
    )
    return path


def _run(config: Path, out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out)]
    return subprocess.run(
        [*command, "--no-progress", *more], cwd=ROOT, capture_output=True, text=True, timeout=180
    )


def _events(out: Path, name: str) -> list[dict[str, Any]]:
    lines = (out / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == name]


def test_a_gateway_that_refuses_every_body_stops_the_run_with_exit_3_and_resumes(
    hostile: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    stopped = _run(_config(tmp_path, hostile, "too_large"), out)
    assert stopped.returncode == 3, stopped.stderr
    assert "client_max_body_size" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    [event] = _events(out, "endpoint_misconfigured")
    assert event["policy"] == "model"
    assert event["status"] == 413
    assert event["url"] == f"{hostile}/too_large/v1"
    assert "413 Request Entity Too Large" in event["body"]
    assert len(event["body"]) <= 200
    assert audit_folder(out).problems == []
    # Fixed: the same run folder resumes and finishes (the URL changed, so anyway).
    config = _config(tmp_path, hostile, "sound")
    (tmp_path / "too_large.toml").write_text(config.read_text().replace("sound", "too_large", 1))
    resumed = _run(tmp_path / "too_large.toml", out, "--resume-anyway")
    assert resumed.returncode == 0, resumed.stderr
    replays = sorted((out / "replays").glob("*.json"))
    assert len(replays) == 4  # 2 matches x 2 seat orders, none lost, none twice
    assert audit_folder(out).problems == []


def test_a_key_refused_at_the_first_completion_stops_at_once(hostile: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    stopped = _run(_config(tmp_path, hostile, "refused_key"), out)
    assert stopped.returncode == 3, stopped.stderr
    [event] = _events(out, "endpoint_misconfigured")
    assert event["status"] == 401
    assert "api_key_env" in event["fix"]
    assert not list((out / "replays").glob("*.json"))  # cut before any game finished


def test_gateway_timeouts_alone_are_the_infrastructures_and_stop_the_run_naming_the_wait(
    hostile: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    deadlines = "first_reply_s = 1.0\nretry_s = 0.6\ndecision_s = 1.8"
    stopped = _run(_config(tmp_path, hostile, "gateway_504", deadlines), out)
    assert stopped.returncode == 3, stopped.stderr
    [event] = _events(out, "endpoint_misconfigured")
    assert event["status"] == 504
    assert "first_reply_s = 1 s" in event["fix"]
    assert f"about {GATEWAY_WAIT_S:.1f} s" in event["fix"]
    assert "proxy_read_timeout" in event["fix"]
    seen_gateway = False
    for path in (out / "replays").glob("*.json"):
        for game in load_replay(path).games:
            for fallback in game.fallbacks:
                for attempt in fallback.attempts:
                    # Never the seat's: a gateway's 504, or what the circuit it opened did.
                    assert attempt.side == INFRASTRUCTURE, attempt
                    if attempt.cause == "http_status":
                        seen_gateway = True
                        assert attempt.status == 504
                    else:
                        assert attempt.cause == "timeout" or attempt.error.startswith(
                            BREAKER_NOTES
                        ), attempt
    assert seen_gateway
    assert audit_folder(out).problems == []
