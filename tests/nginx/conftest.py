"""Fixtures of the nginx tests: Debian's nginx in front of the mock LLM, a CA of the tests'
own, and a relay that forgets quiet flows.

The mock and the relay run in this process, on an event loop in a thread of their own
(a blocking portal), so a test can wait on `arena run` with a plain subprocess call while
they serve. Everything listens on 127.0.0.1 on free ports, every wait is bounded, and
everything a test started is stopped when it ends. Without an nginx (or openssl) the tests
skip, unless COG_REQUIRE_NGINX=1 (CI) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from arena.mock_llm import MockLLM, parse_faults, serving
from tests.nginx.gateway import Nginx, find_nginx
from tests.nginx.relay import ForgettingRelay


def _missing(what: str) -> None:
    if os.environ.get("COG_REQUIRE_NGINX") == "1":
        pytest.fail(f"{what}; COG_REQUIRE_NGINX=1 requires it (.ci/run installs Debian's nginx)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def nginx_binary() -> str:
    binary = find_nginx()
    if binary is None:
        _missing("no nginx on this machine (apt-get install nginx-light)")
    assert binary is not None
    return binary


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA of the tests' own (ca.pem), a server certificate it signed for `localhost` only
    (server.pem, server.key) and a client certificate it signed (client.pem, client.key)."""
    if shutil.which("openssl") is None:
        _missing("no openssl CLI to make the test certificates")
    folder = tmp_path_factory.mktemp("tls")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=cog-arena nginx test CA")  # fmt: skip
    for name, subject, extensions in (
        ("server", "/CN=localhost", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n"),
        ("client", "/CN=cog-arena seat", "extendedKeyUsage=clientAuth\n"),
    ):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                f"{name}.csr", "-subj", subject)  # fmt: skip
        (folder / f"{name}.cnf").write_text(extensions)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile",
                f"{name}.cnf")  # fmt: skip
    return folder


@pytest.fixture
def portal() -> Iterator[BlockingPortal]:
    """An event loop in a thread, for the servers of the test's own."""
    with start_blocking_portal(backend="asyncio") as running:
        yield running


@dataclass(frozen=True)
class Seen:
    """One request as the mock received it (behind nginx)."""

    method: str
    path: str
    cookies: tuple[str, ...]
    """The value of every Cookie header, in order."""
    request_id: str
    """nginx's $request_id, which the gateway sends as X-Request-Id (empty when it does not)."""


class RecordingMock(MockLLM):
    """The mock LLM, keeping every request's cookies and nginx's request id."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.seen: list[Seen] = []

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        """Record the request, then answer it as the mock does."""
        if scope["type"] == "http":
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
            self.seen.append(Seen(
                scope["method"], scope["path"],
                tuple(v for k, v in headers if k == "cookie"),
                next((v for k, v in headers if k == "x-request-id"), ""),
            ))  # fmt: skip
        await super().__call__(scope, receive, send)


@dataclass(frozen=True)
class Upstream:
    """The mock LLM as it serves: the app (its counts and records) and its port."""

    app: RecordingMock
    port: int


@pytest.fixture
def mock_llm(portal: BlockingPortal) -> Iterator[StartMock]:
    """`mock_llm(latency_ms=0, faults="", slow_ms=2000)`: the mock LLM on a free port of
    127.0.0.1 until the test ends."""
    with ExitStack() as stack:

        def start(*, latency_ms: int = 0, faults: str = "", slow_ms: int = 2000) -> Upstream:
            app = RecordingMock(latency_ms=latency_ms, faults=parse_faults(faults),
                                slow_ms=slow_ms, seed=5)  # fmt: skip
            url = stack.enter_context(portal.wrap_async_context_manager(serving(app)))
            return Upstream(app, int(url.rsplit(":", 1)[1]))

        yield start


StartMock = Callable[..., Upstream]
"""The `mock_llm` fixture's type."""
Gateway = Callable[..., Nginx]
"""The `gateway` fixture's type."""
Relay = Callable[[int, float], ForgettingRelay]
"""The `relay` fixture's type."""


@pytest.fixture
def gateway(nginx_binary: str, tmp_path: Path) -> Iterator[Gateway]:
    """`gateway(upstream_port, server=..., location=..., tls=certificates)`: a started nginx
    with those directives, stopped when the test ends."""
    started: list[Nginx] = []

    def start(upstream_port: int, **settings: Any) -> Nginx:
        root = tmp_path / f"nginx{len(started)}"
        root.mkdir()
        nginx = Nginx(nginx_binary, root, upstream_port, **settings)
        started.append(nginx)
        return nginx.start()

    try:
        yield start
    finally:
        for nginx in started:
            nginx.stop()


@pytest.fixture
def relay(portal: BlockingPortal) -> Iterator[Relay]:
    """`relay(upstream_port, forget_after_s)`: a `ForgettingRelay` listening until the test
    ends."""
    with ExitStack() as stack:

        def start(upstream_port: int, forget_after_s: float) -> ForgettingRelay:
            forgetting = ForgettingRelay(upstream_port, forget_after_s)
            return stack.enter_context(portal.wrap_async_context_manager(forgetting.serving()))

        yield start
