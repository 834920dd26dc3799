"""The client that holds policy: connection slots, the retry loop, error translation.

A wire protocol module only turns requests into POSTs and bodies into
completions; `HTTPProvider` decides when to send, how long each attempt may
take (the time left before the caller's deadline), when to try again, and
which typed error a failure becomes. `providers.pool.Providers` hands out one
per spec, sharing the HTTP client and slot limit.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import httpx
import structlog
from tenacity import RetryCallState

from providers.completion import Attempt, Completion, CompletionRequest
from providers.errors import (
    AuthError,
    HTTPStatusError,
    InvalidResponse,
    ProviderError,
    RateLimited,
    Timeout,
    TransportError,
)
from providers.retry import RetryPolicy, retry_after_from_headers
from providers.spec import ProviderSpec
from providers.transport import LeanTransport, Target
from providers.wire import WireProtocol, decode_object, excerpt

__all__ = ["HTTPProvider", "Lanes", "ProbeAnswer", "status_error", "translate_httpx_errors"]

log = structlog.get_logger(__name__)

_MIN_ATTEMPT_S = 0.001  # httpx needs a positive timeout; the cancel scope ends the call anyway


@contextmanager
def translate_httpx_errors(spec: ProviderSpec) -> Iterator[None]:
    """Re-raise any `httpx` failure inside the block as a `ProviderError`, `from` it.

    The only place in the project that catches `httpx` exceptions.
    """
    try:
        yield
    except httpx.TimeoutException as exc:
        raise Timeout(
            f"{spec.label} did not answer before the deadline ({type(exc).__name__})"
        ) from exc
    except httpx.ConnectError as exc:
        raise TransportError(
            f"{spec.label} refused or could not open a connection "
            f"({spec.redact(str(exc)) or type(exc).__name__}); "
            "check that the server is running and base_url is right",
            connect_refused=True,
        ) from exc
    except httpx.TransportError as exc:
        raise TransportError(
            f"{spec.label} dropped the exchange ({type(exc).__name__}: {spec.redact(str(exc))})",
            connect_refused=False,
        ) from exc
    except httpx.HTTPError as exc:
        raise ProviderError(f"{spec.label}: {type(exc).__name__}: {spec.redact(str(exc))}") from exc


def status_error(
    spec: ProviderSpec, wire: WireProtocol, status: int, headers: Mapping[str, str], body: bytes
) -> HTTPStatusError:
    """The typed error for a non-2xx answer (`status`, `headers` and `body`), with the
    provider's retry hint if any."""
    retry_after = retry_after_from_headers(headers)
    if retry_after is None:
        retry_after = wire.retry_after_from_body(body)
    kind: type[HTTPStatusError] = HTTPStatusError
    fix = ""
    if status == 429:
        kind, fix = RateLimited, "; lower max_connections or raise this key's rate limit"
    elif status in (401, 403):
        kind, fix = AuthError, "; check the key in the env var named by api_key_env"
    elif status == 404:
        fix = "; check the model name and base_url"
    wait = "" if retry_after is None else f" (retry after {retry_after:g} s)"
    quoted = excerpt(spec, body)
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
    attempts: list[Attempt] = field(default_factory=list)
    attempt_began: float | None = None


class Lanes:
    """The HTTP clients of one endpoint, each carrying at most `per_lane` requests at a time.

    httpcore's pool re-scans every connection, and for each idle one every
    connection again, whenever a request starts or ends: with 64 requests in
    flight on one client that costs milliseconds of CPU per request. Spreading
    them over clients of a few connections each keeps the scans short; the
    connections are still reused (each lane keeps its keep-alive connections).
    """

    def __init__(
        self,
        new_client: Callable[[], httpx.AsyncClient],
        per_lane: int = 8,
        lean: LeanTransport | None = None,
    ) -> None:
        self._new_client = new_client
        self.lean = lean
        """The lean transport under the clients, if that is what carries their requests."""
        self._per_lane = per_lane
        self._clients: list[httpx.AsyncClient] = []
        self._busy: list[int] = []

    @contextmanager
    def lane(self) -> Iterator[httpx.AsyncClient]:
        """The least busy client, or a new one when every lane is full."""
        index = min(range(len(self._busy)), key=self._busy.__getitem__, default=-1)
        if index < 0 or self._busy[index] >= self._per_lane:
            self._clients.append(self._new_client())
            self._busy.append(0)
            index = len(self._clients) - 1
        self._busy[index] += 1
        try:
            yield self._clients[index]
        finally:
            self._busy[index] -= 1

    async def aclose(self) -> None:
        """Close every client."""
        for client in self._clients:
            await client.aclose()


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
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise _over_cap(spec)
        chunks.append(chunk)
    return b"".join(chunks)


def _json_body(value: dict[str, Any]) -> bytes:
    """A request body exactly as httpx writes `json=`."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _text(value: bytes) -> str:
    try:
        return value.decode("ascii")
    except UnicodeDecodeError:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("iso-8859-1")


def _header_map(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Lowercase header names -> values (repeated headers joined by commas, as httpx does)."""
    found: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("ascii"), _text(value)
        found[key] = f"{found[key]}, {text}" if key in found else text
    return found


class _ExchangeStream(httpx.AsyncByteStream):
    """An exchange's body for an `httpx.Response` that must decode it (gzip and the like)."""

    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            yield chunk


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
        http: Lanes,
        limiter: anyio.CapacityLimiter,
        retry: RetryPolicy,
    ) -> None:
        self.spec = spec
        """The endpoint, model and key this client calls."""
        self._wire = wire
        self._http = http
        self._limiter = limiter
        self._retry = retry
        self._targets: dict[tuple[str, tuple[tuple[str, str], ...]], Target | None] = {}

    def __repr__(self) -> str:
        return f"HTTPProvider({self.spec.label})"

    async def complete(self, request: CompletionRequest, *, deadline: float) -> Completion:
        """Ask for one completion before `deadline` (see `providers.Provider.complete`)."""
        call = _Call(began=anyio.current_time())
        with anyio.CancelScope(deadline=deadline):
            try:
                # The slot is kept through retry waits: a rate-limited endpoint should
                # not get another caller's request while this one backs off.
                async with self._limiter:
                    call.queued_s = anyio.current_time() - call.began
                    first: ProviderError | None = None
                    try:
                        completion = await self._attempt(request, deadline, call)
                    except ProviderError as error:
                        first = error
                    if first is not None:
                        completion = await self._retried(first, request, deadline, call)
            except ProviderError as exc:
                exc.attempts = tuple(call.attempts)
                raise
            return replace(
                completion,
                latency_s=anyio.current_time() - call.began,
                queued_s=call.queued_s,
                attempts=tuple(call.attempts),
            )
        raise self._deadline_passed(call)

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
                lean = self._http.lean
                target = None if lean is None or lean.mocked else self._target(url, headers)
                if lean is not None and target is not None:
                    status, answer_headers, content = await self._post(lean, target, body)
                else:
                    status, answer_headers, content = await self._send(
                        url, headers, body, deadline, began
                    )
            if not 200 <= status < 300:
                raise status_error(self.spec, self._wire, status, answer_headers, content)
            completion = self._wire.parse_response(self.spec, status, answer_headers, content)
        except ProviderError as exc:
            seen = exc.status if isinstance(exc, HTTPStatusError) else None
            call.attempts.append(Attempt(seen, str(exc), anyio.current_time() - began))
            call.attempt_began = None
            raise
        call.attempts.append(Attempt(status, None, anyio.current_time() - began))
        call.attempt_began = None
        return completion

    async def _send(
        self,
        url: str,
        headers: dict[str, str],
        body: dict[str, Any],
        deadline: float,
        began: float,
    ) -> tuple[int, Mapping[str, str], bytes]:
        """The answer through httpx (a test's transport, a proxy, or a mock in place); each
        step is bounded by the time left at `began`, as `complete`'s scope bounds the whole."""
        timeout = max(deadline - began, _MIN_ATTEMPT_S)
        with self._http.lane() as http:
            async with http.stream(
                "POST", url, headers=headers, json=body, timeout=timeout
            ) as response:
                content = await _read_capped(self.spec, response)
        return response.status_code, response.headers, content

    async def _post(
        self, lean: LeanTransport, target: Target, body: dict[str, Any]
    ) -> tuple[int, Mapping[str, str], bytes]:
        """The answer through the lean transport's `post`, with no httpx objects around it
        (bounded by `complete`'s cancel scope)."""
        exchange = await lean.post(target, _json_body(body))
        try:
            head = exchange.head
            if any(n == b"content-encoding" and v.lower() != b"identity" for n, v in head.headers):
                # Compressed: httpx decodes it, and the cap counts the decoded bytes.
                response = httpx.Response(
                    head.status, headers=head.headers, stream=_ExchangeStream(exchange.chunks())
                )
                return head.status, response.headers, await _read_capped(self.spec, response)
            content = await exchange.read(self.spec.max_response_bytes)
        finally:
            await exchange.aclose()
        if content is None:
            raise _over_cap(self.spec)
        return head.status, _header_map(head.headers), content

    def _target(self, url: str, headers: dict[str, str]) -> Target | None:
        """The request head for `url` and `headers` as httpx would write it, built once; None
        where httpx must send the request itself (credentials in the URL)."""
        key = (url, tuple(headers.items()))
        if key in self._targets:
            return self._targets[key]
        with self._http.lane() as http:
            template = http.build_request("POST", url, headers=headers, json={})
        target = None if template.url.userinfo else Target(template.url, template.headers.raw)
        self._targets[key] = target
        return target

    async def probe(self, *, deadline: float) -> ProbeAnswer:
        """Ask the endpoint its free models call (no retry: the caller decides what an answer
        means); a connection refused, a timeout or a dropped exchange raise as in `complete`."""
        url, headers, lists_models = self._wire.probe_request(self.spec)
        began = anyio.current_time()
        with anyio.CancelScope(deadline=deadline) as scope:
            with translate_httpx_errors(self.spec), self._http.lane() as http:
                timeout = max(deadline - began, _MIN_ATTEMPT_S)
                async with http.stream("GET", url, headers=headers, timeout=timeout) as response:
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

    def _deadline_passed(self, call: _Call) -> Timeout:
        now = anyio.current_time()
        if call.attempt_began is not None:  # cut off mid-request by the deadline
            call.attempts.append(
                Attempt(None, "no answer before the deadline", now - call.attempt_began)
            )
        queued = now - call.began if call.queued_s is None else call.queued_s
        error = Timeout(
            f"{self.spec.label} gave no usable answer before the deadline "
            f"({now - call.began:.3f} s after the call, {queued:.3f} s of it waiting for one of "
            f"max_connections={self.spec.max_connections} slots); allow a longer deadline "
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
