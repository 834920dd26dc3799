"""The live page's state, from a run's events file as it is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.observe.live import LatencyWindow, LiveRun


def _line(event: str, second: float, **fields: Any) -> str:
    stamp = f"2026-01-01T00:00:{second:09.6f}Z"
    return json.dumps({"event": event, "timestamp": stamp, "level": "info", **fields}) + "\n"


def test_the_state_follows_the_lines_as_they_are_written(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    live = LiveRun(tmp_path)
    assert live.state()["started"] is False  # no file yet
    events.write_text(
        _line("run_started", 0, run="r", episodes=10, already_finished=2)
        + _line("episode_started", 0.5, episode="e1", in_flight=1)
        + _line("reply_received", 1, policy="a", attempt=1, cause=None, latency_ms=100.0,
                input_tokens=30, output_tokens=5, cost_usd=0.25)
        + _line("reply_received", 2, policy="a", attempt=1, cause="illegal", latency_ms=300.0,
                input_tokens=30, output_tokens=7)
        + _line("reply_received", 3, policy="a", attempt=2, cause=None, latency_ms=200.0)
        + _line("fallback_recorded", 4, policy="b", cause="timeout", side="seat")
        + _line("endpoint_down", 4.5, endpoint="openai http://x/v1")
        # a line being written: not taken until its end arrives
        + '{"event": "episode_finished", "timestamp": "2026-01-01T00:00:05Z", "outc'
    )  # fmt: skip
    state = live.state()
    assert live.playing
    assert (state["run"], state["played"], state["at_most"], state["in_flight"]) == ("r", 2, 10, 1)
    # 3 decisions in the last 10 s of the run's clock
    assert state["decisions_per_s"] == 0.3
    a = next(p for p in state["policies"] if p["policy"] == "a")
    assert (a["decisions"], a["fallbacks"], a["tokens_in"], a["tokens_out"]) == (2, 0, 60, 12)
    assert (a["p50_ms"], a["p95_ms"], a["cost_usd"]) == (200.0, 300.0, 0.25)
    assert state["fallbacks"] == [{"policy": "b", "cause": "timeout", "count": 1}]
    assert state["endpoints"] == [
        {"endpoint": "openai http://x/v1", "up": False, "since": "2026-01-01T00:00:04.500000Z"}
    ]
    with events.open("a") as file:
        file.write('ome": "counted", "in_flight": 0, "episode": "e1"}\n')
        file.write(_line("endpoint_up", 20, endpoint="openai http://x/v1"))
        file.write(_line("run_finished", 21, run="r"))
    state = live.state()
    assert (state["played"], state["finished"], state["decisions_per_s"]) == (3, True, 0.0)
    assert state["endpoints"][0]["up"] is True
    assert not live.playing
    # A run started afresh (--force-new) writes a shorter file: read from its top again.
    events.write_text(_line("run_started", 0, run="r", episodes=4, already_finished=0))
    state = live.state()
    assert (state["played"], state["at_most"], state["finished"]) == (0, 4, False)


def test_percentiles_are_nearest_rank() -> None:
    window = LatencyWindow()
    assert window.percentile(0.5) is None
    window.kept.extend(float(n) for n in range(1, 21))  # 1 .. 20
    assert window.percentile(0.5) == 10.0
    assert window.percentile(0.95) == 19.0
    assert window.percentile(1.0) == 20.0


def test_the_root_is_the_live_page_while_the_run_plays_then_the_sites(tmp_path: Path) -> None:
    import httpx

    from arena.observe.live import LiveServer

    (tmp_path / "replays").mkdir()
    events = tmp_path / "events.jsonl"
    events.write_text(_line("run_started", 0, run="r", episodes=4, already_finished=0))
    server = LiveServer(tmp_path, port=0)
    server.start()
    try:
        live = httpx.get(server.url, timeout=10)
        assert live.status_code == 200
        assert 'id="live-played"' in live.text
        state = httpx.get(server.url + "live/state.json", timeout=10).json()
        assert (state["started"], state["finished"], state["at_most"]) == (True, False, 4)
        with events.open("a") as file:
            file.write(_line("run_finished", 3, run="r"))
        site = httpx.get(server.url, timeout=10)
        assert site.status_code == 200
        assert 'id="live-played"' not in site.text
        assert 'id="page-data"' in site.text  # the league page
        assert 'id="live-played"' in httpx.get(server.url + "live/", timeout=10).text
        assert httpx.post(server.url + "live/state.json", timeout=10).status_code == 501
    finally:
        server.stop()
