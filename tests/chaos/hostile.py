"""A hostile stand-in for a model provider, on loopback, with one mode per fault.

It speaks raw HTTP over TCP (no web framework) so it can misbehave the ways a
real server or a network can: never answer, stall after its headers, drip a
byte a second, send an endless chunked body, cut the connection mid-body,
answer as an HTTP/1.0 server that closes to end its body. The mode is the
first segment of the request path (`/never/v1/chat/completions`); the rest is
the protocol's own path (`/v1/chat/completions`, `/v1/messages`,
`/v1beta/models/<m>:generateContent`); a GET is the preflight's models call
(`unauthorized` and `unknown_model` refuse it, `no_route` has no such route, every other
mode lists `m`). Sound answers carry a legal move read
from the prompt (`arena.mock_llm.answers`), shaped for the protocol.
"""

from __future__ import annotations

import json
import random
import socket
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketStream

from arena.mock_llm.answers import reply_text

_ROOT = Path(__file__).resolve().parents[2]

MODES = (
    "never", "stall", "drip", "endless", "over_cap", "invalid_json", "deep_json", "surrogate",
    "non_utf8", "429_long", "429_zero", "5xx_burst", "reset", "http10", "content_null",
    "tool_call", "echo_key",
)  # fmt: skip
"""Every fault the server can play, one per request path prefix."""

STOPPING = ("too_large", "refused_key", "gateway_504", "sound")
"""Modes of endpoints that answer but are set up wrong (a gateway's 413 on every POST, a
401 on every completion, a gateway that gives up with 504 after `GATEWAY_WAIT_S`), and a
sound one to resume on (each reply a legal move).

`padded` answers soundly after a megabyte of prose (what a replay keeps of such a reply is
bounded: tests/chaos/test_reply_bound.py)."""

GATEWAY_WAIT_S = 0.4
"""How long the `gateway_504` mode waits before its 504, as a gateway would."""

BURST = 3
"""`5xx_burst`: the first BURST tries of each request answer 503, the next one well."""

_OVER_CAP_BYTES = 5 * 1024 * 1024


def _prompt(request: dict[str, Any]) -> str:
    turns = request.get("messages") or request.get("contents") or []
    last = turns[-1] if turns else {}
    content = last.get("content", last.get("parts", ""))
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def _protocol(path: str) -> str:
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/messages"):
        return "anthropic"
    return "gemini"


def _body(protocol: str, text: str | None, *, tool: bool = False) -> dict[str, Any]:
    """A 200 body of `protocol` whose reply is `text` (None: a null content)."""
    if protocol == "openai":
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool:
            call = {"type": "function", "function": {"name": "move", "arguments": "{}"}}
            message["tool_calls"] = [{"id": "call_1", **call}]
        return {"id": "x", "choices": [{"message": message, "finish_reason": "stop"}]}
    if protocol == "anthropic":
        block = (
            {"type": "tool_use", "id": "t1", "name": "move", "input": {}}
            if tool
            else {"type": "text", "text": text}
        )
        return {"id": "x", "content": [] if text is None and not tool else [block],
                "stop_reason": "end_turn"}  # fmt: skip
    part = {"functionCall": {"name": "move", "args": {}}} if tool else {"text": text}
    parts = [] if text is None and not tool else [part]
    return {"candidates": [{"content": {"parts": parts}, "finishReason": "STOP"}]}


_OVER_CAP = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    + b"Content-Length: %d\r\n\r\n" % (_OVER_CAP_BYTES + 11)
    + b'{"pad": "'
    + b"x" * _OVER_CAP_BYTES
    + b'"}'
)
"""A 5 MiB answer, built once."""


def _probe_answer(mode: str, path: str) -> bytes:
    """What a models call gets: refused (`unauthorized`), unknown (`unknown_model`: the
    protocol's own model error, Gemini's for a `v1beta` path, else Anthropic's), a route it
    has not (`no_route`: a web framework's bare 404), or a list naming the model `m` (every
    other mode: the games are where they misbehave)."""
    if mode == "unauthorized":
        return _response(401, b'{"error": {"message": "invalid x-api-key"}}')
    if mode == "unknown_model" and path.startswith("v1beta/"):
        return _response(404, b'{"error": {"code": 404, "message": "models/m is not found for '
                               b'API version v1beta", "status": "NOT_FOUND"}}')  # fmt: skip
    if mode == "unknown_model":
        return _response(404, b'{"type": "error", "error": {"type": "not_found_error", '
                               b'"message": "model: m"}}')  # fmt: skip
    if mode == "no_route":
        return _response(404, b'{"detail": "Not Found"}')
    return _response(200, b'{"object": "list", "data": [{"id": "m"}], "name": "models/m"}')


def _key(headers: dict[str, str]) -> str:
    bearer = headers.get("authorization", "").removeprefix("Bearer ")
    return bearer or headers.get("x-api-key", "") or headers.get("x-goog-api-key", "")


def _response(status: int, body: bytes, extra: str = "", version: str = "1.1") -> bytes:
    reasons = {200: "OK", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests"}
    reason = {**reasons, 503: "Service Unavailable"}.get(status, "X")
    length = "" if version == "1.0" else f"Content-Length: {len(body)}\r\n"
    head = f"HTTP/{version} {status} {reason}\r\nContent-Type: application/json\r\n"
    head += f"{length}{extra}"
    return f"{head}\r\n".encode() + body


class Hostile:
    """The server's state: requests seen per mode, and each request's tries (5xx bursts)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self._tries: Counter[bytes] = Counter()

    async def handle(self, stream: SocketStream) -> None:
        """Serve one connection's requests until the client or a fault closes it."""
        async with stream:
            buffer = b""
            while True:
                request = await _read_request(stream, buffer)
                if request is None:
                    return
                head, body, buffer = request
                if not await self._answer(stream, head, body):
                    return

    async def _answer(self, stream: SocketStream, head: dict[str, Any], body: bytes) -> bool:
        """Answer one request; False when the connection must end."""
        mode, _, path = head["path"].lstrip("/").partition("/")
        self.seen[mode] += 1
        if head["method"] == "GET":  # the preflight's probe
            await stream.send(_probe_answer(mode, path))
            return True
        protocol = _protocol(path)
        request = json.loads(body or b"{}")
        text = reply_text(_prompt(request), random.Random(body), None)
        sound = json.dumps(_body(protocol, text)).encode()
        send = stream.send
        if mode in ("never", "stall", "drip"):
            if mode == "stall":
                await send(b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n")
            if mode == "drip":
                await send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(sound))
                for byte in sound:
                    await send(bytes([byte]))
                    await anyio.sleep(1)
            await anyio.sleep_forever()
        if mode == "endless":
            await send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
            while True:
                await send(chunk)
        if mode == "over_cap":
            await send(_OVER_CAP)
        elif mode == "invalid_json":
            await send(_response(200, b'{"choices": [{"message": {"content": "d"'))
        elif mode == "deep_json":
            await send(_response(200, b'{"a":' * 100_000 + b"1" + b"}" * 100_000))
        elif mode == "surrogate":  # a lone surrogate escape, then the move
            marked = json.dumps(_body(protocol, "\x00 " + text))
            await send(_response(200, marked.replace("\\u0000", "\\ud800", 1).encode()))
        elif mode == "non_utf8":  # a byte no UTF-8 text holds, then the move
            marked = json.dumps(_body(protocol, "\x00 " + text)).encode()
            await send(_response(200, marked.replace(b"\\u0000", b"\xff", 1)))
        elif mode == "429_long":
            await send(_response(429, b'{"error": {"message": "slow"}}', "Retry-After: 3600\r\n"))
        elif mode == "429_zero":
            await send(_response(429, b'{"error": {"message": "again"}}', "Retry-After: 0\r\n"))
        elif mode == "5xx_burst":
            self._tries[body] += 1
            tries = self._tries[body]
            busy = _response(503, b'{"error": {"message": "busy"}}', "Retry-After-Ms: 5\r\n")
            await send(busy if tries % (BURST + 1) else _response(200, sound))
        elif mode == "reset":
            await send(_response(200, sound)[: 60 + len(sound) // 2])
            await _abort(stream)
            return False
        elif mode == "http10":
            await send(_response(200, sound, "Connection: close\r\n", version="1.0"))
            return False
        elif mode in ("content_null", "tool_call"):
            empty = _body(protocol, None, tool=mode == "tool_call")
            await send(_response(200, json.dumps(empty).encode()))
        elif mode == "too_large":
            page = b"<html><center><h1>413 Request Entity Too Large</h1></center></html>"
            await send(_response(413, page))
        elif mode == "refused_key":
            await send(_response(401, b'{"error": {"message": "invalid api key"}}'))
        elif mode == "gateway_504":
            await anyio.sleep(GATEWAY_WAIT_S)
            await send(_response(504, b"<html>504 Gateway Time-out</html>"))
        elif mode in ("sound", "no_route"):
            await send(_response(200, sound))
        elif mode == "padded":  # a sound move after a megabyte of musing
            padded = json.dumps(_body(protocol, "I consider the position. " * 42_000 + text))
            await send(_response(200, padded.encode()))
        elif mode == "echo_key":
            echoed = json.loads(text) | {"say": f"your key is {_key(head['headers'])}"}
            await send(_response(200, json.dumps(_body(protocol, json.dumps(echoed))).encode()))
        else:
            await send(_response(404, b'{"error": {"message": "no such mode"}}'))
        return True


async def _abort(stream: SocketStream) -> None:
    """Close with a TCP reset (SO_LINGER 0), not a clean end of stream."""
    raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    await stream.aclose()


async def _read_request(
    stream: SocketStream, buffer: bytes
) -> tuple[dict[str, Any], bytes, bytes] | None:
    """(head, body, what follows) of the next request, or None when the client is gone."""
    while b"\r\n\r\n" not in buffer:
        try:
            buffer += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return None
    raw_head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = raw_head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    pairs = (line.partition(":") for line in lines[1:])
    headers = {k.strip().lower(): v.strip() for k, _, v in pairs}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        try:
            rest += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return None
    return {"method": method, "path": path, "headers": headers}, rest[:length], rest[length:]


@asynccontextmanager
async def hostile_process() -> AsyncIterator[str]:
    """The server in a process of its own (so it never shares the arena's event loop or
    core), on a free loopback port, for the block; yields its base URL."""
    command = [sys.executable, "-m", "tests.chaos.hostile"]
    async with await anyio.open_process(command, cwd=_ROOT, stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(20):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        try:
            yield line.decode().strip()
        finally:
            process.kill()


@asynccontextmanager
async def hostile_server() -> AsyncIterator[tuple[Hostile, str]]:
    """The server on a free loopback port for the block; yields it and its base URL."""
    server = Hostile()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, _guarded(server.handle))
        try:
            yield server, f"http://127.0.0.1:{port}"
        finally:
            tg.cancel_scope.cancel()


def _guarded(handle: Callable[[SocketStream], Any]) -> Callable[[SocketStream], Any]:
    async def run(stream: SocketStream) -> None:
        # the client hung up: nothing left to answer
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await handle(stream)

    return run


async def _main() -> None:
    async with hostile_server() as (_, url):
        print(url, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(_main)
