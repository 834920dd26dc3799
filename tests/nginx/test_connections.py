"""Leagues through nginx's connection handling: a gateway that recycles its keep-alive
connections, a flow a NAT forgot in front of a long keep-alive, and a gateway that times
out before the model answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.record.causes import INFRASTRUCTURE, INFRASTRUCTURE_CAUSES
from tests.nginx.conftest import Gateway, Relay, StartMock
from tests.nginx.league import assert_clean, llm_policy, play, write_league

pytestmark = pytest.mark.nginx


def test_a_gateway_closing_each_connection_after_3_requests(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway
) -> None:
    """The gateway ends each connection after its third answer (`Connection: close` on it), and
    any idle for 2 s (this league never pauses that long: the baseline answers at once)."""
    upstream = mock_llm()
    nginx = gateway(upstream.port, server="keepalive_requests 3;\nkeepalive_timeout 2s;")
    played = play(write_league(tmp_path, "recycled", llm_policy(f"{nginx.url}/v1")))
    assert_clean(played)
    seen = nginx.access()
    # nginx did end connections under the client: the third request of each was its last.
    assert max(int(r["connection_requests"]) for r in seen) == 3
    assert len({r["connection"] for r in seen}) >= len(seen) / 3 > 2


IDLE_EXPIRY_S = 0.4
"""The policy's idle expiry: a connection idle longer is closed, not reused."""
FORGET_AFTER_S = IDLE_EXPIRY_S + 0.3
"""The relay forgets a flow quiet this long. The margin covers the time between the last
byte the relay passes and the moment the client's pool takes the connection back."""
OPPONENT_MS = 1000
"""How long the opponent thinks over each move: the model's connections sit idle meanwhile,
well past FORGET_AFTER_S."""


def test_idle_expiry_keeps_requests_off_flows_a_nat_forgot(
    tmp_path: Path,
    mock_llm: StartMock,
    gateway: Gateway,
    relay: Relay,
) -> None:
    """The gateway keeps idle connections for minutes, but the relay between it and the arena
    forgets a flow after FORGET_AFTER_S: a request sent on such a connection is never
    answered, and its decision times out as if the model had not replied (the seat's
    failure). The policy's idle_expiry_s must keep the pool from ever reusing one."""
    upstream = mock_llm()
    nginx = gateway(upstream.port, server="keepalive_timeout 300s;\nkeepalive_requests 10000;")
    forgetful = relay(nginx.port, FORGET_AFTER_S)
    model = llm_policy(f"http://127.0.0.1:{forgetful.port}/v1", idle_expiry_s=IDLE_EXPIRY_S)
    opponent = {"kind": "mock", "latency_ms": OPPONENT_MS}
    played = play(write_league(tmp_path, "forgotten", model, opponent=opponent))
    assert played.returncode == 0, played.why()
    timeouts = [a for a in played.failed_attempts() if a.cause == "timeout"]
    assert timeouts == [], f"{forgetful.swallowed} request(s) went into forgotten flows"
    assert forgetful.swallowed == 0
    # The league gave the pool the chance to reuse a forgotten flow, again and again: with
    # no idle expiry (or idle_expiry_s = 60) this test fails with seat timeouts.
    assert forgetful.idle_spells >= 6, f"only {forgetful.idle_spells} idle spells"
    assert_clean(played)


def test_a_gateway_timeout_is_the_infrastructures_failure_not_the_seats(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway
) -> None:
    """The gateway gives up on the mock after 1 s with a 504; a quarter of the mock's answers take
    1.5 s (the `slow` fault, the same for every retry of a request). The transport retries
    the 504s until the attempt's deadline (first_reply_s = 3) passes: that attempt failed
    on the gateway's 504, not by the seat's slowness, and says so."""
    upstream = mock_llm(faults="slow=0.25", slow_ms=1500)
    nginx = gateway(upstream.port, location="proxy_read_timeout 1s;")
    played = play(write_league(tmp_path, "gateway-timeout", llm_policy(f"{nginx.url}/v1")))
    assert played.returncode == 0, played.why()
    assert played.finished_games() >= 2, played.why()
    assert any(r["status"] == 504 for r in nginx.access()), "no answer was slow: raise the rate"
    failed = played.failed_attempts()
    assert ("http_status", 504) in {(a.cause, a.status) for a in failed}
    assert [a.cause for a in failed if a.cause not in INFRASTRUCTURE_CAUSES] == []
    for fallback in played.fallbacks():
        assert fallback.side == INFRASTRUCTURE, fallback
        assert {a.side for a in fallback.attempts} <= {INFRASTRUCTURE, None}, fallback
