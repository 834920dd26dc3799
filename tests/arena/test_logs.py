"""The events log's stamp (ISO 8601 in UTC, as structlog's own stamper writes it), and a
worker's events forwarded as JSON lines."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
import structlog

from arena import logs


def test_the_stamp_reads_back_as_now_in_utc() -> None:
    before = datetime.now(UTC)
    stamped = logs.stamp(None, "info", {})["timestamp"]
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", stamped)
    assert before.replace(microsecond=0) <= datetime.fromisoformat(stamped) <= after


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (1_767_225_600.0, "2026-01-01T00:00:00Z"),  # a whole second has no fraction
        (1_767_225_600.25, "2026-01-01T00:00:00.250000Z"),
        (1_767_225_600.9999996, "2026-01-01T00:00:01Z"),  # rounds up into the next second
    ],
)
def test_the_stamp_is_written_as_datetime_isoformat_writes_it(
    now: float, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs.time, "time", lambda: now)
    assert logs.stamp(None, "info", {})["timestamp"] == expected
    as_datetime = datetime.fromtimestamp(now, UTC).isoformat().replace("+00:00", "Z")
    assert expected == as_datetime


def test_a_relayed_event_keeps_its_time() -> None:
    assert logs.stamp(None, "info", {"timestamp": "then"})["timestamp"] == "then"


def test_a_worker_forwards_each_event_as_a_json_line_with_its_traceback() -> None:
    lines: list[str] = []
    logs.forward_logging(lines.append, verbose=False)
    try:
        log = structlog.get_logger("test")
        with structlog.contextvars.bound_contextvars(run="r1"):
            log.debug("looked_at", n=1)  # not verbose: dropped
            try:
                raise ValueError("bad")
            except ValueError:
                log.exception("thing_failed", n=2)
        assert not logs.verbose_logging()
        logs.forward_logging(lines.append, verbose=True)
        log.debug("looked_at", n=3)
    finally:
        logs.close_logging()
    events = [json.loads(line) for line in lines]
    assert [(e["event"], e["level"], e["n"]) for e in events] == [
        ("thing_failed", "error", 2),
        ("looked_at", "debug", 3),
    ]
    assert events[0]["run"] == "r1"
    assert "ValueError: bad" in events[0]["exception"]
    assert all("timestamp" in e for e in events)
