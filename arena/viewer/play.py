"""The play page: the desk over HTTP on 127.0.0.1, for the person who plays.

Every path starts with `/play/<token>/`, a random token made when the page
starts and printed with its URL only (never logged): a request without it
is refused, so another user of the machine cannot play in your place, and
a Host header other than the page's own address is refused too (a page of
another site cannot reach it through a DNS name pointed at 127.0.0.1), and so is
a move sent from another site (its `Origin` or `Sec-Fetch-Site` says so) or not
as `Content-Type: application/json` (which a plain form cannot send). A move's
JSON is read within bounds (`asgi.read_json`): too deep, or a number too long
or out of range, is the same 400 as any body that is not a move.

    GET  /play/<token>/                the page (arena/viewer/static/play.html)
    GET  /play/<token>/static/<file>   its script, style sheet and board drawing
    GET  /play/<token>/api/tables?since=V   the desk; waits up to POLL_S for version > V.
                                       `&showing=ID` (repeatable, may be empty): the
                                       tables the page shows, whose held first decisions
                                       start their clocks (without it: every table's)
    POST /play/<token>/api/move        {"table", "turn", "move"}: 200 accepted, 422 refused
                                       with the engine's message, 409 closed, 404 unknown;
                                       400 not a move, 403 another site's, 415 not JSON

The page draws each table's board as the viewer does, from the seat's own
view only (`Drawer.seat_frame`: Stratego's hidden ranks never leave the
engine). The app runs in the run's own event loop (uvicorn's server as a
task), so a try reaches the engine with no thread between them.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any
from urllib.parse import parse_qs

from arena.asgi import (
    Headers,
    Receive,
    Scope,
    Send,
    header,
    listen,
    own_hosts,
    read_body,
    read_json,
    send_bytes,
    send_json,
    send_text,
    serving,
)
from arena.seats.desk import Desk, Table, TurnClosed
from arena.viewer.boards import drawer_for

__all__ = ["MAX_BODY", "POLL_S", "PlayPage", "PlayServer", "play_page"]

POLL_S = 10.0
"""The longest a long poll of the desk waits for a change."""
MAX_BODY = 64 * 1024
"""The largest move a page may send (a battle's orders are far smaller)."""
_ASSET = re.compile(r"[a-z0-9_-]+\.(js|css)")
"""The files of arena/viewer/static the page may load: scripts and style sheets."""

_HEADERS: Headers = [
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer"),  # the token stays out of any Referer
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
]
_TYPES = {
    "js": b"text/javascript; charset=utf-8",
    "css": b"text/css; charset=utf-8",
    "html": b"text/html; charset=utf-8",
}


def _static(name: str) -> bytes:
    return resources.files("arena.viewer").joinpath("static", name).read_bytes()


class PlayPage:
    """The ASGI app of the play page: the desk behind a token."""

    def __init__(self, desk: Desk, token: str | None = None) -> None:
        self.desk = desk
        self.token = token or secrets.token_urlsafe(18)
        self.hosts: frozenset[bytes] = frozenset()
        """The Host headers accepted: the page's own address, once it is bound."""
        self._drawn: dict[str, tuple[Any, dict[str, Any], dict[str, Any]]] = {}
        """Table id -> the position last drawn, its static and its frame."""

    def tables(self, showing: Collection[str] | None = None) -> dict[str, Any]:
        """The desk as the page reads it: every table with its board drawn for its seat. The
        decisions of the tables the page shows (`showing`; every one without it) are now
        seen: their clocks run (`Desk.shown`)."""
        self.desk.shown(showing)
        data = self.desk.to_json()
        for table, out in zip(self.desk.tables.values(), data["tables"], strict=True):
            out["static"], out["frame"] = self._board(table)
        return data

    def _board(self, table: Table) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        if table.state is None:
            return None, None
        drawn = self._drawn.get(table.id)
        if drawn is None or drawn[0] is not table.state:
            drawer = drawer_for(table.game.name)
            static = drawer.static(table.game, table.state)
            frame = drawer.seat_frame(table.game, table.before, table.state, table.seat)
            drawn = self._drawn[table.id] = (table.state, static, frame)
        return drawn[1], drawn[2]

    def bound(self, port: int) -> None:
        """The page listens on 127.0.0.1:`port`."""
        self.hosts = own_hosts(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request."""
        if scope["type"] != "http":  # run with lifespan="off": nothing to start or stop
            return
        parts = scope["path"].split("/", 3)
        if (
            len(parts) < 3
            or parts[1] != "play"
            or not secrets.compare_digest(parts[2].encode(), self.token.encode())
        ):
            await _text(send, 403, "forbidden: open the page at the URL `arena run` printed")
            return
        if self.hosts and header(scope, b"host") not in self.hosts:
            await _text(send, 403, "forbidden: the play page answers at 127.0.0.1 only")
            return
        rest = parts[3] if len(parts) == 4 else None
        method = scope["method"]
        if rest is None:
            await _send(send, 308, b"", [(b"location", f"/play/{self.token}/".encode())])
        elif rest == "" and method == "GET":
            await self._page(send)
        elif rest.startswith("static/") and method == "GET":
            await self._asset(send, rest.removeprefix("static/"))
        elif rest == "api/tables" and method == "GET":
            await self._tables(scope, send)
        elif rest == "api/move" and method == "POST":
            if refusal := self._foreign(scope):
                await _json(send, refusal[0], {"ok": False, "error": refusal[1]})
                return
            await self._move(receive, send)
        else:
            await _text(send, 404, f"no such page: {method} {scope['path']}")

    def _foreign(self, scope: Scope) -> tuple[int, str] | None:
        """Why a move is refused before its body is read (403: sent from another site; 415:
        not JSON, as a form or a no-CORS request of another page would send it), or None."""
        origin = header(scope, b"origin")
        site = header(scope, b"sec-fetch-site")
        allowed = {b"http://" + host for host in self.hosts}
        if (origin is not None and self.hosts and origin not in allowed) or (
            site is not None and site not in (b"same-origin", b"none")
        ):
            return 403, "forbidden: a move is sent from the play page itself, not another site"
        kind = (header(scope, b"content-type") or b"").split(b";")[0].strip().lower()
        if kind != b"application/json":
            return 415, "send the move as Content-Type: application/json"
        return None

    async def _page(self, send: Send) -> None:
        html = Template(_static("play.html").decode()).safe_substitute(
            title=f"play · {self.desk.run}", root=f"/play/{self.token}/"
        )
        await _send(send, 200, html.encode(), [(b"content-type", _TYPES["html"])])

    async def _asset(self, send: Send, name: str) -> None:
        if (
            not _ASSET.fullmatch(name)
            or not resources.files("arena.viewer").joinpath("static", name).is_file()
        ):
            await _text(send, 404, f"no such file: {name}")
            return
        kind = _TYPES[name.rsplit(".", 1)[-1]]
        await _send(send, 200, _static(name), [(b"content-type", kind)])

    async def _tables(self, scope: Scope, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode(), keep_blank_values=True)
        try:
            since = int(query.get("since", ["-1"])[0])
        except ValueError:
            await _json(send, 400, {"ok": False, "error": "since must be a whole number"})
            return
        showing = {name for name in query["showing"] if name} if "showing" in query else None
        await self.desk.wait(since, POLL_S)
        await _json(send, 200, self.tables(showing))

    async def _move(self, receive: Receive, send: Send) -> None:
        body = await read_body(receive, MAX_BODY)
        if body is None:
            await _json(send, 413, {"ok": False, "error": f"a move is at most {MAX_BODY} bytes"})
            return
        try:
            sent = read_json(body)
            table, turn, move = sent["table"], int(sent["turn"]), sent["move"]
        except (ValueError, TypeError, KeyError, OverflowError):
            error = 'send one JSON object: {"table": ..., "turn": ..., "move": ...}'
            await _json(send, 400, {"ok": False, "error": error})
            return
        try:
            refusal = self.desk.offer(str(table), turn, move)
        except KeyError:
            await _json(send, 404, {"ok": False, "error": f"no table {table!r} in this run"})
            return
        except TurnClosed as closed:
            await _json(send, 409, {"ok": False, "error": str(closed)})
            return
        if refusal is not None:
            await _json(send, 422, {"ok": False, "error": refusal})
            return
        await _json(send, 200, {"ok": True})


# Every answer of the page carries its _HEADERS.
async def _send(send: Send, status: int, body: bytes, headers: Headers) -> None:
    await send_bytes(send, status, body, [*_HEADERS, *headers])


async def _text(send: Send, status: int, text: str) -> None:
    await send_text(send, status, text, _HEADERS)


async def _json(send: Send, status: int, data: Any) -> None:
    await send_json(send, status, data, _HEADERS)


@dataclass(frozen=True)
class PlayServer:
    """A play page being served: its desk and the URL to open (token included)."""

    desk: Desk
    url: str
    page: PlayPage


@asynccontextmanager
async def play_page(run: str, port: int = 0) -> AsyncIterator[PlayServer]:
    """Serve a new desk's play page on 127.0.0.1:`port` (0: a free one) for the block."""
    sock = listen("127.0.0.1", port, what="the play page", flag="--play-port")
    desk = Desk(run)
    page = PlayPage(desk)
    page.bound(sock.getsockname()[1])
    # Ctrl-C is the run's to handle (its grace period), not the page's.
    async with serving(page, sock, signals=False) as bound:
        try:
            yield PlayServer(desk, f"http://127.0.0.1:{bound}/play/{page.token}/", page)
        finally:
            desk.close()  # the long polls answer, so the server stops gracefully
