"""The lean HTTP transport against real sockets: keep-alive, a connection the server closed
while idle, TLS with a CA of the test's own (certificates, SNI), the proxy variables, the
request a completion sends and the answers it reads (chunked, compressed, endless)."""

from __future__ import annotations

import contextlib
import ssl
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc
import httpx
import pytest
from anyio.streams.tls import TLSListener
from providers.transport import LeanTransport

from providers.pool import _proxied

Handler = Callable[[anyio.abc.ByteStream, int], Awaitable[None]]
"""(the accepted stream, how many connections the server accepted before it) -> serve it."""

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def _read_head(stream: anyio.abc.ByteStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
    return data


async def _serve(
    handler: Handler,
    tls: ssl.SSLContext | None = None,
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    listener: anyio.abc.Listener[anyio.abc.ByteStream] = await anyio.create_tcp_listener(
        local_host="127.0.0.1"
    )
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    if tls is not None:
        listener = TLSListener(listener, tls, standard_compatible=False)
    accepted = [0]

    async def serve(stream: anyio.abc.ByteStream) -> None:
        accepted[0] += 1
        async with stream:
            await handler(stream, accepted[0] - 1)

    task_status.started(port)
    await listener.serve(serve)


def test_one_connection_carries_many_requests() -> None:
    connections: list[int] = []

    async def keep_alive(stream: anyio.abc.ByteStream, n: int) -> None:
        connections.append(n)
        for _ in range(5):
            await _read_head(stream)
            await stream.send(OK)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, keep_alive)
            async with httpx.AsyncClient(transport=LeanTransport(ssl_context=None)) as client:
                for _ in range(5):
                    reply = await client.get(f"http://127.0.0.1:{port}/")
                    assert reply.text == "ok"
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert connections == [0]


def test_a_connection_the_server_closed_while_idle_is_replaced_and_the_request_sent_again() -> None:
    async def one_each(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_head(stream)
        await stream.send(OK)  # keep-alive says the connection stays, but it is closed now

    async def main() -> list[str]:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, one_each)
            async with httpx.AsyncClient(transport=LeanTransport(ssl_context=None)) as client:
                texts = []
                for _ in range(3):
                    texts.append((await client.get(f"http://127.0.0.1:{port}/")).text)
                    await anyio.sleep(0.05)  # the server's close reaches us while idle
            tg.cancel_scope.cancel()
        return texts

    assert anyio.run(main) == ["ok", "ok", "ok"]


def test_a_close_delimited_body_is_read_whole_and_a_reset_mid_body_is_an_error() -> None:
    async def old_server(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_head(stream)
        if n == 0:
            await stream.send(b"HTTP/1.0 200 OK\r\n\r\nall of it, then close")
        else:
            await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, old_server)
            async with httpx.AsyncClient(transport=LeanTransport(ssl_context=None)) as client:
                reply = await client.get(f"http://127.0.0.1:{port}/")
                assert reply.text == "all of it, then close"
                assert reply.http_version == "HTTP/1.0"
                with pytest.raises(httpx.RemoteProtocolError, match="complete message body"):
                    await client.get(f"http://127.0.0.1:{port}/")
            tg.cancel_scope.cancel()

    anyio.run(main)


def test_a_stalled_answer_ends_at_the_read_timeout() -> None:
    async def stall(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_head(stream)
        await anyio.sleep(30)

    async def main() -> float:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, stall)
            async with httpx.AsyncClient(transport=LeanTransport(ssl_context=None)) as client:
                started = anyio.current_time()
                with pytest.raises(httpx.ReadTimeout):
                    await client.get(f"http://127.0.0.1:{port}/", timeout=0.2)
                waited = anyio.current_time() - started
            tg.cancel_scope.cancel()
        return waited

    assert anyio.run(main) < 5.0


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA of the test's own and a server certificate it signed for `localhost` only."""
    folder = tmp_path_factory.mktemp("tls")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=cog-arena test CA")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=localhost")  # fmt: skip
    (folder / "ext.cnf").write_text("subjectAltName=DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")  # fmt: skip
    return folder


def test_https_checks_the_certificate_and_sends_the_host_by_sni(certificates: Path) -> None:
    names: list[str | None] = []
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(certificates / "server.pem", certificates / "server.key")
    server.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,func-returns-value]

    async def answer(stream: anyio.abc.ByteStream, n: int) -> None:
        try:
            await _read_head(stream)
            await stream.send(OK)
        except (anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError, OSError):
            pass  # a client that refused the certificate hangs up

    trusted = ssl.create_default_context(cafile=str(certificates / "ca.pem"))

    async def get(context: ssl.SSLContext, host: str, port: int) -> str:
        async with httpx.AsyncClient(transport=LeanTransport(ssl_context=context)) as client:
            return (await client.get(f"https://{host}:{port}/")).text

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, answer, server)
            assert await get(trusted, "localhost", port) == "ok"
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await get(httpx.create_ssl_context(), "localhost", port)  # the public CAs only
            with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|match"):
                await get(trusted, "127.0.0.1", port)  # signed for localhost, not the address
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert names[0] == "localhost"


def test_the_proxy_variables_send_an_endpoint_through_httpx_s_own_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        for variant in (name, name.lower()):
            monkeypatch.delenv(variant, raising=False)
    assert not _proxied("http://models.internal:8000/v1")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    assert _proxied("http://models.internal:8000/v1")
    assert not _proxied("https://api.example.com/v1")  # HTTP_PROXY is for http:// only
    monkeypatch.setenv("NO_PROXY", "models.internal")
    assert not _proxied("http://models.internal:8000/v1")


def test_through_a_proxy_the_request_reaches_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    import providers

    seen: list[bytes] = []
    body = (b'{"id":"x","model":"m","choices":[{"index":0,"finish_reason":"stop",'
            b'"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1,'
            b'"completion_tokens":1,"total_tokens":2}}')  # fmt: skip

    async def proxy(stream: anyio.abc.ByteStream, n: int) -> None:
        head = await _read_head(stream)
        seen.append(head.split(b"\r\n")[0])
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip

    async def main() -> str:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, proxy)
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            spec = providers.ProviderSpec(
                protocol="openai", model="m", base_url="http://models.internal:8000/v1"
            )
            async with providers.Providers() as pool:
                reply = await pool.client(spec).complete(
                    providers.CompletionRequest(prompt="hello", max_tokens=8),
                    deadline=anyio.current_time() + 10,
                )
            tg.cancel_scope.cancel()
        return reply.text

    assert anyio.run(main) == "hi"
    assert seen == [b"POST http://models.internal:8000/v1/chat/completions HTTP/1.1"]


_COMPLETION = (b'{"id":"x","model":"m","choices":[{"index":0,"finish_reason":"stop",'
               b'"message":{"role":"assistant","content":"hi"}}]}')  # fmt: skip


async def _complete_against(
    handler: Handler, transport: httpx.AsyncBaseTransport | None = None
) -> str:
    import providers

    async with anyio.create_task_group() as tg:
        port = await tg.start(_serve, handler)
        spec = providers.ProviderSpec(
            protocol="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1"
        )
        async with providers.Providers(transport=transport) as pool:
            reply = await pool.client(spec).complete(
                providers.CompletionRequest(prompt="héllo", max_tokens=8),
                deadline=anyio.current_time() + 10,
            )
        tg.cancel_scope.cancel()
    return reply.text


def test_a_completion_goes_out_byte_for_byte_as_httpx_writes_it() -> None:
    seen: list[bytes] = []

    async def capture(stream: anyio.abc.ByteStream, n: int) -> None:
        data = await _read_head(stream)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += await stream.receive()
        seen.append(head + b"\r\n\r\n" + body)
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(_COMPLETION), _COMPLETION))  # fmt: skip

    assert anyio.run(_complete_against, capture) == "hi"
    assert anyio.run(_complete_against, capture, httpx.AsyncHTTPTransport()) == "hi"
    lean, httpcore_sent = (s.split(b"\r\n", 2)[2] for s in seen)  # the Host lines differ
    assert lean == httpcore_sent
    assert lean.endswith('"content":"héllo"}],"max_tokens":8}'.encode())


def test_chunked_and_compressed_answers_are_read_whole() -> None:
    import gzip

    packed = gzip.compress(_COMPLETION)

    async def chunked_gzip(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_head(stream)
        chunks = [packed[:10], packed[10:]]
        body = (
            b"".join(b"%x;ext=1\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\nX-T: 1\r\n\r\n"
        )
        await stream.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                          b"Content-Encoding: gzip\r\n\r\n" + body)  # fmt: skip

    assert anyio.run(_complete_against, chunked_gzip) == "hi"


def test_a_head_that_never_ends_is_a_protocol_error() -> None:
    async def endless_head(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_head(stream)
        await stream.send(b"HTTP/1.1 200 OK\r\n")
        with contextlib.suppress(anyio.BrokenResourceError, OSError):
            for _ in range(100):
                await stream.send(b"X-Filler: " + b"a" * 1000 + b"\r\n")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            port = await tg.start(_serve, endless_head)
            async with httpx.AsyncClient(transport=LeanTransport(ssl_context=None)) as client:
                with pytest.raises(httpx.RemoteProtocolError, match="response head over"):
                    await client.get(f"http://127.0.0.1:{port}/")
            tg.cancel_scope.cancel()

    anyio.run(main)
