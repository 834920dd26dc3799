"""Debian's nginx as a test's gateway: one process per test, every file under the test's folder.

The config is one template (`CONF`): a worker, logs and temp paths under the
folder, one server on a free 127.0.0.1 port proxying everything to the
upstream (the mock LLM, or whatever listens on `upstream_port`) over pooled
HTTP/1.1 connections, and the test's own directives in the server and its
location. The access log is one JSON object per request (`ACCESS_FIELDS`), so a
test reads what nginx saw and sent rather than trusting the client's story.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ACCESS_FIELDS", "CONF", "Nginx", "find_nginx", "free_port", "nginx_version"]

START_S = 10.0
"""How long nginx gets to accept on its port: it takes milliseconds on a quiet machine."""
STOP_S = 5.0
"""How long each way of stopping it gets (SIGTERM, then SIGKILL to its process group)."""

ACCESS_FIELDS = {
    "connection": "$connection",  # nginx's serial number of the client connection
    "connection_requests": "$connection_requests",
    "method": "$request_method",
    "uri": "$request_uri",
    "protocol": "$server_protocol",
    "status": "$status",
    "upstream_status": "$upstream_status",
    "cookie": "$http_cookie",
    "content_encoding": "$sent_http_content_encoding",
    "transfer_encoding": "$sent_http_transfer_encoding",
    "client_verify": "$ssl_client_verify",
    "request_length": "$request_length",
    "request_time": "$request_time",
}
"""What the access log records of each request, by name."""

_LOG_FORMAT = "{" + ",".join(f'"{k}":"{v}"' for k, v in ACCESS_FIELDS.items()) + "}"

CONF = """\
# Written by tests/nginx/gateway.py for one test; every path is under its folder.
worker_processes 1;
pid @root@/nginx.pid;
lock_file @root@/nginx.lock;
error_log @root@/error.log info;
@user@
events {
    worker_connections 256;
}
http {
    log_format probe escape=json '@log_format@';
    access_log @root@/access.log probe;
    client_body_temp_path @root@/temp/body;
    proxy_temp_path @root@/temp/proxy;
    fastcgi_temp_path @root@/temp/fastcgi;
    uwsgi_temp_path @root@/temp/uwsgi;
    scgi_temp_path @root@/temp/scgi;
    upstream mock {
        server 127.0.0.1:@upstream@;
        keepalive 8;
    }
    server {
        listen 127.0.0.1:@port@@listen@;
@server@
        location / {
            proxy_pass http://mock;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
@location@
        }
    }
}
"""
"""The config template; `@name@` marks what `Nginx.conf` fills in (nginx's own syntax uses
both `$` and braces, so neither marks a placeholder)."""


def find_nginx() -> str | None:
    """The nginx binary (Debian installs it in /usr/sbin, not always on a user's PATH)."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )


@functools.cache
def nginx_version(binary: str) -> tuple[int, ...]:
    """(1, 22, 1) for nginx/1.22.1 (`nginx -v` prints to stderr)."""
    done = subprocess.run([binary, "-v"], capture_output=True, text=True, timeout=STOP_S)
    found = re.search(r"nginx/(\d+(?:\.\d+)*)", done.stderr + done.stdout)
    if found is None:
        raise RuntimeError(f"{binary} -v printed no version: {done.stderr!r}")
    return tuple(int(n) for n in found.group(1).split("."))


def free_port() -> int:
    """A port nothing listens on now on 127.0.0.1 (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Nginx:
    """One nginx in front of `upstream_port`, configured by `server` and `location` (lines of
    nginx directives), over TLS with the certificates in `tls` when it is given."""

    binary: str
    root: Path
    upstream_port: int
    server: str = ""
    location: str = ""
    tls: Path | None = None
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its root URL: https://localhost (the certificate's name) over TLS."""
        if self.tls is not None:
            return f"https://localhost:{self.port}"
        return f"http://127.0.0.1:{self.port}"

    def conf(self) -> str:
        """The nginx.conf of this gateway."""
        server = self.server
        listen = ""
        if self.tls is not None:
            # `http2 on;` came with 1.25.1; Debian 12 ships 1.22, where it is a listen flag.
            new = nginx_version(self.binary) >= (1, 25, 1)
            listen = " ssl" if new else " ssl http2"
            server = "\n".join([
                *(["http2 on;"] if new else []),
                f"ssl_certificate {self.tls / 'server.pem'};",
                f"ssl_certificate_key {self.tls / 'server.key'};",
                server,
            ])  # fmt: skip
        # As root the workers would run as nobody, who cannot read a pytest folder (0700).
        user = "user root;" if os.geteuid() == 0 else ""
        filled = {
            "root": str(self.root), "user": user, "log_format": _LOG_FORMAT,
            "upstream": str(self.upstream_port), "port": str(self.port), "listen": listen,
            "server": _indent(server, 8), "location": _indent(self.location, 12),
        }  # fmt: skip
        return re.sub(r"@(\w+)@", lambda m: filled[m.group(1)], CONF)

    def start(self) -> Nginx:
        """Write the config and start nginx in the foreground; return once it accepts."""
        for temp in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.root / "temp" / temp).mkdir(parents=True, exist_ok=True)
        conf = self.root / "nginx.conf"
        conf.write_text(self.conf())
        command = [self.binary, "-p", f"{self.root}/", "-c", str(conf), "-e",
                   str(self.root / "error.log"), "-g", "daemon off;"]  # fmt: skip
        with (self.root / "stderr.log").open("ab") as stderr:
            # A session of its own: its workers share its process group, which a stuck
            # master is killed with.
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                start_new_session=True,
            )  # fmt: skip
        try:
            self._wait_until_accepting()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_accepting(self) -> None:
        assert self.process is not None
        give_up = time.monotonic() + START_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"nginx exited with {self.process.returncode} before accepting:\n{self.logs()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > give_up:
                    raise RuntimeError(
                        f"nginx did not accept on 127.0.0.1:{self.port} within {START_S:g} s:\n"
                        f"{self.logs()}"
                    ) from None
                time.sleep(0.02)

    def stop(self) -> None:
        """Stop it: SIGTERM (nginx's fast shutdown), then SIGKILL to its process group."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the group it leads: master and workers
            process.wait(timeout=STOP_S)

    def restart(self, *, server: str | None = None, location: str | None = None) -> Nginx:
        """Stop it and start it again on the same port, with the directives given changed."""
        self.stop()
        self.server = self.server if server is None else server
        self.location = self.location if location is None else location
        return self.start()

    def access(self) -> list[dict[str, Any]]:
        """Every request of the access log, oldest first, with `status` as an int."""
        path = self.root / "access.log"
        lines = path.read_text().splitlines() if path.exists() else []
        return [{**row, "status": int(row["status"])} for row in map(json.loads, lines)]

    def logs(self) -> str:
        """The tail of its error log and of what it printed, for failure messages."""
        parts = []
        for name in ("error.log", "stderr.log"):
            path = self.root / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text()[-3000:]}")
        return "\n".join(parts)


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line.strip() for line in text.strip().splitlines())
