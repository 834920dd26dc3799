"""The HTTP path a run uses, against real sockets on 127.0.0.1.

Every test goes through `Providers()` with no transport of its own: httpx over
aiohttp's pool, or httpx's own transport where a proxy variable routes the
endpoint. The servers are raw anyio TCP servers that write the bytes a test
names. Covered: which error each failure becomes, keep-alive and idle expiry,
TLS with a CA of the test's own (trust, SNI, client certificates), the answers
that are read, cookies, proxies (HTTP and SOCKS5), gateway headers, and the
request body a completion sends.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import ssl
import struct
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import httpx
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSListener
from pydantic import SecretStr

from providers import (
    CertificateError,
    Completion,
    CompletionRequest,
    HTTPStatusError,
    ProviderError,
    Providers,
    ProviderSpec,
    RetryPolicy,
    Timeout,
    TransportError,
    openai,
)
from providers.pool import proxy_for
from providers.tls import tls_context
from tests.timing import MARGIN_S

pytestmark = pytest.mark.anyio

Handler = Callable[[anyio.abc.ByteStream, int], Awaitable[None]]
"""(the accepted stream, how many connections the server accepted before it) -> serve it."""

FAST_RETRY = RetryPolicy(max_attempts=4, backoff_initial_s=0.01, backoff_max_s=0.02)
REQUEST = CompletionRequest(prompt="héllo", max_tokens=8)
SERVER_S = 10.0
"""The longest a test keeps its server up: no test can hang on a wait of its own."""
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")

COMPLETION = (b'{"id":"x","model":"m","choices":[{"index":0,"finish_reason":"stop",'
              b'"message":{"role":"assistant","content":"hi"}}]}')  # fmt: skip


def reply(body: bytes = COMPLETION, *, status: bytes = b"200 OK", head: bytes = b"") -> bytes:
    """A keep-alive HTTP/1.1 answer with `body`, and `head`'s extra header lines."""
    framing = b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    return b"HTTP/1.1 " + status + b"\r\n" + framing + head + b"\r\n" + body


@dataclass(frozen=True)
class Request:
    """One request as a server read it."""

    connection: int
    """How many connections the server had accepted before this one's."""
    head: bytes
    body: bytes

    @property
    def line(self) -> bytes:
        """The request line."""
        return self.head.split(b"\r\n", 1)[0]

    def header(self, name: str) -> list[str]:
        """Every value of the header `name`, in order."""
        lines = self.head.decode("latin-1").split("\r\n")[1:]
        fields = [line.partition(":") for line in lines]
        return [value.strip() for key, _, value in fields if key.strip().lower() == name]


async def _read_request(reader: BufferedByteReceiveStream, connection: int) -> Request:
    head = await reader.receive_until(b"\r\n\r\n", 64 * 1024)
    request = Request(connection, head, b"")
    lengths = request.header("content-length")
    body = await reader.receive_exactly(int(lengths[0])) if lengths else b""
    return Request(connection, head, body)


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
        # A client that hangs up (as every client does, in the end) is not a server failure.
        with contextlib.suppress(
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.EndOfStream,
            anyio.IncompleteRead,
            ssl.SSLError,
            OSError,
        ):
            async with stream:
                await handler(stream, accepted[0] - 1)

    task_status.started(port)
    await listener.serve(serve)


@contextlib.asynccontextmanager
async def _server(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    """A server running `handler` for the block (at most `SERVER_S`); yields its port."""
    with anyio.fail_after(SERVER_S):
        async with anyio.create_task_group() as tg:
            yield await tg.start(_serve, handler, tls)
            tg.cancel_scope.cancel()


def _answering(requests: list[Request], answer: Callable[[Request], bytes]) -> Handler:
    """A keep-alive server: every request on a connection recorded in `requests` and
    answered with `answer(request)`, until the client hangs up."""

    async def handler(stream: anyio.abc.ByteStream, n: int) -> None:
        reader = BufferedByteReceiveStream(stream)
        while True:
            request = await _read_request(reader, n)
            requests.append(request)
            await stream.send(answer(request))

    return handler


def _spec(
    port: int, *, host: str = "127.0.0.1", scheme: str = "http", **fields: object
) -> ProviderSpec:
    return ProviderSpec.model_validate(
        {"protocol": "openai", "model": "m", "base_url": f"{scheme}://{host}:{port}/v1", **fields}
    )


async def _ask(pool: Providers, spec: ProviderSpec, *, within: float = 5.0) -> Completion:
    return await pool.client(spec).complete(REQUEST, deadline=anyio.current_time() + within)


async def _complete(spec: ProviderSpec, *, within: float = 5.0) -> Completion:
    async with Providers(retry=FAST_RETRY) as pool:
        return await _ask(pool, spec, within=within)


async def _failure(spec: ProviderSpec, *, within: float) -> tuple[ProviderError, float]:
    """The error a completion ends with and the seconds it took, timed from the request: the
    HTTP stack is imported (a second on a loaded machine) before the clock starts."""
    async with Providers(retry=FAST_RETRY) as pool:
        model = pool.client(spec)
        started = anyio.current_time()
        try:
            await model.complete(REQUEST, deadline=started + within)
        except ProviderError as error:
            return error, anyio.current_time() - started
    raise AssertionError(f"{spec.base_url} answered; a failure was expected")


@pytest.fixture(autouse=True)
def _no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's proxy settings must not send the tests' requests elsewhere."""
    for name in PROXY_VARIABLES:
        for variant in (name, name.lower()):
            monkeypatch.delenv(variant, raising=False)


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # bound and released, never listened on: a connection to it is refused


# Which error each failure becomes.


async def test_a_refused_connection_is_a_transport_error_that_never_connected() -> None:
    error, waited = await _failure(_spec(_unused_port()), within=10.0)
    assert isinstance(error, TransportError)
    assert error.connect_refused
    assert not isinstance(error, CertificateError)
    assert "refused" in str(error)
    assert len(error.attempts) == FAST_RETRY.max_attempts  # refused is retried...
    assert waited < MARGIN_S  # ...and fails fast, long before the deadline


async def test_a_close_before_any_answer_is_a_dropped_exchange_not_a_timeout() -> None:
    requests: list[Request] = []

    async def hang_up(stream: anyio.abc.ByteStream, n: int) -> None:
        requests.append(await _read_request(BufferedByteReceiveStream(stream), n))

    async with _server(hang_up) as port:
        error, waited = await _failure(_spec(port), within=10.0)
    assert isinstance(error, TransportError)
    assert not error.connect_refused
    assert "dropped the exchange" in str(error)
    assert waited < MARGIN_S
    # The whole request arrived each time, and each retry came on a new connection.
    assert [r.connection for r in requests] == list(range(FAST_RETRY.max_attempts))
    assert all(r.line == b"POST /v1/chat/completions HTTP/1.1" and r.body for r in requests)


async def test_a_reset_mid_body_is_a_dropped_exchange() -> None:
    async def reset(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_request(BufferedByteReceiveStream(stream), n)
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + COMPLETION[:20])
        await anyio.sleep(0.05)  # the head and a fifth of the body are on their way
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        # With a zero linger the close that follows sends a reset (RST), not a FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    async with _server(reset) as port:
        with pytest.raises(TransportError) as caught:
            await _complete(_spec(port), within=10.0)
    assert not caught.value.connect_refused
    assert "dropped the exchange" in str(caught.value)


async def test_only_a_wait_past_the_deadline_is_a_timeout() -> None:
    requests: list[Request] = []

    async def stall(stream: anyio.abc.ByteStream, n: int) -> None:
        requests.append(await _read_request(BufferedByteReceiveStream(stream), n))
        await anyio.sleep(SERVER_S)

    async with _server(stall) as port:
        error, waited = await _failure(_spec(port), within=0.2)
    assert isinstance(error, Timeout)
    assert 0.2 <= waited < 0.2 + MARGIN_S
    assert len(requests) == 1  # a timeout is not asked again


async def test_a_deadline_that_passes_while_recovering_ends_with_the_failure() -> None:
    requests: list[Request] = []

    async def hang_up_then_stall(stream: anyio.abc.ByteStream, n: int) -> None:
        requests.append(await _read_request(BufferedByteReceiveStream(stream), n))
        if n > 0:
            await anyio.sleep(SERVER_S)

    async with _server(hang_up_then_stall) as port:
        error, waited = await _failure(_spec(port), within=0.3)
    assert isinstance(error, TransportError)  # not a Timeout: the infrastructure failed first
    assert not error.connect_refused
    assert "then the deadline passed" in str(error)
    assert [a.error is not None for a in error.attempts] == [True, True]
    assert len(requests) == 2
    assert 0.3 <= waited < 0.3 + MARGIN_S


# Keep-alive.


async def test_one_connection_carries_many_completions() -> None:
    requests: list[Request] = []
    async with (
        _server(_answering(requests, lambda _: reply())) as port,
        Providers(retry=FAST_RETRY) as pool,
    ):
        for _ in range(5):
            assert (await _ask(pool, _spec(port))).text == "hi"
    assert [r.connection for r in requests] == [0] * 5


async def test_a_connection_idle_past_idle_expiry_is_not_reused() -> None:
    requests: list[Request] = []
    ended: list[int] = []

    async def answer_then_note_the_end(stream: anyio.abc.ByteStream, n: int) -> None:
        try:
            await _answering(requests, lambda _: reply())(stream, n)
        finally:
            ended.append(n)

    async with _server(answer_then_note_the_end) as port:
        spec = _spec(port, idle_expiry_s=0.3)
        async with Providers(retry=FAST_RETRY) as pool:
            await _ask(pool, spec)
            await anyio.sleep(0.05)  # idle well under idle_expiry_s: reused
            await _ask(pool, spec)
            await anyio.sleep(0.8)  # idle well past it: closed by the client, not reused
            assert ended == [0]
            await _ask(pool, spec)
    assert [r.connection for r in requests] == [0, 0, 1]


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    requests: list[Request] = []
    closed = anyio.Event()

    async def one_each(stream: anyio.abc.ByteStream, n: int) -> None:
        requests.append(await _read_request(BufferedByteReceiveStream(stream), n))
        await stream.send(reply())  # keep-alive by default, but closed straight after
        await stream.aclose()
        closed.set()

    async with _server(one_each) as port, Providers(retry=FAST_RETRY) as pool:
        assert (await _ask(pool, _spec(port))).text == "hi"
        await closed.wait()
        await anyio.sleep(0.05)  # the server's FIN reaches the idle connection
        second = await _ask(pool, _spec(port))
    assert second.text == "hi"
    assert len(second.attempts) == 1  # the dead connection was dropped, not tried
    assert [r.connection for r in requests] == [0, 1]


# TLS with a CA of the test's own.


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA of the test's own, a server certificate it signed for `localhost` only and a
    client certificate it signed."""
    folder = tmp_path_factory.mktemp("tls")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=cog-arena test CA")  # fmt: skip
    for name, extensions in [
        ("server", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n"),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ]:
        (folder / f"{name}.cnf").write_text(
            "basicConstraints=CA:FALSE\nauthorityKeyIdentifier=keyid,issuer\n" + extensions
        )
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                f"{name}.csr", "-subj", f"/CN=cog-arena test {name}")  # fmt: skip
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile",
                f"{name}.cnf")  # fmt: skip
    return folder


def _server_tls(certificates: Path, names: list[str | None]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates / "server.pem", certificates / "server.key")

    def note_the_name(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = note_the_name  # type: ignore[assignment]
    return context


async def test_a_ca_bundle_is_trusted_and_the_host_is_sent_by_sni(certificates: Path) -> None:
    names: list[str | None] = []
    requests: list[Request] = []
    tls = _server_tls(certificates, names)
    async with _server(_answering(requests, lambda _: reply()), tls) as port:
        spec = _spec(port, host="localhost", scheme="https", ca_bundle=str(certificates / "ca.pem"))
        assert (await _complete(spec)).text == "hi"
    assert names == ["localhost"]
    assert len(requests) == 1


def test_a_ca_bundle_adds_to_the_public_cas(
    certificates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = tls_context("certifi", str(certificates / "ca.pem"))
    authorities = context.get_ca_certs()
    assert len(authorities) > 100  # certifi's roots are still there
    subjects = [dict(field[0] for field in ca["subject"]) for ca in authorities]
    assert {"commonName": "cog-arena test CA"} in subjects
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname


async def test_without_the_ca_bundle_the_certificate_error_names_ca_bundle(
    certificates: Path,
) -> None:
    names: list[str | None] = []
    async with _server(_answering([], lambda _: reply()), _server_tls(certificates, names)) as port:
        with pytest.raises(CertificateError) as caught:
            await _complete(_spec(port, host="localhost", scheme="https"))
    message = str(caught.value)
    assert "ca_bundle" in message
    assert "unable to get local issuer certificate" in message  # OpenSSL's reason
    assert caught.value.connect_refused  # never connected: the seat is not_connected


def _requiring_a_client_certificate(certificates: Path) -> ssl.SSLContext:
    context = _server_tls(certificates, [])
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(certificates / "ca.pem")
    return context


async def test_a_client_certificate_is_shown_to_a_server_that_requires_one(
    certificates: Path,
) -> None:
    requests: list[Request] = []
    tls = _requiring_a_client_certificate(certificates)
    async with _server(_answering(requests, lambda _: reply()), tls) as port:
        spec = _spec(
            port,
            host="localhost",
            scheme="https",
            ca_bundle=str(certificates / "ca.pem"),
            client_cert=str(certificates / "client.pem"),
            client_key=str(certificates / "client.key"),
        )
        assert (await _complete(spec)).text == "hi"
    assert len(requests) == 1


@pytest.mark.parametrize(
    "version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3], ids=["TLS 1.2", "TLS 1.3"]
)
async def test_without_a_client_certificate_the_server_s_refusal_names_client_cert(
    certificates: Path, version: ssl.TLSVersion
) -> None:
    context = _requiring_a_client_certificate(certificates)
    context.maximum_version = version  # 1.2 refuses inside the handshake, 1.3 after it
    verdicts: list[str] = []

    async def refuse(stream: anyio.abc.ByteStream, n: int) -> None:
        # The server's side of the handshake by hand, so that its alert is sent as a real
        # server sends it (anyio's TLS listener drops the connection without one).
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = context.wrap_bio(incoming, outgoing, server_side=True)
        while True:
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                if pending := outgoing.read():
                    await stream.send(pending)
                incoming.write(await stream.receive())
            except ssl.SSLError as exc:
                verdicts.append(exc.reason or "")
                await stream.send(outgoing.read())  # the alert
                return
            else:
                raise AssertionError("the handshake succeeded without a client certificate")

    async with _server(refuse) as port:
        spec = _spec(port, host="localhost", scheme="https", ca_bundle=str(certificates / "ca.pem"))
        with pytest.raises(TransportError) as caught:
            await _complete(spec)
    assert verdicts
    assert set(verdicts) == {"PEER_DID_NOT_RETURN_A_CERTIFICATE"}
    message = str(caught.value)
    assert "TLS handshake failed" in message
    assert "client_cert" in message
    assert "alert" in message  # the server's alert, as OpenSSL names it
    assert not isinstance(caught.value, CertificateError)  # the server's certificate is fine
    assert caught.value.connect_refused  # the request never reached the server


async def test_over_tls_a_close_before_any_answer_is_still_a_dropped_exchange(
    certificates: Path,
) -> None:
    requests: list[Request] = []

    async def hang_up(stream: anyio.abc.ByteStream, n: int) -> None:
        requests.append(await _read_request(BufferedByteReceiveStream(stream), n))

    async with _server(hang_up, _server_tls(certificates, [])) as port:
        spec = _spec(port, host="localhost", scheme="https", ca_bundle=str(certificates / "ca.pem"))
        with pytest.raises(TransportError) as caught:
            await _complete(spec)
    assert not caught.value.connect_refused
    assert len(requests) == FAST_RETRY.max_attempts


# Answers httpx accepts are accepted.


_LENIENT = {
    "bare LF head": b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: %d\n\n%s"
    % (len(COMPLETION), COMPLETION),
    "folded header": reply(head=b"X-Folded: one\r\n two\r\n"),
    "long header": reply(head=b"Set-Cookie: long=" + b"a" * 20_000 + b"\r\n"),
    "many headers": reply(head=b"".join(b"X-Trace-%d: %d\r\n" % (n, n) for n in range(300))),
    "chunked gzip": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
    + b"".join(
        b"%x;ext=1\r\n%s\r\n" % (len(c), c)
        for packed in [gzip.compress(COMPLETION)]
        for c in (packed[:10], packed[10:])
    )
    + b"0\r\nX-Trailer: 1\r\n\r\n",
}


def _httpx_reads(answer: bytes) -> bytes:
    """The body httpx's own HTTP/1.1 parser (h11, as httpcore sets it up) reads from `answer`."""
    import h11

    connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=100 * 1024)
    connection.send(h11.Request(method="POST", target="/", headers=[("Host", "x")]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(answer)
    response = connection.next_event()
    assert isinstance(response, h11.Response), response
    body = b""
    while not isinstance(event := connection.next_event(), h11.EndOfMessage):
        assert isinstance(event, h11.Data), event
        body += event.data
    encoding = dict(response.headers).get(b"content-encoding")
    return gzip.decompress(body) if encoding == b"gzip" else body


@pytest.mark.parametrize("answer", _LENIENT.values(), ids=_LENIENT.keys())
async def test_answers_httpx_accepts_are_accepted(answer: bytes) -> None:
    requests: list[Request] = []
    async with _server(_answering(requests, lambda _: answer)) as port:
        assert (await _complete(_spec(port))).text == "hi"
    assert len(requests) == 1
    assert _httpx_reads(answer) == COMPLETION  # the premise: httpx's own parser takes it


async def test_an_http_1_0_answer_is_read_to_the_close() -> None:
    requests: list[Request] = []

    async def old_server(stream: anyio.abc.ByteStream, n: int) -> None:
        requests.append(await _read_request(BufferedByteReceiveStream(stream), n))
        await stream.send(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n")
        await stream.send(COMPLETION)  # no length: the body ends where the connection does

    async with _server(old_server) as port, Providers(retry=FAST_RETRY) as pool:
        assert (await _ask(pool, _spec(port))).text == "hi"
        assert (await _ask(pool, _spec(port))).text == "hi"
    assert [r.connection for r in requests] == [0, 1]


_ENDLESS: dict[str, Callable[[int], bytes]] = {
    "header after header": lambda i: b"X-Filler-%d: %s\r\n" % (i, b"a" * 1000),
    "one endless line": lambda i: b"X-Filler: " if i == 0 else b"a" * 1000,
}


@pytest.mark.parametrize("piece", _ENDLESS.values(), ids=_ENDLESS.keys())
async def test_a_head_that_never_ends_is_a_transport_error(piece: Callable[[int], bytes]) -> None:
    async def endless_head(stream: anyio.abc.ByteStream, n: int) -> None:
        await _read_request(BufferedByteReceiveStream(stream), n)
        await stream.send(b"HTTP/1.1 200 OK\r\n")
        for i in range(10_000):  # 10 MB at most, then silence: the head never ends
            await stream.send(piece(i))
        await anyio.sleep(SERVER_S)

    async with _server(endless_head) as port:
        error, waited = await _failure(_spec(port), within=5.0)
    assert isinstance(error, TransportError)
    assert not error.connect_refused
    assert waited < MARGIN_S


# Cookies: httpx's jar is the only one.


async def test_cookies_are_kept_in_one_jar() -> None:
    requests: list[Request] = []

    def set_cookie(request: Request) -> bytes:
        # A session token as base64 writes it: a second jar (aiohttp's) would merge the
        # Cookie header httpx wrote into its own and quote this value.
        token = b"Set-Cookie: token=a/b+c==\r\n" if len(requests) == 1 else b""
        return reply(head=b"Set-Cookie: s=%d\r\n%s" % (len(requests), token))

    async with (
        _server(_answering(requests, set_cookie)) as port,
        Providers(retry=FAST_RETRY) as pool,
    ):
        for _ in range(3):
            # A host name, not an address: aiohttp's jar keeps no cookie of an address.
            await _ask(pool, _spec(port, host="localhost"))
    sent = [[sorted(c.split("; ")) for c in r.header("cookie")] for r in requests]
    assert sent == [[], [["s=1", "token=a/b+c=="]], [["s=2", "token=a/b+c=="]]]


# Proxies.


def test_proxy_for_follows_the_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    plain, secure = "http://models.internal:8000/v1", "https://api.example.com/v1"
    assert proxy_for(plain) is None
    assert proxy_for(secure) is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    assert proxy_for(plain) == "http://proxy.internal:3128"
    assert proxy_for(secure) is None  # HTTP_PROXY is for http:// only
    monkeypatch.setenv("https_proxy", "http://secure-proxy.internal:3128")
    assert proxy_for(secure) == "http://secure-proxy.internal:3128"
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("https_proxy")
    monkeypatch.setenv("ALL_PROXY", "socks5://socks.internal:1080")
    assert proxy_for(plain) == proxy_for(secure) == "socks5://socks.internal:1080"
    monkeypatch.setenv("NO_PROXY", "localhost,models.internal")
    assert proxy_for(plain) is None
    assert proxy_for(secure) == "socks5://socks.internal:1080"


async def test_through_an_http_proxy_the_request_is_in_absolute_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    requests: list[Request] = []
    async with _server(_answering(requests, lambda _: reply())) as port:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        spec = ProviderSpec(protocol="openai", model="m", base_url="http://models.internal:8000/v1")
        assert (await _complete(spec)).text == "hi"
    assert [r.line for r in requests] == [
        b"POST http://models.internal:8000/v1/chat/completions HTTP/1.1"
    ]


async def test_through_a_socks5_proxy_the_request_reaches_the_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    targets: list[tuple[int, str, int]] = []
    requests: list[Request] = []

    async def socks5(stream: anyio.abc.ByteStream, n: int) -> None:
        reader = BufferedByteReceiveStream(stream)
        version, count = await reader.receive_exactly(2)
        methods = await reader.receive_exactly(count)
        if version != 5 or 0 not in methods:
            await stream.send(b"\x05\xff")  # no acceptable method
            return
        await stream.send(b"\x05\x00")  # no authentication
        _, command, _, kind = await reader.receive_exactly(4)
        if kind == 3:
            host = (await reader.receive_exactly((await reader.receive_exactly(1))[0])).decode()
        else:
            raw = await reader.receive_exactly(4 if kind == 1 else 16)
            host = socket.inet_ntop(socket.AF_INET if kind == 1 else socket.AF_INET6, raw)
        (port,) = struct.unpack("!H", await reader.receive_exactly(2))
        targets.append((command, host, port))
        await stream.send(b"\x05\x00\x00\x01" + bytes(6))  # succeeded; bound 0.0.0.0:0
        while True:  # then the proxy answers as the target would
            requests.append(await _read_request(reader, n))
            await stream.send(reply())

    async with _server(socks5) as port:
        monkeypatch.setenv("ALL_PROXY", f"socks5://127.0.0.1:{port}")
        spec = ProviderSpec(protocol="openai", model="m", base_url="http://models.internal:8000/v1")
        assert (await _complete(spec)).text == "hi"
    assert targets == [(1, "models.internal", 8000)]  # CONNECT to the endpoint's host
    assert [r.line for r in requests] == [b"POST /v1/chat/completions HTTP/1.1"]


# What a completion sends.


async def test_gateway_headers_are_sent_and_a_secret_one_is_redacted_from_errors() -> None:
    requests: list[Request] = []

    def echo_the_key(request: Request) -> bytes:
        key = request.header("api-key")[0].encode()
        return reply(b'{"error":"key %s is not allowed here"}' % key, status=b"400 Bad Request")

    async with _server(_answering(requests, echo_the_key)) as port:
        spec = _spec(
            port, headers={"x-tenant": "a"}, secret_headers={"api-key": SecretStr("s3cret")}
        )
        with pytest.raises(HTTPStatusError) as caught:
            await _complete(spec)
    assert [(r.header("x-tenant"), r.header("api-key")) for r in requests] == [(["a"], ["s3cret"])]
    assert caught.value.status == 400
    assert "s3cret" not in str(caught.value)
    assert "[redacted]" in str(caught.value)
    assert "s3cret" not in caught.value.body_excerpt


async def test_the_request_body_is_the_json_httpx_writes() -> None:
    requests: list[Request] = []
    async with _server(_answering(requests, lambda _: reply())) as port:
        spec = _spec(port)
        await _complete(spec)
    (request,) = requests
    wire = openai.build_request(spec, REQUEST)
    assert request.body == httpx.Request("POST", wire.url, json=wire.json).content
    assert request.body == json.dumps(wire.json, ensure_ascii=False, separators=(",", ":")).encode()
    assert '"content":"héllo"'.encode() in request.body
    assert request.header("content-type") == ["application/json"]
    assert request.header("content-length") == [str(len(request.body))]


async def test_the_request_head_is_the_one_httpx_sends() -> None:
    """The endpoint builds each request from header sets it keeps; on the wire it is what
    `httpx.AsyncClient` sends for the same request: the same headers, values and order aside
    (a second request on the same header set too)."""
    requests: list[Request] = []
    async with _server(_answering(requests, lambda _: reply())) as port:
        spec = _spec(port, api_key=SecretStr("k-123"))
        async with Providers() as pool:
            for prompt in ("first", "second, longer"):
                await pool.client(spec).complete(
                    CompletionRequest(prompt=prompt, max_tokens=8),
                    deadline=anyio.current_time() + 5,
                )
        wire = openai.build_request(spec, CompletionRequest(prompt="second, longer", max_tokens=8))
        async with httpx.AsyncClient() as client:
            await client.post(wire.url, headers=wire.headers, json=wire.json)

    def head(request: Request) -> list[tuple[str, str]]:
        lines = request.head.decode("latin-1").split("\r\n")[1:]
        return sorted(
            (k.strip().lower(), v.strip()) for k, _, v in (x.partition(":") for x in lines)
        )

    first, ours, httpx_own = requests
    assert head(ours) == head(httpx_own)
    assert ours.body == httpx_own.body
    assert dict(head(first))["content-length"] == str(len(first.body))
    assert ("authorization", "Bearer k-123") in head(ours)
