"""What the arena's HTTP servers share: the mock LLM, the play page, `arena view --serve`.

Each is a raw ASGI app that routes its own few paths (the mock by wire protocol, the
page behind its token, the viewer as files), served by uvicorn. A request body is read
up to a bound; a response goes out whole, its length counted, in one write. A server
listens on a socket bound before uvicorn sees it, so a busy port is a `PortUnavailable`
naming the flag to change (uvicorn would `sys.exit`). Every wait is bounded: a server is up
within `START_S` or the block fails, and its stop lasts at most `STOP_S` (uvicorn ends
what still runs `GRACE_S` after its shutdown begins).

    read_body(receive, limit)                   the body, or None past `limit` bytes
    read_json(body)                             JSON, bounded in depth and number size
    own_hosts(port) / header(scope, name)       the Host values a local server answers to
    send_bytes / send_json / send_text          one whole response
    listen(host, port, what=..., flag=...)      the bound socket
    serving(app, sock)                          uvicorn on it in this event loop, for a block
    serve(app, sock)                            ... until it is told to stop (Ctrl-C)
    ServerThread(app, sock)                     ... in a thread of its own, start to stop

uvicorn is imported when a server starts: a command that serves nothing never loads it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread

if TYPE_CHECKING:
    import uvicorn

__all__ = [
    "GRACE_S",
    "MAX_DEPTH",
    "START_S",
    "STOP_S",
    "App",
    "Headers",
    "Message",
    "PortUnavailable",
    "Receive",
    "Scope",
    "Send",
    "ServerThread",
    "header",
    "listen",
    "own_hosts",
    "read_body",
    "read_json",
    "send_bytes",
    "send_json",
    "send_text",
    "serve",
    "serving",
]

START_S = 10.0
"""The longest a server may take to come up (on loopback it takes milliseconds)."""
STOP_S = 5.0
"""The longest a server's stop may take before what still runs is cancelled."""
GRACE_S = 1
"""How long uvicorn lets the requests in flight finish once its shutdown begins."""

Scope = MutableMapping[str, Any]
"""What ASGI says of a connection: its type, and for HTTP the method, path, headers."""
Message = MutableMapping[str, Any]
"""One ASGI event, received or sent."""
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
"""An ASGI app: called once per connection."""
Headers = Sequence[tuple[bytes, bytes]]
"""Response headers as ASGI sends them: (name, value) pairs, lower-case names."""

_JSON = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_JSON_TYPE = (b"content-type", b"application/json")
_TEXT_TYPE = (b"content-type", b"text/plain; charset=utf-8")


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, or None once it passes `limit` bytes (the rest is not read)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if message["type"] != "http.request" or not message.get("more_body"):
            return b"".join(chunks)


MAX_DEPTH = 32
"""The deepest nesting of arrays and objects `read_json` reads."""
_MAX_DIGITS = 40
"""The longest number `read_json` reads, in characters."""


def read_json(body: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`body` as JSON; ValueError for what is not JSON, nests deeper than `max_depth`, or
    holds a number longer than `_MAX_DIGITS` characters or out of a float's range (the
    standard reader would recurse until Python stops it, or give `inf`)."""
    depth, quoted, escaped = 0, False, False
    for byte in body:
        if quoted:
            escaped, quoted = not escaped and byte == 0x5C, quoted and (escaped or byte != 0x22)
        elif byte == 0x22:
            quoted = True
        elif byte in b"[{":
            depth += 1
            if depth > max_depth:
                raise ValueError(f"JSON nested deeper than {max_depth}")
        elif byte in b"]}":
            depth -= 1
    return json.loads(body, parse_float=_finite, parse_int=_whole, parse_constant=_no_constant)


def _finite(text: str) -> float:
    value = float(_short(text))
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _whole(text: str) -> int:
    return int(_short(text))


def _short(text: str) -> str:
    if len(text) > _MAX_DIGITS:
        raise ValueError(f"a number of {len(text)} characters")
    return text


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def own_hosts(port: int) -> frozenset[bytes]:
    """The Host values of a server listening on 127.0.0.1:`port`: that address, or
    localhost, at that port. Any other (a DNS name pointed at 127.0.0.1) is refused, so a
    page of another site cannot read or drive the server from a browser."""
    return frozenset({f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()})


def header(scope: Scope, name: bytes) -> bytes | None:
    """The request's header `name` (lower case), or None."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


async def send_bytes(
    send: Send, status: int, body: bytes, headers: Headers = (), *, head: bool = False
) -> None:
    """One whole response: `headers` (its content type among them), then its length, then
    `body` in one write; with `head`, as the answer to a HEAD request: all but the body
    (its length said all the same)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *headers,
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"" if head else body})


async def send_json(send: Send, status: int, value: object, headers: Headers = ()) -> None:
    """`value` as a compact JSON response (a NaN is refused: it is no JSON)."""
    await send_bytes(send, status, _JSON.encode(value).encode(), [*headers, _JSON_TYPE])


async def send_text(send: Send, status: int, text: str, headers: Headers = ()) -> None:
    """`text` as a plain UTF-8 response."""
    await send_bytes(send, status, text.encode(), [*headers, _TEXT_TYPE])


class PortUnavailable(OSError):
    """A server cannot listen on the host and port asked for (busy, or not this machine's);
    the message names the flag to change. The `arena` command prints it as one line."""


def listen(host: str, port: int, *, what: str, flag: str) -> socket.socket:
    """A TCP socket bound to host:`port` (0: a free one), for a server to listen on; a busy
    port is a `PortUnavailable` saying that `what` cannot listen there and to pick another
    `flag`."""
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on sockets that say so, and
    # without it every keep-alive answer waits ~40 ms for a delayed ACK.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortUnavailable(
            f"{what} cannot listen on {host}:{port} ({exc}); pick another {flag}"
        ) from exc
    return sock


def _server(
    app: App, *, log_level: str, on_stop: Callable[[], None] | None, signals: bool
) -> uvicorn.Server:
    """The uvicorn server for `app` (no access log, no lifespan), `on_stop` and `signals`
    as `serving` has them."""
    import uvicorn  # only a command that serves loads it

    class Server(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            if not signals:
                yield
                return
            with super().capture_signals():
                yield

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if on_stop is not None:
                on_stop()
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",  # the apps start and stop nothing of their own
        timeout_graceful_shutdown=GRACE_S,
    )
    return Server(config)


@asynccontextmanager
async def serving(
    app: App,
    sock: socket.socket,
    *,
    log_level: str = "warning",
    on_stop: Callable[[], None] | None = None,
    signals: bool = True,
) -> AsyncIterator[int]:
    """Serve `app` on `sock` in this event loop for the block; yields the port. The socket is
    closed after. `on_stop` is called as the shutdown begins (to end what would keep a
    request open); with `signals` uvicorn takes Ctrl-C and SIGTERM while it serves, without
    them they stay the caller's (a run's grace period)."""
    server = _server(app, log_level=log_level, on_stop=on_stop, signals=signals)
    with sock:
        async with anyio.create_task_group() as group:
            group.start_soon(partial(server.serve, sockets=[sock]))
            try:
                with anyio.fail_after(START_S):
                    while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, no event
                        await anyio.sleep(0.005)
                yield sock.getsockname()[1]
            finally:
                server.should_exit = True
                group.cancel_scope.deadline = anyio.current_time() + STOP_S


async def serve(
    app: App,
    sock: socket.socket,
    *,
    log_level: str = "info",
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Serve `app` on `sock` until uvicorn is told to stop (Ctrl-C, SIGTERM), `on_stop` as
    `serving` has it. The socket is closed after."""
    server = _server(app, log_level=log_level, on_stop=on_stop, signals=True)
    with sock:
        await server.serve(sockets=[sock])


class ServerThread:
    """`serving` for a caller that blocks: the app served by an event loop in a thread of
    its own, from `start` to `stop`."""

    def __init__(self, app: App, sock: socket.socket) -> None:
        self.app = app
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        """The port it listens on."""
        self._running = ExitStack()

    def start(self) -> None:
        """Start serving; returns once the server is up (or raises why it is not)."""
        with ExitStack() as starting:
            portal = starting.enter_context(anyio.from_thread.start_blocking_portal())
            # The signals are the calling thread's: uvicorn off the main thread takes none.
            served = serving(self.app, self.sock, signals=False)
            starting.enter_context(portal.wrap_async_context_manager(served))
            self._running = starting.pop_all()

    def stop(self) -> None:
        """Stop serving; returns once the server and its thread have ended (the socket is
        closed even if it never started)."""
        self._running.close()
        self.sock.close()
