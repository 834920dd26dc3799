"""The HTTP clients and connection slots of one run.

One `providers.endpoint.Endpoint` per endpoint (protocol, base URL and the TLS
settings of its connections), shared by every model and key behind it so
keep-alive connections are reused, with one cookie jar. Its requests go over
aiohttp's connection pool (the `httpx-aiohttp` transport): one pool for any
number of requests in flight, idle connections closed after the spec's
`idle_expiry_s`, and no cookie jar of its own (the endpoint's is the one that
keeps and sends cookies). An endpoint the proxy environment variables
(`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`) route through a proxy
has httpx's own transport instead, which speaks HTTP and SOCKS proxies. A
test's transport (`httpx.MockTransport`) replaces the network entirely.

Why aiohttp's pool under httpx rather than httpx's own (httpcore's): with many
requests in flight on one client, httpcore's pool scans its connections on
every request, and its CPU per request grows with them (`bench.throughput`,
64 in flight: about 13 ms a request on httpcore's pool against under 1 ms on
aiohttp's); aiohttp's is flat, keeps idle connections by expiry, and parses
leniently what httpx accepts (bare-LF heads, folded headers).

One `anyio.CapacityLimiter` of `max_connections` slots per (protocol, base_url,
key, model), the unit a provider rate-limits, is the only gate on requests in
flight. Everything is closed when the `async with` block ends.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio

import providers.anthropic as anthropic
import providers.gemini as gemini
import providers.openai as openai
from providers.proxies import proxy_route
from providers.spec import ProviderSpec, Trust, WireProtocolName
from providers.wire import WireProtocol

if TYPE_CHECKING:  # the HTTP stack is imported when the first client is made
    import ssl

    import httpx

    from providers.client import HTTPProvider
    from providers.endpoint import Endpoint
    from providers.retry import RetryPolicy

__all__ = ["WIRE_PROTOCOLS", "Providers", "proxy_for"]

WIRE_PROTOCOLS: dict[WireProtocolName, WireProtocol] = {
    "openai": openai,
    "anthropic": anthropic,
    "gemini": gemini,
}
"""The module implementing each wire protocol."""

_CLOSE_S = 5.0  # closing pooled sockets is quick; never let it hang a shutdown
_KEEPALIVE = 64
"""Idle connections kept per endpoint on the proxy transport."""

_HEAD_BYTES = 64 * 1024
_HEADERS = 1024

_EndpointKey = tuple[str, str, str | None, str | None, str | None, float]
_SlotKey = tuple[str, str, str | None, str]


class Providers:
    """Hands out a `Provider` per spec for the length of an `async with` block.

    `transport` replaces the network (tests pass `httpx.MockTransport`);
    `retry` bounds every call's transport retries; `trust` is where the default
    TLS trust comes from (`providers.tls`).
    """

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        trust: Trust = "certifi",
    ) -> None:
        self._retry = retry
        self._transport = transport
        self._trust: Trust = trust
        self._http: dict[_EndpointKey, Endpoint] = {}
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
        clients, self._http = list(self._http.values()), {}
        self._slots.clear()
        self._clients.clear()
        with anyio.move_on_after(_CLOSE_S, shield=True):
            for client in clients:
                await client.aclose()

    def client(self, spec: ProviderSpec) -> HTTPProvider:
        """The provider for `spec`; the same one for equal specs."""
        if not self._open:
            raise RuntimeError(
                "Providers is not open: call client() inside `async with Providers() as pool:`"
            )
        provider = self._clients.get(spec)
        if provider is None:
            from providers.client import HTTPProvider  # httpx and tenacity: once a model is asked
            from providers.retry import RetryPolicy  # tenacity: the same

            provider = HTTPProvider(
                spec,
                WIRE_PROTOCOLS[spec.protocol],
                self._endpoint(spec),
                self._slot(spec),
                self._retry or RetryPolicy(),
            )
            self._clients[spec] = provider
        return provider

    def _endpoint(self, spec: ProviderSpec) -> Endpoint:
        key = (
            spec.protocol,
            spec.base_url,
            spec.ca_bundle,
            spec.client_cert,
            spec.client_key,
            spec.idle_expiry_s,
        )
        client = self._http.get(key)
        if client is None:
            client = self._http[key] = self._new_client(spec)
        return client

    def _new_client(self, spec: ProviderSpec) -> Endpoint:
        """The endpoint's way out: aiohttp's pool, or a proxy's transport where the environment
        routes the endpoint through one (every URL of an endpoint is under its base URL, so
        one transport serves them all)."""
        import httpx  # 90 ms: only once an endpoint's client is made

        from providers.endpoint import Endpoint

        if self._transport is not None:
            return Endpoint(self._transport)
        tls = self._tls(spec)
        proxy = proxy_for(spec.base_url)
        if proxy is None:
            return Endpoint(_aiohttp_transport(tls, spec.idle_expiry_s))
        limits = httpx.Limits(
            max_connections=None,
            max_keepalive_connections=_KEEPALIVE,
            keepalive_expiry=spec.idle_expiry_s,
        )
        return Endpoint(
            httpx.AsyncHTTPTransport(
                proxy=proxy, verify=tls or False, limits=limits, trust_env=False
            )
        )

    def _tls(self, spec: ProviderSpec) -> ssl.SSLContext | None:
        """The TLS context of an https endpoint (None for http://: no bundle is loaded)."""
        if not spec.base_url.startswith("https://"):
            return None
        from providers.tls import tls_context  # ssl's bundles: https endpoints only

        phrase = spec.client_key_password
        return tls_context(
            self._trust,
            spec.ca_bundle,
            spec.client_cert,
            spec.client_key,
            phrase.get_secret_value() if phrase is not None else None,
        )

    def _slot(self, spec: ProviderSpec) -> anyio.CapacityLimiter:
        # The first spec seen for a (protocol, base_url, key, model) sets its size.
        key = (spec.protocol, spec.base_url, spec.reveal_key(), spec.model)
        if key not in self._slots:
            self._slots[key] = anyio.CapacityLimiter(spec.max_connections)
        return self._slots[key]


def _aiohttp_transport(
    tls: ssl.SSLContext | None, idle_expiry_s: float
) -> httpx.AsyncBaseTransport:
    """The `httpx-aiohttp` transport (`EndpointTransport`): aiohttp's pool with no limit of
    its own (the slots are the gate), idle connections closed after `idle_expiry_s`, no
    cookie jar (the `Endpoint` keeps them)."""
    import aiohttp  # with httpx-aiohttp, 280 ms: only once an endpoint's client is made

    from providers.transport import EndpointTransport

    def session() -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=0,
            limit_per_host=0,
            keepalive_timeout=idle_expiry_s,
            ssl=tls if tls is not None else False,
        )
        return aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
            # Heads as httpx (h11) reads them: a gateway's long cookie, or its many tracing
            # headers, are no error.
            max_line_size=_HEAD_BYTES,
            max_field_size=_HEAD_BYTES,
            max_headers=_HEADERS,
        )

    return EndpointTransport(client=session)


def proxy_for(base_url: str) -> str | None:
    """The proxy the environment variables send requests to `base_url` through, or None
    (no proxy for its scheme, or `NO_PROXY` names its host)."""
    route = proxy_route(base_url)
    return None if route is None else route[0]
