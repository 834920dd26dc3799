"""The mock LLM's answers in each wire protocol's shape, and which path speaks which."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.mock_llm.answers import reasoning_text, reply_text, schema_reply

__all__ = ["RETRY_AFTER_S", "Reply", "requested_schema", "respond", "route"]

RETRY_AFTER_S = 0.05
"""The retry hint a 429 carries: small, so clients retrying it stay fast."""
_GARBAGE = b'{"id": "mock-garbage", "choices": [{"message": {"content": "e'


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def _prompt(request: dict[str, Any]) -> str:
    """The system message (if any) and the last user turn, in any of the three request
    shapes: in the chat layout the arena's first line is in the system message."""
    turns = request.get("messages") or request.get("contents")
    turns = [t for t in (turns if isinstance(turns, list) else []) if isinstance(t, dict)]
    users = [t for t in turns if t.get("role", "user") == "user"]
    systems = [t.get("content") for t in turns if t.get("role") == "system"]
    systems += [request.get("system"), (request.get("systemInstruction") or {}).get("parts")]
    user = users[-1].get("content", users[-1].get("parts")) if users else ""
    return "".join(_text(part) for part in (*systems, user))


def _text(content: object) -> str:
    """A message's text: a string, or the text of a list of parts or blocks."""
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
    reasoning: str | None = None
    """Reasoning returned apart from the reply (the protocol's own field or blocks)."""
    tool: dict[str, Any] | None = None
    """Anthropic: the forced tool's call, which is then the reply (its text empty)."""


def _openai_ok(r: Reply) -> dict[str, Any]:
    thought = _tokens(r.reasoning) if r.reasoning else 0
    out = _tokens(r.text) + thought
    message: dict[str, Any] = {"role": "assistant", "content": r.text, "refusal": None}
    if r.reasoning:
        message["reasoning_content"] = r.reasoning  # vLLM's and DeepSeek's field
    return {
        "id": f"chatcmpl-{r.id}",
        "object": "chat.completion",
        "created": 1_750_000_000,
        "model": r.model,
        "system_fingerprint": "fp_mock",
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": "length" if r.truncated else "stop",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": r.input_tokens,
            "completion_tokens": out,
            "total_tokens": r.input_tokens + out,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": thought},
        },
    }


def _anthropic_ok(r: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = [r.tool] if r.tool else [{"type": "text", "text": r.text}]
    if r.reasoning:
        content.insert(0, {"type": "thinking", "thinking": r.reasoning, "signature": "mock"})
    thought = _tokens(r.reasoning) if r.reasoning else 0
    return {
        "id": f"msg_{r.id}",
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": content,
        "stop_reason": "max_tokens" if r.truncated else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": r.input_tokens,
            "output_tokens": _tokens(r.text) + thought,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _gemini_ok(r: Reply) -> dict[str, Any]:
    out = _tokens(r.text)
    parts: list[dict[str, Any]] = [{"text": r.text}]
    usage = {"promptTokenCount": r.input_tokens, "candidatesTokenCount": out}
    if r.reasoning:
        parts.insert(0, {"text": r.reasoning, "thought": True})
        usage["thoughtsTokenCount"] = _tokens(r.reasoning)
    usage["totalTokenCount"] = r.input_tokens + out + usage.get("thoughtsTokenCount", 0)
    return {
        "candidates": [
            {
                "content": {"parts": parts, "role": "model"},
                "finishReason": "MAX_TOKENS" if r.truncated else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": usage,
        "modelVersion": r.model,
        "responseId": r.id,
    }


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
    reasoning: str = "off",
) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and headers answering `request` of `protocol` under `fault`; with
    `reasoning` "apart" the answer carries reasoning in the protocol's own field or blocks,
    with "think" as a leading <think> block in its text."""
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
    asked = requested_schema(protocol, request)
    tool: dict[str, Any] | None = None
    if asked is not None:
        answer = schema_reply(prompt, rng, fault, *asked)
        if isinstance(answer, str):
            text = answer
        elif protocol == "anthropic":  # a forced tool: the reply is the tool's input
            text, tool = (
                "",
                {
                    "type": "tool_use",
                    "id": f"toolu_{request_id}",
                    "name": asked[0],
                    "input": answer,
                },
            )
        else:
            text = json.dumps(answer)
    else:
        text = reply_text(prompt, rng, fault)
    thought = reasoning_text(prompt, rng) if reasoning != "off" else None
    if thought is not None and reasoning == "think":
        text, thought = f"<think>\n{thought}\n</think>\n{text}", None
    reply = Reply(
        id=request_id,
        model=path_model or str(request.get("model", "mock")),
        text=text,
        truncated=fault == "truncated",
        input_tokens=_tokens(prompt),
        reasoning=thought,
        tool=tool,
    )
    return 200, json.dumps(shape(reply)).encode(), headers


def requested_schema(protocol: str, request: dict[str, Any]) -> tuple[str, list[str] | None] | None:
    """The reply key a schema request constrains and its enum (None: the shape only), or
    None for a request without a schema."""
    schema: Any = None
    name: Any = None
    if protocol == "openai":
        form = request.get("response_format") or {}
        if form.get("type") == "json_schema":
            name, schema = (
                form.get("json_schema", {}).get("name"),
                form.get("json_schema", {}).get("schema"),
            )
        elif form.get("type") == "json_object" and "schema" in form:
            schema = form["schema"]
    elif protocol == "anthropic":
        choice = request.get("tool_choice") or {}
        tools = {t.get("name"): t for t in request.get("tools") or [] if isinstance(t, dict)}
        if choice.get("type") == "tool" and choice.get("name") in tools:
            name, schema = choice["name"], tools[choice["name"]].get("input_schema")
    else:
        schema = (request.get("generationConfig") or {}).get("responseSchema")
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties") or {}
    if name not in properties:
        name = next((k for k in properties if k not in ("say", "notes")), "move")
    enum = (properties.get(name) or {}).get("enum")
    return str(name), list(enum) if isinstance(enum, list) else None


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
