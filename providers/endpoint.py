"""One endpoint's way to the network: its transport, and the cookies it has set.

A provider's requests go straight to the endpoint's transport (aiohttp's pool
under `httpx-aiohttp`, httpx's own where a proxy is mounted, or a test's),
as `httpx.Request` and `httpx.Response`, without `httpx.AsyncClient` in
between: the client's per-request layers (auth, redirects, event hooks, its
URL and header merging, a cookie pass over every answer) are work a provider
does not use and cost as much CPU as the transport itself. What of them the
endpoints need is kept here: httpx's default headers, each attempt's timeout,
and one cookie jar per endpoint, read only when an answer sets a cookie and
sent only once it holds one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

__all__ = ["Endpoint"]

_DEFAULT_HEADERS = (
    ("Accept", "*/*"),
    ("Accept-Encoding", httpx._client.ACCEPT_ENCODING),
    ("Connection", "keep-alive"),
    ("User-Agent", httpx._client.USER_AGENT),
)
"""The headers `httpx.AsyncClient` sends unless a request sets its own."""


class Endpoint:
    """Sends one endpoint's requests over `transport`, keeping the cookies it sets."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport
        self.cookies = httpx.Cookies()
        """The cookies the endpoint has set, sent back with every request to it."""

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: httpx.URL | str,
        *,
        headers: Mapping[str, str],
        attempt_s: float,
        json: Any = None,
    ) -> AsyncIterator[httpx.Response]:
        """The answer to one request, its body not yet read (`aiter_bytes`); closed when the
        block ends. `json` is the body (encoded as httpx encodes it), `attempt_s` bounds each
        phase of the exchange (connecting, writing, reading)."""
        own = {name.lower() for name in headers}
        sent = [(name, value) for name, value in _DEFAULT_HEADERS if name.lower() not in own]
        sent.extend(headers.items())
        request = httpx.Request(
            method,
            url,
            headers=sent,
            json=json,
            extensions={
                "timeout": {
                    "connect": attempt_s,
                    "read": attempt_s,
                    "write": attempt_s,
                    "pool": attempt_s,
                }
            },
        )
        if self.cookies:
            self.cookies.set_cookie_header(request)
        response = await self._transport.handle_async_request(request)
        try:
            response.request = request
            if "set-cookie" in response.headers:
                self.cookies.extract_cookies(response)
            yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the transport's connections."""
        await self._transport.aclose()
