"""OpenTelemetry traces of a run, exported over OTLP/HTTP (docs/ops.md#traces).

`RunTraces` is fed the run's events (`arena.logs.observing`) and keeps, per
episode, when each decision of a seat asked a prompt and each of its requests
began and ended; when the writer is done with the episode (`episode_finished`)
it exports the episode's tree at once, with the times the events give: the
episode span, a `decision` span per decision, and under each a span per
request to the seat's provider, named and attributed as the GenAI semantic
conventions say. A prompt and its reply are put on a request span only with
`[run] trace_content`, read from the episode's replay (the events never carry
them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from arena.logs import observing
from arena.observe.facts import PolicyFacts, policy_facts

if TYPE_CHECKING:
    from arena.config import Config

__all__ = ["PROVIDER_NAMES", "RunTraces", "exporting_traces", "traces_url"]

PROVIDER_NAMES = {"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini"}
"""`gen_ai.provider.name` of each wire protocol (the convention's names); another seat's
protocol (the mock) is named as it is."""


@dataclass(slots=True)
class _Request:
    start: int
    attempt: int
    end: int | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class _Decision:
    start: int
    key: tuple[int, int]
    labels: dict[str, Any]
    requests: list[_Request] = field(default_factory=list)
    end: int | None = None
    how: str | None = None
    fallback: tuple[str, str | None] | None = None


@dataclass(slots=True)
class _Episode:
    start: int
    decisions: list[_Decision] = field(default_factory=list)
    open: dict[tuple[int, int], _Decision] = field(default_factory=dict)


def _ns(event: Mapping[str, Any]) -> int:
    """The event's time (its `timestamp`, UTC) in nanoseconds since the epoch."""
    stamp = str(event["timestamp"]).replace("Z", "+00:00")
    return int(datetime.fromisoformat(stamp).timestamp() * 1e9)


class RunTraces:
    """A run's episodes, decisions and requests, exported as spans by `tracer`."""

    def __init__(
        self,
        tracer: trace.Tracer,
        facts: Mapping[str, PolicyFacts],
        *,
        replays: Path | None = None,
    ) -> None:
        self.tracer = tracer
        self.facts = facts
        self.replays = replays
        """Where the episodes' replays are, to read prompts and replies (None: never)."""
        self._episodes: dict[str, _Episode] = {}
        self._handlers = {
            "episode_started": self._started,
            "decision_requested": self._requested,
            "reply_received": self._replied,
            "fallback_recorded": self._fell_back,
            "episode_finished": self._finished,
            "run_finished": self._run_finished,
        }

    def __call__(self, event: MutableMapping[str, Any]) -> None:
        """Note `event`, if it is part of a trace."""
        handle = self._handlers.get(event.get("event"))  # type: ignore[arg-type]
        if handle is not None:
            handle(event)

    def _episode(self, event: Mapping[str, Any]) -> _Episode:
        episode = str(event.get("episode"))
        found = self._episodes.get(episode)
        if found is None:
            found = self._episodes[episode] = _Episode(_ns(event))
        return found

    def _started(self, event: Mapping[str, Any]) -> None:
        self._episodes[str(event["episode"])] = _Episode(_ns(event))

    def _requested(self, event: Mapping[str, Any]) -> None:
        episode, at = self._episode(event), _ns(event)
        key = (int(event.get("game_index") or 0), int(event["seat"]))
        decision = episode.open.get(key)
        if decision is None or event.get("attempt") == 1:
            labels = {k: event.get(k) for k in ("policy", "alias", "model")}
            decision = episode.open[key] = _Decision(at, key, labels)
            episode.decisions.append(decision)
        decision.requests.append(_Request(at, int(event.get("attempt") or 1)))

    def _replied(self, event: Mapping[str, Any]) -> None:
        episode = self._episode(event)
        key = (int(event.get("game_index") or 0), int(event["seat"]))
        decision = episode.open.get(key)
        if decision is None or not decision.requests:
            return
        request, at = decision.requests[-1], _ns(event)
        request.end = at
        request.fields = dict(event)
        if event.get("cause") is None:
            decision.how = "first" if request.attempt == 1 else "retry"
            decision.end = at
            del episode.open[key]

    def _fell_back(self, event: Mapping[str, Any]) -> None:
        episode, at = self._episode(event), _ns(event)
        key = (int(event.get("game_index") or 0), int(event["seat"]))
        decision = episode.open.pop(key, None)
        if decision is None:  # no request went out (a program seat, a switched-off seat)
            labels = {k: event.get(k) for k in ("policy", "alias", "model")}
            decision = _Decision(at, key, labels)
            episode.decisions.append(decision)
        decision.how, decision.end = "fallback", at
        decision.fallback = (str(event["cause"]), event.get("side"))

    def _finished(self, event: Mapping[str, Any]) -> None:
        name = str(event["episode"])
        episode = self._episodes.pop(name, None)
        if episode is not None:
            self._export(name, episode, _ns(event), str(event.get("outcome")))

    def _run_finished(self, event: Mapping[str, Any]) -> None:
        self.flush(_ns(event))

    def flush(self, at: int) -> None:
        """Export the episodes not finished yet (the run stopped), as ended at `at`."""
        for name, episode in list(self._episodes.items()):
            self._export(name, episode, at, "unfinished")
        self._episodes.clear()

    def _export(self, name: str, episode: _Episode, end: int, outcome: str) -> None:
        content = _content(self.replays, name) if self.replays is not None else {}
        attributes = {"cog.episode": name, "cog.episode.outcome": outcome}
        top = self.tracer.start_span("episode", start_time=episode.start, attributes=attributes)
        under = trace.set_span_in_context(top)
        seen: dict[tuple[int, int], int] = {}
        for decision in episode.decisions:
            n = seen[decision.key] = seen.get(decision.key, -1) + 1
            attempts = content.get(decision.key, [])
            self._decision(decision, under, end, attempts[n] if n < len(attempts) else [])
        top.end(end_time=end)

    def _decision(
        self, decision: _Decision, under: Any, end: int, content: list[dict[str, Any]]
    ) -> None:
        labels = decision.labels
        attributes: dict[str, Any] = {
            "cog.policy": str(labels.get("policy")),
            "cog.alias": str(labels.get("alias")),
            "cog.seat": decision.key[1],
            "cog.game_index": decision.key[0],
            "cog.decision.how": decision.how or "unfinished",
        }
        if decision.fallback is not None:
            attributes["cog.fallback.cause"] = decision.fallback[0]
            attributes["cog.fallback.side"] = str(decision.fallback[1])
        span = self.tracer.start_span(
            "decision", under, start_time=decision.start, attributes=attributes
        )
        inner = trace.set_span_in_context(span)
        finished = decision.end or end
        for n, request in enumerate(decision.requests):
            said = content[n] if n < len(content) else None
            self._request(request, labels, inner, request.end or finished, said)
        span.end(end_time=finished)

    def _request(
        self,
        request: _Request,
        labels: Mapping[str, Any],
        under: Any,
        end: int,
        said: Mapping[str, Any] | None,
    ) -> None:
        policy = str(labels.get("policy"))
        fact = self.facts.get(policy) or PolicyFacts("unknown")
        model = str(labels.get("model") or fact.model or policy)
        got = request.fields
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDER_NAMES.get(fact.protocol, fact.protocol),
            "gen_ai.request.model": model,
            "cog.policy": policy,
            "cog.alias": str(labels.get("alias")),
            "cog.attempt": request.attempt,
        }
        if fact.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = fact.max_tokens
        if "input_tokens" in got:
            attributes["gen_ai.usage.input_tokens"] = int(got["input_tokens"])
            attributes["gen_ai.usage.output_tokens"] = int(got.get("output_tokens") or 0)
        if got.get("stop_reason"):
            attributes["gen_ai.response.finish_reasons"] = [str(got["stop_reason"])]
        if said is not None:
            attributes.update(_messages(said))
        cause = got.get("cause") if got else "unanswered"
        if cause is not None:
            attributes["error.type"] = str(cause)
        span = self.tracer.start_span(
            f"chat {model}",
            under,
            kind=SpanKind.CLIENT,
            start_time=request.start,
            attributes=attributes,
        )
        if cause is not None:
            span.set_status(Status(StatusCode.ERROR, str(cause)))
        span.end(end_time=end)


def _content(replays: Path, episode: str) -> dict[tuple[int, int], list[list[dict[str, Any]]]]:
    """Each (game index, seat)'s decisions' attempts, in order, as the episode's replay in
    `replays` keeps them (none where it cannot be read)."""
    try:
        replay = json.loads((replays / f"{episode}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found: dict[tuple[int, int], list[list[dict[str, Any]]]] = {}
    for game in replay.get("games", []):
        for ply in game.get("plies", []):
            for d in ply.get("decisions", []):
                if d.get("attempts"):
                    key = (int(game["index"]), int(d["seat"]))
                    found.setdefault(key, []).append(d["attempts"])
    return found


def _messages(attempt: Mapping[str, Any]) -> dict[str, str]:
    """A request's prompt and reply as the GenAI conventions' message attributes."""
    out: dict[str, str] = {}
    if attempt.get("prompt") is not None:
        parts = [{"type": "text", "content": attempt["prompt"]}]
        out["gen_ai.input.messages"] = json.dumps([{"role": "user", "parts": parts}])
    if attempt.get("reply") is not None:
        parts = [{"type": "text", "content": attempt["reply"]}]
        out["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": parts}])
    return out


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of a collector at `endpoint` (its base, or the URL itself)."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


@contextmanager
def exporting_traces(
    config: Config, endpoint: str, *, replays: Path | None = None
) -> Iterator[RunTraces]:
    """The run's spans exported to the collector at `endpoint` while the block runs, and
    flushed at its end; `replays`: the run's replays folder, read for prompts and replies
    when `[run] trace_content` is on."""
    resource = Resource.create({"service.name": "cog-arena", "cog.run": config.run.name})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(endpoint))))
    tracer = provider.get_tracer("arena.observe.traces")
    traces = RunTraces(
        tracer, policy_facts(config), replays=replays if config.run.trace_content else None
    )
    try:
        with observing(traces):
            yield traces
    finally:
        traces.flush(time.time_ns())
        provider.force_flush(timeout_millis=10_000)
        provider.shutdown()
