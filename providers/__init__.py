"""LLM clients over httpx: one interface, three wire protocols.

    async with Providers() as pool:
        model = pool.client(ProviderSpec(protocol="anthropic", model="...", api_key=key))
        reply = await model.complete(
            CompletionRequest(prompt="...", max_tokens=512),
            deadline=anyio.current_time() + 30,
        )

`complete` answers a `Completion` or raises a `ProviderError` (see
`providers.errors` for the tree). Game knowledge stays out of this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from providers.advice import Problem, advise
from providers.completion import (
    STOP_REASONS,
    Completion,
    CompletionRequest,
    Provider,
    ReplySchema,
    SchemaStyle,
    StopReason,
    TransportAttempt,
    Usage,
)
from providers.errors import (
    AuthError,
    CertificateError,
    HTTPStatusError,
    InvalidResponse,
    ProviderError,
    RateLimited,
    Timeout,
    TransportError,
)
from providers.spec import (
    DEFAULT_BASE_URLS,
    DEFAULT_IDLE_EXPIRY_S,
    DEFAULT_MAX_RESPONSE_BYTES,
    PROTOCOLS,
    TRUSTS,
    EndpointSettings,
    Price,
    ProviderSpec,
    Trust,
    WireProtocolName,
)
from providers.wire import valid_json, valid_text

if TYPE_CHECKING:
    from providers.client import HTTPProvider, ProbeAnswer
    from providers.pool import Providers
    from providers.retry import RetryPolicy

_LAZY = {
    "HTTPProvider": "providers.client",
    "ProbeAnswer": "providers.client",
    "Providers": "providers.pool",
    "RetryPolicy": "providers.retry",
}
"""What is imported only when first used: the HTTP client stack (httpx, tenacity), which a
run without model seats never needs."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_BASE_URLS",
    "DEFAULT_IDLE_EXPIRY_S",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "PROTOCOLS",
    "STOP_REASONS",
    "TRUSTS",
    "AuthError",
    "CertificateError",
    "Completion",
    "CompletionRequest",
    "EndpointSettings",
    "HTTPProvider",
    "HTTPStatusError",
    "InvalidResponse",
    "Price",
    "ProbeAnswer",
    "Problem",
    "Provider",
    "ProviderError",
    "ProviderSpec",
    "Providers",
    "RateLimited",
    "ReplySchema",
    "RetryPolicy",
    "SchemaStyle",
    "StopReason",
    "Timeout",
    "TransportAttempt",
    "TransportError",
    "Trust",
    "Usage",
    "WireProtocolName",
    "advise",
    "valid_json",
    "valid_text",
]
