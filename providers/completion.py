"""What the arena asks a model, what comes back, and the one interface in between."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "STOP_REASONS",
    "Completion",
    "CompletionRequest",
    "Provider",
    "ReplySchema",
    "SchemaStyle",
    "StopReason",
    "TransportAttempt",
    "Usage",
]

StopReason = Literal["stop", "length", "content_filter", "refusal", "error", "unknown"]
"""Why generation ended, the same words for every protocol.

`unknown` covers a missing reason and any reason a protocol adds later: a
reason we cannot read is never reported as a clean `stop`."""

STOP_REASONS: tuple[StopReason, ...] = (
    "stop",
    "length",
    "content_filter",
    "refusal",
    "error",
    "unknown",
)
"""Every normalised stop reason."""


SchemaStyle = Literal["json_schema", "json_object"]
"""How an OpenAI-compatible server is handed a schema: OpenAI's `json_schema` form (also
vLLM, llama.cpp's llama-server, Ollama) or `json_object` with the schema beside it
(llama-cpp-python's server)."""


@dataclass(frozen=True)
class ReplySchema:
    """The JSON object a reply must be: `schema` (JSON Schema as OpenAI's strict mode takes
    it: every property required, no additional ones, a nullable as a type with `null`),
    named `name` (the reply key: a schema's name, Anthropic's forced tool)."""

    name: str
    schema: Mapping[str, Any]
    style: SchemaStyle = "json_schema"


@dataclass(frozen=True)
class CompletionRequest:
    """One prompt for one model: a system prompt and a single user turn."""

    prompt: str
    """The user message."""
    max_tokens: int
    """Output token cap; always sent (Anthropic requires it, the others honour it)."""
    system: str | None = None
    """The system prompt, if any."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default (some models refuse others)."""
    seed: int | None = None
    """Sampling seed, sent where the protocol has one (OpenAI-compatible, Gemini)."""
    json_object: bool = False
    """Ask for a JSON object reply where the protocol can enforce it."""
    schema: ReplySchema | None = None
    """Constrain the reply to this JSON object (structured outputs, a forced tool, a
    response schema); None: no schema."""
    fail_over: bool = False
    """Another endpoint can take the request (a replica): a refused connection fails at
    once instead of being retried."""

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")


@dataclass(frozen=True)
class Usage:
    """Token counts in one vocabulary for every protocol; None means the provider did not say.

    `output` counts every billed output token, reasoning included; `reasoning`
    is the part of `output` spent thinking. `input_uncached` is the input the
    provider did not report as read from or written to its cache.
    """

    input_uncached: int | None = None
    """Input tokens billed at the full rate."""
    cache_read: int | None = None
    """Input tokens served from the provider's prompt cache."""
    cache_write: int | None = None
    """Input tokens written to the provider's prompt cache."""
    output: int | None = None
    """Output tokens, reasoning included."""
    reasoning: int | None = None
    """The reasoning (thinking) share of `output`."""


@dataclass(frozen=True)
class TransportAttempt:
    """One transport attempt of a call: what came back, and the wait that followed."""

    status: int | None
    """HTTP status, or None when no response arrived."""
    error: str | None
    """Why the attempt failed (the error message), or None for the attempt that succeeded."""
    latency_s: float
    """Seconds from sending the request to its answer or failure."""
    wait_s: float = 0.0
    """Seconds slept before the next attempt (0 for the last one)."""


@dataclass(frozen=True)
class Completion:
    """A model's reply, as every protocol reports it.

    A protocol's `parse_response` fills what the response body says; the client
    then fills `latency_s`, `queued_s` and `attempts`, which only it can know.
    """

    text: str
    """The reply text (visible output only, never hidden reasoning)."""
    stop_reason: StopReason
    """Why generation ended, normalised."""
    raw_stop_reason: str | None
    """The protocol's own word for it, as sent."""
    usage: Usage
    """Normalised token counts."""
    raw_usage: Mapping[str, Any] | None
    """The usage object exactly as the provider sent it."""
    status: int
    """HTTP status of the answering response."""
    request_id: str | None
    """The provider's id for this request or response, for support tickets."""
    model: str | None = None
    """The model the provider says answered (may carry a version suffix)."""
    latency_s: float = 0.0
    """Seconds from the call (slot wait included) to the final answer."""
    queued_s: float = 0.0
    """Seconds of `latency_s` spent waiting for a connection slot."""
    attempts: tuple[TransportAttempt, ...] = field(default=())
    """Every transport attempt, the successful last one included."""
    reasoning: str | None = None
    """Reasoning returned apart from the reply (a reasoning field, thinking blocks, thought
    parts, a leading `<think>` block), never part of `text`; None when there was none."""
    tool: tuple[str, Any] | None = None
    """The first tool call of the reply (its name and input), where the protocol has them;
    the client makes it the reply's text when the request forced that tool."""


class Provider(Protocol):
    """A model endpoint the arena can ask for completions."""

    async def complete(self, request: CompletionRequest, *, deadline: float) -> Completion:
        """Ask for one completion before `deadline`.

        `deadline` is an absolute time on `anyio.current_time()`'s clock. Waiting
        for a connection slot and every transport retry happen before it; the
        call raises `providers.Timeout` when it passes, and the caller's own
        cancel scope still bounds the call. Failures raise `providers.ProviderError`.
        """
        ...
