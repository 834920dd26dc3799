"""A lean HTTP/1.1 transport under httpx: anyio streams, h11, keep-alive per endpoint.

httpx stays the client interface (requests, responses, errors; respx and
`httpx.MockTransport` keep working above it), but what carries a request is
this transport instead of httpcore's pool: a request takes an idle connection
of its (scheme, host, port) or opens one, writes its head and body through
h11, and hands httpx a response whose body is read from the same connection.
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
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
import h11
import httpcore
import httpx

__all__ = ["LeanTransport"]

_READ_BYTES = 64 * 1024
_Key = tuple[bytes, bytes, int]
"""(scheme, host, port)."""


class _Connection:
    """One socket and its h11 state machine."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(our_role=h11.CLIENT)
        self.reused = False
        """It carried a request before: the server may have closed it while it was idle."""
        self.answered = False
        """A byte of an answer came on it for the request in progress."""

    async def send(self, event: h11.Event, limit_s: float | None) -> None:
        data = self.h11.send(event)
        if data:
            try:
                with anyio.fail_after(limit_s):
                    await self.stream.send(data)
            except TimeoutError as exc:
                raise httpx.WriteTimeout("timed out writing the request") from exc
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise httpx.WriteError(str(exc) or type(exc).__name__) from exc

    async def next_event(self, limit_s: float | None) -> Any:
        """The next h11 event, reading from the socket as needed."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            try:
                with anyio.fail_after(limit_s):
                    data = await self.stream.receive(_READ_BYTES)
            except anyio.EndOfStream:
                data = b""
            except TimeoutError as exc:
                raise httpx.ReadTimeout("timed out reading the response") from exc
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
            self.answered = self.answered or bool(data)
            self.h11.receive_data(data)

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
            await self.stream.aclose()


class _Body(httpx.AsyncByteStream):
    """A response body read from its connection; the connection goes back when it is done."""

    def __init__(
        self, transport: LeanTransport, key: _Key, connection: _Connection, timeout: float | None
    ) -> None:
        self._transport = transport
        self._key = key
        self._connection: _Connection | None = connection
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        while True:
            event = await connection.next_event(self._timeout)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._connection = None
                await self._transport._release(self._key, connection)
                return
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body"
                )

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:  # not read to its end: the connection cannot be reused
            await connection.aclose()


_POOL_METHOD = httpcore.AsyncConnectionPool.handle_async_request


def _pool_replaced() -> bool:
    """Whether something (a mock such as respx) has replaced httpcore's pool method."""
    return httpcore.AsyncConnectionPool.handle_async_request is not _POOL_METHOD


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 with keep-alive connections per (scheme, host, port), at most `keepalive`
    idle ones each; `ssl_context` for `https://` (None: https is refused)."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None, keepalive: int = 64) -> None:
        self._ssl = ssl_context
        self._keepalive = keepalive
        self._idle: dict[_Key, list[_Connection]] = {}
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
        url = request.url
        key = (url.raw_scheme, url.raw_host, url.port or (443 if url.scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        body = await request.aread()
        while True:
            connection = await self._connection(key, timeouts.get("connect"))
            try:
                return await self._exchange(request, key, connection, body, timeouts)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                await connection.aclose()
                if not connection.reused or connection.answered:
                    raise
                # The server closed it while it was idle and nothing came back: the request
                # was not read, so it goes again, on a new connection.
            except BaseException:
                await connection.aclose()
                raise

    async def _exchange(
        self,
        request: httpx.Request,
        key: _Key,
        connection: _Connection,
        body: bytes,
        timeouts: dict[str, float | None],
    ) -> httpx.Response:
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"transfer-encoding"]
        if body and not any(k.lower() == b"content-length" for k, _ in headers):
            headers.append((b"Content-Length", str(len(body)).encode()))
        target = request.url.raw_path
        write = timeouts.get("write")
        await connection.send(
            h11.Request(method=request.method.encode(), target=target, headers=headers), write
        )
        if body:
            await connection.send(h11.Data(data=body), write)
        await connection.send(h11.EndOfMessage(), write)
        read = timeouts.get("read")
        while True:
            event = await connection.next_event(read)
            if isinstance(event, h11.Response):
                break
            if isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("server disconnected without sending a response")
            # An informational response (100 Continue) is passed over.
        version = b"HTTP/" + event.http_version
        return httpx.Response(
            status_code=event.status_code,
            headers=list(event.headers),
            stream=_Body(self, key, connection, read),
            extensions={"http_version": version, "reason_phrase": bytes(event.reason)},
        )

    async def _connection(self, key: _Key, limit_s: float | None) -> _Connection:
        idle = self._idle.get(key)
        if idle:
            connection = idle.pop()
            connection.reused, connection.answered = True, False
            return connection
        scheme, host, port = key
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
        return _Connection(stream)

    async def _release(self, key: _Key, connection: _Connection) -> None:
        """A response read to its end: keep its connection for the next request if it can
        carry one, else close it."""
        if self._closed or not connection.reusable:
            await connection.aclose()
            return
        connection.h11.start_next_cycle()
        idle = self._idle.setdefault(key, [])
        if len(idle) >= self._keepalive:
            await connection.aclose()
            return
        idle.append(connection)
