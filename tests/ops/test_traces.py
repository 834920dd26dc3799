"""Traces of a league, received by an OTLP/HTTP receiver of the test's own (the stdlib's
http.server, the protobuf read with opentelemetry-proto's classes): episode > decision >
request, the GenAI conventions' attributes and the arena's, no prompt or reply unless
`trace_content` is on."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra: pip install -e '.[otel]'")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from arena.config import parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.logs import close_logging, configure_logging
from arena.mock_llm import build_app, serving
from arena.observe.traces import exporting_traces
from arena.record.replay import load_replay
from tests.ops.league import Tally, league_config

pytestmark = pytest.mark.anyio

FAULTS = "500=0.05,prose=0.15,illegal=0.15"


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@contextmanager
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OTLP/HTTP receiver on a free port: (its URL, every span it received so far)."""
    spans: list[dict[str, Any]] = []
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            paths.append(self.path)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        spans.append({
                            "name": span.name, "id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex() or None,
                            "trace": span.trace_id.hex(), "kind": span.kind,
                            "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                            "status": span.status.code,
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        })  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", spans
    finally:
        server.shutdown()
        server.server_close()
        assert set(paths) <= {"/v1/traces"}, paths


async def _league(out: Path, endpoint: str, content: bool) -> None:
    configure_logging(out / "events.jsonl", console=False)
    try:
        async with serving(build_app(faults=FAULTS, seed=11)) as url:
            raw = league_config(url, "traced", matches=1, trace_content=content)
            config = parse_config(raw)
            with exporting_traces(config, endpoint, replays=out / "replays"):
                await execute(plan_run(config, out))
    finally:
        close_logging()


async def test_the_span_tree_and_its_attributes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with receiver() as (endpoint, spans):
        await _league(out, endpoint, content=False)
    by_id = {s["id"]: s for s in spans}
    episodes = [s for s in spans if s["name"] == "episode"]
    decisions = [s for s in spans if s["name"] == "decision"]
    requests = [s for s in spans if s["name"].startswith("chat ")]
    assert len(spans) == len(episodes) + len(decisions) + len(requests)
    assert len(episodes) == len(list((out / "replays").glob("*.json"))) == 6
    assert all(s["parent"] is None for s in episodes)
    for d in decisions:
        assert by_id[d["parent"]]["name"] == "episode"
        assert d["trace"] == by_id[d["parent"]]["trace"]
        assert by_id[d["parent"]]["start"] <= d["start"] <= d["end"]
    for r in requests:
        parent = by_id[r["parent"]]
        assert parent["name"] == "decision"
        assert parent["start"] <= r["start"] <= r["end"] <= parent["end"]
    tally = Tally(out)
    how = Counter((d["attributes"]["cog.policy"], d["attributes"]["cog.decision.how"])
                  for d in decisions)  # fmt: skip
    assert how == tally.decisions
    fell = Counter(
        (d["attributes"]["cog.policy"], d["attributes"]["cog.fallback.cause"],
         d["attributes"]["cog.fallback.side"])
        for d in decisions if d["attributes"]["cog.decision.how"] == "fallback"
    )  # fmt: skip
    assert fell == tally.fallbacks
    assert fell, "the faults caused no fallback: the test would prove little"
    assert Counter(r["attributes"]["cog.policy"] for r in requests) == tally.requests
    # The GenAI conventions' names, per protocol; tokens as the replays count them.
    tokens: Counter[tuple[str, str]] = Counter()
    for r in requests:
        a = r["attributes"]
        assert a["gen_ai.operation.name"] == "chat"
        assert r["kind"] == 3  # SPAN_KIND_CLIENT
        policy = a["cog.policy"]
        assert (a["gen_ai.provider.name"], a["gen_ai.request.model"]) == {
            "openai": ("openai", "m1"), "claude": ("anthropic", "m2")
        }[policy]  # fmt: skip
        assert r["name"] == f"chat {a['gen_ai.request.model']}"
        assert a["gen_ai.request.max_tokens"] == 1024
        assert a["cog.alias"].startswith("cog-")
        tokens[policy, "input"] += a.get("gen_ai.usage.input_tokens", 0)
        tokens[policy, "output"] += a.get("gen_ai.usage.output_tokens", 0)
        if "error.type" in a:
            assert r["status"] == 2  # STATUS_CODE_ERROR
        else:
            assert a["gen_ai.response.finish_reasons"]
        assert "gen_ai.input.messages" not in a
        assert "gen_ai.output.messages" not in a
    assert tokens == +tally.tokens
    failed = {r["attributes"]["error.type"] for r in requests if "error.type" in r["attributes"]}
    assert failed & {"unreadable", "illegal", "http_status", "provider_error"}


async def test_trace_content_puts_the_replays_prompt_and_reply_on_the_span(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    with receiver() as (endpoint, spans):
        await _league(out, endpoint, content=True)
    requests = [s for s in spans if s["name"].startswith("chat ")]
    prompts = {r["attributes"].get("gen_ai.input.messages") for r in requests}
    assert None not in prompts
    written = set()
    for path in (out / "replays").glob("*.json"):
        for game in load_replay(path).games:
            for ply in game.plies:
                for d in ply.decisions:
                    written.update(a.reply for a in d.attempts if a.reply is not None)
    replies = {r["attributes"].get("gen_ai.output.messages") for r in requests} - {None}
    assert {json.loads(m)[0]["parts"][0]["content"] for m in replies} == written


def test_without_the_extra_an_endpoint_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from arena.config import ConfigError
    from arena.observe import watching

    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if the extra were missing
    monkeypatch.delitem(sys.modules, "arena.observe.traces", raising=False)
    config = parse_config(league_config("http://127.0.0.1:9", "no-extra"))
    with (
        pytest.raises(ConfigError, match=r"need the otel extra .*pip install -e '\.\[otel\]'"),
        watching(config, tmp_path, otlp_endpoint="http://127.0.0.1:4318"),
    ):
        pass
