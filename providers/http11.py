"""One HTTP/1.1 client connection: a request head and body out, a response read back.

The lean transport (`providers.transport`) sends one request at a time on a
connection and reads its answer here: the status line and headers (an
informational 1xx answer is passed over), then the body as the response
frames it (RFC 9112 section 6): none for 204, 304 and HEAD, chunked when
`Transfer-Encoding` says so, `Content-Length` bytes, else everything up to the
close. Whatever the peer sends that is not HTTP, a head over `MAX_HEAD_BYTES`,
or a close before the message ends, raises `httpx.RemoteProtocolError`; socket
failures raise `httpx.ReadError` or `httpx.WriteError`, a limit passed
`httpx.ReadTimeout` or `httpx.WriteTimeout`. A connection is reusable once a
keep-alive HTTP/1.1 response was read to its end with nothing after it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import anyio
import anyio.abc
import httpx

__all__ = ["MAX_HEAD_BYTES", "Connection", "Head", "valid_header"]

MAX_HEAD_BYTES = 64 * 1024
"""The longest response head (status line and headers) read before giving up on it."""

_READ_BYTES = 64 * 1024
_STATUS_LINE = re.compile(rb"HTTP/(1\.[01]) ([0-9]{3})(?: ([^\r\n]*))?")
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(rb"[^\x00\r\n]*")
_DIGITS = re.compile(rb"[0-9]{1,18}")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?")


def valid_header(name: bytes, value: bytes) -> bool:
    """Whether a request header can be written as it is (a token name, no CR, LF or NUL)."""
    return _TOKEN.fullmatch(name) is not None and _FIELD_VALUE.fullmatch(value) is not None


class Head:
    """A response's status line and headers (names lowercased, in the order sent)."""

    __slots__ = ("headers", "http_version", "reason", "status")

    def __init__(
        self, http_version: bytes, status: int, reason: bytes, headers: list[tuple[bytes, bytes]]
    ) -> None:
        self.http_version = http_version
        self.status = status
        self.reason = reason
        self.headers = headers

    def values(self, name: bytes) -> list[bytes]:
        """Every value of header `name` (lowercase)."""
        return [v for k, v in self.headers if k == name]


def _parse_head(data: bytes) -> Head:
    lines = data.split(b"\r\n")
    status_line = _STATUS_LINE.fullmatch(lines[0])
    if status_line is None:
        raise httpx.RemoteProtocolError(f"not an HTTP/1.1 status line: {lines[0][:80]!r}")
    version, status, reason = status_line.groups()
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            raise httpx.RemoteProtocolError(f"illegal header line {line[:80]!r}")
        headers.append((name.lower(), value.strip(b" \t")))
    return Head(version, int(status), reason or b"", headers)


class Connection:
    """One socket carrying one exchange at a time.

    `limit_s` on each call bounds each write or read (None: only the caller's
    cancel scope bounds it).
    """

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream
        self.reused = False
        """It carried a request before: the server may have closed it while it was idle."""
        self.answered = False
        """A byte of an answer came on it for the request in progress."""
        self.reusable = False
        """The last response was read to its end and the connection may carry another."""
        self._buffer = b""
        self._eof = False
        self._keep_alive = False

    def begin(self) -> None:
        """A new exchange starts on this connection."""
        self.answered = False
        self.reusable = False

    async def send(self, data: bytes, limit_s: float | None) -> None:
        """Write the whole request (head and body in one write)."""
        try:
            if limit_s is None:
                await self.stream.send(data)
            else:
                with anyio.fail_after(limit_s):
                    await self.stream.send(data)
        except TimeoutError as exc:
            raise httpx.WriteTimeout("timed out writing the request") from exc
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__) from exc

    async def _fill(self, limit_s: float | None) -> bool:
        """Read more into the buffer; False at the end of the stream."""
        if self._eof:
            return False
        try:
            if limit_s is None:
                data = await self.stream.receive(_READ_BYTES)
            else:
                with anyio.fail_after(limit_s):
                    data = await self.stream.receive(_READ_BYTES)
        except anyio.EndOfStream:
            self._eof = True
            return False
        except TimeoutError as exc:
            raise httpx.ReadTimeout("timed out reading the response") from exc
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
        self.answered = True
        self._buffer += data
        return True

    async def read(self, length: int | None, most: int) -> bytes | None:
        """The whole body, or None when it runs over `most` bytes (left unread, so that the
        connection cannot be reused)."""
        if length is not None and 0 <= length <= len(self._buffer) and length <= most:
            body, self._buffer = self._buffer[:length], self._buffer[length:]
            self.reusable = self._keep_alive and not self._buffer
            return body
        chunks: list[bytes] = []
        size = 0
        async for chunk in self.body(length, None):
            size += len(chunk)
            if size > most:
                self.reusable = False
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    def _take(self, most: int) -> bytes:
        """At most `most` bytes from the front of the buffer."""
        if len(self._buffer) <= most:
            chunk, self._buffer = self._buffer, b""
        else:
            chunk, self._buffer = self._buffer[:most], self._buffer[most:]
        return chunk

    async def _line_block(self, end: bytes, limit_s: float | None, what: str) -> bytes:
        """The buffer's bytes up to `end` (taken out of it, `end` dropped)."""
        start = 0
        while (at := self._buffer.find(end, start)) < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise httpx.RemoteProtocolError(f"{what} over {MAX_HEAD_BYTES:,} bytes")
            start = max(len(self._buffer) - len(end) + 1, 0)
            if not await self._fill(limit_s):
                if self._buffer or what != "response head":
                    raise httpx.RemoteProtocolError(
                        "peer closed connection without sending complete message body"
                        if what != "response head"
                        else "peer closed connection in the middle of the response head"
                    )
                raise httpx.RemoteProtocolError("server disconnected without sending a response")
        block, self._buffer = self._buffer[:at], self._buffer[at + len(end) :]
        return block

    async def read_head(self, method: bytes, limit_s: float | None) -> tuple[Head, int | None]:
        """The final response head, and its body's length: a byte count, -1 for chunked,
        None for a body that ends at the close."""
        while True:
            head = _parse_head(await self._line_block(b"\r\n\r\n", limit_s, "response head"))
            if not 100 <= head.status < 200:
                break  # an informational answer (100 Continue) is passed over
        self._keep_alive = head.http_version == b"1.1" and not any(
            b"close" in v.lower() for v in head.values(b"connection")
        )
        if method == b"HEAD" or head.status in (204, 304):
            return head, 0
        coding = head.values(b"transfer-encoding")
        if coding:
            if coding[-1].lower().rsplit(b",", 1)[-1].strip() != b"chunked":
                raise httpx.RemoteProtocolError(f"unsupported Transfer-Encoding {coding!r}")
            return head, -1
        lengths = {v.strip() for line in head.values(b"content-length") for v in line.split(b",")}
        if not lengths:
            self._keep_alive = False
            return head, None
        if len(lengths) > 1 or _DIGITS.fullmatch(next(iter(lengths))) is None:
            raise httpx.RemoteProtocolError(f"bad Content-Length {sorted(lengths)!r}")
        return head, int(next(iter(lengths)))

    async def body(self, length: int | None, limit_s: float | None) -> AsyncIterator[bytes]:
        """The body's chunks as they come; the connection is `reusable` after the last."""
        if length is None:
            while self._buffer or await self._fill(limit_s):
                chunk, self._buffer = self._buffer, b""
                yield chunk
        elif length >= 0:
            while length:
                if not self._buffer and not await self._fill(limit_s):
                    raise httpx.RemoteProtocolError(
                        "peer closed connection without sending complete message body"
                    )
                chunk = self._take(length)
                length -= len(chunk)
                yield chunk
        else:
            async for chunk in self._chunked(limit_s):
                yield chunk
        self.reusable = self._keep_alive and not self._buffer

    async def _chunked(self, limit_s: float | None) -> AsyncIterator[bytes]:
        while True:
            line = await self._line_block(b"\r\n", limit_s, "chunk size line")
            size_match = _CHUNK_SIZE.fullmatch(line)
            if size_match is None:
                raise httpx.RemoteProtocolError(f"bad chunk size line {line[:80]!r}")
            size = int(size_match.group(1), 16)
            if size == 0:
                while await self._line_block(b"\r\n", limit_s, "trailer"):
                    pass  # trailers are read and dropped
                return
            while size:
                if not self._buffer and not await self._fill(limit_s):
                    raise httpx.RemoteProtocolError(
                        "peer closed connection without sending complete message body"
                    )
                chunk = self._take(size)
                size -= len(chunk)
                yield chunk
            if await self._line_block(b"\r\n", limit_s, "chunk end"):
                raise httpx.RemoteProtocolError("a chunk is longer than its size line says")

    async def aclose(self) -> None:
        """Close the socket (bounded, even when the caller is cancelled)."""
        self.reusable = False
        with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
            await self.stream.aclose()
