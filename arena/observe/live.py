"""The live page: `arena view RUN --serve` on a run in progress follows it (docs/ops.md).

`LiveRun` reads the run's `events.jsonl` as it is written, from where it last
stopped (read-only: it never opens the store for writing nor takes the run's
lock), and sums up the session in progress: episodes played of at most how
many, decisions per second, fallbacks by policy and cause, request latency
p50/p95, each endpoint's state, tokens and cost. `LivePages` puts it on the
viewer's server: `/` is the live page while the run plays (it fetches
`/live/state.json` every few seconds and redraws, without a reload) and the
league page once the run has ended, the page going there by itself.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
from contextlib import suppress
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import anyio.to_thread

from arena.asgi import App, Receive, Scope, Send, send_bytes
from arena.viewer.server import POLL_S, Server, serve

__all__ = [
    "LATENCIES_KEPT",
    "RATE_WINDOW_S",
    "LatencyWindow",
    "LivePages",
    "LiveRun",
    "LiveServer",
    "serve_live",
]

RATE_WINDOW_S = 10.0
"""Decisions per second are counted over this many seconds of the run's own clock."""
LATENCIES_KEPT = 2000
"""The latest requests' durations the percentiles are taken over, per policy."""


@dataclass
class LatencyWindow:
    """The latest request durations of one policy (milliseconds)."""

    kept: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCIES_KEPT))

    def percentile(self, share: float) -> float | None:
        """The duration `share` of the kept requests took at most (nearest rank), or None."""
        if not self.kept:
            return None
        ordered = sorted(self.kept)
        rank = max(1, -(-int(share * 100) * len(ordered) // 100))
        return ordered[min(rank, len(ordered)) - 1]


class LiveRun:
    """The session in progress in run folder `run`, as its events file says so far."""

    def __init__(self, run: Path) -> None:
        self.events = run / "events.jsonl"
        self._offset = 0
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.started = False
        self.finished = False
        self.name = ""
        self.at_most = 0
        self.before = 0
        self.outcomes: Counter[str] = Counter()
        self.in_flight = 0
        self.decisions: Counter[tuple[str, str]] = Counter()
        self.fallbacks: Counter[tuple[str, str]] = Counter()
        self.latency: dict[str, LatencyWindow] = {}
        self.tokens: Counter[tuple[str, str]] = Counter()
        self.cost: dict[str, float] = {}
        self.down: dict[str, str] = {}
        self.endpoints: set[str] = set()
        self.recent: deque[float] = deque()
        self.last = 0.0

    def read(self) -> None:
        """Take in the lines written since the last read (a run started afresh: from the top)."""
        with self._lock:
            try:
                size = self.events.stat().st_size
            except OSError:
                return
            if size < self._offset:
                self._offset = 0
                self._reset()
            with self.events.open("rb") as file:
                file.seek(self._offset)
                chunk = file.read(size - self._offset)
            whole = chunk.rfind(b"\n") + 1  # a line still being written waits for the next read
            self._offset += whole
            for line in chunk[:whole].splitlines():
                with suppress(ValueError, KeyError, TypeError):  # a line it cannot read
                    self._take(json.loads(line))

    def _take(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        when = _seconds(event.get("timestamp"))
        self.last = max(self.last, when)
        if name == "run_started":
            self._reset()
            self.started, self.last = True, when
            self.name = str(event.get("run", ""))
            self.at_most, self.before = int(event["episodes"]), int(event["already_finished"])
        elif name == "run_finished":
            self.finished, self.in_flight = True, 0
        elif name in ("episode_started", "episode_finished"):
            self.in_flight = int(event.get("in_flight", 0))
            if name == "episode_finished":
                self.outcomes[str(event["outcome"])] += 1
        elif name == "reply_received":
            self._reply(event, when)
        elif name == "fallback_recorded":
            policy = str(event.get("policy"))
            self.decisions[policy, "fallback"] += 1
            self.fallbacks[policy, str(event.get("cause"))] += 1
            self.recent.append(when)
        elif name in ("endpoint_down", "endpoint_up"):
            endpoint = str(event.get("endpoint"))
            self.endpoints.add(endpoint)
            if name == "endpoint_down":
                self.down[endpoint] = str(event.get("timestamp"))
            else:
                self.down.pop(endpoint, None)

    def _reply(self, event: dict[str, Any], when: float) -> None:
        policy = str(event.get("policy"))
        self.latency.setdefault(policy, LatencyWindow()).kept.append(float(event["latency_ms"]))
        for kind in ("input", "output"):
            self.tokens[policy, kind] += int(event.get(f"{kind}_tokens") or 0)
        self.cost[policy] = self.cost.get(policy, 0.0) + float(event.get("cost_usd") or 0.0)
        if event.get("cause") is None:
            self.decisions[policy, "first" if event.get("attempt") == 1 else "retry"] += 1
            self.recent.append(when)

    def state(self) -> dict[str, Any]:
        """What the live page shows, as JSON."""
        self.read()
        with self._lock:
            while self.recent and self.recent[0] < self.last - RATE_WINDOW_S:
                self.recent.popleft()
            policies = sorted({p for p, _ in self.decisions} | set(self.latency))
            return {
                "run": self.name,
                "started": self.started,
                "finished": self.finished,
                "played": self.before + sum(self.outcomes.values()),
                "at_most": self.at_most,
                "outcomes": dict(self.outcomes),
                "in_flight": self.in_flight,
                "decisions_per_s": round(len(self.recent) / RATE_WINDOW_S, 2),
                "policies": [self._policy(p) for p in policies],
                "fallbacks": [
                    {"policy": p, "cause": c, "count": n}
                    for (p, c), n in sorted(self.fallbacks.items())
                ],
                "endpoints": [
                    {"endpoint": e, "up": e not in self.down, "since": self.down.get(e)}
                    for e in sorted(self.endpoints)
                ],
                "updated": self.last,
            }

    def _policy(self, policy: str) -> dict[str, Any]:
        window = self.latency.get(policy, LatencyWindow())
        return {
            "policy": policy,
            "decisions": sum(n for (p, _), n in self.decisions.items() if p == policy),
            "fallbacks": self.decisions[policy, "fallback"],
            "p50_ms": window.percentile(0.5),
            "p95_ms": window.percentile(0.95),
            "tokens_in": self.tokens[policy, "input"],
            "tokens_out": self.tokens[policy, "output"],
            "cost_usd": round(self.cost.get(policy, 0.0), 6),
        }

    @property
    def playing(self) -> bool:
        """Whether a session has started and not finished (as far as the events say)."""
        self.read()
        return self.started and not self.finished


def _seconds(stamp: object) -> float:
    """An event's `timestamp` as Unix seconds (0 for one it does not have)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _page() -> bytes:
    return resources.files("arena.observe").joinpath("static/live.html").read_bytes()


class LivePages:
    """The viewer's app with the live page in front: `/` while the run plays, and its state
    at `/live/state.json`; everything else (and `/` once the run has ended) is the site's."""

    def __init__(self, run: Path, site: App) -> None:
        self.live = LiveRun(run)
        self.site = site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request: the live page and its state, or the site's answer."""
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            head, path = scope["method"] == "HEAD", scope["path"]
            if path == "/live/state.json":
                state = await anyio.to_thread.run_sync(self.live.state)
                body = json.dumps(state).encode()
                await send_bytes(send, 200, body, _JSON, head=head)
                return
            if path in ("/", "/index.html", "/live/"):
                playing = await anyio.to_thread.run_sync(lambda: self.live.playing)
                if playing or path == "/live/":
                    await send_bytes(send, 200, _page(), _HTML, head=head)
                    return
        await self.site(scope, receive, send)


_JSON = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
_HTML = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-store")]


class LiveServer(Server):
    """The viewer's server of run `run` with the live page in front (`LivePages`)."""

    def __init__(self, run: Path, port: int = 8000) -> None:
        super().__init__(run, port)
        self._server.app = LivePages(run, self._server.app)


def serve_live(run: Path, port: int = 8000, *, poll_s: float = POLL_S) -> None:
    """`arena view RUN --serve`: the site of `run` with its live page, until Ctrl-C."""

    def playing() -> str:
        live = LiveRun(run).playing
        return " (the run is in progress: the page follows it)" if live else ""

    serve(run, port, poll_s=poll_s, server=LiveServer(run, port), note=playing)
