"""A local mock LLM server: the three wire protocols, plausible moves, seeded faults.

Endpoints (raw ASGI, served by uvicorn):

    POST /v1/chat/completions, /chat/completions      OpenAI Chat Completions
    POST /v1/messages                                 Anthropic Messages
    POST /v1beta/models/{model}:generateContent       Gemini generateContent
    GET  /stats                                       requests served, faults injected

The reply reads the arena's machine-readable prompt lines in the last user
message: `REPLY KEY: move|orders|setup`, `LEGAL MOVES: m1, m2, ...` (one is
picked with the seeded rng), and for the battle `YOUR SQUADS: A1 A2 ...`,
`ENEMY SQUADS: B1 ...`, `MAP SIZE: 45`. It answers a JSON object
`{"<key>": ..., "say": ..., "notes": ...}`: a legal move, random valid battle
orders, a valid random Stratego setup, or without a list a plausible token.

Faults are drawn per request at seeded rates (`parse_faults`): 429 (with a
50 ms retry hint), 500, 529, hang (no answer until the client gives up or
the server stops), slow (answers after slow_ms), garbage (a 200 whose body is
not JSON), truncated (stop reason length and a cut reply), prose (no move at
all), illegal (a well-formed reply whose move is not legal).
"""

from __future__ import annotations

import json
import random
import re
import socket
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import uvicorn

__all__ = [
    "FAULTS",
    "ILLEGAL_MOVE",
    "RETRY_AFTER_S",
    "STRATEGO_PIECES",
    "MockLLM",
    "PromptLines",
    "build_app",
    "check_faults",
    "invent",
    "main_mock_llm",
    "parse_faults",
    "reply_text",
    "respond",
    "serve",
    "serving",
]

FAULTS = ("429", "500", "529", "hang", "slow", "garbage", "truncated", "prose", "illegal")
"""Every fault the server can inject, in the order rates are drawn."""

STRATEGO_PIECES = (
    "F" + "B" * 6 + "S" + "2" * 8 + "3" * 5 + "4" * 4 + "5" * 4 + "6" * 4 + "7" * 3 + "88" + "9X"
)
"""One Stratego army as piece codes: the multiset every setup must use."""

RETRY_AFTER_S = 0.05
"""The retry hint a 429 carries: small, so clients retrying it stay fast."""

ILLEGAL_MOVE = "z9"
"""The move an `illegal` fault plays when the prompt's list does not hold it."""
_SAYINGS = ("Onward.", "A quiet move.", "Let us see.", "Pressure builds.", "Patience.")
_PROSE = "I have weighed the position with care and will keep my options open for now."
_GARBAGE = b'{"id": "mock-garbage", "choices": [{"message": {"content": "e'
_VERBS = ("advance", "attack", "move", "hold", "retreat")
_BATTLE_MAP = 45
_START_S = 5.0  # a loopback server that is not up in 5 s never will be
_STOP_S = 5.0
_GRACE_S = 1  # then uvicorn cancels whatever still runs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def parse_faults(spec: str) -> dict[str, float]:
    """Fault rates from `"429=0.05,hang=0.01,..."` ('' for none); bad names or rates raise."""
    rates: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, value = item.partition("=")
        try:
            rates[name.strip()] = float(value) if sep else float("nan")
        except ValueError:
            raise ValueError(f"fault rate {item!r} is not a number (write e.g. 429=0.05)") from None
    return check_faults(rates)


def check_faults(faults: Mapping[str, float]) -> dict[str, float]:
    """`faults` in draw order, after checking names, rates in [0, 1] and their sum <= 1."""
    for name, rate in faults.items():
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r} (known: {', '.join(FAULTS)})")
        if not 0 <= rate <= 1:
            raise ValueError(f"fault rate {name}={rate} must be between 0 and 1 (e.g. {name}=0.05)")
    if sum(faults.values()) > 1 + 1e-9:
        raise ValueError(f"fault rates add up to {sum(faults.values()):g}; they must not exceed 1")
    return {name: faults[name] for name in FAULTS if faults.get(name)}


# -- what to answer ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptLines:
    """The machine-readable lines of an arena prompt (the last occurrence of each)."""

    reply_key: str = "move"
    legal: tuple[str, ...] = ()
    own_squads: tuple[str, ...] = ()
    enemy_squads: tuple[str, ...] = ()
    map_size: int = _BATTLE_MAP

    @classmethod
    def read(cls, text: str) -> PromptLines:
        """The lines found in prompt `text`; defaults for the missing ones."""

        def last(label: str) -> str | None:
            found = re.findall(rf"^[ \t]*{label}:[ \t]*(.*?)[ \t]*$", text, re.MULTILINE)
            return found[-1] if found else None

        key, size = (last("REPLY KEY") or "move").split(), last("MAP SIZE")
        return cls(
            reply_key=key[0] if key else "move",
            legal=tuple(m.strip() for m in (last("LEGAL MOVES") or "").split(",") if m.strip()),
            own_squads=tuple(re.findall(r"[A-Za-z]\d+", last("YOUR SQUADS") or "")),
            enemy_squads=tuple(re.findall(r"[A-Za-z]\d+", last("ENEMY SQUADS") or "")),
            map_size=int(size) if size and size.isdigit() and int(size) > 0 else _BATTLE_MAP,
        )


def invent(lines: PromptLines, rng: random.Random, *, illegal: bool = False) -> object:
    """A value for the reply key: legal (or, with `illegal`, well-formed but refused)."""
    if lines.reply_key == "setup":
        setup = list(STRATEGO_PIECES if not illegal else "FF" + STRATEGO_PIECES[2:])
        rng.shuffle(setup)
        return "".join(setup)
    if lines.reply_key == "orders":
        return _orders(lines, rng, illegal=illegal)
    if illegal:
        return _refused_like(lines.legal, rng)
    if lines.legal:
        return rng.choice(lines.legal)
    return f"{rng.choice('abcdefgh')}{rng.randint(1, 8)}"


def _refused_like(legal: tuple[str, ...], rng: random.Random) -> str:
    """A move shaped like the listed ones but not among them, so a game reads it and refuses it.

    Each listed move is varied one character at a time, using only characters
    seen at that position in listed moves of the same length (`b2-c3` may become
    `b2-e3`). Where no variation is unlisted (every file of an empty
    connect-four board is legal) it falls back to a token no game reads.
    """
    listed = set(legal)
    seen: dict[tuple[int, int], set[str]] = {}
    for move in legal:
        for i, char in enumerate(move):
            if char.isalnum():
                seen.setdefault((len(move), i), set()).add(char)
    candidates = sorted(
        {
            move[:i] + other + move[i + 1 :]
            for move in legal
            for i, char in enumerate(move)
            for other in seen.get((len(move), i), ())
            if other != char and move[:i] + other + move[i + 1 :] not in listed
        }
    )
    if candidates:
        return rng.choice(candidates)
    return ILLEGAL_MOVE if ILLEGAL_MOVE not in listed else ILLEGAL_MOVE * 2


def _orders(lines: PromptLines, rng: random.Random, *, illegal: bool) -> list[dict[str, Any]]:
    if illegal:
        return [{"squad": squad, "do": "teleport"} for squad in lines.own_squads or ("A1",)]
    verbs = _VERBS if lines.enemy_squads else tuple(v for v in _VERBS if v != "attack")
    orders: list[dict[str, Any]] = []
    for squad in lines.own_squads:
        order: dict[str, Any] = {"squad": squad, "do": rng.choice(verbs)}
        if order["do"] == "attack":
            order["enemy"] = rng.choice(lines.enemy_squads)
        elif order["do"] == "move":
            order["to"] = [rng.randint(1, lines.map_size), rng.randint(1, lines.map_size)]
        orders.append(order)
    return orders


def reply_text(prompt: str, rng: random.Random, fault: str | None) -> str:
    """The reply text for `prompt` under `fault` (None, truncated, prose or illegal)."""
    if fault == "prose":
        return _PROSE
    lines = PromptLines.read(prompt)
    value = invent(lines, rng, illegal=fault == "illegal")
    text = json.dumps({lines.reply_key: value, "say": rng.choice(_SAYINGS), "notes": "mock"})
    return text[: len(text) // 2] if fault == "truncated" else text


# -- the three protocols ----------------------------------------------------------------------


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def _prompt(request: dict[str, Any]) -> str:
    """The text of the last user turn, in any of the three request shapes."""
    turns = request.get("messages") or request.get("contents")
    users = [
        turn
        for turn in (turns if isinstance(turns, list) else [])
        if isinstance(turn, dict) and turn.get("role", "user") == "user"
    ]
    content = users[-1].get("content", users[-1].get("parts")) if users else ""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


@dataclass(frozen=True)
class Reply:
    """What one successful answer says, before a protocol shapes it."""

    id: str
    model: str
    text: str
    truncated: bool
    input_tokens: int


def _openai_ok(r: Reply) -> dict[str, Any]:
    out = _tokens(r.text)
    return {
        "id": f"chatcmpl-{r.id}", "object": "chat.completion", "created": 1_750_000_000,
        "model": r.model, "system_fingerprint": "fp_mock",
        "choices": [{
            "index": 0, "logprobs": None, "finish_reason": "length" if r.truncated else "stop",
            "message": {"role": "assistant", "content": r.text, "refusal": None},
        }],
        "usage": {
            "prompt_tokens": r.input_tokens, "completion_tokens": out,
            "total_tokens": r.input_tokens + out,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }  # fmt: skip


def _anthropic_ok(r: Reply) -> dict[str, Any]:
    return {
        "id": f"msg_{r.id}", "type": "message", "role": "assistant", "model": r.model,
        "content": [{"type": "text", "text": r.text}],
        "stop_reason": "max_tokens" if r.truncated else "end_turn", "stop_sequence": None,
        "usage": {
            "input_tokens": r.input_tokens, "output_tokens": _tokens(r.text),
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
        },
    }  # fmt: skip


def _gemini_ok(r: Reply) -> dict[str, Any]:
    out = _tokens(r.text)
    return {
        "candidates": [{
            "content": {"parts": [{"text": r.text}], "role": "model"},
            "finishReason": "MAX_TOKENS" if r.truncated else "STOP", "index": 0,
        }],
        "usageMetadata": {
            "promptTokenCount": r.input_tokens, "candidatesTokenCount": out,
            "totalTokenCount": r.input_tokens + out,
        },
        "modelVersion": r.model, "responseId": r.id,
    }  # fmt: skip


# status -> (OpenAI error type, Anthropic error type, Gemini status)
_ERRORS = {
    429: ("rate_limit_exceeded", "rate_limit_error", "RESOURCE_EXHAUSTED"),
    500: ("server_error", "api_error", "INTERNAL"),
    529: ("overloaded", "overloaded_error", "UNAVAILABLE"),
}


def _error_body(protocol: str, status: int) -> dict[str, Any]:
    openai_type, anthropic_type, gemini_status = _ERRORS[status]
    message = f"mock fault {status}"
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    if protocol == "openai":
        return {"error": {"message": message, "type": openai_type, "param": None, "code": None}}
    error = {"code": status, "message": message, "status": gemini_status, "details": []}
    if status == 429:
        delay = f"{RETRY_AFTER_S:.3f}s"
        hint = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
        error["details"] = [hint]
    return {"error": error}


# protocol -> (shape of a successful answer, header carrying the request id)
_PROTOCOLS: dict[str, tuple[Callable[[Reply], dict[str, Any]], str | None]] = {
    "openai": (_openai_ok, "x-request-id"),
    "anthropic": (_anthropic_ok, "request-id"),
    "gemini": (_gemini_ok, None),
}


def respond(
    protocol: str,
    request: dict[str, Any],
    fault: str | None,
    rng: random.Random,
    number: int,
    path_model: str | None = None,
) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and headers answering request `number` of `protocol` under `fault`."""
    shape, id_header = _PROTOCOLS[protocol]
    headers = {id_header: f"req_mock{number:08d}"} if id_header else {}
    if fault in ("429", "500", "529"):
        if fault == "429":
            headers["retry-after-ms"] = f"{RETRY_AFTER_S * 1000:g}"
            headers["retry-after"] = f"{RETRY_AFTER_S:g}"
        return int(fault), json.dumps(_error_body(protocol, int(fault))).encode(), headers
    if fault == "garbage":
        return 200, _GARBAGE, headers
    prompt = _prompt(request)
    reply = Reply(
        id=f"mock{number:08d}",
        model=path_model or str(request.get("model", "mock")),
        text=reply_text(prompt, rng, fault),
        truncated=fault == "truncated",
        input_tokens=_tokens(prompt),
    )
    return 200, json.dumps(shape(reply)).encode(), headers


_GEMINI_PATH = re.compile(r"^/v1beta/models/([^/:]+):generateContent$")


def _route(path: str) -> tuple[str, str | None] | None:
    if path in ("/v1/chat/completions", "/chat/completions"):
        return "openai", None
    if path == "/v1/messages":
        return "anthropic", None
    match = _GEMINI_PATH.match(path)
    return ("gemini", match.group(1)) if match else None


# -- the ASGI app -----------------------------------------------------------------------------


class MockLLM:
    """The ASGI app: answers the three protocols and counts the faults it injected."""

    def __init__(
        self,
        *,
        latency_ms: int = 0,
        faults: Mapping[str, float] | None = None,
        slow_ms: int = 2000,
        seed: int = 0,
    ) -> None:
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
        self._rng = random.Random(seed)
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
        body = await _read_body(receive)
        method, path = scope["method"], scope["path"]
        route = _route(path)
        if method == "GET" and path == "/stats":
            await _send_json(send, 200, self.stats())
        elif method == "POST" and route is not None:
            await self._answer(route, body, receive, send)
        else:
            hint = "POST /v1/chat/completions, /v1/messages, /v1beta/models/<m>:generateContent"
            message = f"no mock endpoint {method} {path} (try {hint}, GET /stats)"
            await _send_json(send, 404, {"error": {"message": message}})

    async def _answer(
        self, route: tuple[str, str | None], body: bytes, receive: Receive, send: Send
    ) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            await _send_json(send, 400, {"error": {"message": "request body is not a JSON object"}})
            return
        self.requests += 1
        number, fault = self.requests, self._draw_fault()
        if await self._delay(fault, receive):
            protocol, path_model = route
            answer = respond(protocol, request, fault, self._rng, number, path_model)
            await _send(send, *answer)
        else:  # sent only if the client is still there: the server is stopping
            await _send_json(send, 503, {"error": {"message": "mock server stopping"}})

    async def _delay(self, fault: str | None, receive: Receive) -> bool:
        if fault == "hang":
            return await self._pause(receive, None)
        delay = self.latency_s + (self.slow_s if fault == "slow" else 0)
        return delay <= 0 or await self._pause(receive, delay)

    def _draw_fault(self) -> str | None:
        draw = self._rng.random()
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


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body"):
            return b"".join(chunks)


async def _send_json(
    send: Send, status: int, value: object, headers: Mapping[str, str] | None = None
) -> None:
    await _send(send, status, json.dumps(value).encode(), headers)


async def _send(
    send: Send, status: int, body: bytes, headers: Mapping[str, str] | None = None
) -> None:
    raw = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    raw += [(name.encode(), value.encode()) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})  # one write per body


# -- running it -------------------------------------------------------------------------------


def build_app(
    *,
    latency_ms: int = 0,
    faults: Mapping[str, float] | str | None = None,
    slow_ms: int = 2000,
    seed: int = 0,
) -> MockLLM:
    """A mock server app; `faults` is a rate table or a `parse_faults` string."""
    rates = parse_faults(faults) if isinstance(faults, str) else faults
    return MockLLM(latency_ms=latency_ms, faults=rates, slow_ms=slow_ms, seed=seed)


class _Server(uvicorn.Server):
    """uvicorn's server, ending the mock's hung and slow answers as its shutdown begins."""

    def __init__(self, config: uvicorn.Config, app: MockLLM) -> None:
        super().__init__(config)
        self._app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Release pending answers, then shut down as uvicorn does."""
        self._app.release()
        await super().shutdown(sockets)


def _server(app: MockLLM, host: str, port: int, log_level: str) -> tuple[_Server, socket.socket]:
    # Binding ourselves turns a busy port into an OSError here, not uvicorn's sys.exit.
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on sockets that say
    # so, and without it every keep-alive answer waits ~40 ms for a delayed ACK.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(
            f"mock LLM cannot listen on {host}:{port} ({exc}); pick another --port"
        ) from exc
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=_GRACE_S,
    )
    return _Server(config, app), sock


@asynccontextmanager
async def serving(app: MockLLM, *, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Run `app` in this event loop for the block (port 0: a free one); yields its base URL."""
    server, sock = _server(app, host, port, log_level="warning")
    with sock:
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(server.serve, sockets=[sock]))
            try:
                with anyio.fail_after(_START_S):
                    while not server.started:
                        await anyio.sleep(0.005)
                bound = sock.getsockname()[1]
                yield f"http://[{host}]:{bound}" if ":" in host else f"http://{host}:{bound}"
            finally:
                server.should_exit = True
                tg.cancel_scope.deadline = anyio.current_time() + _STOP_S


async def serve(
    host: str,
    port: int,
    *,
    latency_ms: int = 0,
    faults: str = "",
    slow_ms: int = 2000,
    seed: int = 0,
) -> None:
    """Serve a mock until the process is interrupted (Ctrl-C stops it gracefully)."""
    app = build_app(latency_ms=latency_ms, faults=faults, slow_ms=slow_ms, seed=seed)
    server, sock = _server(app, host, port, log_level="info")
    with sock:
        await server.serve(sockets=[sock])


def main_mock_llm(
    host: str, port: int, latency_ms: int, faults: str, slow_ms: int, seed: int
) -> None:
    """`arena mock-llm`: serve the mock on host:port until Ctrl-C."""
    parse_faults(faults)  # refuse a bad spec before binding anything
    run = partial(
        serve, host, port, latency_ms=latency_ms, faults=faults, slow_ms=slow_ms, seed=seed
    )
    with suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it already handled
        anyio.run(run)
