"""Google Gemini generateContent.

`POST {base_url}/v1beta/models/{model}:generateContent` with `x-goog-api-key`
(never the `?key=` query parameter, which would put the key in URLs and
logs). Rate-limit answers carry their retry delay in the error body
(`google.rpc.RetryInfo`), not in a header.
Reference: https://ai.google.dev/api/generate-content
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from providers.completion import Completion, CompletionRequest, StopReason, Usage
from providers.spec import ProviderSpec
from providers.wire import (
    ProbeRequest,
    WireRequest,
    as_object,
    as_text,
    decode_json,
    decode_object,
    deep_merge,
    joined_text,
    shape_error,
    split_think,
    token_count,
)

__all__ = ["build_request", "parse_response", "probe_request", "retry_after_from_body"]

_STOP_REASONS: dict[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
}

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")  # protobuf Duration JSON: "37s", "0.050s"


def build_request(spec: ProviderSpec, request: CompletionRequest) -> WireRequest:
    """The generateContent POST asking `spec.model` for `request`."""
    config: dict[str, Any] = {"maxOutputTokens": request.max_tokens}
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.seed is not None:
        config["seed"] = request.seed
    if request.json_object or request.schema is not None:
        config["responseMimeType"] = "application/json"
    if request.schema is not None:
        config["responseSchema"] = gemini_schema(request.schema.schema)
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": request.prompt}]}],
        "generationConfig": config,
    }
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    headers = {"accept": "application/json"}
    key = spec.reveal_key()
    if key:
        headers["x-goog-api-key"] = key
    model = quote(spec.model.removeprefix("models/"), safe="-._~")
    url = f"{spec.base_url}/v1beta/models/{model}:generateContent"
    return WireRequest(url, headers, deep_merge(body, spec.params))


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A strict JSON Schema as Gemini's `responseSchema` takes it (its OpenAPI subset): types
    in capitals (`STRING`, `OBJECT`), a nullable type as `nullable`, the properties in `propertyOrdering`, no
    `additionalProperties` (Gemini adds none)."""
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, list):
        named = [k for k in kind if k != "null"]
        out["type"] = (named[0] if named else "string").upper()
        if "null" in kind:
            out["nullable"] = True
    elif kind is not None:
        out["type"] = str(kind).upper()
    for key in ("enum", "description", "required", "minItems", "maxItems"):
        if key in schema:
            out[key] = list(schema[key]) if isinstance(schema[key], list) else schema[key]
    if "properties" in schema:
        out["properties"] = {k: gemini_schema(v) for k, v in schema["properties"].items()}
        out["propertyOrdering"] = list(schema["properties"])
    if "items" in schema:
        out["items"] = gemini_schema(schema["items"])
    return out


def probe_request(spec: ProviderSpec) -> ProbeRequest:
    """`GET {base_url}/v1beta/models/{model}` (the name URL-encoded): a 404 whose status is
    `NOT_FOUND` means the model is unknown."""
    headers = {"accept": "application/json"}
    key = spec.reveal_key()
    if key:
        headers["x-goog-api-key"] = key
    model = quote(spec.model.removeprefix("models/"), safe="-._~")
    return ProbeRequest(f"{spec.base_url}/v1beta/models/{model}", headers, lists_models=False)


def parse_response(
    spec: ProviderSpec, status: int, headers: Mapping[str, str], body: bytes
) -> Completion:
    """The completion in a generateContent response body."""
    data = decode_object(spec, status, body)
    raw_usage = data.get("usageMetadata")
    candidates = data.get("candidates")
    blocked = as_text(as_object(data.get("promptFeedback")).get("blockReason"))
    reasoning = None
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        candidate = candidates[0]
        reasoning, text = _text(candidate)
        raw_stop = as_text(candidate.get("finishReason"))
        stop: StopReason = _STOP_REASONS.get(raw_stop or "", "unknown")
    elif blocked:  # the prompt itself was refused: no candidate at all
        text, raw_stop, stop = "", f"promptFeedback.blockReason={blocked}", "content_filter"
    else:
        raise shape_error(spec, status, body, "a 'candidates' list")
    return Completion(
        text=text,
        stop_reason=stop,
        raw_stop_reason=raw_stop,
        usage=_usage(raw_usage),
        raw_usage=raw_usage if isinstance(raw_usage, dict) else None,
        status=status,
        request_id=as_text(data.get("responseId")),
        model=as_text(data.get("modelVersion")),
        reasoning=reasoning,
    )


def retry_after_from_body(body: bytes) -> float | None:
    """The `RetryInfo.retryDelay` of a Gemini error body, in seconds, if there is one."""
    try:
        data = decode_json(body)
    except ValueError:
        return None
    details = as_object(as_object(data).get("error")).get("details")
    for detail in details if isinstance(details, list) else []:
        detail = as_object(detail)
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _text(candidate: dict[str, Any]) -> tuple[str | None, str]:
    """(reasoning, reply): parts marked `thought` are reasoning summaries, not the reply."""
    parts = as_object(candidate.get("content")).get("parts")
    thoughts = joined_text(parts, keep=lambda part: bool(part.get("thought")))
    inline, text = split_think(joined_text(parts, keep=lambda part: not part.get("thought")))
    reasoning = "\n\n".join(t for t in (thoughts, inline) if t) or None
    return reasoning, text


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt = token_count(raw.get("promptTokenCount"))
    cached = token_count(raw.get("cachedContentTokenCount"))
    answer = token_count(raw.get("candidatesTokenCount"))
    thoughts = token_count(raw.get("thoughtsTokenCount"))
    # candidatesTokenCount excludes thinking, which is billed as output too.
    output = None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0)
    return Usage(
        input_uncached=None if prompt is None else max(prompt - (cached or 0), 0),
        cache_read=cached,
        output=output,
        reasoning=thoughts,
    )
