"""`arena view RUN --serve`: the site over HTTP on 127.0.0.1, redrawn as replays appear.

`SiteFiles` serves the files of `RUN/view/` (uvicorn, in a thread of its own), to
a request whose Host is its own address only, as the play page does (a page of
another site cannot read the league through a DNS name pointed at 127.0.0.1); a
path that names no file (a NUL in it, bytes that are no UTF-8) is a 404;
the calling thread polls the replays folder every `poll_s` seconds and draws
the pages of new or changed replays and the league page (`Site.update`). A
league page served this way reloads itself when the site changes. Ctrl-C (or
`stop`) shuts the server down and joins its thread.
"""

from __future__ import annotations

import mimetypes
import posixpath
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote

import anyio
import anyio.to_thread
import structlog

from arena.asgi import (
    Headers,
    Receive,
    Scope,
    Send,
    ServerThread,
    header,
    listen,
    own_hosts,
    send_bytes,
)
from arena.viewer.site import Site

__all__ = ["POLL_S", "Server", "SiteFiles", "serve"]

POLL_S = 1.0
"""How often the replays folder is looked at while serving."""

log = structlog.get_logger("arena.viewer")


class SiteFiles:
    """The ASGI app serving the files below `root`, GET and HEAD, as a plain file server
    does: a folder's `index.html` (a folder named without its slash is redirected to it),
    the content type guessed from the file name. No cache validators: a live site's pages
    are redrawn under the same names, and a reload fetches them anew. With `hosts`, a
    request whose Host header is not one of them is refused (403)."""

    def __init__(self, root: Path, hosts: frozenset[bytes] = frozenset()) -> None:
        self.root = root.resolve()
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request (its files are looked up and read in a worker thread)."""
        if scope["type"] != "http":  # run with lifespan="off": nothing to start or stop
            return
        method = scope["method"]
        if self.hosts and header(scope, b"host") not in self.hosts:
            status, body, headers = _text(403, "forbidden: the viewer answers at 127.0.0.1 only")
            await send_bytes(send, status, body, headers, head=method == "HEAD")
            return
        answer = partial(self.answer, method, scope["path"])
        status, body, headers = await anyio.to_thread.run_sync(answer)
        await send_bytes(send, status, body, headers, head=method == "HEAD")

    def answer(self, method: str, path: str) -> tuple[int, bytes, Headers]:
        """The status, body and headers answering `method` `path`."""
        if method not in ("GET", "HEAD"):
            return _text(501, f"unsupported method {method}: the site is read-only")
        target = self._target(path)
        if target is not None and _is_dir(target):
            if not path.endswith("/"):
                return 301, b"", [(b"location", quote(f"{path}/").encode())]
            target = target / "index.html"
        if target is None or (body := _read(target)) is None:
            return _text(404, f"not found: {path}")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        return 200, body, [(b"content-type", kind.encode())]

    def _target(self, path: str) -> Path | None:
        """The file or folder `path` names below the root, or None for one outside it, or
        for a path no file has (a NUL, a byte that was no UTF-8: the server decoded it as
        U+FFFD or a surrogate)."""
        if any(c == "\0" or c == "\ufffd" or "\ud800" <= c <= "\udfff" for c in path):
            return None
        parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".", "..")]
        try:
            target = self.root.joinpath(*parts).resolve()
        except (OSError, ValueError):
            return None
        return target if target.is_relative_to(self.root) else None


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _read(path: Path) -> bytes | None:
    """The file's bytes, or None if there is none such (or it is gone since it was seen)."""
    try:
        return path.read_bytes()
    except (OSError, ValueError):
        return None


def _text(status: int, text: str) -> tuple[int, bytes, Headers]:
    return status, text.encode(), [(b"content-type", b"text/plain; charset=utf-8")]


class Server:
    """The site of one run served on 127.0.0.1:`port` (0 picks a free port)."""

    def __init__(self, run: Path, port: int = 8000) -> None:
        self.site = Site(run, live=True)
        self.site.update()
        sock = listen("127.0.0.1", port, what="the viewer", flag="--port")
        hosts = own_hosts(sock.getsockname()[1])
        self._server = ServerThread(SiteFiles(self.site.out, hosts), sock)
        self._stop = threading.Event()

    @property
    def url(self) -> str:
        """The league page's address."""
        return f"http://127.0.0.1:{self._server.port}/"

    def start(self) -> None:
        """Start answering requests (in a background thread); returns once it does."""
        self._server.start()

    def watch(
        self, poll_s: float = POLL_S, on_update: Callable[[list[str]], None] | None = None
    ) -> None:
        """Redraw as replays appear until `stop` is called; each wait is `poll_s`."""
        while not self._stop.wait(poll_s):
            try:
                drawn = self.site.update()
            except OSError as exc:  # a folder moved away mid-run: say so, keep serving
                log.warning("view_update_failed", error=str(exc))
                continue
            if drawn:
                log.info("view_updated", replays=len(drawn))
                if on_update is not None:
                    on_update(drawn)

    def stop(self) -> None:
        """Stop watching and serving; returns once the server thread has ended."""
        self._stop.set()
        self._server.stop()


def serve(
    run: Path,
    port: int = 8000,
    *,
    poll_s: float = POLL_S,
    server: Server | None = None,
    note: Callable[[], str] = lambda: "",
) -> None:
    """Serve the site of `run` until Ctrl-C, redrawing it as new replays appear; `server`
    serves it instead of a plain `Server` (the live page's), and `note()`, said once it
    is up, follows the address."""
    server = server or Server(run, port)
    try:
        server.start()
        print(f"serving {server.site.out} on {server.url}{note()} (Ctrl-C stops)", flush=True)
        server.watch(poll_s, on_update=lambda drawn: print(f"drew {len(drawn)} new replay page(s)"))
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.stop()
