"""A policy's own request fields, merged per protocol; reasoning kept apart from the reply."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx
from pydantic import ValidationError

from providers import (
    CompletionRequest,
    EndpointSettings,
    Providers,
    ProviderSpec,
    TransportError,
    anthropic,
    gemini,
    openai,
)
from providers.spec import owned_param
from providers.wire import deep_merge, split_think

pytestmark = pytest.mark.anyio

REQUEST = CompletionRequest(prompt="user part", system="stable part", max_tokens=64)


def test_openai_params_are_merged_into_the_body() -> None:
    spec = ProviderSpec(
        protocol="openai", model="o4-mini", base_url="https://openrouter.ai/api/v1",
        params={"reasoning_effort": "high", "top_p": 0.9, "provider": {"order": ["groq"]}},
    )  # fmt: skip
    body = openai.build_request(spec, REQUEST).json
    assert body["reasoning_effort"] == "high"
    assert body["top_p"] == 0.9
    assert body["provider"] == {"order": ["groq"]}
    assert body["messages"] == [
        {"role": "system", "content": "stable part"},
        {"role": "user", "content": "user part"},
    ]
    assert body["max_tokens"] == 64


def test_anthropic_thinking_and_the_cached_system_message() -> None:
    spec = ProviderSpec(
        protocol="anthropic", model="claude-sonnet-4-5", prompt_cache=True,
        params={"thinking": {"type": "enabled", "budget_tokens": 2048}},
    )  # fmt: skip
    body = anthropic.build_request(spec, REQUEST).json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["system"] == [
        {"type": "text", "text": "stable part", "cache_control": {"type": "ephemeral"}}
    ]
    plain = anthropic.build_request(spec.model_copy(update={"prompt_cache": False}), REQUEST)
    assert plain.json["system"] == "stable part"


def test_gemini_nested_params_join_the_generation_config() -> None:
    spec = ProviderSpec(
        protocol="gemini", model="gemini-2.5-flash",
        params={"generationConfig": {"thinkingConfig": {"thinkingBudget": 512}, "topK": 8}},
    )  # fmt: skip
    body = gemini.build_request(spec, REQUEST).json
    # merged into the arena's own generationConfig, which keeps its token cap
    assert body["generationConfig"] == {
        "maxOutputTokens": 64, "thinkingConfig": {"thinkingBudget": 512}, "topK": 8,
    }  # fmt: skip
    assert body["systemInstruction"] == {"parts": [{"text": "stable part"}]}


@pytest.mark.parametrize(
    ("protocol", "params", "path", "use"),
    [
        ("openai", {"max_completion_tokens": 9}, "max_completion_tokens", "`max_tokens`"),
        ("openai", {"response_format": {"type": "text"}}, "response_format", "`decoding`"),
        ("anthropic", {"tool_choice": {"type": "any"}}, "tool_choice", "`decoding`"),
        ("anthropic", {"tools": []}, "tools", "decoding"),
        ("gemini", {"generationConfig": {"responseSchema": {}}}, "generationConfig.responseSchema", "`decoding`"),
        ("openai", {"stream": True}, "stream", "leave it out: the arena reads whole replies"),
        ("anthropic", {"system": "x"}, "system", 'layout = "chat"'),
        ("anthropic", {"max_tokens": 9}, "max_tokens", "`max_tokens`"),
        ("gemini", {"generationConfig": {"temperature": 1}}, "generationConfig.temperature",
         "`temperature`"),
        ("gemini", {"generationConfig": {"maxOutputTokens": 9}},
         "generationConfig.maxOutputTokens", "`max_tokens`"),
    ],
)  # fmt: skip
def test_a_field_the_arena_sets_is_refused_naming_the_one_to_use(
    protocol: Any, params: dict[str, Any], path: str, use: str
) -> None:
    owned = owned_param(protocol, params)
    assert owned is not None
    assert owned[0] == path
    assert use in owned[1]
    wording = f"params.{path} is a field the arena sets itself"  # one check, one wording
    with pytest.raises(ValidationError, match=wording):
        ProviderSpec(protocol=protocol, model="m", params=params)
    with pytest.raises(ValidationError, match=wording):
        EndpointSettings(provider=protocol, model="m", params=params)


def test_fields_of_the_same_name_elsewhere_are_not_owned() -> None:
    assert owned_param("gemini", {"temperature": 1}) is None  # not Gemini's own spelling
    assert owned_param("openai", {"provider": {"max_tokens": 5}}) is None


def test_deep_merge_keeps_the_body_and_merges_tables_key_by_key() -> None:
    body = {"a": {"b": 1, "c": 2}, "d": 3}
    merged = deep_merge(body, {"a": {"c": 20, "e": {"f": 1}}, "g": [1]})
    assert merged == {"a": {"b": 1, "c": 20, "e": {"f": 1}}, "d": 3, "g": [1]}
    assert body == {"a": {"b": 1, "c": 2}, "d": 3}  # not changed in place


@pytest.mark.parametrize(
    ("text", "reasoning", "reply"),
    [
        ('<think>\nweigh d4\n</think>\n{"move": "e4"}', "weigh d4", '{"move": "e4"}'),
        ('  <think>a</think>{"move": "e4"}', "a", '{"move": "e4"}'),
        ("<think>cut off while thinking", "cut off while thinking", ""),
        ('{"move": "e4"} <think>late</think>', None, '{"move": "e4"} <think>late</think>'),
        ('{"move": "e4"}', None, '{"move": "e4"}'),
    ],
)
def test_a_leading_think_block_is_reasoning(text: str, reasoning: str | None, reply: str) -> None:
    assert split_think(text) == (reasoning, reply)


def _openai_body(message: dict[str, Any]) -> bytes:
    return json.dumps({
        "id": "c1", "model": "qwen3", "choices": [
            {"index": 0, "finish_reason": "stop",
             "message": {"role": "assistant", **message}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 30,
                  "completion_tokens_details": {"reasoning_tokens": 20}},
    }).encode()  # fmt: skip


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_openai_compatible_reasoning_fields(field: str) -> None:
    spec = ProviderSpec(protocol="openai", model="qwen3", base_url="http://127.0.0.1:1/v1")
    body = _openai_body({"content": '{"move": "c3"}', field: 'maybe {"move": "d4"}'})
    completion = openai.parse_response(spec, 200, {}, body)
    assert completion.text == '{"move": "c3"}'
    assert completion.reasoning == 'maybe {"move": "d4"}'
    assert completion.usage.reasoning == 20


def test_openai_inline_think_is_split_off() -> None:
    spec = ProviderSpec(protocol="openai", model="qwen3", base_url="http://127.0.0.1:1/v1")
    body = _openai_body({"content": '<think>d4?</think>\n{"move": "c3"}'})
    completion = openai.parse_response(spec, 200, {}, body)
    assert (completion.text, completion.reasoning) == ('{"move": "c3"}', "d4?")


def test_anthropic_thinking_blocks_are_reasoning() -> None:
    spec = ProviderSpec(protocol="anthropic", model="claude")
    body = json.dumps({
        "id": "msg_1", "model": "claude", "stop_reason": "end_turn",
        "content": [
            {"type": "thinking", "thinking": "first", "signature": "s"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": '{"move": "a1"}'},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 9},
    }).encode()  # fmt: skip
    completion = anthropic.parse_response(spec, 200, {}, body)
    assert completion.text == '{"move": "a1"}'
    assert completion.reasoning == "first\n\n[redacted thinking]"


def test_gemini_thought_parts_are_reasoning() -> None:
    spec = ProviderSpec(protocol="gemini", model="gemini-2.5-flash")
    body = json.dumps({
        "candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [
            {"text": "weighing", "thought": True}, {"text": '{"move": "b2"}'}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 4,
                          "thoughtsTokenCount": 11},
    }).encode()  # fmt: skip
    completion = gemini.parse_response(spec, 200, {}, body)
    assert completion.text == '{"move": "b2"}'
    assert completion.reasoning == "weighing"
    assert completion.usage.reasoning == 11
    assert completion.usage.output == 15


async def test_the_params_are_what_goes_over_the_wire(
    pool: Providers, deadline: Callable[[float], float]
) -> None:
    spec = ProviderSpec(
        protocol="openai", model="m", base_url="http://mock.test/v1",
        params={"reasoning_effort": "low"},
    )  # fmt: skip
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post("http://mock.test/v1/chat/completions").mock(
            return_value=httpx.Response(200, content=_openai_body({"content": "x"}))
        )
        await pool.client(spec).complete(REQUEST, deadline=deadline(5))
    sent = json.loads(route.calls.last.request.content)
    assert sent["reasoning_effort"] == "low"
    assert sent["model"] == "m"


@pytest.mark.parametrize(("fail_over", "calls"), [(False, 4), (True, 1)])
async def test_a_request_another_replica_can_take_is_not_retried_when_refused(
    pool: Providers, deadline: Callable[[float], float], fail_over: bool, calls: int
) -> None:
    spec = ProviderSpec(protocol="openai", model="m", base_url="http://replica.test/v1")
    request = CompletionRequest(prompt="p", max_tokens=8, fail_over=fail_over)
    with respx.mock() as mock:
        route = mock.post("http://replica.test/v1/chat/completions").mock(
            side_effect=httpx.ConnectError("refused")
        )
        with pytest.raises(TransportError):
            await pool.client(spec).complete(request, deadline=deadline(5))
    assert route.call_count == calls
