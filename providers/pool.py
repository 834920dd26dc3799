"""The HTTP clients and connection slots of one run.

One `httpx.AsyncClient` per endpoint (protocol, base_url), shared by every
model and key behind it so keep-alive connections are reused; one
`anyio.CapacityLimiter` of `max_connections` slots per (protocol, base_url,
key, model), the unit a provider rate-limits. Everything is closed when the
`async with` block ends.
"""

from __future__ import annotations

import functools
import ssl
from types import TracebackType
from typing import Self

import anyio
import httpx

from providers import anthropic, gemini, openai
from providers.client import HTTPProvider, Lanes
from providers.retry import RetryPolicy
from providers.spec import ProviderSpec, WireProtocolName
from providers.wire import WireProtocol

__all__ = ["WIRE_PROTOCOLS", "Providers"]

WIRE_PROTOCOLS: dict[WireProtocolName, WireProtocol] = {
    "openai": openai,
    "anthropic": anthropic,
    "gemini": gemini,
}
"""The module implementing each wire protocol."""

_CLOSE_S = 5.0  # closing pooled sockets is quick; never let it hang a shutdown
_KEEPALIVE = 64

_Endpoint = tuple[str, str]
_SlotKey = tuple[str, str, str | None, str]


class Providers:
    """Hands out a `Provider` per spec for the length of an `async with` block.

    `transport` replaces the network (tests pass `httpx.MockTransport`);
    `retry` bounds every call's transport retries.
    """

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._retry = retry or RetryPolicy()
        self._transport = transport
        self._http: dict[_Endpoint, Lanes] = {}
        self._slots: dict[_SlotKey, anyio.CapacityLimiter] = {}
        self._clients: dict[ProviderSpec, HTTPProvider] = {}
        self._open = False

    async def __aenter__(self) -> Self:
        self._open = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._open = False
        lanes, self._http = list(self._http.values()), {}
        self._slots.clear()
        self._clients.clear()
        with anyio.move_on_after(_CLOSE_S, shield=True):
            for lane in lanes:
                await lane.aclose()

    def client(self, spec: ProviderSpec) -> HTTPProvider:
        """The provider for `spec`; the same one for equal specs."""
        if not self._open:
            raise RuntimeError(
                "Providers is not open: call client() inside `async with Providers() as pool:`"
            )
        provider = self._clients.get(spec)
        if provider is None:
            provider = HTTPProvider(
                spec,
                WIRE_PROTOCOLS[spec.protocol],
                self._endpoint(spec),
                self._slot(spec),
                self._retry,
            )
            self._clients[spec] = provider
        return provider

    def _endpoint(self, spec: ProviderSpec) -> Lanes:
        key = (spec.protocol, spec.base_url)
        if key not in self._http:
            tls = spec.base_url.startswith("https://")
            self._http[key] = Lanes(functools.partial(self._new_client, tls))
        return self._http[key]

    def _new_client(self, tls: bool) -> httpx.AsyncClient:
        # No pool cap of httpx's own: the slot limiters are the only gate, so
        # a wait for a connection is always a wait the deadline accounts for.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=_KEEPALIVE)
        verify = _verified_context() if tls else _plain_context()
        return httpx.AsyncClient(limits=limits, transport=self._transport, verify=verify)

    def _slot(self, spec: ProviderSpec) -> anyio.CapacityLimiter:
        # The first spec seen for a (protocol, base_url, key, model) sets its size.
        key = (spec.protocol, spec.base_url, spec.reveal_key(), spec.model)
        if key not in self._slots:
            self._slots[key] = anyio.CapacityLimiter(spec.max_connections)
        return self._slots[key]


@functools.cache
def _verified_context() -> ssl.SSLContext:
    """The one certificate-checking TLS context of the process: loading the CA bundle costs
    tens of milliseconds of the event loop, so it is done once, and only for https://."""
    return httpx.create_ssl_context()


@functools.cache
def _plain_context() -> ssl.SSLContext:
    """What an http:// endpoint's client is given: it never speaks TLS (its URLs are its base
    URL's, and redirects are not followed), so no CA bundle is loaded for it."""
    return httpx.create_ssl_context(verify=False)
