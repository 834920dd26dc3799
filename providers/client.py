"""The client that holds policy: connection slots, the retry loop, error translation.

A wire protocol module only turns requests into POSTs and bodies into
completions; `HTTPProvider` decides when to send, how long each attempt may
take (the time left before the caller's deadline), when to try again, and
which typed error a failure becomes. `providers.pool.Providers` hands out one
per spec, sharing the HTTP client and slot limit.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache

import aiohttp
import anyio
import anyio.lowlevel
import httpx
import structlog
from tenacity import RetryCallState

from providers.advice import Problem, advise
from providers.completion import Completion, CompletionRequest, TransportAttempt
from providers.endpoint import Endpoint
from providers.errors import (
    AuthError,
    CertificateError,
    HTTPStatusError,
    InvalidResponse,
    ProviderError,
    RateLimited,
    Timeout,
    TransportError,
)
from providers.proxies import named_proxy, proxy_route, shown_proxy
from providers.retry import RetryPolicy, is_transient, retry_after_from_headers
from providers.spec import ProviderSpec
from providers.wire import WireProtocol, decode_object, excerpt

__all__ = ["HTTPProvider", "ProbeAnswer", "status_error", "translate_httpx_errors"]

log = structlog.get_logger(__name__)

_MIN_ATTEMPT_S = 0.001  # httpx needs a positive timeout; the cancel scope ends the call anyway


@contextmanager
def translate_httpx_errors(spec: ProviderSpec) -> Iterator[None]:
    """Re-raise any failure of the HTTP stack inside the block (httpx's, or aiohttp's under
    the transport) as a `ProviderError`, `from` it.

    The only place in the project that catches them. What a failure is comes from its
    root: the transport wraps aiohttp's errors in httpx's, but not always in the right
    one (a refused connection and a close before any answer both arrive as a connect
    timeout), so aiohttp's own error, where there is one, decides.
    """
    try:
        yield
    except (httpx.HTTPError, aiohttp.ClientError, TimeoutError) as exc:
        raise _translated(spec, exc) from exc


def _translated(spec: ProviderSpec, exc: BaseException) -> ProviderError:
    """The typed error for a failure of the HTTP stack."""
    cause = exc.__cause__
    root = cause if isinstance(cause, aiohttp.ClientError | TimeoutError) else exc
    detail = spec.redact(str(root)) or type(root).__name__
    certificate = _certificate_failure(exc)
    if certificate is not None:
        return CertificateError(
            f"{spec.label}: the server's certificate failed verification ({certificate}); "
            + advise(spec.protocol, "certificate")
        )
    if isinstance(root, aiohttp.ClientSSLError | ssl.SSLError) or _tls_alert(exc):
        return TransportError(
            f"{spec.label}: the TLS handshake failed ({detail}); {advise(spec.protocol, 'tls')}",
            connect_refused=True,
            tls=True,
            problem="tls",
        )
    proxied = _proxy_failure(spec, root)
    if proxied is not None:
        return proxied
    if isinstance(
        root,
        aiohttp.ClientConnectorError
        | aiohttp.ClientProxyConnectionError
        | httpx.ConnectError
        | httpx.ProxyError,
    ):
        return TransportError(
            f"{spec.label} refused or could not open a connection ({detail}); "
            "check that the server is running and base_url is right",
            connect_refused=True,
            problem="refused",
        )
    if isinstance(root, TimeoutError | aiohttp.ServerTimeoutError | httpx.TimeoutException):
        return Timeout(f"{spec.label} did not answer before the deadline ({type(root).__name__})")
    if isinstance(root, aiohttp.ClientError | httpx.TransportError):
        return TransportError(
            f"{spec.label} dropped the exchange ({type(root).__name__}: {detail})",
            connect_refused=False,
            problem="reset",
        )
    return ProviderError(f"{spec.label}: {type(root).__name__}: {detail}")


def _proxy_failure(spec: ProviderSpec, root: BaseException) -> TransportError | None:
    """The failure of the proxy the environment routes `spec`'s requests through, named with
    its variable: it refused the connection, or the credentials (407). None when no proxy
    stands in between, or the failure was not at the proxy."""
    if not isinstance(root, httpx.ConnectError | httpx.ProxyError):
        return None
    route = proxy_route(spec.base_url)
    if route is None:
        return None
    where = shown_proxy(route)
    problem: Problem = "proxy_auth" if "407" in str(root) else "proxy_refused"
    return TransportError(
        f"{spec.label}: {advise(spec.protocol, problem, setting=where)}",
        connect_refused=True,
        problem=problem,
        proxy=where,
    )


def _certificate_failure(error: BaseException) -> str | None:
    """The verification failure (OpenSSL's reason) behind `error`, if that is what it is."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, aiohttp.ClientConnectorCertificateError):
            current = current.certificate_error
            continue
        if isinstance(current, ssl.SSLCertVerificationError):
            return current.verify_message or current.reason or str(current)
        current = current.__cause__ or current.__context__
    return None


def _tls_alert(error: BaseException) -> bool:
    """Whether the server ended the TLS session with an alert (OpenSSL names every alert it
    receives `..._ALERT_...`). Under TLS 1.3 a server refuses the client's certificate
    (none, or one it does not trust) only after the client's side of the handshake is
    done, so the alert comes with the first read and aiohttp reports a broken connection
    (`ClientOSError`) around the `ssl.SSLError`: a TLS failure all the same."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError) and "_ALERT_" in (current.reason or ""):
            return True
        current = current.__cause__ or current.__context__
    return False


def status_error(
    spec: ProviderSpec, wire: WireProtocol, status: int, headers: Mapping[str, str], body: bytes
) -> HTTPStatusError:
    """The typed error for a non-2xx answer (`status`, `headers` and `body`), with the
    provider's retry hint if any."""
    retry_after = retry_after_from_headers(headers)
    if retry_after is None:
        retry_after = wire.retry_after_from_body(body)
    kind: type[HTTPStatusError] = HTTPStatusError
    if status == 429:
        kind = RateLimited
    elif status in (401, 403):
        kind = AuthError
    wait = "" if retry_after is None else f" (retry after {retry_after:g} s)"
    quoted = excerpt(spec, body)
    advice = advise(
        spec.protocol, status, quoted, setting=named_proxy(spec.base_url) if status == 407 else ""
    )
    fix = f"; {advice}" if advice else ""
    return kind(
        f"{spec.label} answered HTTP {status}{wait}: {quoted!r}{fix}",
        status=status,
        body_excerpt=quoted,
        retry_after=retry_after,
    )


@dataclass
class _Call:
    """The bookkeeping of one `complete` call."""

    began: float
    queued_s: float | None = None
    attempts: list[TransportAttempt] = field(default_factory=list)
    attempt_began: float | None = None
    failure: ProviderError | None = None
    """The last infrastructure failure the call met (a transient one, retried)."""


def _over_cap(spec: ProviderSpec) -> InvalidResponse:
    return InvalidResponse(
        f"{spec.label} sent a response body over {spec.max_response_bytes:,} bytes "
        "(max_response_bytes); the connection was closed"
    )


async def _read_capped(spec: ProviderSpec, response: httpx.Response) -> bytes:
    """The whole body, up to `spec.max_response_bytes`; past it the stream is left (its
    connection closed, not reused) and the attempt fails."""
    cap = spec.max_response_bytes
    chunks: list[bytes] = []
    size = 0
    # A body sent as it is (no content-encoding) is its raw bytes: no decoder layer. (A
    # test's transport may hand a body already read: httpx's own way gives it.)
    raw = not response.is_stream_consumed and "content-encoding" not in response.headers
    async for chunk in response.aiter_raw() if raw else response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise _over_cap(spec)
        chunks.append(chunk)
    return b"".join(chunks)


@lru_cache(maxsize=256)
def _parsed_url(url: str) -> httpx.URL:
    """`url` parsed once: a spec's completions all go to the same URL, and httpx's parser
    (pure Python) would read the same string again on every request."""
    return httpx.URL(url)


@dataclass(frozen=True)
class ProbeAnswer:
    """What an endpoint said to the free probe call."""

    status: int
    models: tuple[str, ...] | None
    """The model names a listing probe's 2xx answer carries; None for the other probes."""
    excerpt: str
    """The start of the body (the key redacted), for messages."""


class HTTPProvider:
    """A `Provider` for one spec, over an HTTP client and slot limiter it shares."""

    def __init__(
        self,
        spec: ProviderSpec,
        wire: WireProtocol,
        http: Endpoint,
        limiter: anyio.CapacityLimiter,
        retry: RetryPolicy,
    ) -> None:
        self.spec = spec
        """The endpoint, model and key this client calls."""
        self._wire = wire
        self._http = http
        self._limiter = limiter
        self._retry = retry
        self._headers = spec.extra_headers()
        """The policy's own headers, sent with every request."""

    def __repr__(self) -> str:
        return f"HTTPProvider({self.spec.label})"

    async def complete(self, request: CompletionRequest, *, deadline: float) -> Completion:
        """Ask for one completion before `deadline` (see `providers.Provider.complete`)."""
        call = _Call(began=anyio.current_time())
        with anyio.CancelScope(deadline=deadline):
            try:
                # The slot is kept through retry waits: a rate-limited endpoint should
                # not get another caller's request while this one backs off.
                call.queued_s = queued = await self._take_slot(call.began)
                try:
                    first: ProviderError | None = None
                    try:
                        completion = await self._attempt(request, deadline, call)
                    except ProviderError as error:
                        first = error
                    if first is not None:
                        completion = await self._retried(first, request, deadline, call)
                finally:
                    self._limiter.release()
            except ProviderError as exc:
                exc.attempts = tuple(call.attempts)
                raise
            return replace(
                completion,
                latency_s=anyio.current_time() - call.began,
                queued_s=queued,
                attempts=tuple(call.attempts),
            )
        raise self._deadline_passed(call)

    async def _take_slot(self, began: float) -> float:
        """One of the endpoint's slots: at once when one is free and nobody waits (no trip
        through the event loop, which anyio's `acquire` always takes), else in turn. A call
        whose deadline has passed is cancelled here, before it sends anything. The seconds
        waited since `began`."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self._limiter.acquire()
            return anyio.current_time() - began
        return 0.0

    async def _retried(
        self, first: ProviderError, request: CompletionRequest, deadline: float, call: _Call
    ) -> Completion:
        """The retry loop, entered once the first attempt failed with `first`: it decides on
        that failure as on any other (retry, wait, or raise), then makes the next attempts.
        A call answered at the first attempt never builds the loop."""
        pending = [first]

        async def attempt() -> Completion:
            if pending:
                raise pending.pop()
            return await self._attempt(request, deadline, call)

        retrying = self._retry.retrying(
            deadline, _BeforeSleep(self.spec, call), retry_refused=not request.fail_over
        )
        completion: Completion = await retrying(attempt)
        return completion

    async def _attempt(
        self, request: CompletionRequest, deadline: float, call: _Call
    ) -> Completion:
        url, headers, body = self._wire.build_request(self.spec, request)
        call.attempt_began = began = anyio.current_time()
        try:
            with translate_httpx_errors(self.spec):
                timeout = max(deadline - began, _MIN_ATTEMPT_S)
                async with self._http.stream(
                    "POST",
                    _parsed_url(url),
                    headers=self._with_own(headers),
                    json=body,
                    attempt_s=timeout,
                ) as response:
                    content = await _read_capped(self.spec, response)
            status = response.status_code
            if not 200 <= status < 300:
                raise status_error(self.spec, self._wire, status, response.headers, content)
            completion = self._wire.parse_response(self.spec, status, response.headers, content)
            completion = _forced_tool(request, completion)
        except ProviderError as exc:
            seen = exc.status if isinstance(exc, HTTPStatusError) else None
            call.attempts.append(TransportAttempt(seen, str(exc), anyio.current_time() - began))
            call.attempt_began = None
            if is_transient(exc):
                call.failure = exc
            raise
        call.attempts.append(TransportAttempt(status, None, anyio.current_time() - began))
        call.attempt_began = None
        return completion

    def _with_own(self, headers: dict[str, str]) -> dict[str, str]:
        """The protocol's headers with the policy's own added (and taking precedence: a
        gateway may want its key where the protocol puts one)."""
        return {**headers, **self._headers} if self._headers else headers

    async def probe(self, *, deadline: float) -> ProbeAnswer:
        """Ask the endpoint its free models call (no retry: the caller decides what an answer
        means); a connection refused, a timeout or a dropped exchange raise as in `complete`."""
        url, headers, lists_models = self._wire.probe_request(self.spec)
        began = anyio.current_time()
        with anyio.CancelScope(deadline=deadline) as scope:
            with translate_httpx_errors(self.spec):
                timeout = max(deadline - began, _MIN_ATTEMPT_S)
                async with self._http.stream(
                    "GET", url, headers=self._with_own(headers), attempt_s=timeout
                ) as response:
                    content = await _read_capped(self.spec, response)
        if scope.cancelled_caught:
            raise Timeout(f"{self.spec.label} did not answer the probe before its deadline")
        models = None
        if lists_models and response.is_success:
            data = decode_object(self.spec, response.status_code, content).get("data")
            models = tuple(
                str(m["id"])
                for m in (data if isinstance(data, list) else [])
                if isinstance(m, dict) and "id" in m
            )
        return ProbeAnswer(response.status_code, models, excerpt(self.spec, content))

    def _deadline_passed(self, call: _Call) -> ProviderError:
        """The error of a call whose deadline passed: the infrastructure's last failure when
        the call was recovering from one (a gateway's 504, a dropped connection), else a
        `Timeout`, the seat's own."""
        now = anyio.current_time()
        if call.attempt_began is not None:  # cut off mid-request by the deadline
            call.attempts.append(
                TransportAttempt(None, "no answer before the deadline", now - call.attempt_began)
            )
        queued = now - call.began if call.queued_s is None else call.queued_s
        error: ProviderError
        if call.failure is not None:
            error = call.failure.restated(
                f"{call.failure} (then the deadline passed, {now - call.began:.3f} s after the "
                "call, while it was asked again)"
            )
        else:
            error = Timeout(
                f"{self.spec.label} gave no usable answer before the deadline "
                f"({now - call.began:.3f} s after the call, {queued:.3f} s of it waiting for one "
                f"of max_connections={self.spec.max_connections} slots); allow a longer deadline "
                "or lower the load on this endpoint"
            )
        error.attempts = tuple(call.attempts)
        return error


@dataclass(frozen=True)
class _BeforeSleep:
    """Tenacity's before-sleep hook: records the wait on the failed attempt and logs it."""

    spec: ProviderSpec
    call: _Call

    def __call__(self, state: RetryCallState) -> None:
        wait = state.upcoming_sleep
        last = self.call.attempts[-1]
        self.call.attempts[-1] = replace(last, wait_s=wait)
        log.info(
            "provider_retry_scheduled",
            protocol=self.spec.protocol,
            model=self.spec.model,
            base_url=self.spec.base_url,
            attempt=state.attempt_number,
            status=last.status,
            error=last.error,
            wait_s=round(wait, 3),
        )


def _forced_tool(request: CompletionRequest, completion: Completion) -> Completion:
    """The reply of a request that forced a tool (a reply schema, on a protocol that takes
    it as a tool) is that tool's input, as JSON text; a tool call the request did not force
    is no reply (its text stays what it was)."""
    schema, tool = request.schema, completion.tool
    if schema is None or tool is None or tool[0] != schema.name or completion.text:
        return completion
    return replace(completion, text=json.dumps(tool[1], ensure_ascii=False))
