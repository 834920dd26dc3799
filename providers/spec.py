"""Which endpoint, model and key a provider client talks to, and what its tokens cost.

`EndpointSettings` are a model endpoint's settings as a run config writes them (one URL
or several replicas, the names of the variables that hold its secrets, TLS files, params,
limits); they are checked once, where they are written, and `EndpointSettings.specs`
makes the `ProviderSpec` of each replica, the one endpoint with its key that a client
calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from providers.checks import check_header_values, check_settings, owned_param
from providers.completion import Usage

__all__ = [
    "DEFAULT_BASE_URLS",
    "DEFAULT_IDLE_EXPIRY_S",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "PROTOCOLS",
    "TRUSTS",
    "EndpointSettings",
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

_CHECKED = "settings_checked"
"""Set in the validation context of a spec made of checked `EndpointSettings`."""


class ProviderSpec(BaseModel):
    """One model behind one endpoint: everything a client needs to call it (a config's
    settings give one per replica, `EndpointSettings.specs`).

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
    client_key_password: SecretStr | None = None
    """The pass phrase of an encrypted client key (read from `client_key_password_env`):
    masked and redacted as the API key is."""
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
    def _checked(self, info: ValidationInfo) -> ProviderSpec:
        # A spec made of checked settings (`EndpointSettings.specs`) is not checked again:
        # only the secret header values, read from the environment since, are new.
        if not (info.context or {}).get(_CHECKED):
            check_settings(
                self.protocol,
                self.params,
                self.headers,
                self.secret_headers,
                self.client_cert,
                self.client_key,
            )
        check_header_values(v.get_secret_value() for v in self.secret_headers.values())
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
        """`text` with every occurrence of the API key, the secret headers and the client
        key's pass phrase replaced."""
        key = self.reveal_key()
        if key:
            text = text.replace(key, _REDACTED)
        secrets = [*self.secret_headers.values(), self.client_key_password]
        for value in (s for s in secrets if s is not None):
            secret = value.get_secret_value()
            if secret:
                text = text.replace(secret, _REDACTED)
        return text

    def cost_usd(self, usage: Usage) -> float | None:
        """The cost of `usage` in USD, or None without a price table or token counts."""
        return None if self.price is None else self.price.cost_usd(usage)


_AS_WRITTEN = (
    "model",
    "max_connections",
    "price",
    "max_response_bytes",
    "params",
    "prompt_cache",
    "headers",
    "idle_expiry_s",
)
"""The settings a replica's spec takes as they are written."""

_FILES = ("ca_bundle", "client_cert", "client_key")
"""The settings that are paths (a spec takes them as text)."""


class EndpointSettings(BaseModel):
    """A model endpoint's settings, as a run config's `llm` policy writes them (these are
    its keys); `specs` makes the spec of each replica.

    Each check runs here, once: a spec made of these settings checks only what is its own.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    provider: WireProtocolName
    """The wire protocol the endpoint speaks."""
    model: str = Field(min_length=1)
    """The model name the endpoint expects."""
    base_url: str | list[str] | None = None
    """The endpoint, or a list of replicas serving the same model: each request goes to
    the replica with the fewest in flight, and past one that fails."""
    api_key_env: str | None = None
    """The environment variable that holds the API key; None for keyless local servers."""
    max_connections: int = Field(default=16, ge=1)
    """Requests in flight at once, per replica."""
    # An empty dict as the default (pydantic copies it for each model), not
    # `default_factory=dict`: pydantic reads a factory's signature, and a builtin's is
    # parsed from its text by the tokenizer, whose patterns take a while to compile.
    params: dict[str, Any] = Field(default={})
    """Fields merged into the protocol's request body (e.g. reasoning_effort, thinking,
    generationConfig.thinkingConfig, top_p, provider); not the arena's own fields."""
    prompt_cache: bool = False
    """Anthropic, with layout = "chat": mark the stable part for the prompt cache."""
    price: Price | None = None
    """USD per million tokens: input_per_mtok, output_per_mtok, cached_input_per_mtok."""
    max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, ge=1024)
    """The most of a response body read; past it the attempt is `provider_error`."""
    ca_bundle: Path | None = None
    """A PEM file of the CA(s) that signed the endpoint's certificate (a company gateway's
    private CA), trusted beside the default trust (`[run] trust`), not instead of it."""
    client_cert: Path | None = None
    """A PEM client certificate, for an endpoint that asks for one (mutual TLS); its
    private key in the same file, or in `client_key`."""
    client_key: Path | None = None
    """The PEM private key of `client_cert`; encrypted, with `client_key_password_env`."""
    client_key_password_env: str | None = None
    """The environment variable that holds the pass phrase of an encrypted client key (in
    `client_key`, or in `client_cert`'s file): redacted from every output, as keys are. The
    arena never asks for one on the terminal."""
    headers: dict[str, str] = Field(default={})
    """Headers sent with every request (a gateway's routing or tenant headers)."""
    headers_env: dict[str, str] = Field(default={})
    """Headers whose values are secrets, each read from the environment variable named
    (`{ "api-key" = "AZURE_KEY" }`): redacted from every output, as keys are."""
    idle_expiry_s: float = Field(default=DEFAULT_IDLE_EXPIRY_S, gt=0)
    """Seconds an idle keep-alive connection is kept for the next request: shorter than
    the idle timeout of any NAT, load balancer or gateway on the way."""

    @property
    def base_urls(self) -> list[str]:
        """Every replica's URL; [""] for the protocol's default endpoint."""
        if isinstance(self.base_url, list):
            return self.base_url
        return [self.base_url or ""]

    @field_validator("base_url")
    @classmethod
    def _replicas(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            if not value:
                raise ValueError("base_url = [] names no replica: give one URL or a list of them")
            repeated = sorted({u for u in value if value.count(u) > 1})
            if repeated:
                raise ValueError(f"base_url lists {', '.join(repeated)} more than once")
        return value

    @model_validator(mode="after")
    def _checked(self) -> Self:
        check_settings(
            self.provider,
            self.params,
            self.headers,
            self.headers_env,
            self.client_cert,
            self.client_key,
        )
        if self.client_key_password_env and self.client_cert is None:
            raise ValueError(
                "client_key_password_env is the pass phrase of the client certificate's key: "
                "set client_cert (and client_key), or remove client_key_password_env"
            )
        if self.prompt_cache and self.provider != "anthropic":
            raise ValueError(
                f"prompt_cache marks Anthropic's cache_control; {self.provider} caches a "
                'repeated prefix on its own: remove prompt_cache (keep layout = "chat")'
            )
        return self

    def secret_variables(self) -> list[str]:
        """The environment variables whose values are secrets: the key's, the client key's
        pass phrase's and the secret headers'."""
        names = [self.api_key_env, self.client_key_password_env, *self.headers_env.values()]
        return [n for n in names if n]

    def located(self, folder: Path) -> Self:
        """The settings with their certificate paths read from `folder` where they are
        relative (a config's paths start at its file's folder)."""
        update = {
            key: folder / path
            for key in _FILES
            if (path := getattr(self, key)) is not None and not path.is_absolute()
        }
        return self.model_copy(update=update) if update else self

    def specs(self, environ: Mapping[str, str]) -> list[ProviderSpec]:
        """The spec of each replica (one for a single `base_url`), with the key and the
        secret headers read from `environ` by the variable names the settings give."""
        key = environ.get(self.api_key_env) if self.api_key_env else None
        phrase = environ.get(self.client_key_password_env or "")
        fields = {
            **{name: getattr(self, name) for name in _AS_WRITTEN},
            **{name: str(path) for name in _FILES if (path := getattr(self, name)) is not None},
            "protocol": self.provider,
            "api_key": SecretStr(key) if key else None,
            "client_key_password": SecretStr(phrase) if phrase else None,
            "secret_headers": {
                name: SecretStr(environ.get(env, "")) for name, env in self.headers_env.items()
            },
        }
        return [
            ProviderSpec.model_validate({**fields, "base_url": url}, context={_CHECKED: True})
            for url in self.base_urls
        ]
