"""The mock LLM's ASGI app and how to run it: in-process for tests, or `arena mock-llm`."""

from __future__ import annotations

import hashlib
import json
import random
import socket
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any

import anyio

from arena.asgi import Headers, Receive, Scope, Send, listen, read_body, send_bytes
from arena.asgi import serve as serve_app
from arena.asgi import serving as serving_app
from arena.mock_llm.answers import FAULTS, check_faults, parse_faults
from arena.mock_llm.outage import Front, Outage
from arena.mock_llm.shapes import respond, route
from arena.play.collector import collector_tuned

__all__ = [
    "MAX_BODY",
    "MODELS",
    "REASONING",
    "MockLLM",
    "build_app",
    "main_mock_llm",
    "serve",
    "serving",
]

REASONING = ("off", "apart", "think")
"""How the mock may reason: not at all, apart from the reply, or in a leading <think>."""

MAX_BODY = 64 * 1024 * 1024
"""The largest request the mock reads (an arena prompt is a few kilobytes)."""


class MockLLM:
    """The ASGI app: answers the three protocols and counts the faults it injected."""

    def __init__(
        self,
        *,
        latency_ms: int = 0,
        faults: Mapping[str, float] | None = None,
        slow_ms: int = 2000,
        seed: int = 0,
        reasoning: str = "off",
        models: Sequence[str] = (),
    ) -> None:
        if reasoning not in REASONING:
            raise ValueError(f"reasoning {reasoning!r}: use one of {', '.join(REASONING)}")
        self.reasoning = reasoning
        self.models = tuple(dict.fromkeys((*MODELS, *models)))
        """The models its list names: `mock-1` and those it was told it stands in for (it
        answers for any model name all the same)."""
        """`off`, `apart` (the protocol's own reasoning field or blocks) or `think` (a
        leading <think> block in the reply text)."""
        self.latency_s = latency_ms / 1000
        """Added to every answer (0: none)."""
        self.slow_s = slow_ms / 1000
        """How long a `slow` answer takes."""
        self.faults = check_faults(faults or {})
        """Fault name -> rate, in draw order."""
        self.requests = 0
        """Completion requests received."""
        self.injected: Counter[str] = Counter()
        """Fault name -> how many times it was injected."""
        self._seed = f"{seed}:".encode()
        self._pauses: set[anyio.CancelScope] = set()

    def stats(self) -> dict[str, Any]:
        """Requests served and faults injected, as `GET /stats` reports them."""
        return {"requests": self.requests, "injected": {f: self.injected[f] for f in FAULTS}}

    def release(self) -> None:
        """End every pending hang and slow answer now, so the server can stop."""
        for scope in list(self._pauses):
            scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection scope."""
        if scope["type"] != "http":  # run with lifespan="off": nothing to start or stop
            return
        body = await read_body(receive, MAX_BODY)
        method, path = scope["method"], scope["path"]
        endpoint = route(path)
        if body is None:
            message = f"a request to the mock is at most {MAX_BODY} bytes"
            await _send_json(send, 413, {"error": {"message": message}})
        elif method == "GET" and path == "/stats":
            await _send_json(send, 200, self.stats())
        elif method == "GET" and (listing := _models(path, self.models)) is not None:
            await _send_json(send, 200, listing)
        elif method == "POST" and endpoint is not None:
            await self._answer(endpoint, body, receive, send)
        else:
            hint = "POST /v1/chat/completions, /v1/messages, /v1beta/models/<m>:generateContent"
            message = f"no mock endpoint {method} {path} (try {hint}, GET /stats)"
            await _send_json(send, 404, {"error": {"message": message}})

    async def _answer(
        self, endpoint: tuple[str, str | None], body: bytes, receive: Receive, send: Send
    ) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            await _send_json(send, 400, {"error": {"message": "request body is not a JSON object"}})
            return
        self.requests += 1
        # Each answer is drawn from the server seed and the request itself, never from one
        # generator shared in arrival order: the same run, at any concurrency, gets the same
        # answers (and a retried request the same fault).
        digest = hashlib.sha256(self._seed + body).digest()
        rng = random.Random(digest)
        fault = self._draw_fault(rng)
        if await self._delay(fault, receive):
            protocol, path_model = endpoint
            status, answer, headers = respond(
                protocol,
                request,
                fault,
                rng,
                f"mock{digest.hex()[:16]}",
                path_model,
                self.reasoning,
            )
            await send_bytes(send, status, answer, _json_headers(headers))
        else:  # sent only if the client is still there: the server is stopping
            await _send_json(send, 503, {"error": {"message": "mock server stopping"}})

    async def _delay(self, fault: str | None, receive: Receive) -> bool:
        if fault == "hang":
            return await self._pause(receive, None)
        if fault == "slow":
            return await self._pause(receive, self.latency_s + self.slow_s)
        return self.latency_s <= 0 or await self._wait(self.latency_s)

    async def _wait(self, seconds: float) -> bool:
        """The plain latency: False if `release` ended it. A client that leaves meanwhile is
        not watched for (no task per request): the answer then goes nowhere, as uvicorn
        drops what is sent after a disconnect, and the wait is short anyway."""
        with anyio.CancelScope() as pause:
            self._pauses.add(pause)
            try:
                await anyio.sleep(seconds)
            finally:
                self._pauses.discard(pause)
        return not pause.cancelled_caught

    def _draw_fault(self, rng: random.Random) -> str | None:
        draw = rng.random()
        for name, rate in self.faults.items():
            if draw < rate:
                self.injected[name] += 1
                return name
            draw -= rate
        return None

    async def _pause(self, receive: Receive, seconds: float | None) -> bool:
        """Wait `seconds` (None: forever); False if the client left or `release` ended it."""
        with anyio.CancelScope() as pause:
            self._pauses.add(pause)
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_cancel_on_disconnect, receive, pause)
                    await (anyio.sleep_forever() if seconds is None else anyio.sleep(seconds))
                    tg.cancel_scope.cancel()
            finally:
                self._pauses.discard(pause)
        return not pause.cancelled_caught


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


MODELS = ("mock-1",)
"""The model every mock lists (it answers for any model name all the same)."""


def _models(path: str, models: Sequence[str]) -> dict[str, Any] | None:
    """The answer to a protocol's models call (the preflight's probe), or None."""
    if path in ("/v1/models", "/models"):  # OpenAI-compatible and Anthropic lists
        return {
            "object": "list",
            "data": [{"id": m, "object": "model", "type": "model"} for m in models],
        }
    if path.startswith("/v1/models/"):  # Anthropic: one model
        return {"id": path.removeprefix("/v1/models/"), "type": "model"}
    if path.startswith("/v1beta/models/") and ":" not in path:  # Gemini: one model
        return {"name": "models/" + path.removeprefix("/v1beta/models/")}
    return None


async def _send_json(send: Send, status: int, value: object) -> None:
    """The mock's own JSON (stats, model lists, errors), spaced as its answers are."""
    await send_bytes(send, status, json.dumps(value).encode(), _json_headers({}))


def _json_headers(headers: Mapping[str, str]) -> Headers:
    """An answer's content type and its protocol's own headers (request id, retry hints)."""
    return [(b"content-type", b"application/json")] + [
        (name.encode(), value.encode()) for name, value in headers.items()
    ]


# -- running it -------------------------------------------------------------------------------


def build_app(
    *,
    latency_ms: int = 0,
    faults: Mapping[str, float] | str | None = None,
    slow_ms: int = 2000,
    seed: int = 0,
    reasoning: str = "off",
    models: Sequence[str] = (),
) -> MockLLM:
    """A mock server app; `faults` is a rate table or a `parse_faults` string; `models` are
    listed beside `mock-1` (the models of the run it stands in for)."""
    rates = parse_faults(faults) if isinstance(faults, str) else faults
    return MockLLM(
        latency_ms=latency_ms,
        faults=rates,
        slow_ms=slow_ms,
        seed=seed,
        reasoning=reasoning,
        models=models,
    )


@asynccontextmanager
async def serving(
    app: MockLLM,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    outage: Outage | None = None,
    flag: str = "--port",
) -> AsyncIterator[str]:
    """Run `app` in this event loop for the block (port 0: a free one); yields its base URL.
    With an `outage`, the URL's port goes down and comes back as it says (`outage.Front`).
    A busy port is a `PortUnavailable` naming `flag`, the option that chose it."""
    sock = _listen(host, port if outage is None else 0, flag)
    async with serving_app(app, sock, on_stop=app.release) as bound:
        if outage is None:
            yield _url(host, bound)
            return
        front = Front(bound, outage, host)
        front.port = port
        async with anyio.create_task_group() as group:
            try:
                yield _url(host, await group.start(front.run))
            finally:
                front.close()


def _listen(host: str, port: int, flag: str = "--port") -> socket.socket:
    return listen(host, port, what="mock LLM", flag=flag)


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(
    host: str,
    port: int,
    *,
    latency_ms: int = 0,
    faults: str = "",
    slow_ms: int = 2000,
    seed: int = 0,
    outage: Outage | None = None,
    reasoning: str = "off",
    models: Sequence[str] = (),
) -> None:
    """Serve a mock until the process is interrupted (Ctrl-C stops it gracefully)."""
    app = build_app(
        latency_ms=latency_ms,
        faults=faults,
        slow_ms=slow_ms,
        seed=seed,
        reasoning=reasoning,
        models=models,
    )
    if outage is not None:
        async with serving(app, host=host, port=port, outage=outage):
            await anyio.sleep_forever()
    await serve_app(app, _listen(host, port), on_stop=app.release)


def main_mock_llm(
    host: str,
    port: int,
    latency_ms: int,
    faults: str,
    slow_ms: int,
    seed: int,
    outage: Outage | None = None,
    reasoning: str = "off",
    models: Sequence[str] = (),
) -> None:
    """`arena mock-llm`: serve the mock on host:port until Ctrl-C."""
    parse_faults(faults)  # refuse a bad spec before binding anything
    run = partial(
        serve,
        host,
        port,
        latency_ms=latency_ms,
        faults=faults,
        slow_ms=slow_ms,
        seed=seed,
        outage=outage,
        reasoning=reasoning,
        models=models,
    )
    # uvicorn re-raises the Ctrl-C it already handled; a mock under load allocates as a run
    # does, so its collector is tuned as a run's is
    with suppress(KeyboardInterrupt), collector_tuned():
        anyio.run(run)
