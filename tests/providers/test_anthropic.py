"""Anthropic Messages: the exact request, and the reading of real-shaped replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import respx

from providers import CompletionRequest, HTTPStatusError, Providers, ProviderSpec, Usage
from providers import anthropic as wire

pytestmark = pytest.mark.anyio

SPEC = ProviderSpec(protocol="anthropic", model="claude-sonnet-4-5", api_key="sk-ant-test")
URL = "https://api.anthropic.com/v1/messages"


def reply(stop: str | None = "end_turn") -> dict[str, Any]:
    """A Messages body as Anthropic sends it, thinking block and cache usage included."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "thinking", "thinking": "e4 opens lines", "signature": "EqQBCgIYAh"},
            {"type": "text", "text": '{"move": '},
            {"type": "text", "text": '"e4"}'},
        ],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 21,
            "cache_creation_input_tokens": 188,
            "cache_read_input_tokens": 1800,
            "output_tokens": 393,
            "service_tier": "standard",
        },
    }


@respx.mock
async def test_request_has_key_version_top_level_system_and_max_tokens(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    route = respx.post(URL).respond(json=reply())
    request = CompletionRequest(
        prompt="your move",
        system="you play hex",
        max_tokens=300,
        temperature=0.5,
        seed=3,
        json_object=True,
    )
    await pool.client(SPEC).complete(request, deadline=deadline(2))
    sent = route.calls.last.request
    assert sent.method == "POST"
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    # No seed and no JSON mode in this protocol: neither is sent.
    assert json.loads(sent.content) == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 300,
        "system": "you play hex",
        "messages": [{"role": "user", "content": "your move"}],
        "temperature": 0.5,
    }


@respx.mock
async def test_reply_text_usage_and_ids(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    respx.post(URL).respond(json=reply(), headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"})
    completion = await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(2))
    assert completion.text == '{"move": "e4"}'
    assert completion.usage == Usage(
        input_uncached=21, cache_read=1800, cache_write=188, output=393, reasoning=None
    )
    assert completion.raw_usage is not None
    assert completion.raw_usage["service_tier"] == "standard"
    assert completion.request_id == "req_011CSHoEeqs5C35K2UUqR7Fy"
    assert completion.model == "claude-sonnet-4-5-20250929"


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "refusal"),
        ("tool_use", "stop"),  # the forced tool of a schema request: its input is the reply
        ("pause_turn", "unknown"),
        ("brand_new_reason", "unknown"),
        (None, "unknown"),
    ],
)
def test_stop_reasons_map_and_unknown_never_becomes_stop(stop: str | None, expected: str) -> None:
    completion = wire.parse_response(SPEC, 200, {}, json.dumps(reply(stop)).encode())
    assert completion.stop_reason == expected
    assert completion.raw_stop_reason == stop


def test_request_id_falls_back_to_the_message_id() -> None:
    completion = wire.parse_response(SPEC, 200, {}, json.dumps(reply()).encode())
    assert completion.request_id == "msg_01XFDUDYJgAACzvnptvVoYEL"


@respx.mock
async def test_overloaded_error_body_is_quoted(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    respx.post(URL).respond(529, json=error)
    with pytest.raises(HTTPStatusError) as caught:
        await pool.client(SPEC).complete(CompletionRequest("go", 50), deadline=deadline(2))
    assert caught.value.status == 529
    assert "overloaded_error" in caught.value.body_excerpt
    assert len(caught.value.attempts) == 4  # transient: retried up to the policy's bound
