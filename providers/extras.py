"""What a policy adds to a protocol's request (`params`), and the reasoning kept apart.

`params` is merged into the wire body as the protocol spells it, nested tables
into nested objects (Anthropic `thinking = {type = "enabled", budget_tokens =
2048}`, Gemini `generationConfig.thinkingConfig`, OpenAI `reasoning_effort`,
OpenRouter `provider`). The fields the arena itself sets are not params: each
is refused, naming the policy field that sets it (`owned_param`).

Reasoning a model returns apart from its reply (a reasoning field, thinking
blocks or thought parts) and a leading inline `<think>...</think>` block
(Qwen3, DeepSeek-R1 served by Ollama or llama.cpp) are separated from the
reply text: the reply alone is read for the move.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # spec validates params with this module's rules
    from providers.spec import WireProtocolName

__all__ = ["deep_merge", "owned_param", "split_think"]

_CAP_SPELLINGS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens")

_COMMON: dict[str, str] = {
    "model": "use `model` instead",
    "stream": "leave it out: the arena reads whole replies",
    **{cap: "use `max_tokens` instead" for cap in _CAP_SPELLINGS},
}
_OWNED: dict[WireProtocolName, dict[str, str]] = {
    "openai": {
        **_COMMON,
        "messages": "use the prompt template (`prompt`; `layout` for a system message) instead",
        "temperature": "use `temperature` instead",
        "seed": "use `seed` instead",
        "response_format": "use `json_mode` instead",
    },
    "anthropic": {
        **_COMMON,
        "messages": "use the prompt template (`prompt`) instead",
        "system": 'use `layout = "chat"` instead (the template\'s stable part is the system message)',
        "temperature": "use `temperature` instead",
    },
    "gemini": {
        **_COMMON,
        "contents": "use the prompt template (`prompt`) instead",
        "systemInstruction": 'use `layout = "chat"` instead (the template\'s stable part)',
        "generationConfig.temperature": "use `temperature` instead",
        "generationConfig.seed": "use `seed` instead",
        "generationConfig.responseMimeType": "use `json_mode` instead",
        **{f"generationConfig.{cap}": "use `max_tokens` instead" for cap in _CAP_SPELLINGS},
    },
}


def owned_param(protocol: WireProtocolName, params: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first key of `params` (dotted, for a nested one) the arena sets itself in
    `protocol`'s body, and what to do instead; None when there is none."""
    owned = _OWNED[protocol]
    for path in _paths(params):
        if path in owned:
            return path, owned[path]
    return None


def _paths(params: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every key of `params`, dotted, with each nested table's own keys."""
    found = []
    for key, value in params.items():
        path = f"{prefix}{key}"
        found.append(path)
        if isinstance(value, Mapping):
            found += _paths(value, f"{path}.")
    return found


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
