"""On a Ray cluster the driver serves the metrics of the whole run: the decisions and
fallbacks its workers play reach the driver's log, and its last scrape equals the replays."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging, configure_logging
from arena.observe.metrics import serving_metrics
from tests.arena.league.test_ray import cluster  # noqa: F401 (the module's Ray cluster)
from tests.ops.league import Tally, free_port
from tests.ops.test_metrics import _by, scrape

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_the_driver_counts_what_the_workers_play(tmp_path: Path, cluster: str) -> None:  # noqa: F811
    raw = {
        "run": {"name": "ray-metrics", "seed": 4, "games": ["connect-four"], "matches": 2,
                "concurrency": 2, "executor": "ray"},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "mock": {"kind": "mock", "faults": {"unreadable": 0.15, "illegal": 0.1}},
        },
    }  # fmt: skip
    out = tmp_path / "run"
    config = parse_config(raw)
    configure_logging(out / "events.jsonl", console=False)
    try:
        with serving_metrics(config, free_port()) as url:
            plan = plan_run(config, out)
            result = anyio.run(lambda: execute(plan, ray_address=cluster, check_endpoints=False))
            last = scrape(url)
    finally:
        close_logging()
    assert result.failed == []
    tally = Tally(out)
    assert tally.fallbacks, "the faults caused no fallback: the test would prove little"
    assert _by(last["cog_decisions_total"], "policy", "how") == tally.decisions
    assert _by(last["cog_fallbacks_total"], "policy", "cause", "side") == tally.fallbacks
    assert _by(last["cog_episodes_finished_total"], "outcome") == {("counted",): result.played}
