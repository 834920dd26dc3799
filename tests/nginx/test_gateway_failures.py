"""Leagues behind a gateway that fails every reply: one that gives up exactly at `retry_s`
(the first attempt gets its 504, the retry's own deadline passes just before the next), and
one that resets every reply mid-body. Neither charges the seats; both stop the run (exit 3)
naming what to change, instead of ending in a league of no-contests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.record.causes import SEAT
from tests.nginx.conftest import Gateway, StartMock
from tests.nginx.league import llm_policy, play, write_league

pytestmark = pytest.mark.nginx

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("breaker_failures", [3, 1000])
def test_a_gateway_that_gives_up_at_retry_s_charges_no_seat_and_stops_the_run(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway, breaker_failures: int
) -> None:
    """Nginx waits 1 s for the model, which answers in 1.3 s; first_reply_s = 2 and retry_s = 1.
    The first attempt gets the gateway's 504; the retry's own deadline (1 s, less the seat's
    lead) passes just before nginx would have answered its 504. That timeout follows the
    gateway's failure in the same decision: the infrastructure's, so the games are
    no-contests, replayed, spoiled again, and the run stops naming the gateway's wait. With
    the circuit breaker, the retries are cut once it opens; without (1000 failures in a row),
    every retry is sent and times out."""
    upstream = mock_llm(latency_ms=1300)
    nginx = gateway(upstream.port, location="proxy_read_timeout 1s;")
    deadlines = {"first_reply_s": 2, "retry_s": 1, "decision_s": 3.2}
    config = write_league(tmp_path, "gateway-at-retry", llm_policy(f"{nginx.url}/v1"),
                          deadlines=deadlines, run={"breaker_failures": breaker_failures})  # fmt: skip
    played = play(config, timeout_s=150)
    assert played.returncode == 3, played.why()
    assert any(r["status"] == 504 for r in nginx.access())
    charged = [a for f in played.fallbacks() for a in f.attempts if a.side == SEAT]
    assert charged == [], charged[:3]  # 0 seat timeouts
    assert [f for f in played.fallbacks() if f.side == SEAT] == []
    if breaker_failures == 1000:  # the retries were sent, and timed out: not the seat's
        assert any(a.cause == "timeout" for f in played.fallbacks() for a in f.attempts)
    [event] = played.events("endpoint_misconfigured")
    for named in ("proxy_read_timeout", "first_reply_s = 2 s", "retry_s = 1 s"):
        assert named in event["fix"], event["fix"]
    assert "first_reply_s" in played.stderr
    assert "run the same command to resume" in played.stderr


@pytest.fixture
def hostile() -> Iterator[int]:
    """The hostile stand-in of tests/chaos in a process of its own; its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.chaos.hostile"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().decode().strip()
        yield int(url.rsplit(":", 1)[1])
    finally:
        process.kill()
        process.wait(timeout=10)


def test_a_gateway_that_resets_every_reply_mid_body_stops_the_run(
    tmp_path: Path, gateway: Gateway, hostile: int
) -> None:
    """Behind nginx the upstream sends half of every completion, then resets: nginx passes
    the head and the half on and cuts the client's connection. breaker_failures (3) of them
    in a row are a misconfigured endpoint: one endpoint_misconfigured event, exit 3, no
    flapping circuit."""
    nginx = gateway(hostile, location="proxy_buffering off;")
    model = llm_policy(f"{nginx.url}/reset/v1", model="m")
    played = play(write_league(tmp_path, "mid-body-reset", model), timeout_s=120)
    assert played.returncode == 3, played.why()
    [event] = played.events("endpoint_misconfigured")
    assert event["status"] is None
    assert "cut off before its body ends" in event["fix"]
    assert len(played.events("endpoint_down")) <= 1
    assert "exchanges dropped before the body ended" in played.stderr
