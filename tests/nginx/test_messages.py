"""Leagues through what nginx does to the messages: compressed, chunked answers; a body
limit every completion breaks; a cookie on every answer."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from tests.nginx.conftest import Gateway, StartMock
from tests.nginx.league import assert_clean, llm_policy, play, write_league

pytestmark = pytest.mark.nginx


def test_gzipped_chunked_answers(tmp_path: Path, mock_llm: StartMock, gateway: Gateway) -> None:
    upstream = mock_llm()
    nginx = gateway(
        upstream.port,
        server="gzip on;\ngzip_types application/json;\ngzip_min_length 1;\ngzip_proxied any;",
        location="proxy_buffering off;\nchunked_transfer_encoding on;",
    )
    played = play(write_league(tmp_path, "gzipped", llm_policy(f"{nginx.url}/v1")))
    assert_clean(played)
    completions = [r for r in nginx.access() if r["method"] == "POST"]
    assert completions
    # What the test is about did happen: every answer went out compressed, in chunks.
    assert {(r["content_encoding"], r["transfer_encoding"]) for r in completions} == {
        ("gzip", "chunked")
    }


def test_a_body_limit_stops_the_run_as_a_misconfigured_endpoint_and_it_resumes(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway
) -> None:
    """Every completion is larger than 1 KiB: nginx answers each with 413, while the
    preflight's GET passes. The same 4xx breaker_failures (3) times in a row is no outage
    to wait out but a gateway to fix: the run stops at once, resumable, with exit code 3."""
    upstream = mock_llm()
    nginx = gateway(upstream.port, server="client_max_body_size 1k;")
    config = write_league(tmp_path, "body-limit", llm_policy(f"{nginx.url}/v1"))
    played = play(config)
    assert played.returncode == 3, played.why()
    events = played.events("endpoint_misconfigured")
    assert len(events) == 1, events
    event = events[0]
    assert event["status"] == 413
    assert event["policy"] == "model"
    assert f":{nginx.port}" in event["url"]
    assert "Request Entity Too Large" in event["body"]  # nginx's own page
    assert event["fix"]
    assert upstream.app.requests == 0  # no completion got past nginx
    statuses = {(r["method"], r["status"]) for r in nginx.access()}
    assert statuses == {("GET", 200), ("POST", 413)}

    nginx.restart(server="")  # the gateway fixed, on the same port
    again = play(config)
    assert_clean(again)


def test_a_gateway_cookie_goes_back_once_and_the_latest(
    tmp_path: Path, mock_llm: StartMock, gateway: Gateway
) -> None:
    """The gateway sets a new cookie on every answer (its request id, which it also passes
    to the mock): the client keeps one jar, so each request carries exactly one cookie, the one
    the answer before it set. One game at a time, so "before" is the arrival order."""
    upstream = mock_llm()
    nginx = gateway(
        upstream.port,
        location='add_header Set-Cookie "s=$request_id; Path=/";\n'
        "proxy_set_header X-Request-Id $request_id;",
    )
    config = write_league(
        tmp_path, "cookies", llm_policy(f"{nginx.url}/v1"), run={"concurrency": 1}
    )
    played = play(config)
    assert_clean(played)
    seen = upstream.app.seen
    assert len(seen) >= 5
    assert seen[0].cookies == ()  # the preflight's probe: nothing set yet
    for before, request in pairwise(seen):
        assert request.cookies == (f"s={before.request_id}",), (request, before)
