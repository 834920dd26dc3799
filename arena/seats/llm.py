"""A seat played by a model behind one of the providers' wire protocols.

This is the one place the arena meets provider errors: each is mapped to a
fallback cause (docs/rules.md#the-decision-protocol) and re-raised as
`SeatFailure`. Nothing here
catches an httpx exception; providers/ already translated them.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from pydantic import SecretStr

import providers
from arena.config import LlmPolicy
from arena.play.decisions import TextSeat
from arena.play.protocol import Answer, Question, SeatFailure
from arena.record.validity import INFRASTRUCTURE_CAUSES
from arena.redact import Redactor
from arena.seats.breaker import Circuit

__all__ = ["LlmSeat", "provider_spec"]


def provider_spec(policy: LlmPolicy) -> providers.ProviderSpec:
    """The provider spec of a policy; the key comes from the variable `api_key_env` names."""
    key = os.environ.get(policy.api_key_env) if policy.api_key_env else None
    return providers.ProviderSpec(
        protocol=policy.provider,
        model=policy.model,
        base_url=policy.base_url or "",
        api_key=SecretStr(key) if key else None,
        max_connections=policy.max_connections,
        price=policy.price,
        max_response_bytes=policy.max_response_bytes,
    )


def _cause(error: providers.ProviderError, connected: bool) -> str:
    if isinstance(error, providers.Timeout):
        return "timeout"
    if isinstance(error, providers.TransportError):
        return "transport" if connected or not error.connect_refused else "not_connected"
    if isinstance(error, providers.RateLimited):
        return "rate_limited"
    if isinstance(error, providers.HTTPStatusError):
        return "http_status"
    return "provider_error"


_DOWN = (
    "not sent: the model's endpoint is down (its circuit opened after infrastructure failures "
    "in a row), and it is probed until it answers"
)
_CUT = "cut: the model's endpoint went down while this request was in flight"


class LlmSeat(TextSeat):
    """One seat of one game, asking one model; remembers whether it ever got through.

    Until the provider has answered once in this game, a refused connection is
    `not_connected` (the seat is asked again at its next decision); after
    that, connection errors are `transport`. With the endpoint's `circuit`, an
    open circuit fails a question at once (`not_connected`) and cuts one in
    flight (`transport`, or `not_connected` before the game's first answer; all
    the infrastructure's failures), and every answer or infrastructure failure is
    counted on it.
    """

    def __init__(
        self,
        client: providers.Provider,
        policy: LlmPolicy,
        redactor: Redactor | None = None,
        circuit: Circuit | None = None,
    ) -> None:
        self._client = client
        self._policy = policy
        self._redactor = redactor or Redactor()
        """The run's secrets come out of everything a provider sends, here where it enters."""
        self._connected = False
        self._circuit = circuit

    def endpoint_down(self) -> bool:
        """Whether the endpoint's circuit is open."""
        return self._circuit is not None and self._circuit.is_open

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        """Ask the model; provider failures become `SeatFailure` with their cause."""
        request = providers.CompletionRequest(
            prompt=question.prompt,
            max_tokens=self._policy.max_tokens,
            temperature=self._policy.temperature,
            json_object=self._policy.json_mode,
        )
        circuit = self._circuit
        if circuit is None:
            return self._answer(await self._complete(request, deadline))
        if circuit.is_open:
            raise SeatFailure("not_connected", _DOWN)
        with circuit.request() as scope:
            try:
                completion = await self._complete(request, deadline)
            except SeatFailure as failure:
                if failure.cause in INFRASTRUCTURE_CAUSES:
                    circuit.failure()
                raise
        if scope.cancelled_caught:  # like a connection lost: before any answer, never made
            raise SeatFailure("transport" if self._connected else "not_connected", _CUT)
        circuit.success()
        return self._answer(completion)

    async def _complete(
        self, request: providers.CompletionRequest, deadline: float
    ) -> providers.Completion:
        """The provider's completion; its failures as `SeatFailure` with their cause."""
        try:
            completion = await self._client.complete(request, deadline=deadline)
        except providers.ProviderError as error:
            answered = isinstance(error, providers.HTTPStatusError | providers.InvalidResponse)
            self._connected = self._connected or answered
            status = getattr(error, "status", None)
            retries = [self._attempt_json(a) for a in error.attempts]
            cause = _cause(error, self._connected)
            detail = self._redactor.text(str(error))
            raise SeatFailure(cause, detail, status=status, retries=retries) from error
        self._connected = True
        return completion

    def _answer(self, completion: providers.Completion) -> Answer:
        usage = asdict(completion.usage)
        price = self._policy.price
        clean = self._redactor
        return Answer(
            text=clean.text(completion.text),
            provider=self._policy.provider,
            model=clean.text(completion.model or self._policy.model),
            usage=usage,
            raw_usage=clean.value(dict(completion.raw_usage))
            if completion.raw_usage is not None
            else None,
            stop_reason=completion.stop_reason,
            raw_stop_reason=clean.value(completion.raw_stop_reason),
            request_id=clean.value(completion.request_id),
            status=completion.status,
            retries=[self._attempt_json(a) for a in completion.attempts[:-1]],
            cost_usd=price.cost_usd(completion.usage) if price is not None else None,
        )

    def _attempt_json(self, attempt: providers.Attempt) -> dict[str, Any]:
        return {
            "status": attempt.status,
            "error": self._redactor.value(attempt.error),
            "latency_s": round(attempt.latency_s, 6),
            "wait_s": round(attempt.wait_s, 6),
        }
