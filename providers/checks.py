"""What an endpoint's settings may not hold, each refusal saying the fix.

The fields the arena itself sets in a protocol's request body are not `params`
(`owned_param`); the headers the HTTP client writes are not a policy's; a header is
given once, its name an HTTP token, its value on one line; a client key comes with its
certificate. `check_settings` runs these where settings are written
(`spec.EndpointSettings`) or a spec is made by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["check_header_values", "check_settings", "owned_param"]

# What a policy adds to a protocol's request (`params`) is merged into the wire body as the
# protocol spells it (`wire.deep_merge`). The fields the arena itself sets are not params:
# each is refused, naming the policy field that sets it.
_CAP_SPELLINGS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens")

_COMMON: dict[str, str] = {
    "model": "use `model` instead",
    "stream": "leave it out: the arena reads whole replies",
    **{cap: "use `max_tokens` instead" for cap in _CAP_SPELLINGS},
}
_OWNED: dict[str, dict[str, str]] = {
    "openai": {
        **_COMMON,
        "messages": "use the prompt template (`prompt`; `layout` for a system message) instead",
        "temperature": "use `temperature` instead",
        "seed": "use `seed` instead",
        "response_format": "use `decoding` instead",
    },
    "anthropic": {
        **_COMMON,
        "messages": "use the prompt template (`prompt`) instead",
        "system": 'use `layout = "chat"` instead (the template\'s stable part is the system message)',
        "temperature": "use `temperature` instead",
        "tools": 'leave it out: `decoding = "schema"` is the only tool the arena sends',
        "tool_choice": "use `decoding` instead",
    },
    "gemini": {
        **_COMMON,
        "contents": "use the prompt template (`prompt`) instead",
        "systemInstruction": 'use `layout = "chat"` instead (the template\'s stable part)',
        "generationConfig.temperature": "use `temperature` instead",
        "generationConfig.seed": "use `seed` instead",
        "generationConfig.responseMimeType": "use `decoding` instead",
        "generationConfig.responseSchema": "use `decoding` instead",
        **{f"generationConfig.{cap}": "use `max_tokens` instead" for cap in _CAP_SPELLINGS},
    },
}


def owned_param(protocol: str, params: Mapping[str, Any]) -> tuple[str, str] | None:
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


_HEADER_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_FRAMING_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "content-type"})
"""Headers the HTTP client writes for every request itself: a policy cannot replace them."""


def check_settings(
    protocol: str,
    params: Mapping[str, Any],
    headers: Mapping[str, str],
    secret_names: Iterable[str],
    client_cert: object,
    client_key: object,
) -> None:
    """Raise ValueError, saying the fix, at the first thing wrong with an endpoint's
    settings: a param the arena sets itself, a client key without its certificate, a header
    name that is no HTTP token, is the client's own or is given twice, a line break in a
    header value (`secret_names`: the names of the headers whose values are secrets)."""
    owned = owned_param(protocol, params)
    if owned is not None:
        raise ValueError(f"params.{owned[0]} is a field the arena sets itself: {owned[1]}")
    if client_key is not None and client_cert is None:
        raise ValueError("client_key is the private key of client_cert: set client_cert too")
    names = [*headers, *secret_names]
    for name in names:
        if not _HEADER_NAME.fullmatch(name):
            raise ValueError(f"header name {name!r} is not an HTTP token: check its spelling")
        if name.lower() in _FRAMING_HEADERS:
            raise ValueError(
                f"header {name!r} is written by the HTTP client for every request: remove it"
            )
    lowered = [n.lower() for n in names]
    twice = sorted({n for n in lowered if lowered.count(n) > 1})
    if twice:
        raise ValueError(f"header {twice[0]!r} is given twice (headers and headers_env): keep one")
    check_header_values(headers.values())


def check_header_values(values: Iterable[str]) -> None:
    """Raise ValueError if a header value holds a line break or NUL (it would end the header)."""
    if any(c in value for value in values for c in "\r\n\0"):
        raise ValueError("a header value holds a line break or NUL: remove it")
