"""OpenAI Chat Completions, the protocol OpenAI-compatible servers also speak.

`POST {base_url}/chat/completions` with a bearer key. The same module serves
OpenAI, vLLM, Ollama, llama.cpp server and OpenRouter: a vendor is a
`base_url` (and a key or none), not a subclass.
Reference: https://platform.openai.com/docs/api-reference/chat/create
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from providers.completion import Completion, CompletionRequest, StopReason, Usage
from providers.spec import ProviderSpec
from providers.wire import (
    ProbeRequest,
    WireRequest,
    as_object,
    as_text,
    decode_object,
    deep_merge,
    joined_text,
    shape_error,
    split_think,
    token_count,
)

__all__ = ["build_request", "parse_response", "probe_request", "retry_after_from_body"]

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "error": "error",  # OpenRouter reports upstream failures this way
}

# OpenAI's own API rejects `max_tokens` for its reasoning models, while most
# compatible servers only know `max_tokens`; the host decides, not a subclass.
_MAX_COMPLETION_TOKENS_HOSTS = frozenset({"api.openai.com"})


def build_request(spec: ProviderSpec, request: CompletionRequest) -> WireRequest:
    """The chat-completions POST asking `spec.model` for `request`."""
    messages = [{"role": "user", "content": request.prompt}]
    if request.system:
        messages.insert(0, {"role": "system", "content": request.system})
    host = urlsplit(spec.base_url).hostname
    cap = "max_completion_tokens" if host in _MAX_COMPLETION_TOKENS_HOSTS else "max_tokens"
    body: dict[str, Any] = {"model": spec.model, "messages": messages, cap: request.max_tokens}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.seed is not None:
        body["seed"] = request.seed
    if request.schema is not None and request.schema.style == "json_object":
        body["response_format"] = {"type": "json_object", "schema": dict(request.schema.schema)}
    elif request.schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema.name,
                "strict": True,
                "schema": dict(request.schema.schema),
            },
        }
    elif request.json_object:
        body["response_format"] = {"type": "json_object"}
    headers = {"accept": "application/json"}
    key = spec.reveal_key()
    if key:
        headers["authorization"] = f"Bearer {key}"
    return WireRequest(f"{spec.base_url}/chat/completions", headers, deep_merge(body, spec.params))


def probe_request(spec: ProviderSpec) -> ProbeRequest:
    """`GET {base_url}/models`: the list of what the server serves."""
    headers = {"accept": "application/json"}
    key = spec.reveal_key()
    if key:
        headers["authorization"] = f"Bearer {key}"
    return ProbeRequest(f"{spec.base_url}/models", headers, lists_models=True)


def parse_response(
    spec: ProviderSpec, status: int, headers: Mapping[str, str], body: bytes
) -> Completion:
    """The completion in a chat-completions response body."""
    data = decode_object(spec, status, body)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise shape_error(spec, status, body, "a 'choices' list")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise shape_error(spec, status, body, "choices[0].message")
    raw_stop = as_text(choice.get("finish_reason"))
    stop: StopReason = _STOP_REASONS.get(raw_stop or "", "unknown")
    if message.get("refusal"):
        stop = "refusal"
    raw_usage = data.get("usage")
    # vLLM and DeepSeek say reasoning_content, OpenRouter and Ollama reasoning.
    apart = as_text(message.get("reasoning_content")) or as_text(message.get("reasoning"))
    inline, text = split_think(_content_text(message.get("content")))
    return Completion(
        text=text,
        stop_reason=stop,
        raw_stop_reason=raw_stop,
        usage=_usage(raw_usage),
        raw_usage=raw_usage if isinstance(raw_usage, dict) else None,
        status=status,
        request_id=headers.get("x-request-id") or as_text(data.get("id")),
        model=as_text(data.get("model")),
        reasoning=_joined(apart, inline),
    )


def retry_after_from_body(body: bytes) -> float | None:
    """Chat-completions error bodies carry no retry delay; the headers do."""
    return None


def _joined(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return "\n\n".join(kept) if kept else None


def _content_text(content: object) -> str:
    # Some compatible servers send content as a list of typed parts.
    return content if isinstance(content, str) else joined_text(content)


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt = token_count(raw.get("prompt_tokens"))
    cached = token_count(as_object(raw.get("prompt_tokens_details")).get("cached_tokens"))
    reasoning = as_object(raw.get("completion_tokens_details")).get("reasoning_tokens")
    return Usage(
        # prompt_tokens includes the cached share; OpenAI does not report cache writes.
        input_uncached=None if prompt is None else max(prompt - (cached or 0), 0),
        cache_read=cached,
        output=token_count(raw.get("completion_tokens")),
        reasoning=token_count(reasoning),
    )
