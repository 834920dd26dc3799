"""The HTTP clients and connection slots of one run.

One `httpx.AsyncClient` per endpoint (protocol, base_url) over the lean
transport (`providers.transport`: HTTP/1.1 on anyio streams; no SSL context for
`http://`), shared by every model and key behind it so keep-alive connections
are reused; an endpoint the proxy environment variables route through a proxy,
or a test's transport, gets httpx's own (in lanes of a few requests each); one
`anyio.CapacityLimiter` of `max_connections` slots per (protocol, base_url,
key, model), the unit a provider rate-limits. Everything is closed when the
`async with` block ends.
"""

from __future__ import annotations

import functools
from types import TracebackType
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

import anyio

from providers import anthropic, gemini, openai
from providers.spec import ProviderSpec, WireProtocolName
from providers.wire import WireProtocol

if TYPE_CHECKING:  # the HTTP stack is imported when the first client is made
    import ssl

    import httpx

    from providers.client import HTTPProvider, Lanes
    from providers.retry import RetryPolicy

__all__ = ["WIRE_PROTOCOLS", "Providers"]

WIRE_PROTOCOLS: dict[WireProtocolName, WireProtocol] = {
    "openai": openai,
    "anthropic": anthropic,
    "gemini": gemini,
}
"""The module implementing each wire protocol."""

_CLOSE_S = 5.0  # closing pooled sockets is quick; never let it hang a shutdown
_KEEPALIVE = 64
_LEAN_LANE = 1 << 30
"""Requests one lean client carries at once: all of them."""

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
        self._retry = retry
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
            from providers.client import HTTPProvider
            from providers.retry import RetryPolicy

            provider = HTTPProvider(
                spec,
                WIRE_PROTOCOLS[spec.protocol],
                self._endpoint(spec),
                self._slot(spec),
                self._retry or RetryPolicy(),
            )
            self._clients[spec] = provider
        return provider

    def _endpoint(self, spec: ProviderSpec) -> Lanes:
        import httpx

        from providers.client import Lanes
        from providers.transport import LeanTransport

        key = (spec.protocol, spec.base_url)
        if key not in self._http:
            tls = spec.base_url.startswith("https://")
            if self._transport is not None or _proxied(spec.base_url):
                self._http[key] = Lanes(functools.partial(self._httpx_client, tls))
            else:  # one client: the lean transport has no pool to scan
                lean = LeanTransport(ssl_context=_verified_context() if tls else None)
                client = functools.partial(httpx.AsyncClient, transport=lean)
                self._http[key] = Lanes(client, per_lane=_LEAN_LANE, lean=lean)
        return self._http[key]

    def _httpx_client(self, tls: bool) -> httpx.AsyncClient:
        """A client on httpx's own transport: a test's, or one speaking to the proxy the environment
        names (httpx reads HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY)."""
        import httpx

        if self._transport is not None:
            return httpx.AsyncClient(transport=self._transport)
        # No pool cap of httpx's own: the slot limiters are the only gate, so
        # a wait for a connection is always a wait the deadline accounts for.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=_KEEPALIVE)
        verify: ssl.SSLContext | bool = _verified_context() if tls else False
        return httpx.AsyncClient(limits=limits, verify=verify)

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
    import httpx

    return httpx.create_ssl_context()


def _proxied(base_url: str) -> bool:
    """Whether the proxy environment variables send requests to `base_url` through a proxy
    (then httpx's own transport carries them, as it would without us)."""
    import urllib.request  # with http.client and email: only once a model is asked

    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")
