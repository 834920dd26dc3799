"""A lean HTTP/1.1 transport under httpx: anyio streams, keep-alive per endpoint.

httpx stays the client interface (requests, responses, errors; respx and
`httpx.MockTransport` keep working above it), but what carries a request is
this transport instead of httpcore's pool: a request takes an idle connection
of its (scheme, host, port) or opens one, writes its head and body in one
write (`providers.http11` speaks the protocol), and hands httpx a response
whose body is read from the same connection.
A body read to its end gives the connection back for the next request; one
left unread, cut short or close-delimited (HTTP/1.0) closes it.

What it keeps of httpcore's behaviour:

- errors are httpx's: `ConnectError`, `ConnectTimeout`, `ReadTimeout`,
  `WriteError`, `ReadError`, `RemoteProtocolError` (a peer that closes
  mid-body, or sends what is not HTTP);
- a request sent on a reused connection that the server had closed while it
  was idle (no byte of an answer came back) is sent once more on a new one;
- `https://` goes over TLS with the given `ssl.SSLContext` (certificates
  checked and SNI sent with the URL's host, as the context says);
- the request's `timeout` extension bounds connecting, each write and each
  read (the caller's cancel scope bounds the whole call as before).

Proxies are not spoken here: `providers.pool` gives an endpoint that the proxy
environment variables route through a proxy httpx's own transport. While a
mocking library has replaced httpcore's pool (respx does), requests go through
httpx's own transport too, so that the mock sees them.

`post` is the same exchange without httpx's request and response objects
around it, for a client that builds its request head once (`Target`) and
bounds the call with its own cancel scope: `providers.client` sends its
completions that way whenever no mock is in place.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

import anyio
import anyio.abc
import httpcore
import httpx

from providers.http11 import Connection, Head, valid_header

__all__ = ["Exchange", "LeanTransport", "Target"]

Origin = tuple[bytes, bytes, int]
"""(scheme, host, port)."""


class Target:
    """A POST to one URL with one set of headers, its head written once: each request only
    adds its Content-Length and body.

    `headers` are the request's headers as httpx would send them (its own defaults
    merged in, `Content-Length` among them, whose value is replaced per request).
    """

    __slots__ = ("_after", "_before", "origin")

    def __init__(self, url: httpx.URL, headers: list[tuple[bytes, bytes]]) -> None:
        self.origin: Origin = _origin(url)
        lines = [b"POST " + url.raw_path + b" HTTP/1.1"]
        cut = -1
        for name, value in headers:
            if not valid_header(name, value):
                raise httpx.LocalProtocolError(f"illegal request header {name!r}")
            if name.lower() == b"content-length":
                cut = len(lines)
            elif name.lower() != b"transfer-encoding":
                lines.append(name + b": " + value)
        if cut < 0:
            cut = len(lines)
        self._before = b"\r\n".join(lines[:cut]) + b"\r\nContent-Length: "
        self._after = b"".join(b"\r\n" + line for line in lines[cut:]) + b"\r\n\r\n"

    def request(self, body: bytes) -> bytes:
        """The whole request: head and `body`."""
        return b"%b%d%b%b" % (self._before, len(body), self._after, body)


class Exchange:
    """A response whose head was read; its body is still on the connection."""

    __slots__ = ("_connection", "_length", "_transport", "head", "origin")

    def __init__(
        self,
        transport: LeanTransport,
        origin: Origin,
        connection: Connection,
        head: Head,
        length: int | None,
    ) -> None:
        self._transport = transport
        self.origin = origin
        self._connection: Connection | None = connection
        self.head = head
        """The status line and headers."""
        self._length = length

    async def chunks(self, limit_s: float | None = None) -> AsyncIterator[bytes]:
        """The body's chunks; the connection goes back to the pool after the last one."""
        connection = self._connection
        if connection is None:
            return
        async for chunk in connection.body(self._length, limit_s):
            yield chunk
        self._connection = None
        await self._transport._release(self.origin, connection)

    async def read(self, most: int) -> bytes | None:
        """The whole body, or None when it runs over `most` bytes (then the connection is
        closed, not reused)."""
        connection = self._connection
        if connection is None:
            return b""
        body = await connection.read(self._length, most)
        if body is not None:
            self._connection = None
            await self._transport._release(self.origin, connection)
        return body

    async def aclose(self) -> None:
        """End the exchange; a body not read to its end closes its connection."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()


class _Body(httpx.AsyncByteStream):
    """A response body for httpx, read from its exchange."""

    def __init__(self, exchange: Exchange, timeout: float | None) -> None:
        self._exchange = exchange
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._exchange.chunks(self._timeout):
            yield chunk

    async def aclose(self) -> None:
        await self._exchange.aclose()


_POOL_METHOD = httpcore.AsyncConnectionPool.handle_async_request


def _pool_replaced() -> bool:
    """Whether something (a mock such as respx) has replaced httpcore's pool method."""
    return httpcore.AsyncConnectionPool.handle_async_request is not _POOL_METHOD


def _origin(url: httpx.URL) -> Origin:
    return (url.raw_scheme, url.raw_host, url.port or (443 if url.scheme == "https" else 80))


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 with keep-alive connections per (scheme, host, port), at most `keepalive`
    idle ones each; `ssl_context` for `https://` (None: https is refused)."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None, keepalive: int = 64) -> None:
        self._ssl = ssl_context
        self._keepalive = keepalive
        self._idle: dict[Origin, list[Connection]] = {}
        self._closed = False
        self._httpx: httpx.AsyncHTTPTransport | None = None
        """httpx's own transport, for requests a mock must see."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        await self.aclose()

    @property
    def mocked(self) -> bool:
        """Whether a mocking library has replaced httpcore's pool: then every request must
        go through httpx (`handle_async_request`), never `post`."""
        return _pool_replaced()

    async def aclose(self) -> None:
        """Close every idle connection; later requests are refused."""
        self._closed = True
        if self._httpx is not None:
            await self._httpx.aclose()
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                await connection.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` on an idle or new connection; the response's body streams from it."""
        if self._closed:
            raise RuntimeError("the transport is closed")
        if _pool_replaced():
            if self._httpx is None:
                self._httpx = httpx.AsyncHTTPTransport(verify=self._ssl or False)
            return await self._httpx.handle_async_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        body = await request.aread()
        method = request.method.encode()
        exchange = await self._exchange(
            _origin(request.url), method, _request_bytes(request, method, body), timeouts
        )
        head = exchange.head
        return httpx.Response(
            status_code=head.status,
            headers=head.headers,
            stream=_Body(exchange, timeouts.get("read")),
            extensions={"http_version": b"HTTP/" + head.http_version, "reason_phrase": head.reason},
        )

    async def post(self, target: Target, body: bytes) -> Exchange:
        """POST `body` to `target`; the exchange once its response head is read. Nothing here
        times out: the caller's cancel scope bounds the call."""
        if self._closed:
            raise RuntimeError("the transport is closed")
        return await self._exchange(target.origin, b"POST", target.request(body), {})

    async def _exchange(
        self, origin: Origin, method: bytes, data: bytes, timeouts: dict[str, float | None]
    ) -> Exchange:
        while True:
            connection = await self._connection(origin, timeouts.get("connect"))
            try:
                await connection.send(data, timeouts.get("write"))
                head, length = await connection.read_head(method, timeouts.get("read"))
                return Exchange(self, origin, connection, head, length)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                await connection.aclose()
                if not connection.reused or connection.answered:
                    raise
                # The server closed it while it was idle and nothing came back: the request
                # was not read, so it goes again, on a new connection.
            except BaseException:
                await connection.aclose()
                raise

    async def _connection(self, origin: Origin, limit_s: float | None) -> Connection:
        idle = self._idle.get(origin)
        if idle:
            connection = idle.pop()
            connection.reused = True
            connection.begin()
            return connection
        scheme, host, port = origin
        tls = scheme == b"https"
        if tls and self._ssl is None:
            raise httpx.ConnectError("https is not enabled on this transport")
        name = host.decode("ascii")
        try:
            with anyio.fail_after(limit_s):
                stream: anyio.abc.ByteStream
                if self._ssl is not None and tls:  # certificate and SNI for the URL's host
                    stream = await anyio.connect_tcp(
                        name, port, ssl_context=self._ssl, tls_hostname=name,
                        tls_standard_compatible=False,
                    )  # fmt: skip
                else:
                    stream = await anyio.connect_tcp(name, port)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"timed out connecting to {name}:{port}") from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return Connection(stream)

    async def _release(self, origin: Origin, connection: Connection) -> None:
        """A response read to its end: keep its connection for the next request if it can
        carry one, else close it."""
        if self._closed or not connection.reusable:
            await connection.aclose()
            return
        idle = self._idle.setdefault(origin, [])
        if len(idle) >= self._keepalive:
            await connection.aclose()
            return
        idle.append(connection)


def _request_bytes(request: httpx.Request, method: bytes, body: bytes) -> bytes:
    """`request`'s head and body as they go on the wire."""
    lines = [method + b" " + request.url.raw_path + b" HTTP/1.1"]
    sized = False
    for name, value in request.headers.raw:
        lower = name.lower()
        if lower == b"transfer-encoding":
            continue  # the body is read whole: it goes with a Content-Length
        if not valid_header(name, value):
            raise httpx.LocalProtocolError(f"illegal request header {name!r}")
        sized = sized or lower == b"content-length"
        lines.append(name + b": " + value)
    if body and not sized:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
