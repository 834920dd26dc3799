"""The two local servers refuse what is not theirs, over real HTTP, without a browser.

`arena view --serve` and the play page answer only at their own address (a page
of another site reaching 127.0.0.1 through a DNS name it controls is refused), a
path no file can have is a 404 with nothing on the console, and the play page
takes a move only from itself, as JSON, read within bounds. Requests are sent as
raw bytes over a socket, so nothing between the test and the server tidies them.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from arena.asgi import read_json
from arena.viewer.play import play_page
from arena.viewer.server import Server
from tests.arena.viewer.test_viewer import _cached_run


def raw(port: int, request: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send `request` (the request line and headers, without the blank line) and `body`;
    the answer's status and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = f"{request}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        sock.sendall(head.encode("latin-1") + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[Server]:
    run = tmp_path / "run"
    shutil.copytree(_cached_run("board")[0], run)
    server = Server(run, port=0)
    server.start()
    yield server
    server.stop()


def test_the_viewer_answers_at_its_own_address_only(
    viewer: Server, capfd: pytest.CaptureFixture[str]
) -> None:
    port = viewer._server.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        status, body = raw(port, f"GET / HTTP/1.1\r\nHost: {host}")
        assert status == 200, host
        assert b"<html" in body.lower()
    for host in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}"):
        status, body = raw(port, f"GET /live.json HTTP/1.1\r\nHost: {host}")
        assert (status, body) == (403, b"forbidden: the viewer answers at 127.0.0.1 only"), host
    status, _ = raw(port, "GET / HTTP/1.0")  # no Host at all
    assert status == 403
    assert "Traceback" not in capfd.readouterr().err


def test_the_viewer_answers_a_path_no_file_has_with_404_and_no_stack(
    viewer: Server, capfd: pytest.CaptureFixture[str]
) -> None:
    port = viewer._server.port
    host = f"Host: 127.0.0.1:{port}"
    for path in ("/%00", "/games/%00.html", "/index.html%00", "/%ff", "/%c3%28", "/%ed%a0%80"):
        status, _ = raw(port, f"GET {path} HTTP/1.1\r\n{host}")
        assert status == 404, path
    assert raw(port, f"GET /index.html HTTP/1.1\r\n{host}")[0] == 200  # still serving
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Exception in ASGI application" not in err


# --- the play page -------------------------------------------------------------------------

MOVE = b'{"table": "nope", "turn": 1, "move": "a"}'
USUAL = 'send one JSON object: {"table": ..., "turn": ..., "move": ...}'


@pytest.mark.anyio
async def test_the_play_page_takes_a_move_from_itself_only_as_bounded_json(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with play_page("guarded") as page:
        port = int(page.url.split(":")[2].split("/")[0])
        path = f"/play/{page.page.token}/api/move"
        own = f"127.0.0.1:{port}"

        async def post(headers: str, body: bytes = MOVE) -> tuple[int, bytes]:
            request = f"POST {path} HTTP/1.1\r\nHost: {own}\r\n{headers}".rstrip()
            return await anyio.to_thread.run_sync(raw, port, request, body)

        json_type = "Content-Type: application/json"
        # the page's own request reaches the desk: no such table, 404
        assert (await post(f"{json_type}\r\nOrigin: http://{own}"))[0] == 404
        assert (await post(f"{json_type}; charset=utf-8\r\nSec-Fetch-Site: same-origin"))[0] == 404
        assert (await post(json_type))[0] == 404  # a client that names no origin (curl)
        for foreign in (
            "Origin: http://evil.example",
            f"Origin: http://{own}.evil.example",
            "Origin: null",
            "Sec-Fetch-Site: cross-site",
            "Sec-Fetch-Site: same-site",
        ):
            status, body = await post(f"{json_type}\r\n{foreign}")
            assert status == 403, foreign
            assert b"not another site" in body
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""):
            status, body = await post(f"Content-Type: {kind}" if kind else "")
            assert status == 415, kind
            assert b"Content-Type: application/json" in body
        for bad in (
            b"[" * 30_000 + b"]" * 30_000,
            b'{"table": "x", "turn": 1e400, "move": "a"}',
            b'{"table": "x", "turn": 1' + b"0" * 5000 + b', "move": "a"}',
            b'{"table": "x", "turn": NaN, "move": "a"}',
            b'{"table": "x", "turn": 1, "move": ' + b"[" * 100 + b"]" * 100 + b"}",
            b"\xff\xfe",
        ):
            status, body = await post(json_type, bad)
            assert status == 400, bad[:40]
            assert json.loads(body) == {"ok": False, "error": USUAL}
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Exception in ASGI application" not in err


def test_read_json_reads_what_a_move_holds_and_bounds_the_rest() -> None:
    sent = b'{"table": "t[1]", "turn": 3, "move": {"orders": [[1, 2], {"to": "a\\"[["}]}}'
    assert read_json(sent) == {
        "table": "t[1]",
        "turn": 3,
        "move": {"orders": [[1, 2], {"to": 'a"[['}]},
    }
    assert read_json(b"[" * 32 + b"]" * 32) is not None  # 32 deep: read
    for bad, why in (
        (b"[" * 33 + b"]" * 33, "deeper than 32"),
        (b"1e400", "out of range"),
        (b"-1e400", "out of range"),
        (b"1" * 41, "a number of 41 characters"),
        (b"Infinity", "is not JSON"),
    ):
        with pytest.raises(ValueError, match=why):
            read_json(bad)
