"""`arena view RUN --serve`: the site over HTTP on 127.0.0.1, redrawn as replays appear.

The stdlib HTTP server runs in a thread and serves `RUN/view/`; the calling
thread polls the replays folder every `poll_s` seconds and draws the pages of
new or changed replays and the league page (`Site.update`). A league page
served this way reloads itself when the site changes. Ctrl-C (or `stop`)
shuts the server down and joins its thread.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import structlog

from arena.viewer.site import Site

__all__ = ["POLL_S", "Server", "serve"]

POLL_S = 1.0
"""How often the replays folder is looked at while serving."""

log = structlog.get_logger("arena.viewer")


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without a log line per request on stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        return


class Server:
    """The site of one run served on 127.0.0.1:`port` (0 picks a free port)."""

    def __init__(self, run: Path, port: int = 8000) -> None:
        self.site = Site(run, live=True)
        self.site.update()
        handler = functools.partial(_QuietHandler, directory=str(self.site.out))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="arena-view")
        self._stop = threading.Event()

    @property
    def url(self) -> str:
        """The league page's address."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> None:
        """Start answering requests (in a background thread)."""
        self._thread.start()

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
        if self._thread.is_alive():
            self.httpd.shutdown()
            self._thread.join()
        self.httpd.server_close()


def serve(run: Path, port: int = 8000, *, poll_s: float = POLL_S) -> None:
    """Serve the site of `run` until Ctrl-C, redrawing it as new replays appear."""
    server = Server(run, port)
    server.start()
    print(f"serving {server.site.out} on {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.watch(poll_s, on_update=lambda drawn: print(f"drew {len(drawn)} new replay page(s)"))
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.stop()
