"""The mock LLM's answers in each wire protocol's shape, and which path speaks which."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.mock_llm.answers import reply_text

__all__ = ["RETRY_AFTER_S", "Reply", "respond", "route"]

RETRY_AFTER_S = 0.05
"""The retry hint a 429 carries: small, so clients retrying it stay fast."""
_GARBAGE = b'{"id": "mock-garbage", "choices": [{"message": {"content": "e'


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
    request_id: str,
    path_model: str | None = None,
) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and headers answering `request` of `protocol` under `fault`."""
    shape, id_header = _PROTOCOLS[protocol]
    headers = {id_header: f"req_{request_id}"} if id_header else {}
    if fault in ("429", "500", "529"):
        if fault == "429":
            headers["retry-after-ms"] = f"{RETRY_AFTER_S * 1000:g}"
            headers["retry-after"] = f"{RETRY_AFTER_S:g}"
        return int(fault), json.dumps(_error_body(protocol, int(fault))).encode(), headers
    if fault == "garbage":
        return 200, _GARBAGE, headers
    prompt = _prompt(request)
    reply = Reply(
        id=request_id,
        model=path_model or str(request.get("model", "mock")),
        text=reply_text(prompt, rng, fault),
        truncated=fault == "truncated",
        input_tokens=_tokens(prompt),
    )
    return 200, json.dumps(shape(reply)).encode(), headers


_GEMINI_PATH = re.compile(r"^/v1beta/models/([^/:]+):generateContent$")


def route(path: str) -> tuple[str, str | None] | None:
    """The protocol a request path speaks and the model it names (Gemini's is in the path),
    or None for a path the mock does not serve."""
    if path in ("/v1/chat/completions", "/chat/completions"):
        return "openai", None
    if path == "/v1/messages":
        return "anthropic", None
    match = _GEMINI_PATH.match(path)
    return ("gemini", match.group(1)) if match else None
