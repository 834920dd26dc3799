"""Fixtures of the gateway tests: LiteLLM's proxy in front of mock LLMs that keep what they
were sent.

The mocks run in this process, on an event loop in a thread of their own (a
blocking portal), so a test can wait on `arena run` with a plain subprocess call
while they serve; the proxies run as processes of their own. There are two
proxies for the whole session, started together (each takes seconds to import):
one set up as `docs/gateways.md` says (Anthropic's messages through the backend's
chat completions), and one out of the box. Every backend is a model group of
both. Without a `litellm` command the tests skip, unless COG_REQUIRE_LITELLM=1 (CI)
makes that a failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Iterator, MutableMapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from arena.mock_llm import MockLLM, parse_faults, serving
from tests.gateways.proxy import LiteLLM, find_litellm

SEED = 5
"""Every mock's seed (answers and faults are drawn from it and the request's body)."""


@dataclass(frozen=True)
class Received:
    """One completion request as the backend received it from the gateway."""

    path: str
    body: dict[str, Any]
    answer_id: str
    """The id the mock gives its answer (`mock` and the start of the SHA-256 of its seed and
    the body): an OpenAI answer's is `chatcmpl-<answer_id>`, which the gateway passes on."""
    fault: str | None
    """The fault the mock draws for this body (the same body, the same fault)."""


class RecordingMock(MockLLM):
    """The mock LLM, keeping every POST it receives; with `throttled`, its first `throttled`
    completion requests answer 429 (a rate limit that lifts)."""

    def __init__(self, *, throttled: int = 0, **settings: Any) -> None:
        super().__init__(**settings)
        self.received: list[Received] = []
        self.throttled = throttled

    def fault(self, body: bytes) -> str | None:
        """The fault the mock draws for `body`: its first draw from the generator its seed and
        the body seed, against the fault rates in order (`MockLLM`'s own draw, which its
        `injected` counts; a test compares the two)."""
        draw = random.Random(hashlib.sha256(f"{SEED}:".encode() + body).digest()).random()
        for name, rate in self.faults.items():
            if draw < rate:
                return name
            draw -= rate
        return None

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        """Record the request, then answer it as the mock does (or with a 429)."""
        if scope["type"] != "http" or scope["method"] != "POST":
            await super().__call__(scope, receive, send)
            return
        messages = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        raw = b"".join(m.get("body", b"") for m in messages)
        digest = hashlib.sha256(f"{SEED}:".encode() + raw).hexdigest()
        body = json.loads(raw) if raw else {}
        self.received.append(Received(scope["path"], body, f"mock{digest[:16]}", self.fault(raw)))
        if len(self.received) <= self.throttled:
            await _json(send, 429, {"error": {"message": "mock rate limit",
                                              "type": "rate_limit_exceeded"}})  # fmt: skip
            return
        replayed = iter(messages)

        async def again() -> Any:
            return next(replayed, None) or await receive()

        await super().__call__(scope, again, send)


async def _json(send: Any, status: int, value: object) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})  # fmt: skip
    await send({"type": "http.response.body", "body": json.dumps(value).encode()})


BACKENDS: dict[str, dict[str, Any]] = {
    "openai-ab": {},
    "openai-forms": {},
    "team/claude": {},
    "gemini-free": {},
    "gemini-json": {},
    "gemini-schema": {},
    "faulty": {"faults": "429=0.1,500=0.1,truncated=0.1"},
    "throttled": {"throttled": 24},
    "keyless": {},
    "team/routed-away": {},
}
"""Model group -> the settings of the mock behind it: each league's own mock (a Gemini
policy's each, as a Gemini answer carries no id to match it by), so that one's faults, or
the gateway's cool-down of it, touch no other."""


@dataclass(frozen=True)
class Gateways:
    """The session's proxies and the mocks behind their model groups."""

    routed: LiteLLM
    """Set up for every protocol (Anthropic's messages through chat completions)."""
    plain: LiteLLM
    """Out of the box."""
    backends: dict[str, RecordingMock]


def _missing(what: str) -> None:
    if os.environ.get("COG_REQUIRE_LITELLM") == "1":
        pytest.fail(f"{what}; COG_REQUIRE_LITELLM=1 requires it (.ci/run installs LiteLLM)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateways]:
    """Both proxies, serving until the session ends, and their backends."""
    binary = find_litellm()
    if binary is None:
        _missing("no litellm command on this machine (pip install 'litellm[proxy]' in a venv)")
    assert binary is not None
    root = tmp_path_factory.mktemp("litellm")
    # The portal outlives the servers it runs: their contexts close first.
    with start_blocking_portal(backend="asyncio") as portal, ExitStack() as stack:
        backends: dict[str, RecordingMock] = {}
        urls: dict[str, str] = {}
        for group, settings in BACKENDS.items():
            faults = parse_faults(settings.get("faults", ""))
            app = RecordingMock(faults=faults, seed=SEED, throttled=settings.get("throttled", 0))
            url = stack.enter_context(portal.wrap_async_context_manager(serving(app)))
            backends[group], urls[group] = app, f"{url}/v1"
        routed = LiteLLM(binary, root / "routed", urls)
        plain = LiteLLM(binary, root / "plain", urls, anthropic_messages=False)
        for proxy in (routed, plain):
            stack.callback(proxy.stop)
            proxy.start()
        routed.wait()
        plain.wait()
        yield Gateways(routed, plain, backends)


@pytest.fixture
def gateway_logs(gateways: Gateways) -> Iterator[None]:
    """On a failure, the proxies' logs are in the report (pytest shows captured output)."""
    yield
    print(f"--- routed proxy\n{gateways.routed.logs()}\n--- plain proxy\n{gateways.plain.logs()}")
