"""Before the first game: is every model's endpoint there, and does it take the key?

Each distinct endpoint (protocol, base URL, key, model) is asked its protocol's
free call at once: `GET {base_url}/models` of an OpenAI-compatible server,
Anthropic's model and Gemini's model get. A refused connection, an unreachable
host, a certificate that fails verification, a refused key (401/403), a
client certificate the server asks for and does not get, or a model the
endpoint does not know (a 404 in the protocol's own model error: Anthropic's
`not_found_error`, Gemini's `NOT_FOUND`) stops the run before any game, naming
the policy, the URL and the fix. Only worth a warning: an OpenAI-compatible
server whose list lacks the model (llama.cpp and others list a file name or an
alias and ignore `model`), and a bare 404, a route the endpoint has not (a
gateway such as LiteLLM's proxy serves Gemini's generateContent but no model
lookup): the first completion then tells.
`arena run --no-preflight` skips the check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import structlog

import providers
from arena.config import ConfigError, LlmPolicy
from arena.league.health import PROBE_S, read_probe
from arena.league.plan import RunPlan
from arena.seats.llm import provider_specs

if TYPE_CHECKING:
    from providers.client import ProbeAnswer

__all__ = ["preflight"]

log = structlog.get_logger("arena.league.preflight")


async def preflight(plan: RunPlan, pool: providers.Providers) -> list[str]:
    """Probe every model endpoint of the plan; raise ConfigError naming every one that is not
    usable; return (and log) the warnings."""
    endpoints: dict[providers.ProviderSpec, list[tuple[str, LlmPolicy]]] = {}
    for name, policy in plan.config.policies.items():
        if isinstance(policy, LlmPolicy):
            for spec in provider_specs(policy):  # every replica
                endpoints.setdefault(spec, []).append((name, policy))
    verdicts: dict[providers.ProviderSpec, tuple[str, str]] = {}

    async def probe(spec: providers.ProviderSpec) -> None:
        verdicts[spec] = await _verdict(spec, endpoints[spec][0][1], pool)

    async with anyio.create_task_group() as tg:
        for spec in endpoints:
            tg.start_soon(probe, spec)
    problems: set[str] = set()
    warnings: set[str] = set()
    for name, policy in plan.config.policies.items():
        if not isinstance(policy, LlmPolicy):
            continue
        replicas = provider_specs(policy)
        dead = sum(1 for spec in replicas if verdicts[spec][0])
        for spec in replicas:
            problem, warning = verdicts[spec]
            if warning:
                warnings.add(f"policies.{name}: {warning}")
            if problem and dead == len(replicas):
                problems.add(f"policies.{name}: {problem}")
            elif problem:  # another replica answers: the run goes on without this one
                warnings.add(
                    f"policies.{name}: {problem} (its other replicas play meanwhile; this "
                    "one's circuit opens when it fails, and it is probed until it answers)"
                )
    if problems:
        # The findings go to events.jsonl too (at info: the console shows the error below).
        for problem in sorted(problems):
            where, _, detail = problem.partition(": ")
            log.info("preflight_failed", policy=where.removeprefix("policies."), detail=detail)
        raise ConfigError(
            "the preflight found endpoints no game could use (no game was played):\n  "
            + "\n  ".join(sorted(problems))
            + "\n(arena run --no-preflight skips this check)"
        )
    for warning in sorted(warnings):
        log.warning("preflight_warning", detail=warning)
    return sorted(warnings)


async def _verdict(
    spec: providers.ProviderSpec, policy: LlmPolicy, pool: providers.Providers
) -> tuple[str, str]:
    """(what stops the run, what is only worth a warning) about one endpoint."""
    outcome: ProbeAnswer | providers.ProviderError
    try:
        outcome = await pool.client(spec).probe(deadline=anyio.current_time() + PROBE_S)
    except providers.ProviderError as error:
        outcome = error
    reading = read_probe(spec, policy, outcome)
    return reading.problem, reading.warning
