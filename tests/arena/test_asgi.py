"""The servers' shared ASGI pieces: bounded bodies, whole responses, uvicorn on a bound port."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from arena import asgi
from arena.asgi import Receive, Scope, Send

pytestmark = pytest.mark.anyio


async def _echo(scope: Scope, receive: Receive, send: Send) -> None:
    """A POST answered with its body (413 past 8 bytes), GET /json with JSON, else text."""
    if scope["type"] != "http":
        return
    if scope["method"] == "POST":
        body = await asgi.read_body(receive, 8)
        if body is None:
            await asgi.send_text(send, 413, "too long")
        else:
            await asgi.send_bytes(send, 200, body, [(b"x-echo", b"yes")])
    elif scope["path"] == "/json":
        await asgi.send_json(send, 200, {"a": [1, 2]}, [(b"x-kind", b"json")])
    elif scope["method"] == "HEAD":
        await asgi.send_bytes(send, 200, b"hello", head=True)
    else:
        await asgi.send_text(send, 200, "hello")


async def test_a_body_is_read_up_to_its_bound_and_responses_go_out_whole() -> None:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_echo), base_url="http://asgi"
    ) as client:
        echoed = await client.post("/", content=b"12345678")
        assert (echoed.status_code, echoed.content) == (200, b"12345678")
        assert echoed.headers["x-echo"] == "yes"
        assert echoed.headers["content-length"] == "8"
        assert (await client.post("/", content=b"123456789")).status_code == 413
        chunked = await client.post("/", content=_chunks(b"1234", b"5678", b"9"))
        assert chunked.status_code == 413  # the bound counts every chunk
        answer = await client.get("/json")
        assert answer.content == b'{"a":[1,2]}'
        assert answer.headers["content-type"] == "application/json"
        assert answer.headers["x-kind"] == "json"
        text = await client.get("/")
        assert text.headers["content-type"] == "text/plain; charset=utf-8"


async def _chunks(*chunks: bytes) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def test_json_is_refused_a_nan() -> None:
    sent: list[object] = []

    async def send(message: object) -> None:
        sent.append(message)

    with pytest.raises(ValueError, match="not JSON compliant"):
        await asgi.send_json(send, 200, {"x": float("nan")})
    assert not sent


async def test_serving_answers_on_the_bound_port_and_closes_it_after() -> None:
    sock = asgi.listen("127.0.0.1", 0, what="the test server", flag="--port")
    async with asgi.serving(_echo, sock, signals=False) as port, httpx.AsyncClient() as client:
        assert port == sock.getsockname()[1]
        answer = await client.post(f"http://127.0.0.1:{port}/", content=b"hi")
        assert answer.content == b"hi"
        head = await client.head(f"http://127.0.0.1:{port}/")
        assert (head.content, head.headers["content-length"]) == (b"", "5")
    assert sock.fileno() == -1


async def test_a_stop_waits_for_no_request_beyond_its_bound() -> None:
    async def stuck(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await anyio.sleep_forever()

    sock = asgi.listen("127.0.0.1", 0, what="the test server", flag="--port")
    started = time.monotonic()
    async with anyio.create_task_group() as group, asgi.serving(stuck, sock, signals=False) as port:

        async def ask() -> None:
            async with httpx.AsyncClient() as client:
                try:
                    answers.append((await client.get(f"http://127.0.0.1:{port}/")).status_code)
                except httpx.HTTPError as exc:
                    answers.append(type(exc).__name__)

        answers: list[object] = []
        group.start_soon(ask)
        await anyio.sleep(0.2)
    assert time.monotonic() - started < 5.0  # uvicorn's 1 s grace, not the request's wait
    assert answers == [500]  # the stuck request was ended, not left waiting


def test_a_busy_port_names_the_server_and_the_flag() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"^the page cannot listen on 127.0.0.1:{port} \(.*\); pick another --page-port$"):  # fmt: skip
            asgi.listen("127.0.0.1", port, what="the page", flag="--page-port")


def test_a_server_thread_serves_from_start_to_stop() -> None:
    sock = asgi.listen("127.0.0.1", 0, what="the test server", flag="--port")
    server = asgi.ServerThread(_echo, sock)
    server.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/json", timeout=5) as answer:
            assert answer.read() == b'{"a":[1,2]}'
    finally:
        server.stop()
    assert sock.fileno() == -1
    with pytest.raises(urllib.error.URLError, match="refused"):
        urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=5)


def test_a_server_thread_never_started_still_gives_its_port_back() -> None:
    sock = asgi.listen("127.0.0.1", 0, what="the test server", flag="--port")
    asgi.ServerThread(_echo, sock).stop()
    assert sock.fileno() == -1
