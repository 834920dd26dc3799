"""Endpoint health: is each model endpoint up, and when does its state stop the run?

Every model endpoint of a session has a circuit (`seats.breaker`). While one is
open its policies' episodes wait (`blocked`), and it is probed at 1, 2, 4, ...
30 s until it answers; one down longer than `endpoint_down_s` stops the run,
resumable, unless each of its policies has another replica up. An endpoint
that answers but never usefully (`seats.breaker.Misconfigured`) stops the run
at once and cuts the games in flight; so does a replayed episode spoiled again
by a gateway's timeouts alone (`gateway_too_short`).

Whether a probe's answer means "up" is read here once (`read_probe`), for the
session's probes and for the preflight alike.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import structlog
from anyio.abc import TaskGroup

import providers
from arena.config import LlmPolicy
from arena.league.plan import RunPlan
from arena.play.match import Match
from arena.record.replay import GameRecord, Replay
from arena.record.validity import gateway_timeouts
from arena.seats.breaker import (
    Breakers,
    Circuit,
    Misconfigured,
    as_the_run,
    misconfiguration_fix,
)
from providers.advice import key_hint, names_missing_model, no_listing_warning
from providers.proxies import named_proxy

if TYPE_CHECKING:
    from providers.client import ProbeAnswer

__all__ = [
    "PROBE_BACKOFF_S",
    "PROBE_S",
    "EndpointHealth",
    "ProbeReading",
    "Stop",
    "model_policies",
    "read_probe",
]

log = structlog.get_logger("arena.league.health")

PROBE_S = 10.0
"""How long an endpoint has to answer a probe."""
PROBE_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""The waits between the probes of an endpoint that is down (the last one repeats)."""

_SHOWN: dict[str, str] = {
    "reset": "exchanges dropped before the body ended",
    "certificate": "with a certificate that failed verification",
    "tls": "with a TLS handshake that failed",
    "proxy_auth": "through a proxy that rejected the credentials",
}
"""How the stop says what an endpoint answered, where it was no status."""

_WAITS = ("first_reply_s", "retry_s")
"""The deadlines a gateway's wait is compared with."""

Stop = Callable[[str, bool, bool], None]
"""How health stops the run: (the reason, whether the endpoint is misconfigured, whether the
games in flight are cut)."""


def model_policies(plan: RunPlan) -> dict[str, LlmPolicy]:
    """The plan's model policies: a run without them never imports their seats' modules."""
    return {n: p for n, p in plan.config.policies.items() if isinstance(p, LlmPolicy)}


@dataclass(frozen=True)
class ProbeReading:
    """What a probe's outcome says of an endpoint."""

    up: bool
    """It answers (any status but a 5xx or a 429): a circuit that is open may close."""
    problem: str = ""
    """What keeps any game from using it (the preflight stops the run), or ''."""
    warning: str = ""
    """What is only worth a warning, or ''."""


def read_probe(
    spec: providers.ProviderSpec,
    policy: LlmPolicy,
    outcome: ProbeAnswer | providers.ProviderError,
) -> ProbeReading:
    """What the probe's answer, or the error it ended with, says of the endpoint `spec`."""
    url, protocol = spec.base_url, spec.protocol
    if isinstance(outcome, providers.TransportError):
        if outcome.tls or outcome.proxy:  # the message says what to set, or which proxy
            return ProbeReading(False, f"{url}: {outcome}")
        how = "no connection could be opened" if outcome.connect_refused else "it hung up"
        return ProbeReading(
            False, f"nothing answers at {url} ({how}): {providers.advise(protocol, 'refused')}"
        )
    if isinstance(outcome, providers.Timeout):
        return ProbeReading(
            False, f"{url} did not answer within {PROBE_S:g} s: check that the host is reachable"
        )
    if isinstance(outcome, providers.ProviderError):
        return ProbeReading(False, "", f"{url} gave an unusable answer to the probe ({outcome})")
    status, up = outcome.status, outcome.status < 500 and outcome.status != 429
    if status in (401, 403):
        key = (
            f"the key in {policy.api_key_env}" if policy.api_key_env else "a request without a key"
        )
        fix = providers.advise(protocol, status, setting=policy.api_key_env or "")
        return ProbeReading(up, f"{url} refused {key} (HTTP {status}): {fix}")
    if status == 407:
        fix = providers.advise(protocol, 407, setting=named_proxy(url))
        return ProbeReading(up, f"{url}: {fix}")
    if status == 404 and names_missing_model(protocol, spec.model, outcome.excerpt):
        fix = providers.advise(protocol, "unknown_model", setting=spec.model)
        return ProbeReading(up, f"{url} answered HTTP 404: {fix}")
    if status == 404:
        return ProbeReading(up, "", no_listing_warning(url, spec.model, outcome.excerpt))
    if status == 400 and "certificate" in outcome.excerpt.lower():
        fix = providers.advise(protocol, 400, outcome.excerpt, setting=spec.client_cert or "")
        return ProbeReading(up, f"{url} answered HTTP 400 ({outcome.excerpt[:120]!r}): {fix}")
    if not 200 <= status < 300:
        hint = key_hint(outcome.excerpt.lower()) if status == 400 else ""
        return ProbeReading(
            up, "", f"{url} answered the probe with HTTP {status}: {outcome.excerpt[:120]!r}{hint}"
        )
    if outcome.models is not None and spec.model not in outcome.models:
        listed = ", ".join(outcome.models[:8]) or "none"
        return ProbeReading(
            up,
            "",
            f"{url} does not list the model {spec.model!r} (it lists: {listed}); many local "
            "servers answer for any name, so the run goes on",
        )
    return ProbeReading(up)


class EndpointHealth:
    """The circuits of one session's model endpoints, their probes, and the stops they
    force; `changed` is called when an endpoint comes back, `stop` to stop the run."""

    def __init__(
        self,
        plan: RunPlan,
        pool: providers.Providers,
        *,
        changed: Callable[[], None],
        stop: Stop,
    ) -> None:
        self._plan = plan
        self._pool = pool
        self._changed = changed
        self._stop = stop
        run = plan.config.run
        self.breakers = Breakers(run.breaker_failures, self._opened, self._misconfigured)
        self._models = model_policies(plan)
        self._circuits = self._model_circuits()
        """Each model policy's circuits, one per replica."""
        self.misconfigured = False
        """Whether an endpoint was found set up wrong (the run stopped for it)."""
        self._probes: TaskGroup | None = None

    def _model_circuits(self) -> dict[str, list[Circuit]]:
        if not self._models:
            return {}
        from arena.seats.llm import provider_specs  # the HTTP stack: runs with models only

        return {
            name: [self.breakers.circuit(p) for p in provider_specs(policy)]
            for name, policy in self._models.items()
        }

    @asynccontextmanager
    async def probing(self) -> AsyncIterator[None]:
        """A block in which endpoints whose circuits open are probed; the probes end with it."""
        async with anyio.create_task_group() as probes:
            self._probes = probes
            try:
                yield
            finally:
                self._probes = None
                probes.cancel_scope.cancel()  # nothing is left to wait for

    def blocked(self, match: Match) -> bool:
        """Whether a policy of the match plays through endpoints that are all down."""
        return any(
            all(c.is_open for c in self._circuits[p])
            for p in (match.first, match.second)
            if p in self._circuits
        )

    def _opened(self, circuit: Circuit) -> None:
        """An endpoint's circuit opened: probe it until it answers (or the run stops)."""
        if self._probes is not None:
            self._probes.start_soon(self._probe, circuit)

    async def _probe(self, circuit: Circuit) -> None:
        """Probe an endpoint that is down at 1, 2, 4, ... 30 s; close its circuit when it
        answers; stop the run (resumable) when it stays down longer than `endpoint_down_s`,
        unless each of its policies has another replica up (then it is probed on)."""
        # The task that opened the circuit was playing an episode; its probe is the run's.
        with as_the_run():
            await self._probe_until_up(circuit)

    async def _probe_until_up(self, circuit: Circuit) -> None:
        limit = self._plan.config.run.endpoint_down_s
        client = self._pool.client(circuit.spec)
        for n in itertools.count():
            wait = PROBE_BACKOFF_S[min(n, len(PROBE_BACKOFF_S) - 1)]
            if not self._served_elsewhere(circuit):
                wait = max(0.0, min(wait, limit - circuit.down_for()))
            await anyio.sleep(wait)
            try:
                answer = await client.probe(deadline=anyio.current_time() + PROBE_S)
            except providers.ProviderError:
                answer = None
            if answer is not None and answer.status < 500 and answer.status != 429:
                circuit.close()
                self._changed()
                return
            if circuit.down_for() >= limit and not self._served_elsewhere(circuit):
                last = f" (last: {circuit.last_failure})" if circuit.last_failure else ""
                self._stop(
                    f"the endpoint {circuit.endpoint} has been down for {circuit.down_for():.0f} s "
                    f"(endpoint_down_s = {limit:g}){last}: start it again, then run the same "
                    "command to resume",
                    False,
                    False,
                )
                return

    def _served_elsewhere(self, circuit: Circuit) -> bool:
        """Whether every policy behind `circuit` has another replica whose circuit is closed."""
        return all(
            any(c is not circuit and not c.is_open for c in circuits)
            for circuits in self._circuits.values()
            if circuit in circuits
        )

    def _misconfigured(self, circuit: Circuit, found: Misconfigured) -> None:
        """An endpoint answers, but never usefully: waiting would measure nothing, so the run
        stops now, resumable, and the games in flight are cut (a resume plays them again)."""
        if self.misconfigured:
            return
        names = [name for name, circuits in self._circuits.items() if circuit in circuits]
        url = circuit.spec.base_url
        fix = misconfiguration_fix(circuit.spec, found)
        log.error(
            "endpoint_misconfigured",
            policy=names[0] if names else None,
            policies=names,
            url=url,
            status=found.status,
            body=found.body,
            times=found.times,
            fix=fix,
        )
        what = (
            f"HTTP {found.status}"
            if found.status is not None
            else _SHOWN.get(found.problem or "not_completion", "bodies that are no completion")
        )
        self.misconfigured = True
        self._stop(
            f"policies {', '.join(names)}: the endpoint {url} answered {what} "
            f"({found.times} in a row: {found.body[:80]!r}); {fix}; then run the same command "
            "to resume (the games in flight were cut and are played again)",
            True,
            True,
        )

    def gateway_too_short(self, replay: Replay, spoiled: list[GameRecord]) -> bool:
        """Whether a replayed episode was spoiled again by a gateway's timeouts alone (502,
        504): then every game of its endpoint would be, and the run stops (exit 3), once."""
        if self.misconfigured:  # already stopped: said once, whichever replay ends next
            return bool(spoiled) and all(gateway_timeouts(g) for g in spoiled)
        waits: list[float] = []
        names: set[str] = set()
        for game in spoiled:
            seen = gateway_timeouts(game)
            if not seen:
                return False
            for seat, latencies in seen.items():
                waits += latencies
                names.add(replay.spectator.policies[str(game.index)][seat])
        urls = sorted({u for n in names if n in self._models for u in self._models[n].base_urls})
        # the shortest: a gateway answers at its timeout, and a loaded machine only adds to it
        seen_s = f"about {min(waits):.1f} s" if waits else "unknown"
        ours = [f"{k} = {replay.deadlines[k]:g} s" for k in _WAITS if k in replay.deadlines]
        fix = providers.advise(
            "openai", "gateway_wait", setting=f"its wait: {seen_s}; ours: {', '.join(ours)}"
        )
        log.error(
            "endpoint_misconfigured",
            policy=min(names),
            policies=sorted(names),
            url=urls[0] if urls else None,
            status=504,
            body="",
            times=len(waits),
            fix=fix,
        )
        self.misconfigured = True
        self._stop(
            f"{replay.episode} was a no-contest again, every fallback a gateway's timeout: "
            f"{fix}; then run the same command to resume",
            True,
            False,
        )
        return True
