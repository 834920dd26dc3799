"""Anthropic Messages.

`POST {base_url}/v1/messages` with `x-api-key` and `anthropic-version:
2023-06-01`; `max_tokens` is required and the system prompt is a top-level
field, not a message. The protocol has no seed and no JSON mode.
Reference: https://docs.anthropic.com/en/api/messages
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from providers.completion import Completion, CompletionRequest, StopReason, Usage
from providers.spec import ProviderSpec
from providers.wire import (
    ProbeRequest,
    WireRequest,
    as_text,
    decode_object,
    deep_merge,
    joined_text,
    shape_error,
    split_think,
    token_count,
)

__all__ = [
    "API_VERSION",
    "build_request",
    "parse_response",
    "probe_request",
    "retry_after_from_body",
]

API_VERSION = "2023-06-01"
"""The `anthropic-version` header every request sends."""

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "tool_use": "stop",  # the forced tool of a schema request: its input is the reply
}


def build_request(spec: ProviderSpec, request: CompletionRequest) -> WireRequest:
    """The Messages POST asking `spec.model` for `request`."""
    body: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": request.max_tokens,
        "messages": [{"role": "user", "content": request.prompt}],
    }
    if request.system and spec.prompt_cache:
        block = {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        body["system"] = [block]
    elif request.system:
        body["system"] = request.system
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.schema is not None:  # the reply is the input of a tool the model must call
        name = request.schema.name
        body["tools"] = [
            {
                "name": name,
                "description": f"Give your reply: its {name}, and what you say.",
                "input_schema": dict(request.schema.schema),
            }
        ]
        body["tool_choice"] = {"type": "tool", "name": name}
    headers = {"accept": "application/json", "anthropic-version": API_VERSION}
    key = spec.reveal_key()
    if key:
        headers["x-api-key"] = key
    return WireRequest(f"{spec.base_url}/v1/messages", headers, deep_merge(body, spec.params))


def probe_request(spec: ProviderSpec) -> ProbeRequest:
    """`GET {base_url}/v1/models/{model}` (the name URL-encoded: a gateway's model group
    `team/model` is one path segment): a 404 naming the model means it is unknown."""
    headers = {"accept": "application/json", "anthropic-version": API_VERSION}
    key = spec.reveal_key()
    if key:
        headers["x-api-key"] = key
    model = quote(spec.model, safe="-._~")
    return ProbeRequest(f"{spec.base_url}/v1/models/{model}", headers, lists_models=False)


def parse_response(
    spec: ProviderSpec, status: int, headers: Mapping[str, str], body: bytes
) -> Completion:
    """The completion in a Messages response body."""
    data = decode_object(spec, status, body)
    content = data.get("content")
    if not isinstance(content, list):
        raise shape_error(spec, status, body, "a 'content' list")
    # Only text blocks are the reply; thinking blocks are its reasoning, tool blocks neither.
    inline, text = split_think(joined_text(content, keep=lambda block: block.get("type") == "text"))
    thinking = [
        as_text(block.get("thinking")) or ""
        if block.get("type") == "thinking"
        else "[redacted thinking]"
        for block in content
        if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")
    ]
    reasoning = "\n\n".join(t for t in (*thinking, inline) if t) or None
    tools = [
        (str(block.get("name")), block.get("input"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    raw_stop = as_text(data.get("stop_reason"))
    raw_usage = data.get("usage")
    return Completion(
        text=text,
        stop_reason=_STOP_REASONS.get(raw_stop or "", "unknown"),
        raw_stop_reason=raw_stop,
        usage=_usage(raw_usage),
        raw_usage=raw_usage if isinstance(raw_usage, dict) else None,
        status=status,
        request_id=headers.get("request-id") or as_text(data.get("id")),
        model=as_text(data.get("model")),
        reasoning=reasoning,
        tool=tools[0] if tools else None,
    )


def retry_after_from_body(body: bytes) -> float | None:
    """Messages error bodies carry no retry delay; the `retry-after` header does."""
    return None


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    # input_tokens already excludes the cached and cache-written shares.
    return Usage(
        input_uncached=token_count(raw.get("input_tokens")),
        cache_read=token_count(raw.get("cache_read_input_tokens")),
        cache_write=token_count(raw.get("cache_creation_input_tokens")),
        output=token_count(raw.get("output_tokens")),
    )
