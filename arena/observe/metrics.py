"""Prometheus metrics of a run, served at http://127.0.0.1:PORT/metrics (docs/ops.md).

`RunMetrics` is fed every event the run logs (`arena.logs.observing`) and
counts what the replays record: a decision when its reply is played
(`reply_received` with no cause: `first` on the first attempt, `retry` on the
second) or when the baseline plays for it (`fallback_recorded`), a request's
duration, tokens and cost from each `reply_received`, an episode's outcome
from the writer's `episode_finished`, an endpoint's state from its circuit's
`endpoint_down` and `endpoint_up`. On a cluster the workers' events reach the
driver's log, so the driver's metrics count the whole run. Labels are policy
names, protocols and the replays' own words (how, cause, side, outcome): never
a key, a header, a prompt or a reply.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from arena.logs import observing
from arena.observe.facts import PolicyFacts, policy_facts

if TYPE_CHECKING:
    from arena.config import Config

__all__ = ["LATENCY_BUCKETS_S", "RunMetrics", "serving_metrics"]

LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
"""The request duration histogram's buckets, in seconds: a local model's tens of
milliseconds to a reasoning model's minutes."""


class RunMetrics:
    """The run's metrics in a registry of their own, moved by the run's events."""

    def __init__(self, facts: Mapping[str, PolicyFacts]) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.facts = facts
        self.decisions = Counter(
            "cog_decisions",
            "Decisions, by how the played move came: first reply, retry or fallback",
            ["policy", "how"],
            registry=registry,
        )
        self.fallbacks = Counter(
            "cog_fallbacks",
            "Fallbacks, by cause and by whose failure (side)",
            ["policy", "cause", "side"],
            registry=registry,
        )
        self.requests = Histogram(
            "cog_request_duration_seconds",
            "Each request to a seat's provider, start to answer",
            ["policy", "protocol"],
            buckets=LATENCY_BUCKETS_S,
            registry=registry,
        )
        self.tokens = Counter(
            "cog_tokens",
            "Tokens the providers reported (input, output, reasoning)",
            ["policy", "kind"],
            registry=registry,
        )
        self.cost = Counter(
            "cog_cost_usd",
            "What the replies cost, in USD (0 for unpriced policies)",
            ["policy"],
            registry=registry,
        )
        self.episodes = Counter(
            "cog_episodes_finished",
            "Episodes the writer dealt with: counted, no_contest "
            "(every game of it a no-contest) or failed",
            ["outcome"],
            registry=registry,
        )
        self.in_flight = Gauge(
            "cog_episodes_in_flight", "Episodes being played now", registry=registry
        )
        self.endpoint_up = Gauge(
            "cog_endpoint_up",
            "1 while each of the policy's endpoints' circuits is closed, 0 while one is open",
            ["policy"],
            registry=registry,
        )
        self._down: set[str] = set()
        for policy, fact in facts.items():
            if fact.endpoints:
                self.cost.labels(policy).inc(0)
                self.endpoint_up.labels(policy).set(1)
        for outcome in ("counted", "no_contest", "failed"):
            self.episodes.labels(outcome).inc(0)
        self._handlers = {
            "reply_received": self._reply,
            "fallback_recorded": self._fallback,
            "episode_started": self._episode,
            "episode_finished": self._episode,
            "endpoint_down": self._endpoint,
            "endpoint_up": self._endpoint,
            "run_finished": self._run_finished,
        }

    def __call__(self, event: MutableMapping[str, Any]) -> None:
        """Count `event`, if it says something the metrics count."""
        handle = self._handlers.get(event.get("event"))  # type: ignore[arg-type]
        if handle is not None:
            handle(event)

    def _reply(self, event: Mapping[str, Any]) -> None:
        policy = str(event.get("policy"))
        fact = self.facts.get(policy)
        protocol = fact.protocol if fact is not None else "unknown"
        self.requests.labels(policy, protocol).observe(event["latency_ms"] / 1000)
        if event.get("cause") is None:
            self.decisions.labels(policy, "first" if event.get("attempt") == 1 else "retry").inc()
        for kind in ("input", "output", "reasoning"):
            tokens = event.get(f"{kind}_tokens")
            if tokens:
                self.tokens.labels(policy, kind).inc(tokens)
        cost = event.get("cost_usd")
        if cost:
            self.cost.labels(policy).inc(cost)

    def _fallback(self, event: Mapping[str, Any]) -> None:
        policy = str(event.get("policy"))
        self.decisions.labels(policy, "fallback").inc()
        side = event.get("side")
        self.fallbacks.labels(policy, str(event["cause"]), "none" if side is None else side).inc()

    def _episode(self, event: Mapping[str, Any]) -> None:
        self.in_flight.set(event["in_flight"])
        if event["event"] == "episode_finished":
            self.episodes.labels(event["outcome"]).inc()

    def _endpoint(self, event: Mapping[str, Any]) -> None:
        endpoint = str(event.get("endpoint"))
        (self._down.add if event["event"] == "endpoint_down" else self._down.discard)(endpoint)
        for policy, fact in self.facts.items():
            if endpoint in fact.endpoints:
                up = not any(e in self._down for e in fact.endpoints)
                self.endpoint_up.labels(policy).set(1 if up else 0)

    def _run_finished(self, event: Mapping[str, Any]) -> None:
        self.in_flight.set(0)


@contextmanager
def serving_metrics(config: Config, port: int) -> Iterator[str]:
    """The run's metrics served on 127.0.0.1:`port` while the block runs; yields the URL."""
    from arena.config import ConfigError

    metrics = RunMetrics(policy_facts(config))
    try:
        server, thread = start_http_server(port, addr="127.0.0.1", registry=metrics.registry)
    except OSError as exc:
        raise ConfigError(
            f"the metrics port {port} cannot be served on 127.0.0.1 ({exc.strerror}): pick a "
            "free one with --metrics-port or [run] metrics_port"
        ) from exc
    try:
        with observing(metrics):
            yield f"http://127.0.0.1:{port}/metrics"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
