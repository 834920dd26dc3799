"""The aiohttp transport of an endpoint that needs no proxy: httpx-aiohttp's, with the work a
provider's requests repeat done once.

`httpx_aiohttp.AiohttpTransport` hands each `httpx.Request` to aiohttp as a stranger's:
the URL turned back into text for aiohttp to parse again, the headers read one by one
through httpx's decoding, the proxy options looked up, and the answer's body read
through two layers of generators per chunk. A provider sends the same few URLs and
header sets all run long, so here the parsed URL is kept per `httpx.URL`, the headers go
across as their raw pairs (decoded as httpx decodes them) and the body streams from
aiohttp's reader in one layer. What goes over the wire, the pool, and the errors
(`map_aiohttp_exceptions`, so `translate_httpx_errors` reads the same roots) are the
library's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import aiohttp
import httpx
from httpx_aiohttp.transport import AiohttpTransport, map_aiohttp_exceptions
from yarl import URL

__all__ = ["EndpointTransport"]

_CHUNK = 64 * 1024
"""The most of an answer's body one read hands on."""
_URLS_KEPT = 64
"""Parsed URLs kept per transport (an endpoint's few paths; the probes' paths too)."""
_HTTP11 = {"http_version": b"HTTP/1.1"}


class _Body(httpx.AsyncByteStream):
    """An answer's body as aiohttp reads it, chunk by chunk; closing it lets the connection
    go back to the pool (or closes it, when the body was left unread)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content = self._response.content
        with map_aiohttp_exceptions():
            while chunk := await content.read(_CHUNK):
                yield chunk

    async def aclose(self) -> None:
        with map_aiohttp_exceptions():
            await self._response.__aexit__(None, None, None)


class EndpointTransport(AiohttpTransport):
    """`AiohttpTransport` over the session `client` makes, for requests sent without a
    proxy (an endpoint behind one gets httpx's own transport)."""

    def __init__(self, client: Callable[[], aiohttp.ClientSession]) -> None:
        super().__init__(client=client)
        self._urls: dict[int, tuple[httpx.URL, URL]] = {}

    def _url(self, url: httpx.URL) -> URL:
        """`url` as aiohttp reads it (from its text, as aiohttp would parse it), parsed
        once per `httpx.URL` object: a provider sends each of its paths as one object."""
        kept = self._urls.get(id(url))
        if kept is not None and kept[0] is url:
            return kept[1]
        if len(self._urls) >= _URLS_KEPT:
            self._urls.clear()
        parsed = URL(str(url))
        self._urls[id(url)] = (url, parsed)
        return parsed

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` over the pool; the answer with its body still to read."""
        session = self.client
        if not isinstance(session, aiohttp.ClientSession):
            session = self.client = self.get_client()
        timeout = request.extensions.get("timeout", {})
        decoding = request.headers.encoding
        headers = [(k.decode(decoding), v.decode(decoding)) for k, v in request.headers.raw]
        try:
            body = request.content or None
        except httpx.RequestNotRead:  # a streamed body: the library's own way
            return await super().handle_async_request(request)
        with map_aiohttp_exceptions():
            response = await session.request(
                request.method,
                self._url(request.url),
                headers=headers,
                data=body,
                allow_redirects=False,
                auto_decompress=False,  # httpx decodes, as it would over its own transport
                compress=False,
                timeout=aiohttp.ClientTimeout(
                    sock_connect=timeout.get("connect"),
                    sock_read=timeout.get("read"),
                    connect=timeout.get("pool"),
                ),
                server_hostname=request.extensions.get("sni_hostname"),
            )
        extensions = dict(_HTTP11)
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_Body(response),
            request=request,
            extensions=extensions,
        )
