"""A circuit breaker per model endpoint: an outage pauses its policies' games.

Every model seat of a run that talks to one endpoint (a protocol and a base
URL) shares its `Circuit`. After `threshold` infrastructure failures in a row
(docs/rules.md#validity: a refused connection, a dropped exchange, an HTTP
error status, a rate limit, a provider error) the circuit opens: the requests
in flight are cut at once, every new one fails at once without being sent, and
a timeout while it is open is the infrastructure's, not the seat's. Whoever
runs the session (`league.run`) is told through `on_open`, pauses the
endpoint's episodes, probes the endpoint and closes the circuit when it
answers. A reply, whatever its content, resets the count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
import structlog

import providers

__all__ = ["Breakers", "Circuit", "endpoint_of"]

log = structlog.get_logger("arena.seats.breaker")


def endpoint_of(spec: providers.ProviderSpec) -> str:
    """How an endpoint is named in events and messages: its protocol and base URL (a URL
    never carries a key: keys travel in headers)."""
    return f"{spec.protocol} {spec.base_url or '(default URL)'}"


@dataclass(eq=False)
class Circuit:
    """One endpoint's circuit: closed (requests go out) or open (they fail at once)."""

    spec: providers.ProviderSpec
    """The spec of the first policy seen at the endpoint: what its probe uses."""
    threshold: int
    on_open: Callable[[Circuit], None] | None = None
    failures: int = 0
    """Infrastructure failures in a row."""
    asked: int = 0
    """Requests sent through it (a policy's replicas share the load by it)."""
    opened_at: float | None = None
    """When it opened (the event loop's clock); None while closed."""
    _in_flight: set[anyio.CancelScope] = field(default_factory=set)

    @property
    def endpoint(self) -> str:
        """The endpoint's name (`endpoint_of`)."""
        return endpoint_of(self.spec)

    @property
    def in_flight(self) -> int:
        """Requests to the endpoint not answered yet."""
        return len(self._in_flight)

    @property
    def is_open(self) -> bool:
        """Whether the endpoint is known to be down."""
        return self.opened_at is not None

    def down_for(self) -> float:
        """Seconds since it opened (0 while closed)."""
        return 0.0 if self.opened_at is None else anyio.current_time() - self.opened_at

    def failure(self) -> None:
        """One more infrastructure failure in a row; the threshold-th opens the circuit."""
        self.failures += 1
        if self.opened_at is None and self.failures >= self.threshold:
            self.opened_at = anyio.current_time()
            for scope in list(self._in_flight):
                scope.cancel()
            log.warning(
                "endpoint_down",
                endpoint=self.endpoint,
                failures=self.failures,
                detail="requests in flight were cut; its policies' new episodes wait unless "
                "another replica serves them",
            )
            if self.on_open is not None:
                self.on_open(self)

    def success(self) -> None:
        """The endpoint answered: the count starts again."""
        self.failures = 0

    def close(self) -> None:
        """The endpoint answers again (its probe did)."""
        down_s = self.down_for()
        self.opened_at = None
        self.failures = 0
        log.info("endpoint_up", endpoint=self.endpoint, down_s=round(down_s, 3))

    @contextmanager
    def request(self) -> Iterator[anyio.CancelScope]:
        """A scope around one request, cancelled if the circuit opens while it is in flight
        (`scope.cancelled_caught` says so afterwards)."""
        scope = anyio.CancelScope()
        self.asked += 1
        self._in_flight.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._in_flight.discard(scope)


class Breakers:
    """The circuits of one session, one per endpoint, made as the seats first need them."""

    def __init__(self, threshold: int, on_open: Callable[[Circuit], None] | None = None) -> None:
        self.threshold = threshold
        self.on_open = on_open
        self._circuits: dict[tuple[str, str], Circuit] = {}

    def circuit(self, spec: providers.ProviderSpec) -> Circuit:
        """The circuit of the endpoint `spec` talks to."""
        key = (spec.protocol, spec.base_url)
        found = self._circuits.get(key)
        if found is None:
            found = self._circuits[key] = Circuit(spec, self.threshold, self.on_open)
        return found

    def open_circuits(self) -> list[Circuit]:
        """The circuits open now."""
        return [c for c in self._circuits.values() if c.is_open]
