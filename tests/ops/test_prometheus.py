"""A real Prometheus scrapes a league in progress: what it stores of `cog_decisions_total`,
and its rate, agree with the run's own events; the alerting rules of docs/ops.md pass
`promtool check rules`; every query of the Grafana dashboard names a metric the arena serves
and is one Prometheus accepts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from arena.observe.facts import PolicyFacts
from arena.observe.metrics import RunMetrics
from tests.ops.league import Tally, free_port, toml_text
from tests.ops.prometheus import prometheus, query, tool, total

pytestmark = pytest.mark.slow  # a league and a Prometheus, each in a process of its own

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "ops.md"
DASHBOARD = ROOT / "docs" / "ops" / "grafana-dashboard.json"


def served_names() -> set[str]:
    """Every metric name the arena's page can show (a histogram's series included)."""
    metrics = RunMetrics({"p": PolicyFacts("openai", "m", 1, ("openai http://x",))})
    names: set[str] = set()
    for family in metrics.registry.collect():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        if family.type == "histogram":
            names.update(f"{family.name}_{s}" for s in ("bucket", "count", "sum"))
        if family.type == "counter":
            names.add(f"{family.name}_total")
    return names


def _league(tmp_path: Path) -> tuple[Path, Path]:
    """A league of two mock policies slow enough to last some seconds (config, out)."""
    raw = {
        "run": {"name": "scraped", "seed": 3, "games": ["connect-four"], "matches": 6,
                "concurrency": 2},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "quick": {"kind": "mock", "latency_ms": 40.0, "faults": {"unreadable": 0.1}},
            "steady": {"kind": "mock", "latency_ms": 60.0},
        },
    }  # fmt: skip
    config = tmp_path / "scraped.toml"
    config.write_text(toml_text(raw))
    return config, tmp_path / "run"


def _decisions_until(events: Path, until: float) -> int:
    """Decisions the run's events say were played by `until` (Unix time)."""
    played = 0
    for line in events.read_text().splitlines():
        event = json.loads(line)
        when = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
        if when > until:
            break
        name = event["event"]
        if name == "fallback_recorded" or (name == "reply_received" and event["cause"] is None):
            played += 1
    return played


def test_prometheus_scrapes_a_league_in_progress(tmp_path: Path) -> None:
    tool("prometheus")
    config, out = _league(tmp_path)
    port = free_port()
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out),
               "--metrics-port", str(port), "--no-progress"]  # fmt: skip
    with prometheus(tmp_path / "prometheus", f"127.0.0.1:{port}") as url:
        run = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )  # fmt: skip
        try:
            seen: list[tuple[float, float]] = []
            rates: list[float] = []
            deadline = time.monotonic() + 240
            while run.poll() is None and time.monotonic() < deadline:
                time.sleep(1.0)
                now = total(query(url, "sum(cog_decisions_total)"))
                rate = total(query(url, "sum(rate(cog_decisions_total[5s]))"))
                if now is not None:
                    seen.append(now)
                if rate is not None:
                    rates.append(rate[1])
            assert run.wait(timeout=60) == 0
        finally:
            if run.poll() is None:
                run.kill()
    assert len(seen) >= 3, f"Prometheus stored too few scrapes of the run: {seen}"
    values = [value for _, value in seen]
    assert values == sorted(values), "a counter went down"
    assert max(rates) > 0
    # Each value is what the run had played by its scrape: at most what its events say was
    # played by the query's time, at least what they say was played a few seconds earlier.
    events = out / "events.jsonl"
    for at, value in seen:
        assert _decisions_until(events, at - 5) <= value <= _decisions_until(events, at)
    tally = Tally(out)
    assert values[-1] <= sum(tally.decisions.values())
    assert sum(tally.decisions.values()) == _decisions_until(events, float("inf"))


def _yaml_blocks(text: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)


def test_the_alerting_rules_of_the_docs_pass_promtool(tmp_path: Path) -> None:
    promtool = tool("promtool")
    rules = [block for block in _yaml_blocks(DOCS.read_text()) if block.startswith("groups:")]
    assert rules, "docs/ops.md shows no alerting rules"
    for n, block in enumerate(rules):
        path = tmp_path / f"rules-{n}.yml"
        path.write_text(block)
        checked = subprocess.run(
            [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "2 rules found" in checked.stdout
        names = set(re.findall(r"\bcog_[a-z_]+", block))
        assert names
        assert names <= served_names(), names - served_names()


def _dashboard_queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    assert queries, "the dashboard has no query"
    return queries


def test_every_dashboard_query_names_a_served_metric() -> None:
    served = served_names()
    for expr in _dashboard_queries():
        names = set(re.findall(r"\bcog_[a-z_]+", expr))
        assert names, f"{expr!r} names no metric of the arena"
        assert names <= served, f"{expr!r} names {names - served}, which the arena never serves"
    for block in re.findall(r"```promql\n(.*?)```", DOCS.read_text(), flags=re.DOTALL):
        assert set(re.findall(r"\bcog_[a-z_]+", block)) <= served, block


def test_prometheus_accepts_every_query_of_the_dashboard_and_docs(tmp_path: Path) -> None:
    promql = [
        q.replace("$__rate_interval", "1m").replace("$__range", "1h") for q in _dashboard_queries()
    ]
    for block in re.findall(r"```promql\n(.*?)```", DOCS.read_text(), flags=re.DOTALL):
        promql += [line for line in block.splitlines() if line and not line.startswith("#")]
    with prometheus(tmp_path / "prometheus", f"127.0.0.1:{free_port()}") as url:
        for q in promql:
            query(url, q)
