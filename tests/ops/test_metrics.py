"""Prometheus metrics of a run: served while it plays, and at its end equal to what its
replays record (decisions, fallbacks, tokens, cost, episodes), with the mock's faults on."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging, configure_logging
from arena.mock_llm import build_app, serving
from arena.observe.metrics import serving_metrics
from arena.record.replay import load_replay
from tests.ops.league import Tally, free_port, league_config

pytestmark = pytest.mark.anyio

FAULTS = "429=0.05,500=0.04,prose=0.1,illegal=0.08,garbage=0.04,truncated=0.03"
"""Every kind of fallback the mock can cause without waiting out a deadline."""


def scrape(url: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Each sample of the page at `url`: name -> (sorted labels) -> value."""
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(httpx.get(url, timeout=5).text):
        for s in family.samples:
            samples.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return samples


def _by(samples: dict[tuple[tuple[str, str], ...], float], *keys: str) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for labels, value in samples.items():
        named = dict(labels)
        if value:
            out[tuple(named[k] for k in keys)] += int(value)
    return out


async def test_the_last_scrape_equals_the_replays(tmp_path: Path) -> None:
    out = tmp_path / "run"
    port = free_port()
    configure_logging(out / "events.jsonl", console=False)
    try:
        async with serving(build_app(faults=FAULTS, seed=7)) as url:
            config = parse_config(league_config(url, "metrics"))
            with serving_metrics(config, port) as metrics_url:
                during = await anyio.to_thread.run_sync(scrape, metrics_url)
                result = await execute(plan_run(config, out))
                last = await anyio.to_thread.run_sync(scrape, metrics_url)
    finally:
        close_logging()
    assert metrics_url == f"http://127.0.0.1:{port}/metrics"
    # Declared before the first event: cost from the start, each model endpoint up.
    assert during["cog_cost_usd_total"] == {
        (("policy", "claude"),): 0.0,
        (("policy", "openai"),): 0.0,
    }
    assert set(during["cog_endpoint_up"].values()) == {1.0}
    tally = Tally(out)
    assert tally.fallbacks, "the faults caused no fallback: the test would prove little"
    assert any(how == "retry" for _, how in tally.decisions)
    assert _by(last["cog_decisions_total"], "policy", "how") == tally.decisions
    assert _by(last["cog_fallbacks_total"], "policy", "cause", "side") == tally.fallbacks
    assert _by(last["cog_tokens_total"], "policy", "kind") == +tally.tokens
    requests = _by(last["cog_request_duration_seconds_count"], "policy", "protocol")
    assert requests == {
        ("openai", "openai"): tally.requests["openai"],
        ("claude", "anthropic"): tally.requests["claude"],
    }
    cost = dict(last["cog_cost_usd_total"])
    assert cost[(("policy", "claude"),)] == pytest.approx(tally.cost["claude"], abs=1e-9)
    assert cost[(("policy", "openai"),)] == 0.0
    episodes = _by(last["cog_episodes_finished_total"], "outcome")
    stored = [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]
    outcomes = Counter(
        "counted"
        if any(g.result is not None and g.result.scores is not None for g in r.games)
        else "no_contest"
        for r in stored
    )  # a no-contest the infrastructure caused is stored, then played again
    assert episodes == {(outcome,): n for outcome, n in outcomes.items()}
    assert sum(outcomes.values()) == result.played
    assert last["cog_episodes_in_flight"] == {(): 0.0}


def test_no_secret_reaches_a_label(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key in the environment and a header secret never appear in the served page."""
    monkeypatch.setenv("OPS_KEY", "sk-very-secret-key-123")
    raw = league_config("http://127.0.0.1:9", "secrets")
    raw["policies"]["openai"]["api_key_env"] = "OPS_KEY"
    config = parse_config(raw)
    with serving_metrics(config, free_port()) as url:
        page = httpx.get(url, timeout=5).text
    assert "cog_endpoint_up" in page
    assert "sk-very-secret" not in page


def test_a_busy_port_is_a_clear_error() -> None:
    config = parse_config(league_config("http://127.0.0.1:9", "busy"))
    with serving_metrics(config, free_port()) as url:
        taken = int(url.split(":")[2].split("/")[0])
        with (
            pytest.raises(ConfigError, match=f"metrics port {taken} .*--metrics-port"),
            serving_metrics(config, taken),
        ):
            pass


async def test_a_resume_may_turn_watching_on(tmp_path: Path) -> None:
    """metrics_port, otlp_endpoint and trace_content change nothing played: a resumed run may
    change them without --resume-anyway (another setting still needs it)."""
    out = tmp_path / "run"
    raw = league_config("http://127.0.0.1:9", "resumed")
    raw["policies"] = {"a": {"kind": "scripted"}, "b": {"kind": "scripted", "baseline": "random"}}
    await execute(plan_run(parse_config(raw), out))
    watched = {**raw, "run": {**raw["run"], "metrics_port": 9464, "trace_content": True,
                              "otlp_endpoint": "http://127.0.0.1:4318"}}  # fmt: skip
    plan_run(parse_config(watched), out)  # no ConfigChanged
    changed = {**raw, "run": {**raw["run"], "seed": 6}}
    with pytest.raises(ConfigError, match="seed"):
        plan_run(parse_config(changed), out)
