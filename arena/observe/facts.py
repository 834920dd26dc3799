"""What watching needs to know of a run's policies beyond its events: each model policy's
protocol, model, token limit and endpoints (the names its circuit's events give)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.config import Config

__all__ = ["PolicyFacts", "policy_facts"]


@dataclass(frozen=True, slots=True)
class PolicyFacts:
    """One policy as metrics and traces name it."""

    protocol: str
    """The wire protocol of a model policy (`openai`, `anthropic`, `gemini`), else its kind."""
    model: str | None = None
    max_tokens: int | None = None
    endpoints: tuple[str, ...] = ()
    """The endpoints of its replicas, as `endpoint_down` and `endpoint_up` name them."""
    priced: bool = False


def policy_facts(config: Config) -> dict[str, PolicyFacts]:
    """Every policy of `config`, by name."""
    from arena.config import LlmPolicy
    from arena.seats.breaker import endpoint_of

    facts: dict[str, PolicyFacts] = {}
    for name, policy in config.policies.items():
        if isinstance(policy, LlmPolicy):
            endpoints = tuple(endpoint_of(spec) for spec in policy.specs(os.environ))
            facts[name] = PolicyFacts(
                policy.provider,
                policy.model,
                policy.max_tokens,
                endpoints,
                policy.price is not None,
            )
        else:
            facts[name] = PolicyFacts(policy.kind)
    return facts
