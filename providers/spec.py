"""Which endpoint, model and key a provider client talks to, and what its tokens cost."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from providers.completion import Usage
from providers.extras import owned_param

__all__ = [
    "DEFAULT_BASE_URLS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "PROTOCOLS",
    "Price",
    "ProviderSpec",
    "WireProtocolName",
]

WireProtocolName = Literal["openai", "anthropic", "gemini"]
"""The wire protocols the arena speaks."""

PROTOCOLS: tuple[WireProtocolName, ...] = ("openai", "anthropic", "gemini")
"""Every wire protocol name."""

DEFAULT_BASE_URLS: dict[WireProtocolName, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
"""Where each protocol's vendor serves it when no base_url is given."""

_REDACTED = "[redacted]"


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
    (`extras.deep_merge`); the arena's own fields are not among them (`extras.owned_param`)."""
    prompt_cache: bool = False
    """Anthropic: mark the system message for the prompt cache (`cache_control`)."""

    def __hash__(self) -> int:
        # A frozen model hashes its fields; `params` is a dict, hashed as its canonical JSON.
        fields = {k: v for k, v in self.__dict__.items() if k != "params"}
        return hash((tuple(fields.items()), json.dumps(self.params, sort_keys=True)))

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

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the API key replaced."""
        key = self.reveal_key()
        return text.replace(key, _REDACTED) if key else text

    def cost_usd(self, usage: Usage) -> float | None:
        """The cost of `usage` in USD, or None without a price table or token counts."""
        return None if self.price is None else self.price.cost_usd(usage)
