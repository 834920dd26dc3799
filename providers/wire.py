"""What a wire protocol module provides, and what the three share: building a body
(`deep_merge` of a policy's `params`), reading one (JSON, text, token counts), and keeping
a reply's reasoning apart from it (`split_think`).

A protocol module (`providers.openai`, `providers.anthropic`,
`providers.gemini`) is pure: it turns our request into (url, headers, json)
and a response body into a `Completion`, and knows nothing about retries,
pools or clocks. The module itself satisfies `WireProtocol`.

`params` is merged into the wire body as the protocol spells it, nested tables
into nested objects (Anthropic `thinking = {type = "enabled", budget_tokens =
2048}`, Gemini `generationConfig.thinkingConfig`, OpenAI `reasoning_effort`,
OpenRouter `provider`). Reasoning a model returns apart from its reply (a
reasoning field, thinking blocks or thought parts) and a leading inline
`<think>...</think>` block (Qwen3, DeepSeek-R1 served by Ollama or llama.cpp)
are separated from the reply text: the reply alone is read for the move.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from providers.completion import Completion, CompletionRequest
from providers.errors import InvalidResponse
from providers.spec import ProviderSpec

__all__ = [
    "EXCERPT_CHARS",
    "ProbeRequest",
    "WireProtocol",
    "WireRequest",
    "as_object",
    "as_text",
    "decode_json",
    "decode_object",
    "deep_merge",
    "excerpt",
    "joined_text",
    "shape_error",
    "split_think",
    "token_count",
    "valid_json",
    "valid_text",
]

EXCERPT_CHARS = 500
"""How much of a response body an error message quotes."""


class WireRequest(NamedTuple):
    """One HTTP POST, ready to send."""

    url: str
    headers: dict[str, str]
    json: dict[str, Any]


class ProbeRequest(NamedTuple):
    """One GET that costs nothing: the protocol's models call."""

    url: str
    headers: dict[str, str]
    lists_models: bool
    """True: the answer lists the endpoint's models (OpenAI-compatible); False: it names
    `spec.model` alone (Anthropic, Gemini), and a 404 in the protocol's own error shape means
    the model is unknown (a bare 404 is a route the endpoint has not)."""


class WireProtocol(Protocol):
    """The two pure functions (and one hint reader) each protocol module defines."""

    def probe_request(self, spec: ProviderSpec) -> ProbeRequest:
        """The free call that tells whether the endpoint is there and takes the key."""
        ...

    def build_request(self, spec: ProviderSpec, request: CompletionRequest) -> WireRequest:
        """The POST that asks `spec`'s model for `request`."""
        ...

    def parse_response(
        self, spec: ProviderSpec, status: int, headers: Mapping[str, str], body: bytes
    ) -> Completion:
        """The completion in a 2xx response; raises `InvalidResponse` on any other shape."""
        ...

    def retry_after_from_body(self, body: bytes) -> float | None:
        """A retry delay the protocol puts in its error bodies, in seconds, if any."""
        ...


def valid_text(text: str) -> str:
    r"""`text` as valid Unicode: a lone surrogate (what a JSON `\ud800` escape decodes to,
    which no encoder will write) becomes U+FFFD. Everything stored can then be serialised."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def valid_json(value: Any) -> Any:
    """A decoded JSON value with every string in it (keys too) made `valid_text`."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_json(item) for item in value]
    if isinstance(value, dict):
        return {valid_text(key): valid_json(item) for key, item in value.items()}
    return value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""What a lone surrogate in decoded JSON can only come from: a `\\ud800`-`\\udfff` escape."""
_FEW_BRACKETS = 64
"""A body with fewer opening brackets than this cannot nest deep enough to trouble a walk."""


def decode_json(body: bytes) -> Any:
    """`body` as JSON, undecodable bytes replaced and the strings made valid; ValueError
    when it is not JSON at all, or nests too deep to read."""
    try:
        value = json.loads(body.decode("utf-8", errors="replace"))
        # Undecodable bytes became U+FFFD above, so only an escape can make a surrogate. The
        # walk also refuses what nests too deep for the recursion that later reads the value,
        # so it is skipped only for a body that has no such escape and few brackets.
        if _SURROGATE_ESCAPE.search(body) or body.count(b"{") + body.count(b"[") >= _FEW_BRACKETS:
            return valid_json(value)
        return value
    except RecursionError:
        raise ValueError("the JSON nests too deep to read") from None


def excerpt(spec: ProviderSpec, body: bytes) -> str:
    """The start of `body` as text, with `spec`'s key redacted, for error messages."""
    text = body[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    return spec.redact(text)[:EXCERPT_CHARS]


def decode_object(spec: ProviderSpec, status: int, body: bytes) -> dict[str, Any]:
    """`body` as a JSON object, or `InvalidResponse` quoting what came instead."""
    try:
        value = decode_json(body)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise InvalidResponse(
            f"{spec.label} answered {status} with a body that is not a JSON object: "
            f"{excerpt(spec, body)!r}; check that base_url points at a {spec.protocol} endpoint"
        )
    return value


def token_count(value: object) -> int | None:
    """`value` if it is a token count, else None (absent, null or malformed)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def as_object(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (absent or malformed)."""
    return value if isinstance(value, dict) else {}


def as_text(value: object) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def joined_text(parts: object, keep: Callable[[dict[str, Any]], bool] = lambda _: True) -> str:
    """The `text` of every part in the list `parts` that `keep` accepts, joined."""
    if not isinstance(parts, list):
        return ""
    return "".join(
        part["text"]
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("text"), str) and keep(part)
    )


def shape_error(spec: ProviderSpec, status: int, body: bytes, missing: str) -> InvalidResponse:
    """The error for a JSON body that lacks `missing`."""
    return InvalidResponse(
        f"{spec.label} answered {status} without {missing}: {excerpt(spec, body)!r}"
    )


def deep_merge(body: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with `params` merged in: a table into an object of the same key, key by key;
    anything else replaces the value (`owned_param` keeps the arena's own keys out)."""
    merged = dict(body)
    for key, value in params.items():
        current = merged.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            merged[key] = deep_merge(current, value)
        elif isinstance(value, Mapping):
            merged[key] = deep_merge({}, value)
        else:
            merged[key] = value
    return merged


_THINK = re.compile(r"\A\s*<think>(.*?)(?:</think>|\Z)", re.DOTALL)


def split_think(text: str) -> tuple[str | None, str]:
    """(reasoning, reply) of a reply that begins with an inline `<think>` block; a block
    never closed (the reply cut off while thinking) is all reasoning. Without one:
    (None, text)."""
    match = _THINK.match(text)
    if match is None:
        return None, text
    return match.group(1).strip(), text[match.end() :].lstrip()
