"""Which endpoint, model and key a provider client talks to, and what its tokens cost."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from providers.completion import Usage

__all__ = [
    "DEFAULT_BASE_URLS",
    "DEFAULT_IDLE_EXPIRY_S",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "PROTOCOLS",
    "TRUSTS",
    "Price",
    "ProviderSpec",
    "Trust",
    "WireProtocolName",
    "owned_param",
]

WireProtocolName = Literal["openai", "anthropic", "gemini"]
"""The wire protocols the arena speaks."""

PROTOCOLS: tuple[WireProtocolName, ...] = ("openai", "anthropic", "gemini")
"""Every wire protocol name."""

Trust = Literal["certifi", "system"]
"""Where the default TLS trust comes from: certifi's bundle of public CAs, or the operating
system's own store (`providers.tls`)."""

TRUSTS: tuple[Trust, ...] = ("certifi", "system")
"""Every `Trust`."""

DEFAULT_BASE_URLS: dict[WireProtocolName, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
"""Where each protocol's vendor serves it when no base_url is given."""

_REDACTED = "[redacted]"

# What a policy adds to a protocol's request (`params`) is merged into the wire body as the
# protocol spells it (`wire.deep_merge`). The fields the arena itself sets are not params:
# each is refused, naming the policy field that sets it.
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


class Price(BaseModel):
    """USD per million tokens; cache prices default to the input price when unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_per_mtok: float = Field(ge=0)
    """Uncached input."""
    output_per_mtok: float = Field(ge=0)
    """Output, reasoning included."""
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    """Input read from the prompt cache."""
    cache_write_per_mtok: float | None = Field(default=None, ge=0)
    """Input written to the prompt cache (Anthropic bills it above the input price)."""

    def cost_usd(self, usage: Usage) -> float | None:
        """The cost of `usage`, or None when the provider reported no token counts at all."""
        if usage.input_uncached is None and usage.output is None:
            return None
        cached = self.cached_input_per_mtok
        written = self.cache_write_per_mtok
        total = (
            (usage.input_uncached or 0) * self.input_per_mtok
            + (usage.cache_read or 0) * (self.input_per_mtok if cached is None else cached)
            + (usage.cache_write or 0) * (self.input_per_mtok if written is None else written)
            + (usage.output or 0) * self.output_per_mtok
        )
        return total / 1_000_000


DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
"""4 MiB: far above any reply a game asks for, far below what could hurt a run."""


DEFAULT_IDLE_EXPIRY_S = 5.0
"""How long a keep-alive connection may sit idle before it is closed instead of reused:
shorter than the idle timeouts of the NATs, load balancers and gateways that drop a quiet
connection without a word."""

_HEADER_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_FRAMING_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "content-type"})
"""Headers the HTTP client writes for every request itself: a policy cannot replace them."""


class ProviderSpec(BaseModel):
    """One model behind one endpoint: everything a client needs to call it.

    The API key is a `SecretStr`: reprs, `str()` and JSON dumps show it masked,
    and `redact` scrubs it from any text a server sends back.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    protocol: WireProtocolName
    """The wire protocol the endpoint speaks."""
    model: str = Field(min_length=1)
    """The model name the endpoint expects."""
    base_url: str = ""
    """The endpoint's root; empty means the protocol's default (`DEFAULT_BASE_URLS`)."""
    api_key: SecretStr | None = None
    """The key (the arena resolves it from `api_key_env`); None for keyless local servers."""
    max_connections: int = Field(default=16, ge=1)
    """Requests in flight at once for this (protocol, base_url, key, model)."""
    price: Price | None = None
    """Token prices, for cost accounting; None when unknown."""
    max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, ge=1024)
    """The most of a response body that is read; past it the connection is closed and the
    attempt fails (an endless or huge body never fills the arena's memory)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Fields merged into every request body as the protocol spells them
    (`wire.deep_merge`); the arena's own fields are not among them (`owned_param`)."""
    prompt_cache: bool = False
    """Anthropic: mark the system message for the prompt cache (`cache_control`)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Headers added to every request (a gateway's routing or tenant headers)."""
    secret_headers: dict[str, SecretStr] = Field(default_factory=dict)
    """Headers added to every request whose values are secrets (a gateway's own key):
    masked and redacted as the API key is."""
    ca_bundle: str | None = None
    """A PEM file of CA certificates trusted for this endpoint beside the default trust."""
    client_cert: str | None = None
    """A PEM client certificate (mutual TLS); its key inside it or in `client_key`."""
    client_key: str | None = None
    """The PEM private key of `client_cert`, when it is a file of its own."""
    idle_expiry_s: float = Field(default=DEFAULT_IDLE_EXPIRY_S, gt=0)
    """Seconds an idle keep-alive connection is kept for the next request."""

    def __hash__(self) -> int:
        # A frozen model hashes its fields; the dicts are hashed as their canonical JSON.
        tables = ("params", "headers", "secret_headers")
        fields = {k: v for k, v in self.__dict__.items() if k not in tables}
        secrets = {k: v.get_secret_value() for k, v in self.secret_headers.items()}
        return hash(
            (
                tuple(fields.items()),
                json.dumps(self.params, sort_keys=True),
                json.dumps([self.headers, secrets], sort_keys=True),
            )
        )

    @model_validator(mode="after")
    def _headers_of_our_own(self) -> ProviderSpec:
        names = [*self.headers, *self.secret_headers]
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
            raise ValueError(f"header {twice[0]!r} is given twice (headers and headers_env)")
        values = [
            *self.headers.values(),
            *(v.get_secret_value() for v in self.secret_headers.values()),
        ]
        if any(c in value for value in values for c in "\r\n\0"):
            raise ValueError("a header value holds a line break or NUL: remove it")
        if self.client_key is not None and self.client_cert is None:
            raise ValueError("client_key is the key of client_cert: give client_cert too")
        return self

    @model_validator(mode="after")
    def _no_owned_params(self) -> ProviderSpec:
        owned = owned_param(self.protocol, self.params)
        if owned is not None:
            raise ValueError(f"params.{owned[0]} is set by the arena itself: {owned[1]}")
        return self

    @model_validator(mode="before")
    @classmethod
    def _default_base_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("base_url"):
            protocol = data.get("protocol")
            if protocol in DEFAULT_BASE_URLS:
                return {**data, "base_url": DEFAULT_BASE_URLS[protocol]}
        return data

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url {value!r} must start with http:// or https:// "
                "(e.g. http://127.0.0.1:8765/v1 for a local server)"
            )
        return value.rstrip("/")

    @property
    def label(self) -> str:
        """How messages name this endpoint: protocol, model and base_url, never the key."""
        return f"{self.protocol} model {self.model!r} at {self.base_url}"

    def reveal_key(self) -> str | None:
        """The API key in clear, for request headers only."""
        return None if self.api_key is None else self.api_key.get_secret_value()

    def extra_headers(self) -> dict[str, str]:
        """The policy's own headers, secret ones in clear, for requests only."""
        secret = {k: v.get_secret_value() for k, v in self.secret_headers.items()}
        return {**self.headers, **secret}

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the API key and the secret headers replaced."""
        key = self.reveal_key()
        if key:
            text = text.replace(key, _REDACTED)
        for value in self.secret_headers.values():
            secret = value.get_secret_value()
            if secret:
                text = text.replace(secret, _REDACTED)
        return text

    def cost_usd(self, usage: Usage) -> float | None:
        """The cost of `usage` in USD, or None without a price table or token counts."""
        return None if self.price is None else self.price.cost_usd(usage)
