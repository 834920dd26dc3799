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

An endpoint can also be there and answer, but never usefully: it is
misconfigured (`Misconfigured`), and waiting will not mend it. That is said
when its first completion of the session is refused with 401, 403, 404 or 407
(a key, a model, a path or a proxy's login that is wrong); at any completion
whose TLS fails (a certificate not trusted, a handshake refused) or whose proxy
rejects the credentials; or when its completions get the same other 4xx status,
a body that is no completion, or an exchange dropped before its body ended,
`threshold` times in a row with no reply between (a gateway's body-size limit,
a client certificate it asks for, a gateway that resets every reply). The
session is told through `on_misconfigured` and stops the run.
Any single 4xx (a prompt over the context length) is only that request's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
import structlog

import providers
from providers.proxies import named_proxy

__all__ = [
    "Breakers",
    "Circuit",
    "Misconfigured",
    "as_the_run",
    "endpoint_of",
    "misconfiguration_fix",
]

log = structlog.get_logger("arena.seats.breaker")

_RUN_KEYS = frozenset({"run", "worker"})
"""The context an endpoint's events keep: they are the run's, not an episode's."""


@contextmanager
def as_the_run() -> Iterator[None]:
    """Events logged in the block carry the run's context only: an endpoint's events are
    logged from whichever seat's task met it, and must not name that episode, alias or seat."""
    bound = structlog.contextvars.get_contextvars()
    local = [key for key in bound if key not in _RUN_KEYS]
    structlog.contextvars.unbind_contextvars(*local)
    try:
        yield
    finally:
        structlog.contextvars.bind_contextvars(**{key: bound[key] for key in local})


def endpoint_of(spec: providers.ProviderSpec) -> str:
    """How an endpoint is named in events and messages: its protocol and base URL (a URL
    never carries a key: keys travel in headers)."""
    return f"{spec.protocol} {spec.base_url or '(default URL)'}"


_REFUSED_AT_ONCE = (401, 403, 404, 407)
"""Statuses that, answering an endpoint's first completion, say it is set up wrong."""
_EXCERPT_CHARS = 200


@dataclass(frozen=True)
class Misconfigured:
    """What shows an endpoint is set up wrong: the status it answers (None for a body that
    is no completion), the start of what it answered, and how many times in a row."""

    status: int | None
    body: str
    times: int
    problem: providers.Problem | None = None
    """What it shows when the status and body alone do not say (a refused schema form, every
    reply cut off before its end, a certificate or a proxy), for `misconfiguration_fix`."""
    setting: str = ""
    """What the fix names of the setting in question (the proxy and its variable), or ''."""


def misconfiguration_fix(spec: providers.ProviderSpec, found: Misconfigured) -> str:
    """What to change for an endpoint that answers as `found` says (`providers.advise`)."""
    problem = found.problem if found.problem is not None else found.status
    setting = found.setting
    if problem == 407 and not setting:  # the proxy the environment routes the endpoint through
        setting = named_proxy(spec.base_url)
    return providers.advise(spec.protocol, problem, found.body, setting=setting)


@dataclass(eq=False)
class Circuit:
    """One endpoint's circuit: closed (requests go out) or open (they fail at once)."""

    spec: providers.ProviderSpec
    """The spec of the first policy seen at the endpoint: what its probe uses."""
    threshold: int
    on_open: Callable[[Circuit], None] | None = None
    on_misconfigured: Callable[[Circuit, Misconfigured], None] | None = None
    failures: int = 0
    """Infrastructure failures in a row."""
    last_failure: str = ""
    """What the last of them said (a proxy that refuses names itself), for the stop."""
    answered: bool = False
    """Whether a completion of this session has had an answer (a reply or a status)."""
    misconfigured: Misconfigured | None = None
    """Set once the endpoint has shown it is set up wrong."""
    _same: tuple[int | str | None, int] = (None, 0)
    """The refusal answered last (a 4xx status, None for an unreadable body, `reset` for an
    exchange dropped before its body ended) and how many times in a row."""
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

    def failure(self, detail: str = "") -> None:
        """One more infrastructure failure in a row (`detail`: what it said); the threshold-th
        opens the circuit."""
        self.failures += 1
        self.last_failure = detail[:_EXCERPT_CHARS] or self.last_failure
        if self.opened_at is None and self.failures >= self.threshold:
            self.opened_at = anyio.current_time()
            for scope in list(self._in_flight):
                scope.cancel()
            with as_the_run():
                log.warning(
                    "endpoint_down",
                    endpoint=self.endpoint,
                    failures=self.failures,
                    last=self.last_failure,
                    detail="requests in flight were cut; its policies' new episodes wait "
                    "unless another replica serves them",
                )
            if self.on_open is not None:
                self.on_open(self)

    def success(self) -> None:
        """The endpoint answered: the count starts again."""
        self.failures = 0
        self.answered = True
        self._same = (None, 0)

    def refused(self, error: providers.ProviderError) -> None:
        """A completion failed with `error`: is the endpoint misconfigured? (Counted before
        `failure`, so that a misconfiguration is said instead of an outage.)"""
        first = not self.answered
        if isinstance(error, providers.HTTPStatusError):
            self.answered = True
            status = error.status
            if status in (408, 429) or not 400 <= status < 500:
                self._same = (None, 0)
                return
            if first and status in _REFUSED_AT_ONCE:
                self._misconfigured(Misconfigured(status, error.body_excerpt[:_EXCERPT_CHARS], 1))
                return
            self._count(status, error.body_excerpt)
        elif isinstance(error, providers.InvalidResponse):
            self.answered = True
            self._count(None, str(error))
        elif isinstance(error, providers.TransportError):
            self._transport(error)

    def _transport(self, error: providers.TransportError) -> None:
        """A certificate not trusted, a TLS handshake refused or a proxy that rejects the
        credentials is set up wrong at once, the preflight passed or not; an exchange dropped
        before its body ended, `threshold` times in a row, is too (a gateway that resets every
        reply): waiting would measure nothing."""
        body = str(error)[:_EXCERPT_CHARS]
        if error.tls or error.problem == "proxy_auth":
            problem = error.problem or "tls"
            self._misconfigured(Misconfigured(None, body, 1, problem, error.proxy))
        elif error.problem == "reset":
            self._count("reset", body)

    def refused_form(self, error: providers.HTTPStatusError) -> None:
        """The endpoint refuses the form of a schema request: set up wrong, at once (every
        request of the policy would be refused alike)."""
        self.answered = True
        found = Misconfigured(error.status, error.body_excerpt[:_EXCERPT_CHARS], 1, "schema_form")
        self._misconfigured(found)

    def _count(self, status: int | str | None, body: str) -> None:
        last, times = self._same
        times = times + 1 if self._same[1] and last == status else 1
        self._same = (status, times)
        if times < self.threshold:
            return
        if isinstance(status, str):
            self._misconfigured(Misconfigured(None, body[:_EXCERPT_CHARS], times, "reset"))
        else:
            self._misconfigured(Misconfigured(status, body[:_EXCERPT_CHARS], times))

    def _misconfigured(self, found: Misconfigured) -> None:
        if self.misconfigured is not None:
            return
        self.misconfigured = found
        if self.on_misconfigured is not None:
            self.on_misconfigured(self, found)

    def close(self) -> None:
        """The endpoint answers again (its probe did)."""
        down_s = self.down_for()
        self.opened_at = None
        self.failures = 0
        with as_the_run():
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

    def __init__(
        self,
        threshold: int,
        on_open: Callable[[Circuit], None] | None = None,
        on_misconfigured: Callable[[Circuit, Misconfigured], None] | None = None,
    ) -> None:
        self.threshold = threshold
        self.on_open = on_open
        self.on_misconfigured = on_misconfigured
        self._circuits: dict[tuple[str, str], Circuit] = {}

    def circuit(self, spec: providers.ProviderSpec) -> Circuit:
        """The circuit of the endpoint `spec` talks to."""
        key = (spec.protocol, spec.base_url)
        found = self._circuits.get(key)
        if found is None:
            found = self._circuits[key] = Circuit(
                spec, self.threshold, self.on_open, self.on_misconfigured
            )
        return found
