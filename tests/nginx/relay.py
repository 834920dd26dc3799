"""A TCP relay that forgets quiet flows, as a NAT or a load balancer does.

It forwards each client connection to the upstream port byte for byte. A
connection quiet for longer than `forget_after_s` is forgotten: the next bytes
the client sends (a request on a reused keep-alive connection) go nowhere, and
nothing ever comes back, not even a close. The client's only way out is its
own deadline. A pool that drops connections idle longer than its expiry,
shorter than `forget_after_s`, never meets a forgotten flow.

`idle_spells` counts the chances the client had to meet one: each connection
left quiet past `forget_after_s` while the client went on sending requests
(on it or on another). With no idle expiry each of them could have been
reused into silence; a test whose league left none proves nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import anyio
from anyio.abc import SocketAttribute, SocketStream

__all__ = ["ForgettingRelay"]


@dataclass(eq=False)
class _Flow:
    last: float
    """When a byte last passed, either way (the event loop's clock)."""
    awaiting: bool = False
    """A request went up and no answer has come down yet."""
    forgotten: bool = False
    upstream_closed: bool = False
    spell_counted: float | None = None
    """`last` as it was when this quiet spell was counted in `idle_spells`."""


class ForgettingRelay:
    """Forwards 127.0.0.1:`port` to 127.0.0.1:`upstream_port`, forgetting quiet flows."""

    def __init__(self, upstream_port: int, forget_after_s: float) -> None:
        self.upstream_port = upstream_port
        self.forget_after_s = forget_after_s
        self.port = 0
        """Where it listens, once `serving` has started."""
        self.connections = 0
        """Client connections accepted."""
        self.swallowed = 0
        """Requests sent on a forgotten flow: never forwarded, never answered."""
        self.idle_spells = 0
        """Connections left quiet past `forget_after_s` before a later request."""
        self._flows: list[_Flow] = []

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[ForgettingRelay]:
        """Listen for the block on a free port."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, self._relay)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()

    async def _relay(self, client: SocketStream) -> None:
        flow = _Flow(last=anyio.current_time())
        self._flows.append(flow)
        self.connections += 1
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            async with client:
                upstream = await anyio.connect_tcp("127.0.0.1", self.upstream_port)
                async with upstream, anyio.create_task_group() as tg:
                    tg.start_soon(self._down, upstream, client, flow, tg.cancel_scope)
                    await self._up(client, upstream, flow)
                    tg.cancel_scope.cancel()

    async def _up(self, client: SocketStream, upstream: SocketStream, flow: _Flow) -> None:
        """Client to upstream, until the client closes."""
        while True:
            try:
                chunk = await client.receive()
            except anyio.EndOfStream:
                return
            now = anyio.current_time()
            if flow.forgotten:
                continue
            self._count_spells(now)
            if now - flow.last > self.forget_after_s:
                flow.forgotten = True
                self.swallowed += 1
                continue
            flow.last = now
            flow.awaiting = True
            await upstream.send(chunk)

    async def _down(
        self, upstream: SocketStream, client: SocketStream, flow: _Flow, scope: anyio.CancelScope
    ) -> None:
        """Upstream to client, until the upstream closes: then the client's side closes too,
        unless the flow is forgotten (a close would tell the client)."""
        while True:
            try:
                chunk = await upstream.receive()
            except anyio.EndOfStream:
                break
            if flow.forgotten:
                continue
            flow.last = anyio.current_time()
            flow.awaiting = False
            await client.send(chunk)
        flow.upstream_closed = True
        if not flow.forgotten:
            scope.cancel()

    def _count_spells(self, now: float) -> None:
        for flow in self._flows:
            quiet = now - flow.last > self.forget_after_s and not flow.awaiting
            open_to_reuse = not flow.forgotten and not flow.upstream_closed
            if quiet and open_to_reuse and flow.spell_counted != flow.last:
                flow.spell_counted = flow.last
                self.idle_spells += 1
