"""A seat played by a model behind one of the providers' wire protocols.

This is the one place the arena meets provider errors: each is mapped to a
fallback cause (docs/rules.md#the-decision-protocol) and re-raised as
`SeatFailure`. Nothing here
catches an httpx exception; providers/ already translated them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields, replace
from functools import partial
from typing import Any

import anyio
import structlog

import providers
from arena.config import LlmPolicy
from arena.play.decisions import TextSeat
from arena.play.protocol import Answer, Question, SeatFailure
from arena.play.schema import SCHEMA_ENUM, reply_schema, schema_form
from arena.record.causes import INFRASTRUCTURE_CAUSES, Cause
from arena.record.replay import REASONING_CUT
from arena.redact import Redactor
from arena.seats.breaker import Circuit
from arena.seats.cache import ResponseCache

__all__ = ["LlmSeat", "Replica", "provider_spec", "provider_specs"]

log = structlog.get_logger("arena.seats.llm")


def provider_specs(policy: LlmPolicy) -> list[providers.ProviderSpec]:
    """The provider spec of each of a policy's replicas (one for a single `base_url`); the
    key and the secret headers come from the variables the policy names."""
    return policy.specs(os.environ)


def provider_spec(policy: LlmPolicy) -> providers.ProviderSpec:
    """The provider spec of a policy's first (or only) replica."""
    return provider_specs(policy)[0]


def _cause(error: providers.ProviderError, connected: bool) -> Cause:
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


_USAGE_FIELDS = tuple(f.name for f in fields(providers.Usage))


def _enum_refused(request: providers.CompletionRequest, error: providers.ProviderError) -> bool:
    """A 400 answering a schema request with an enum: asked again with the shape only."""
    schema = request.schema
    if schema is None or not isinstance(error, providers.HTTPStatusError) or error.status != 400:
        return False
    return "enum" in schema.schema.get("properties", {}).get(schema.name, {})


def _form_refused(request: providers.CompletionRequest, error: providers.ProviderError) -> bool:
    """A schema request (the shape only) refused as a form: a 400 or 422, or a 500 whose
    body names `response_format` (llama-cpp-python's server on the json_schema form)."""
    if request.schema is None or not isinstance(error, providers.HTTPStatusError):
        return False
    if error.status in (400, 422):
        return True
    return error.status == 500 and "response_format" in error.body_excerpt


Replica = tuple[providers.Provider, Circuit | None]
"""One endpoint serving a policy's model: its client and its circuit (None: no breaker)."""


class LlmSeat(TextSeat):
    """One seat of one game, asking one model; remembers whether it ever got through.

    Until the provider has answered once in this game, a refused connection is
    `not_connected` (the seat is asked again at its next decision); after
    that, connection errors are `transport`. With the endpoint's `circuit`, an
    open circuit fails a question at once (`not_connected`) and cuts one in
    flight (`transport`, or `not_connected` before the game's first answer; all
    the infrastructure's failures), and every answer or infrastructure failure is
    counted on it.

    A policy served by several replicas (`more`) asks the one with the fewest
    requests in flight whose circuit is closed; when it fails on the
    infrastructure's side, the next one is asked within the same attempt.

    With the run's response `cache`, a request asked before is answered from it
    (whatever the circuits say: no endpoint is needed), and a new reply is stored.
    """

    def __init__(
        self,
        client: providers.Provider,
        policy: LlmPolicy,
        redactor: Redactor | None = None,
        circuit: Circuit | None = None,
        more: Sequence[Replica] = (),
        cache: ResponseCache | None = None,
    ) -> None:
        self._replicas: list[Replica] = [(client, circuit), *more]
        self._policy = policy
        self._cache = cache
        self._redactor = redactor or Redactor()
        """The run's secrets come out of everything a provider sends, here where it enters."""
        self._connected = False

    def endpoint_down(self) -> bool:
        """Whether every replica's circuit is open."""
        return all(c is not None and c.is_open for _, c in self._replicas)

    def system_chars(self, question: Question) -> int | None:
        """The chat layout sends the prompt's stable part as the system message."""
        return question.stable if self._policy.layout == "chat" and question.stable else None

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        """Ask the model (or the cache); provider failures become `SeatFailure` with their
        cause."""
        split = self.system_chars(question)
        system, user = (
            (question.prompt[:split], question.prompt[split:]) if split else (None, question.prompt)
        )
        decoding = self._policy.reply_decoding
        schema, kind = self._schema(question, enum=True)
        request = providers.CompletionRequest(
            prompt=user,
            system=system,
            max_tokens=self._policy.max_tokens,
            temperature=self._policy.temperature,
            seed=self._policy.seed,
            json_object=decoding == "json",
            schema=schema,
        )
        try:
            answer = await self._ask_cached(request, deadline)
        except SeatFailure as failure:
            if kind != SCHEMA_ENUM or failure.report.status != 400:
                raise
            # The enum refused (too long for this server?): once more, the shape only.
            log.info("schema_enum_refused", detail=failure.detail[:200])
            schema, kind = self._schema(question, enum=False)
            answer = await self._ask_cached(replace(request, schema=schema), deadline)
        decoded = self._sent(kind) if decoding == "schema" else decoding
        return answer if decoded == "free" else answer.model_copy(update={"decoding": decoded})

    def _sent(self, kind: str | None) -> str:
        """A schema attempt's record: the schema's kind and the form it was sent in
        (`schema-enum/json_schema`, `schema-shape/tool`)."""
        policy = self._policy
        return f"{kind}/{schema_form(policy.provider, policy.schema_style)}"

    def _schema(
        self, question: Question, *, enum: bool
    ) -> tuple[providers.ReplySchema | None, str | None]:
        """The reply schema a `schema` decoding sends, and its kind (else None, None)."""
        if self._policy.reply_decoding != "schema":
            return None, None
        body, kind = reply_schema(
            question.key, question.legal, protocol=self._policy.provider, enum=enum
        )
        return providers.ReplySchema(question.key, body, self._policy.schema_style), kind

    async def _ask_cached(self, request: providers.CompletionRequest, deadline: float) -> Answer:
        ask = partial(self._ask_replicas, request, deadline)
        if self._cache is None:
            return await ask()
        return await self._cache.reply(self._policy, request, ask, deadline=deadline)

    async def _ask_replicas(self, request: providers.CompletionRequest, deadline: float) -> Answer:
        """The first replica's answer that is not an infrastructure failure."""
        up = [r for r in self._replicas if r[1] is None or not r[1].is_open]
        if not up:
            raise SeatFailure("not_connected", _DOWN)
        if len(up) > 1:
            up.sort(key=lambda r: (r[1].in_flight, r[1].asked) if r[1] is not None else (0, 0))
        for n, (client, circuit) in enumerate(up):
            fail_over = n < len(up) - 1  # the last one retries as ever
            ask = (
                request if request.fail_over == fail_over else replace(request, fail_over=fail_over)
            )
            try:
                return self._answer(await self._ask_one(client, circuit, ask, deadline))
            except SeatFailure as failure:
                last = n == len(up) - 1
                if last or failure.cause not in INFRASTRUCTURE_CAUSES:
                    raise
                if anyio.current_time() >= deadline:
                    raise
                log.info("replica_skipped", cause=failure.cause, replica=n + 1)
        raise AssertionError("unreachable: the last replica's failure is raised")

    async def _ask_one(
        self,
        client: providers.Provider,
        circuit: Circuit | None,
        request: providers.CompletionRequest,
        deadline: float,
    ) -> providers.Completion:
        """One replica's completion, counted on its circuit."""
        if circuit is None:
            return await self._complete(client, request, deadline)
        if circuit.is_open:
            raise SeatFailure("not_connected", _DOWN)
        with circuit.request() as scope:
            try:
                completion = await self._complete(client, request, deadline)
            except SeatFailure as failure:
                error = failure.__cause__
                if isinstance(error, providers.ProviderError) and _enum_refused(request, error):
                    raise  # asked again with the shape only: not the endpoint's fault
                if isinstance(error, providers.HTTPStatusError) and _form_refused(request, error):
                    circuit.refused_form(error)
                    hint = providers.advise(self._policy.provider, "schema_form")
                    raise SeatFailure(
                        failure.cause,
                        f"{failure.detail} ({hint})",
                        status=failure.report.status,
                        retries=failure.report.retries,
                    ) from error
                if isinstance(error, providers.ProviderError):
                    circuit.refused(error)
                if failure.cause in INFRASTRUCTURE_CAUSES and circuit.misconfigured is None:
                    circuit.failure(failure.detail)
                raise
        if scope.cancelled_caught:  # like a connection lost: before any answer, never made
            raise SeatFailure("transport" if self._connected else "not_connected", _CUT)
        circuit.success()
        return completion

    async def _complete(
        self, client: providers.Provider, request: providers.CompletionRequest, deadline: float
    ) -> providers.Completion:
        """The provider's completion; its failures as `SeatFailure` with their cause."""
        try:
            completion = await client.complete(request, deadline=deadline)
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
        usage = {name: getattr(completion.usage, name) for name in _USAGE_FIELDS}
        price = self._policy.price
        clean = self._redactor
        reasoning = completion.reasoning
        return Answer(
            text=clean.text(completion.text),
            reasoning=clean.text(reasoning)[:REASONING_CUT] if reasoning else None,
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

    def _attempt_json(self, attempt: providers.TransportAttempt) -> dict[str, Any]:
        return {
            "status": attempt.status,
            "error": self._redactor.value(attempt.error),
            "latency_s": round(attempt.latency_s, 6),
            "wait_s": round(attempt.wait_s, 6),
        }
