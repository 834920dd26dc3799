"""A scripted outage in front of the mock: connections really refused, then served again.

`Front` listens on the public port and pipes every connection to the mock's
own (private) port. An `Outage` says when it goes down: up `after_s`, then
down `for_s` (the listening socket closed, so a connect is refused, and the
connections it carried reset), then up again, once or, with `repeat`, in a
cycle. What a model's endpoint does when its server dies, restarts or flaps.
"""

from __future__ import annotations

import socket
from contextlib import suppress
from dataclasses import dataclass

import anyio
import anyio.abc
import structlog

__all__ = ["Front", "Outage"]

log = structlog.get_logger("arena.mock_llm.outage")


@dataclass(frozen=True, slots=True)
class Outage:
    """Up `after_s`, down `for_s`, then up for good or, with `repeat`, the cycle again."""

    after_s: float
    for_s: float
    repeat: bool = False

    def __post_init__(self) -> None:
        if self.after_s < 0 or self.for_s <= 0:
            raise ValueError(f"an outage needs after_s >= 0 and for_s > 0, got {self}")


class Front:
    """The public port of a mock whose server sits on `upstream`, going down as told."""

    def __init__(self, upstream: int, outage: Outage, host: str = "127.0.0.1") -> None:
        self.upstream = upstream
        self.outage = outage
        self.host = host
        self.port = 0
        self.down = False
        self._scope = anyio.CancelScope()

    def close(self) -> None:
        """Stop serving, at once."""
        self._scope.cancel()

    async def run(self, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve, go down and come back as the outage says; reports the public port."""
        with self._scope:
            await self._run(task_status)

    async def _run(self, task_status: anyio.abc.TaskStatus[int]) -> None:
        started = False
        while True:
            listening = self._listen()
            if not started:
                task_status.started(self.port)
                started = True
            self.down = False
            with listening, anyio.move_on_after(self.outage.after_s):
                await self._serve(listening)
            # the port is closed; the connections it carried went with the scope
            self.down = True
            log.info("mock_went_down", port=self.port, for_s=self.outage.for_s)
            await anyio.sleep(self.outage.for_s)
            log.info("mock_came_back", port=self.port)
            if not self.outage.repeat:
                break
        self.down = False
        with self._listen() as listening:
            await self._serve(listening)

    def _listen(self) -> socket.socket:
        """The public port's listening socket (the same port each time it comes back)."""
        listening = socket.create_server((self.host, self.port), reuse_port=False)
        listening.setblocking(False)
        self.port = listening.getsockname()[1]
        return listening

    async def _serve(self, listening: socket.socket) -> None:
        """Every connection piped upstream, until cancelled. A readiness wait and a
        non-blocking accept, not the event loop's `sock_accept`: cancelling that one as a
        connection arrives can fail inside asyncio (its reader fires on a cancelled
        future), and the outage cancels it on purpose, mid-traffic."""
        async with anyio.create_task_group() as tg:
            while True:
                await anyio.wait_readable(listening)
                try:
                    conn, _ = listening.accept()
                except (BlockingIOError, InterruptedError):
                    continue  # another wake-up took it
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                tg.start_soon(self._pipe_socket, conn)

    async def _pipe_socket(self, conn: socket.socket) -> None:
        try:
            client = await anyio.abc.SocketStream.from_socket(conn)
        except OSError:
            conn.close()
            return
        await self._pipe(client)

    async def _pipe(self, client: anyio.abc.SocketStream) -> None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            upstream = await anyio.connect_tcp(self.host, self.upstream)
            async with client, upstream, anyio.create_task_group() as tg:
                tg.start_soon(_copy, client, upstream, tg.cancel_scope)
                await _copy(upstream, client, tg.cancel_scope)


async def _copy(
    source: anyio.abc.SocketStream, target: anyio.abc.SocketStream, scope: anyio.CancelScope
) -> None:
    """Bytes from `source` to `target` until either side closes; then both end."""
    with suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        async for chunk in source:
            await target.send(chunk)
    scope.cancel()
