"""Endpoint health's timers on a virtual clock: when a down endpoint is probed, when it is
given up on (`endpoint_down_s`), and when it is up again, each to the instant."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

import providers
from arena.config import parse_config
from arena.league.health import PROBE_BACKOFF_S, EndpointHealth
from arena.league.plan import plan_run

pytestmark = [pytest.mark.anyio, pytest.mark.virtual_clock]


class _Endpoint:
    """A pool whose one endpoint answers its probes from the `up`-th one on (never: 0)."""

    def __init__(self, up: int = 0) -> None:
        self.up = up
        self.probed: list[float] = []

    def client(self, spec: providers.ProviderSpec) -> _Endpoint:
        return self

    async def probe(self, *, deadline: float) -> Any:
        self.probed.append(anyio.current_time())
        if self.up and len(self.probed) >= self.up:
            return SimpleNamespace(status=200)
        raise providers.TransportError("refused", connect_refused=True)


def _health(tmp_path: Path, pool: _Endpoint, stops: list[tuple[str, float]]) -> EndpointHealth:
    model = {"kind": "llm", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    data = {
        "run": {"name": "h", "seed": 1, "games": ["connect-four"], "endpoint_down_s": 10.0},
        "policies": {"model": model, "other": {"kind": "scripted", "baseline": "random"}},
    }
    plan = plan_run(parse_config(data), tmp_path / "out")
    return EndpointHealth(
        plan,
        pool,  # type: ignore[arg-type]
        changed=lambda: None,
        stop=lambda reason, misconfigured, cut: stops.append((reason, anyio.current_time())),
    )


def _open(health: EndpointHealth) -> Any:
    (circuit,) = health._circuits["model"]
    for _ in range(health.breakers.threshold):
        circuit.failure()
    return circuit


async def test_an_endpoint_down_past_endpoint_down_s_stops_the_run_at_that_instant(
    tmp_path: Path,
) -> None:
    pool, stops = _Endpoint(), []
    health = _health(tmp_path, pool, stops)
    async with health.probing():
        opened = anyio.current_time()
        circuit = _open(health)
        await anyio.sleep(60)
    # Probes back off 1, 2, 4 s, the last wait cut so that one comes at endpoint_down_s.
    assert PROBE_BACKOFF_S[:3] == (1.0, 2.0, 4.0)
    assert [t - opened for t in pool.probed] == pytest.approx([1.0, 3.0, 7.0, 10.0])
    assert [(t - opened) for _, t in stops] == pytest.approx([10.0])
    assert "down for 10 s (endpoint_down_s = 10)" in stops[0][0]
    assert circuit.is_open


async def test_an_endpoint_that_answers_a_probe_is_up_at_once(tmp_path: Path) -> None:
    pool, stops = _Endpoint(up=3), []
    health = _health(tmp_path, pool, stops)
    async with health.probing():
        opened = anyio.current_time()
        circuit = _open(health)
        await anyio.sleep(5)
        assert circuit.is_open
        assert circuit.down_for() == pytest.approx(5.0)
        await anyio.sleep(2.5)  # the third probe, at 7 s, was answered
        assert not circuit.is_open
        assert circuit.down_for() == 0.0
    assert [t - opened for t in pool.probed] == pytest.approx([1.0, 3.0, 7.0])
    assert stops == []
