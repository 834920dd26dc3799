"""OpenAI Chat Completions: the exact request, and the reading of real-shaped replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from providers import (
    CompletionRequest,
    HTTPStatusError,
    InvalidResponse,
    Providers,
    ProviderSpec,
    Usage,
)
from providers import openai as wire

pytestmark = pytest.mark.anyio

SPEC = ProviderSpec(protocol="openai", model="gpt-4.1-mini", api_key="sk-test")
LOCAL = ProviderSpec(protocol="openai", model="qwen3:8b", base_url="http://127.0.0.1:11434/v1/")


def reply(
    content: str | None = '{"move": "e4"}', finish: str | None = "stop", **message: Any
) -> dict[str, Any]:
    """A chat.completion body as OpenAI sends it, with cached and reasoning tokens."""
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None, **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": 1117,
            "completion_tokens": 46,
            "total_tokens": 1163,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 30, "audio_tokens": 0},
        },
        "system_fingerprint": "fp_06737a9306",
    }


@respx.mock
async def test_request_is_a_bearer_post_to_chat_completions(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post("https://api.openai.com/v1/chat/completions").respond(json=reply())
    request = CompletionRequest(
        prompt="your move",
        system="you play hex",
        max_tokens=300,
        temperature=0.2,
        seed=7,
        json_object=True,
    )
    await pool.client(SPEC).complete(request, deadline=deadline(2))
    sent = route.calls.last.request
    assert sent.method == "POST"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["content-type"] == "application/json"
    assert json.loads(sent.content) == {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "you play hex"},
            {"role": "user", "content": "your move"},
        ],
        "max_completion_tokens": 300,
        "temperature": 0.2,
        "seed": 7,
        "response_format": {"type": "json_object"},
    }


@respx.mock
async def test_compatible_server_gets_max_tokens_and_no_key(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post("http://127.0.0.1:11434/v1/chat/completions").respond(json=reply())
    await pool.client(LOCAL).complete(CompletionRequest("go", 50), deadline=deadline(2))
    sent = route.calls.last.request
    assert "authorization" not in sent.headers
    assert json.loads(sent.content) == {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "go"}],
        "max_tokens": 50,
    }


@respx.mock
async def test_reply_text_usage_and_ids(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post("https://api.openai.com/v1/chat/completions").respond(
        json=reply(), headers={"x-request-id": "req_8d7c"}
    )
    completion = await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(2))
    assert completion.text == '{"move": "e4"}'
    assert completion.stop_reason == "stop"
    assert completion.raw_stop_reason == "stop"
    assert completion.usage == Usage(
        input_uncached=93, cache_read=1024, cache_write=None, output=46, reasoning=30
    )
    assert completion.raw_usage == reply()["usage"]
    assert completion.request_id == "req_8d7c"
    assert completion.model == "gpt-4.1-mini-2025-04-14"
    assert completion.status == 200
    assert completion.latency_s > 0
    assert [(a.status, a.error) for a in completion.attempts] == [(200, None)]


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("error", "error"),
        ("tool_calls", "unknown"),
        ("eos_reached_somehow", "unknown"),
        (None, "unknown"),
    ],
)
def test_finish_reasons_map_and_unknown_never_becomes_stop(
    finish: str | None, expected: str
) -> None:
    body = json.dumps(reply(finish=finish)).encode()
    completion = wire.parse_response(SPEC, 200, {}, body)
    assert completion.stop_reason == expected
    assert completion.raw_stop_reason == finish


def test_refusal_field_is_a_refusal() -> None:
    body = json.dumps(reply(content=None, refusal="I can't help with that.")).encode()
    completion = wire.parse_response(SPEC, 200, {}, body)
    assert completion.stop_reason == "refusal"
    assert completion.text == ""


def test_usage_without_details_leaves_cache_and_reasoning_unknown() -> None:
    body = reply()
    body["usage"] = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    completion = wire.parse_response(LOCAL, 200, {}, json.dumps(body).encode())
    assert completion.usage == Usage(input_uncached=12, output=5)
    assert completion.request_id == "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG"


def test_content_as_parts_is_joined() -> None:
    body = reply(content=None)
    body["choices"][0]["message"]["content"] = [
        {"type": "text", "text": '{"move":'},
        {"type": "text", "text": ' "a1"}'},
    ]
    assert wire.parse_response(LOCAL, 200, {}, json.dumps(body).encode()).text == '{"move": "a1"}'


@pytest.mark.parametrize(
    "body",
    [b"<html>502 Bad Gateway</html>", b'{"object": "list", "data": []}', b'{"choices": []}'],
)
def test_bodies_without_a_choice_are_invalid(body: bytes) -> None:
    with pytest.raises(InvalidResponse, match="openai model 'qwen3:8b'"):
        wire.parse_response(LOCAL, 200, {}, body)


@respx.mock
async def test_error_body_is_quoted_in_the_status_error(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    error = {
        "error": {
            "message": "Invalid 'messages[1].content': string too long.",
            "type": "invalid_request_error",
            "param": "messages[1].content",
            "code": "string_above_max_length",
        }
    }
    respx.post("https://api.openai.com/v1/chat/completions").respond(400, json=error)
    with pytest.raises(HTTPStatusError) as caught:
        await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(2))
    assert caught.value.status == 400
    assert "string too long" in caught.value.body_excerpt
    assert "HTTP 400" in str(caught.value)


def test_a_garbage_body_is_invalid_not_a_crash() -> None:
    with pytest.raises(InvalidResponse, match="not a JSON object"):
        wire.parse_response(SPEC, 200, httpx.Headers(), b'{"id": "chatcmpl-1", "choices": [')
