"""The response cache: a model's replies stored on disk and reused, against `arena mock-llm`.

A league of one model (OpenAI protocol, at the mock) against a scripted seat is
played twice into two folders with one cache: the second run sends nothing the
first was answered, and plays the same games. Failures are not stored, no key
reaches a file, the key ignores which replica answered, and a bad file is a miss.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
import structlog

import providers
from arena.config import LlmPolicy, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.mock_llm import MockLLM, build_app, serving
from arena.play.protocol import Answer, SeatFailure
from arena.record.replay import Replay, load_replay
from arena.seats.cache import ResponseCache, default_cache_dir, request_key
from tests.arena.fakes import replay_attempts

pytestmark = pytest.mark.anyio

KEY = "sk-cache-test-0123456789abcdef"
PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}


def _config(url: str | list[str], cache: Path, **policy: Any) -> dict[str, Any]:
    base = [f"{u}/v1" for u in url] if isinstance(url, list) else f"{url}/v1"
    return {
        "run": {
            "name": "cached",
            "seed": 7,
            "games": ["connect-four"],
            "matches": 2,
            "concurrency": 4,
            "response_cache": True,
            "cache_dir": str(cache),
            "breaker_failures": 1000,  # faulty on purpose: no circuit may open
            "max_infra_share": 1.0,  # and no game is played again for it
        },
        "deadlines": {"first_reply_s": 5, "retry_s": 3, "decision_s": 8},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "model": {
                "kind": "llm", "provider": "openai", "model": "m", "base_url": base,
                "price": PRICE, **policy,
            },
        },
    }  # fmt: skip


async def _run(data: dict[str, Any], out: Path) -> list[Replay]:
    result = await execute(plan_run(parse_config(data), out))
    assert not result.failed
    return [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]


def _moves(replays: list[Replay]) -> list[list[Any]]:
    return [[d.move for g in r.games for p in g.plies for d in p.decisions] for r in replays]


def _files(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


async def test_a_second_run_asks_nothing_and_plays_the_same_games(tmp_path: Path) -> None:
    app = build_app(seed=1)
    cache = tmp_path / "cache"
    async with serving(app) as url:
        first = await _run(_config(url, cache), tmp_path / "a")
        asked = app.requests
        second = await _run(_config(url, cache), tmp_path / "b")
    assert asked > 0
    assert app.requests == asked  # not one request the second time
    assert len(_files(cache)) == asked  # one file per request sent, each a distinct key
    assert _moves(second) == _moves(first)
    before, after = replay_attempts(first), replay_attempts(second)
    assert len(after) == len(before) > 0
    assert any(not a.cached for a in before)
    assert all(a.cached for a in after)
    for made, reused in zip(before, after, strict=True):
        assert reused.reply == made.reply
        assert reused.usage == made.usage  # what the reply took when it was made
        assert reused.cost_usd == 0.0  # and what it costs now
        assert reused.retries == []
        assert reused.latency_s < 0.5  # a lookup, not a request
    assert all(a.cost_usd and a.cost_usd > 0 for a in before if not a.cached)


async def test_failures_are_not_stored_and_are_asked_again(tmp_path: Path) -> None:
    # Faults drawn from the request body: asked again, a request meets the same fault.
    app = build_app(faults="429=0.1,garbage=0.15,prose=0.15", seed=5)
    cache = tmp_path / "cache"
    async with serving(app) as url:
        first = await _run(_config(url, cache), tmp_path / "a")
        asked, injected = app.requests, Counter(app.injected)
        second = await _run(_config(url, cache), tmp_path / "b")
    again = Counter(app.injected)
    again.subtract(injected)
    assert injected["429"] > 0
    assert injected["garbage"] > 0
    assert injected["prose"] > 0
    # every rate-limited or garbage answer is asked for again, and nothing else is
    assert again["429"] == injected["429"]
    assert again["garbage"] == injected["garbage"]
    assert again["prose"] == 0  # a reply without a move is still the model's reply: stored
    assert app.requests - asked == injected["429"] + injected["garbage"]
    assert _moves(second) == _moves(first)
    causes = Counter((a.cause, a.cached) for a in replay_attempts(second))
    assert causes[("rate_limited", False)] > 0
    assert causes[("provider_error", False)] > 0
    assert causes[("unreadable", True)] > 0
    assert not any(
        cached for (cause, cached) in causes if cause in ("rate_limited", "provider_error")
    )
    for path in _files(cache):
        assert json.loads(path.read_text())["reply"]["status"] == 200


_REWRITTEN = (b"content-length", b"x-request-id")


class EchoKey:
    """The mock, echoing the bearer key it was sent in every reply: its ids, say and notes."""

    def __init__(self, app: MockLLM) -> None:
        self.app = app

    def release(self) -> None:
        self.app.release()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", []))
        key = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        start: dict[str, Any] = {}

        async def echoing(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            body = message.get("body", b"")
            data = json.loads(body) if body.startswith(b"{") else None
            if isinstance(data, dict) and data.get("choices"):
                data["id"] = f"chatcmpl-{key}"
                answer = data["choices"][0]["message"]
                reply = json.loads(answer["content"])
                reply.update(say=f"the key is {key}", notes=key)
                answer["content"] = json.dumps(reply)
                body = json.dumps(data).encode()
            kept = [(k, v) for k, v in start["headers"] if k not in _REWRITTEN]
            length = (b"content-length", str(len(body)).encode())
            echoed = (b"x-request-id", f"req-{key}".encode())
            await send({**start, "headers": [*kept, length, echoed]})
            await send({**message, "body": body})

        await self.app(scope, receive, echoing)


async def test_no_cache_file_holds_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CACHE_TEST_KEY", KEY)
    cache = tmp_path / "cache"
    mock = build_app(seed=1)
    echo = EchoKey(mock)
    async with serving(echo) as url:  # type: ignore[arg-type]
        # a careless config: the key in a param of the body as well
        data = _config(url, cache, api_key_env="CACHE_TEST_KEY", params={"user": KEY})
        replays = await _run(data, tmp_path / "a")
    assert mock.requests > 0
    assert any("the key is [redacted]" in (a.reply or "") for a in replay_attempts(replays))
    files = _files(cache)
    assert files
    for path in files:
        text = path.read_text()
        assert KEY not in text
        stored = json.loads(text)
        assert stored["key"]["params"] == {"user": "[redacted]"}
        assert stored["reply"]["request_id"] == "req-[redacted]"
        assert "the key is [redacted]" in stored["reply"]["text"]


def _request(**fields: Any) -> providers.CompletionRequest:
    return providers.CompletionRequest(
        **{"prompt": "LEGAL MOVES: a, b", "max_tokens": 64, **fields}
    )


def _policy(**fields: Any) -> LlmPolicy:
    data = {"kind": "llm", "provider": "openai", "model": "m", "base_url": "http://a:1/v1"}
    return LlmPolicy.model_validate({**data, **fields})


def test_the_key_is_the_policys_endpoints_not_the_replica_that_answered() -> None:
    two = _policy(base_url=["http://a:1/v1", "http://b:2/v1/"])
    assert request_key(two, _request()) == request_key(
        _policy(base_url=["http://b:2/v1", "http://a:1/v1"]), _request()
    )
    assert request_key(two, _request()).parts["endpoints"] == ["http://a:1/v1", "http://b:2/v1"]
    assert request_key(two, _request()) != request_key(_policy(), _request())
    # nor the key the request goes with: it is in the headers, never in the key
    keyed = _policy(base_url=two.base_url, api_key_env="CACHE_TEST_KEY")
    assert request_key(keyed, _request()) == request_key(two, _request())


@pytest.mark.parametrize(
    ("policy", "request_"),
    [
        ({"model": "m2"}, {}),
        ({"params": {"top_p": 0.5}}, {}),
        ({"provider": "anthropic"}, {}),
        ({"base_url": "http://a:1/v2"}, {}),
        ({}, {"prompt": "LEGAL MOVES: a, b, c"}),
        ({}, {"system": "GAME: hex"}),
        ({}, {"temperature": 0.7}),
        ({}, {"max_tokens": 65}),
        ({}, {"json_object": True}),
    ],
)
def test_the_key_changes_with_what_is_asked(
    policy: dict[str, Any], request_: dict[str, Any]
) -> None:
    assert request_key(_policy(**policy), _request(**request_)) != request_key(
        _policy(), _request()
    )


def test_the_key_is_the_body_sent() -> None:
    key = request_key(_policy(params={"top_p": 0.5}), _request(temperature=0.2))
    assert key.parts["body"] == {
        "model": "m",
        "messages": [{"role": "user", "content": "LEGAL MOVES: a, b"}],
        "max_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.5,
    }
    # a fail-over flag changes nothing the endpoint is sent
    assert request_key(_policy(), _request(fail_over=True)) == request_key(_policy(), _request())


async def test_a_corrupt_cache_file_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    app = build_app(seed=1)
    cache = tmp_path / "cache"
    async with serving(app) as url:
        first = await _run(_config(url, cache), tmp_path / "a")
        asked = app.requests
        files = _files(cache)
        for n, path in enumerate(files):
            path.write_bytes([b"{not json", b"\xff\xfe", b"", b"[]"][n % 4])
        with structlog.testing.capture_logs() as events:
            second = await _run(_config(url, cache), tmp_path / "b")
        assert app.requests == 2 * asked  # every file was a miss: asked again
        third = await _run(_config(url, cache), tmp_path / "c")
        assert app.requests == 2 * asked  # and stored again
    ignored = [e for e in events if e["event"] == "cached_reply_ignored"]
    assert len(ignored) == len(files)
    assert _moves(first) == _moves(second) == _moves(third)


def _answer(text: str = '{"move": "a"}', **fields: Any) -> Answer:
    return Answer(text=text, provider="openai", model="m", status=200, **fields)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: {**d, "format": 99},
        lambda d: {**d, "key": {**d["key"], "model": "other"}},
        lambda d: {**d, "reply": {**d["reply"], "cost_usd": 1.0}},
        lambda d: {**d, "reply": {**d["reply"], "usage": "lots"}},
        lambda d: {**d, "reply": None},
    ],
    ids=["format", "another-request", "extra-field", "bad-type", "no-reply"],
)
def test_a_file_that_is_not_the_reply_to_its_key_is_a_miss(tmp_path: Path, damage: Any) -> None:
    store = ResponseCache(tmp_path)
    key = request_key(_policy(), _request())
    store.store(key, _answer(usage={"output": 3}))
    loaded = store.load(key)
    assert loaded is not None
    assert loaded.cached
    assert loaded.usage == {"output": 3}
    path = store.path(key)
    path.write_text(json.dumps(damage(json.loads(path.read_text()))))
    with structlog.testing.capture_logs() as events:
        assert store.load(key) is None
    assert [e["event"] for e in events] == ["cached_reply_ignored"]


async def test_identical_requests_in_flight_are_asked_once(tmp_path: Path) -> None:
    store = ResponseCache(tmp_path)
    asked = []

    async def ask() -> Answer:
        asked.append(1)
        await anyio.sleep(0.01)
        return _answer()

    answers: list[Answer] = []

    async def one() -> None:
        deadline = anyio.current_time() + 5
        answers.append(await store.reply(_policy(), _request(), ask, deadline=deadline))

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(one)
    assert len(asked) == 1
    assert sorted(a.cached for a in answers) == [False, True, True]


async def test_a_failure_late_reply_or_error_stop_is_not_stored(tmp_path: Path) -> None:
    store = ResponseCache(tmp_path)
    policy, request = _policy(), _request()

    async def fails() -> Answer:
        raise SeatFailure("http_status", "HTTP 500", status=500)

    async def erred() -> Answer:
        return _answer(stop_reason="error")

    with pytest.raises(SeatFailure):
        await store.reply(policy, request, fails, deadline=anyio.current_time() + 5)
    await store.reply(policy, request, erred, deadline=anyio.current_time() + 5)
    late = await store.reply(policy, request, _late, deadline=anyio.current_time() - 1)
    assert not late.cached
    assert _files(tmp_path) == []
    await store.reply(policy, request, _late, deadline=anyio.current_time() + 5)
    reused = await store.reply(policy, request, fails, deadline=anyio.current_time() + 5)
    assert reused.cached
    assert reused.cost_usd is None  # an unpriced policy's cost stays unknown, not 0


async def _late() -> Answer:
    return _answer()


def test_the_default_folder_is_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "cog-arena" / "responses"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert default_cache_dir() == Path.home() / ".cache" / "cog-arena" / "responses"
    data = _config("http://127.0.0.1:1", tmp_path)
    del data["run"]["cache_dir"]
    plan = plan_run(parse_config(data), tmp_path / "run")
    assert plan.response_cache is not None
    assert plan.response_cache.folder == default_cache_dir()
    data["run"]["response_cache"] = False
    assert plan_run(parse_config(data), tmp_path / "run").response_cache is None


async def test_the_key_is_the_same_whichever_replica_answers(tmp_path: Path) -> None:
    first, second = build_app(seed=1), build_app(seed=1)
    cache = tmp_path / "cache"
    async with serving(first) as a, serving(second) as b:
        before = await _run(_config([a, b], cache, max_connections=1), tmp_path / "a")
        asked = (first.requests, second.requests)
        after = await _run(_config([b, a], cache, max_connections=1), tmp_path / "b")
    assert min(asked) > 0  # both replicas answered the first run
    assert (first.requests, second.requests) == asked  # neither was asked the second time
    assert all(x.cached for x in replay_attempts(after))
    assert _moves(after) == _moves(before)
