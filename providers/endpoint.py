"""One endpoint's way to the network: its transport, and the cookies it has set.

A provider's requests go straight to the endpoint's transport (aiohttp's pool
under `httpx-aiohttp`, httpx's own where a proxy is mounted, or a test's),
as `httpx.Request` and `httpx.Response`, without `httpx.AsyncClient` in
between: the client's per-request layers (auth, redirects, event hooks, its
URL and header merging, a cookie pass over every answer) are work a provider
does not use and cost as much CPU as the transport itself. What of them the
endpoints need is kept here: httpx's default headers, each attempt's timeout,
and one cookie jar per endpoint, read only when an answer sets a cookie and
sent only once it holds one. A provider sends the same few header sets all run
long: each is normalised once and copied per request, so httpx builds the
request as it is, with the head httpx itself would send.
"""

from __future__ import annotations

import json
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


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""A body encoded as httpx encodes `json=` (made once: `json.dumps` with options makes an
encoder per call)."""
_HEAD_SETS_KEPT = 64
"""Header sets kept per endpoint: a provider sends the same few all run long."""


class Endpoint:
    """Sends one endpoint's requests over `transport`, keeping the cookies it sets."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport
        self.cookies = httpx.Cookies()
        """The cookies the endpoint has set, sent back with every request to it."""
        self._heads: dict[tuple[Any, ...], httpx.Headers] = {}

    def _head(self, url: httpx.URL, headers: Mapping[str, str], json_body: bool) -> httpx.Headers:
        """The request's headers as httpx would send them (its `Host`, its defaults under the
        caller's own, and a JSON body's type), normalised once per set: each request copies
        them and adds its body's length."""
        key = (url.raw_host, url.port, json_body, *headers.items())
        head = self._heads.get(key)
        if head is None:
            own = {name.lower() for name in headers}
            sent = [] if "host" in own else [("Host", url.netloc.decode("ascii"))]
            sent.extend(
                (name, value) for name, value in _DEFAULT_HEADERS if name.lower() not in own
            )
            sent.extend(headers.items())
            if json_body and "content-type" not in own:
                sent.append(("Content-Type", "application/json"))
            if len(self._heads) >= _HEAD_SETS_KEPT:
                self._heads.clear()
            head = self._heads[key] = httpx.Headers(sent)
        return head

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
        url = url if isinstance(url, httpx.URL) else httpx.URL(url)
        body = b"" if json is None else _JSON.encode(json).encode()
        head = httpx.Headers(self._head(url, headers, json is not None))
        if body or method in ("POST", "PUT", "PATCH"):  # as httpx frames a request
            head["Content-Length"] = str(len(body))
        # Given its headers whole and its body as a stream, httpx takes the request as it is
        # (no pass over the headers to add what is already there), then reads the body.
        request = httpx.Request(
            method,
            url,
            headers=head,
            stream=httpx.ByteStream(body),
            extensions={
                "timeout": {
                    "connect": attempt_s,
                    "read": attempt_s,
                    "write": attempt_s,
                    "pool": attempt_s,
                }
            },
        )
        request.read()
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
