"""Decoding as a condition: the schema each protocol is sent, and what comes back."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import games
import providers
from arena.config import ConfigError, parse_config
from arena.config.settings import ASKED_AS
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.mock_llm import build_app, serving
from arena.play.protocol import Question
from arena.play.schema import ENUM_CAPS, EnumCap, reply_schema
from arena.record.replay import load_replay
from arena.seats.llm import LlmSeat
from providers import anthropic, gemini, openai

pytestmark = pytest.mark.anyio

LEGAL = ("a", "b", "c", "d", "e", "f", "g")


def _request(
    style: providers.SchemaStyle = "json_schema", key: str = "move"
) -> providers.CompletionRequest:
    body, _ = reply_schema(key, LEGAL, protocol="openai")
    return providers.CompletionRequest(
        prompt="p", max_tokens=64, schema=providers.ReplySchema(key, body, style)
    )


def test_an_enum_of_the_legal_moves_as_listed_in_strict_form() -> None:
    schema, kind = reply_schema("move", LEGAL, protocol="openai")
    assert kind == "schema-enum"
    assert schema["properties"]["move"] == {"type": "string", "enum": list(LEGAL)}
    assert schema["properties"]["say"] == {"type": ["string", "null"]}
    assert schema["required"] == ["move", "say", "notes"]
    assert schema["additionalProperties"] is False


def test_the_shape_only_above_the_cap_and_for_structured_replies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ENUM_CAPS, "openai", EnumCap(5, 15_000))
    schema, kind = reply_schema("move", LEGAL, protocol="openai")
    assert (kind, schema["properties"]["move"]) == ("schema-shape", {"type": "string"})
    assert reply_schema("move", (), protocol="openai")[1] == "schema-shape"  # not listed
    orders, kind = reply_schema("orders", (), protocol="openai")
    assert kind == "schema-shape"
    item = orders["properties"]["orders"]["items"]
    assert item["required"] == ["squad", "do", "enemy", "to"]
    assert item["additionalProperties"] is False
    assert reply_schema("setup", (), protocol="anthropic")[0]["properties"]["setup"] == {
        "type": "string"
    }
    # A long enum of OpenAI's: past 250 values, at most 15,000 characters in all.
    long = tuple(f"m{n:05d}-{'x' * 60}" for n in range(300))
    assert EnumCap(1000, 15_000, long_from=250).fits(long) is False
    assert EnumCap(1000, 15_000, long_from=250).fits(long[:250]) is True


def test_openai_compatible_forms() -> None:
    spec = providers.ProviderSpec(protocol="openai", model="m", base_url="http://x/v1")
    body = openai.build_request(spec, _request()).json
    form = body["response_format"]
    assert form["type"] == "json_schema"
    assert form["json_schema"]["name"] == "move"
    assert form["json_schema"]["strict"] is True
    assert form["json_schema"]["schema"]["properties"]["move"]["enum"] == list(LEGAL)
    loose = openai.build_request(spec, _request("json_object")).json["response_format"]
    assert loose["type"] == "json_object"
    assert loose["schema"]["properties"]["move"]["enum"] == list(LEGAL)


def test_anthropic_forces_a_tool_and_its_input_is_the_reply() -> None:
    spec = providers.ProviderSpec(protocol="anthropic", model="m", base_url="http://x")
    body = anthropic.build_request(spec, _request()).json
    assert body["tool_choice"] == {"type": "tool", "name": "move"}
    (tool,) = body["tools"]
    assert tool["name"] == "move"
    assert tool["input_schema"]["properties"]["move"]["enum"] == list(LEGAL)


async def test_anthropic_reads_the_forced_tools_input_and_ignores_an_unforced_one() -> None:
    spec = providers.ProviderSpec(protocol="anthropic", model="m", base_url="http://x", api_key="k")
    answer = {
        "content": [{"type": "tool_use", "id": "t", "name": "move", "input": {"move": "d", "say": None, "notes": None}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2},
    }  # fmt: skip
    with respx.mock(assert_all_called=False) as router:
        router.post("http://x/v1/messages").mock(return_value=httpx.Response(200, json=answer))
        async with providers.Providers(transport=httpx.AsyncHTTPTransport()) as pool:
            client = pool.client(spec)
            forced = await client.complete(_request(), deadline=_later())
            free = await client.complete(
                providers.CompletionRequest(prompt="p", max_tokens=9), deadline=_later()
            )
    assert json.loads(forced.text) == {"move": "d", "say": None, "notes": None}
    assert forced.stop_reason == "stop"
    assert free.text == ""  # a tool block the request did not force is no reply


def _later() -> float:
    import anyio

    return anyio.current_time() + 10


def test_gemini_response_schema_in_its_own_dialect() -> None:
    spec = providers.ProviderSpec(protocol="gemini", model="m", base_url="http://x")
    config = gemini.build_request(spec, _request()).json["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    assert schema["type"] == "OBJECT"
    assert schema["properties"]["move"] == {"type": "STRING", "enum": list(LEGAL)}
    assert schema["properties"]["say"] == {"type": "STRING", "nullable": True}
    assert schema["propertyOrdering"] == ["move", "say", "notes"]
    assert "additionalProperties" not in schema


def _question() -> Question:
    game = games.load("connect-four")
    state = game.initial(1, game=1)
    return Question("LEGAL MOVES: a, b", "move", 1, game, state, 0, LEGAL)


async def test_a_400_to_the_enum_is_asked_once_more_with_the_shape_only() -> None:
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if "enum" in body["response_format"]["json_schema"]["schema"]["properties"]["move"]:
            return httpx.Response(400, json={"error": {"message": "too many enum values"}})
        reply = json.dumps({"move": "d", "say": None, "notes": None})
        return httpx.Response(
            200, json={"choices": [{"message": {"content": reply}, "finish_reason": "stop"}]}
        )

    policy = parse_config({
        "run": {"name": "t", "games": ["connect-four"]},
        "policies": {"m": {"kind": "llm", "provider": "openai", "model": "m", "base_url": "http://x/v1",
                           "decoding": "schema"}, "b": {"kind": "scripted"}},
    }).policies["m"]  # fmt: skip
    from arena.seats.breaker import Breakers

    breakers = Breakers(threshold=1)
    with respx.mock() as router:
        router.post("http://x/v1/chat/completions").mock(side_effect=answer)
        async with providers.Providers(transport=httpx.AsyncHTTPTransport()) as pool:
            spec = policy.specs({})[0]  # type: ignore[union-attr]
            circuit = breakers.circuit(spec)
            seat = LlmSeat(pool.client(spec), policy, circuit=circuit)  # type: ignore[arg-type]
            got = await seat.ask(_question(), deadline=_later())
    assert len(bodies) == 2
    assert got.decoding == "schema-shape/json_schema"  # the kind asked last, and its form
    assert json.loads(got.text)["move"] == "d"
    assert circuit.misconfigured is None  # the refused enum never counts against the endpoint
    assert circuit.failures == 0


def test_schema_with_anthropic_thinking_and_json_mode_with_decoding_are_refused() -> None:
    base = {"run": {"name": "t", "games": ["hex"]}, "policies": {"b": {"kind": "scripted"}}}
    thinking = {"kind": "llm", "provider": "anthropic", "model": "m", "decoding": "schema",
                "params": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}  # fmt: skip
    with pytest.raises(ConfigError, match="Anthropic refuses with thinking"):
        parse_config({**base, "policies": {**base["policies"], "m": thinking}}, keys=False)
    with pytest.raises(ConfigError) as refused:
        parse_config({**base, "policies": {**base["policies"], "m": thinking}}, keys=False)
    assert str(refused.value).endswith('remove params.thinking, or use decoding = "free"')
    both = {
        "kind": "llm",
        "provider": "openai",
        "model": "m",
        "json_mode": True,
        "decoding": "json",
    }
    with pytest.raises(ConfigError, match="json_mode = true is decoding"):
        parse_config({**base, "policies": {**base["policies"], "m": both}}, keys=False)


@pytest.mark.parametrize("asked", [{"decoding": "json"}, {"json_mode": True}])
def test_json_on_anthropic_is_refused_for_the_protocol_has_no_json_mode(
    asked: dict[str, Any],
) -> None:
    """Anthropic's request under `json` would be byte for byte the free one: a condition
    never sent is refused, not recorded as measured."""
    base = {"run": {"name": "t", "games": ["hex"]}, "policies": {"b": {"kind": "scripted"}}}
    policy = {"kind": "llm", "provider": "anthropic", "model": "m", **asked}
    with pytest.raises(ConfigError) as refused:
        parse_config({**base, "policies": {**base["policies"], "m": policy}}, keys=False)
    field = 'decoding = "json"' if "decoding" in asked else "json_mode = true"
    assert str(refused.value) == (
        f'config: policies.m: {field} on provider = "anthropic": the protocol has no JSON mode; '
        'use decoding = "schema"'
    )
    for fine in ({**policy, "provider": "gemini"}, {**policy, "provider": "openai"}):
        parse_config({**base, "policies": {**base["policies"], "m": fine}}, keys=False)


def _league(url: str, decoding: str) -> dict[str, Any]:
    return {
        "run": {"name": f"dec-{decoding}", "seed": 9, "games": ["breakthrough"], "matches": 2,
                "concurrency": 8, "breaker_failures": 1000},
        "deadlines": {"first_reply_s": 2.0, "retry_s": 2.0, "decision_s": 4.0},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            **{p: {"kind": "llm", "provider": p, "model": "m", "decoding": decoding,
                   "base_url": f"{url}/v1" if p == "openai" else url}
               for p in ("openai", "anthropic", "gemini")},
        },
    }  # fmt: skip


@pytest.mark.parametrize("decoding", ["schema", "free"])
async def test_a_mock_league_under_schema_has_no_unreadable_or_illegal_reply(
    tmp_path: Path, decoding: str
) -> None:
    app = build_app(faults="prose=0.3,illegal=0.3,schema_ignored=0.05", seed=3)
    async with serving(app) as url:
        result = await execute(plan_run(parse_config(_league(url, decoding)), tmp_path))
    assert not result.failed
    causes: Counter[str] = Counter()
    decoded: Counter[str | None] = Counter()
    for path in (tmp_path / "replays").glob("*.json"):
        for game in load_replay(path).games:
            for ply in game.plies:
                for d in ply.decisions:
                    for attempt in d.attempts:
                        causes[attempt.cause or "ok"] += 1
                        decoded[attempt.decoding] += 1
    injected = app.injected
    # The models header: the schema's request form only where a schema was asked.
    header = load_replay(next((tmp_path / "replays").glob("*.json"))).models
    assert header
    assert all(("schema_style" in m) == (decoding == "schema") for m in header.values())
    if decoding == "schema":
        assert causes["illegal"] == 0
        assert causes["unreadable"] == injected["schema_ignored"] > 0
        # Each protocol's seat records its schema's kind and the form it was sent in.
        assert set(decoded) == {
            "schema-enum/json_schema", "schema-enum/tool", "schema-enum/responseSchema",
        }  # fmt: skip
    else:
        assert causes["unreadable"] == injected["prose"]  # schema_ignored: nothing to ignore
        assert causes["illegal"] == injected["illegal"] > 0
        assert set(decoded) == {None}


def test_a_decoding_ab_pair_may_name_the_schemas_request_form_on_its_schema_side() -> None:
    """`schema_style` matters under `schema` only: free beside schema with the json_object
    form is a decoding A/B; two schema policies that differ in the form are a schema form A/B; a
    second difference (the token cap) is none."""
    from arena.results.tables import ab_differs, ab_pairs

    model = {"kind": "llm", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"}
    schema = {**model, "decoding": "schema", "schema_style": "json_object"}
    policies = {
        "free": model,
        "schema": schema,
        "schema-strict": {**schema, "schema_style": "json_schema"},
        "schema-short": {**schema, "max_tokens": 64},
    }
    config = parse_config({"run": {"name": "ab", "games": ["connect-four"]}, "policies": policies})
    assert set(ab_pairs(config)) == {
        ("free", "schema"), ("free", "schema-strict"), ("schema", "schema-strict"),
    }  # fmt: skip
    assert ab_differs(config, "free", "schema") == "decoding"
    assert ab_differs(config, "schema", "schema-strict") == "schema form"


def test_a_setting_the_protocol_never_sends_makes_no_ab_pair() -> None:
    """Anthropic's schema is always a forced tool, Gemini's a responseSchema: two such
    policies that differ only in `schema_style` send the same requests."""
    from arena.results.tables import ab_pairs, decoding_sent

    policies: dict[str, Any] = {}
    for protocol in ("anthropic", "gemini"):
        schema = {"kind": "llm", "provider": protocol, "model": "m", "decoding": "schema"}
        policies[f"{protocol}-a"] = {**schema, "schema_style": "json_schema"}
        policies[f"{protocol}-b"] = {**schema, "schema_style": "json_object"}
    config = parse_config({"run": {"name": "ab", "games": ["hex"]}, "policies": policies})
    assert ab_pairs(config) == []
    sent = {name: decoding_sent(spec) for name, spec in config.policies.items()}
    assert sent == {
        "anthropic-a": "schema/tool", "anthropic-b": "schema/tool",
        "gemini-a": "schema/responseSchema", "gemini-b": "schema/responseSchema",
    }  # fmt: skip


def test_the_ab_sentence_names_what_each_side_sends() -> None:
    from arena.results.ab import ab_sentence
    from arena.results.tables import league_tables

    model = {"kind": "llm", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"}
    strict = {**model, "decoding": "schema"}
    policies = {"strict": strict, "loose": {**strict, "schema_style": "json_object"},
                "free": model}  # fmt: skip
    config = parse_config({"run": {"name": "ab", "games": ["hex"]}, "policies": policies})
    tables = league_tables([], config, master_seed=1)
    said = {(ab["a"], ab["b"]): ab_sentence(ab) for ab in tables["ab"]}
    assert said[("strict", "loose")] == (
        "schema form A/B, strict vs loose (they differ in schema form only: schema/json_schema "
        "vs schema/json_object): strict and loose have no rated match yet; they have not met."
    )
    assert said[("strict", "free")].startswith(
        "decoding A/B, strict vs free (they differ in decoding only: schema/json_schema vs free)"
    )
    decodings = {r["policy"]: r["decoding"] for r in tables["standings"]["overall"]}
    assert decodings == {"strict": "schema/json_schema", "loose": "schema/json_object",
                         "free": "free"}  # fmt: skip


async def test_a_free_text_run_recorded_before_its_header_lost_schema_style_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run folder whose replays record `"schema_style": "json_schema"` under free text (as
    they did before) resumes with the same config, unrefused, and verifies clean."""
    import arena.league.plan as plan_module
    from arena.cli import main

    def asked_before(spec: Any) -> dict[str, Any]:  # every recorded key, whatever the decoding
        asked = spec.model_dump(mode="json", include=set(ASKED_AS))
        return {key: asked[key] for key in ASKED_AS} | {"decoding": spec.reply_decoding}

    async with serving(build_app(seed=4)) as url:
        config = _league(url, "free")
        config["run"]["matches"] = 1
        stopped = copy.deepcopy(config)
        stopped["run"]["budget_matches"] = 2  # a run setting: a resume takes it changed
        with monkeypatch.context() as patch:
            patch.setattr(plan_module, "asked_as", asked_before)
            first = await execute(plan_run(parse_config(stopped), tmp_path))
        assert not first.failed
        old = {p.name for p in (tmp_path / "replays").glob("*.json")}
        again = await execute(plan_run(parse_config(config), tmp_path))
    assert not again.failed
    headers = {p.name: load_replay(p).models for p in sorted((tmp_path / "replays").glob("*.json"))}
    assert old
    assert set(headers) > old  # the resume played the rest
    for name, models in headers.items():
        assert all(("schema_style" in m) == (name in old) for m in models.values()), name
    assert main(["verify", str(tmp_path)]) == 0
