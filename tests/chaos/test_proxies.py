"""A proxy that a proxy variable routes the requests through, and that fails, is named with
its variable, in the preflight and in the run: one that refuses the connection (a closed
port), and one that rejects the credentials (a tiny local HTTP proxy answering 407)."""

from __future__ import annotations

import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.test_misconfigured import hostile  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Answers407(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # the request's head; a 407 reads no body
        self.wfile.write(
            b"HTTP/1.1 407 Proxy Authentication Required\r\n"
            b'Proxy-Authenticate: Basic realm="lab"\r\nContent-Length: 0\r\n'
            b"Connection: close\r\n\r\n"
        )


@pytest.fixture
def proxy_407() -> Iterator[int]:
    """A local HTTP proxy that rejects every request's credentials; its port."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Answers407)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _config(folder: Path, url: str) -> Path:
    path = folder / "proxied.toml"
    path.write_text(
        f"""
[run]
name = "proxied"
seed = 5
games = ["connect-four"]
matches = 1
concurrency = 2
endpoint_down_s = 2
[deadlines]
first_reply_s = 1
retry_s = 0.5
decision_s = 1.6
[policies.tactician]
kind = "scripted"
[policies.model]
kind = "llm"
provider = "openai"
model = "m"
base_url = "{url}/sound/v1"
"""
    )
    return path


def _run(
    config: Path, out: Path, proxy: dict[str, str], *more: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARIABLES} | proxy
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out)]
    return subprocess.run(
        [*command, "--no-progress", *more], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _events(out: Path, name: str) -> list[dict[str, object]]:
    lines = (out / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == name]


@pytest.mark.parametrize("variable", ["ALL_PROXY", "HTTP_PROXY"])
def test_a_proxy_that_refuses_the_connection_is_named_by_the_preflight(
    hostile: str,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    variable: str,
) -> None:
    proxy = f"socks5://127.0.0.1:{_closed_port()}"
    done = _run(_config(tmp_path, hostile), tmp_path / "run", {variable: proxy})
    assert done.returncode != 0
    assert f"the proxy {proxy} (from {variable}) refused the connection" in done.stderr
    assert "nothing answers" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_proxy_that_refuses_the_connection_is_named_in_the_run(
    hostile: str,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    proxy = f"socks5://127.0.0.1:{_closed_port()}"
    out = tmp_path / "run"
    done = _run(_config(tmp_path, hostile), out, {"ALL_PROXY": proxy}, "--no-preflight")
    said = f"the proxy {proxy} (from ALL_PROXY) refused the connection"
    assert said in done.stderr, done.stderr[-2000:]  # the stop, once the endpoint stays down
    down = _events(out, "endpoint_down")
    assert down
    assert said in str(down[0]["last"])


def test_a_proxy_that_rejects_the_credentials_is_named_by_the_preflight_and_the_run(
    hostile: str,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    proxy_407: int,
) -> None:
    proxy = {"HTTP_PROXY": f"http://lab:s3cret@127.0.0.1:{proxy_407}"}
    shown = f"the proxy http://lab:***@127.0.0.1:{proxy_407} (from HTTP_PROXY)"
    preflight = _run(_config(tmp_path, hostile), tmp_path / "first", proxy)
    assert preflight.returncode != 0
    assert f"{shown} rejected its credentials (407)" in preflight.stderr, preflight.stderr
    out = tmp_path / "run"
    run = _run(_config(tmp_path, hostile), out, proxy, "--no-preflight")
    assert run.returncode == 3, run.stderr[-2000:]
    [event] = _events(out, "endpoint_misconfigured")
    assert event["status"] == 407
    assert f"{shown} rejected its credentials (407)" in str(event["fix"])
    assert "s3cret" not in run.stderr + preflight.stderr
    assert all(b"s3cret" not in p.read_bytes() for p in out.rglob("*") if p.is_file())
