"""The preflight: a run whose model cannot be reached stops before any game, saying why."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import structlog

import providers.anthropic
import providers.gemini
from arena.config import ConfigError, LlmPolicy, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.seats.llm import provider_spec
from providers.advice import names_missing_model
from tests.arena.fakes import stored_games
from tests.chaos.hostile import hostile_process

pytestmark = pytest.mark.anyio


def _config(protocol: str, base_url: str, model: str = "m") -> dict[str, Any]:
    return {
        "run": {"name": "pre", "seed": 3, "games": ["connect-four"], "matches": 1},
        "deadlines": {"first_reply_s": 2, "retry_s": 1, "decision_s": 3},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "model": {"kind": "llm", "provider": protocol, "model": model, "base_url": base_url,
                      "api_key_env": "PRE_KEY"},
        },
    }  # fmt: skip


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRE_KEY", "sk-preflight-0000")


async def test_an_endpoint_down_from_the_start_stops_the_run_before_any_game(
    tmp_path: Path,
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    plan = plan_run(parse_config(_config("openai", url)), tmp_path / "out")
    with pytest.raises(ConfigError) as refused:
        await execute(plan)
    message = str(refused.value)
    assert "policies.model" in message
    assert url in message
    assert "start the server, or correct base_url" in message
    assert "sk-preflight" not in message
    assert not (tmp_path / "out" / "league.db").exists()  # refused before anything was played


@pytest.mark.parametrize(
    ("mode", "protocol", "says"),
    [
        ("unauthorized", "anthropic", "refused the key in PRE_KEY (HTTP 401)"),
        ("unknown_model", "gemini", "HTTP 404: it does not know the model 'm'"),
        ("unknown_model", "anthropic", "HTTP 404: it does not know the model 'm'"),
    ],
)
async def test_a_refused_key_or_an_unknown_model_stops_the_run(
    tmp_path: Path, mode: str, protocol: str, says: str
) -> None:
    async with hostile_process() as url:
        plan = plan_run(parse_config(_config(protocol, f"{url}/{mode}")), tmp_path / "out")
        with pytest.raises(
            ConfigError, match=r"policies\.model: .*" + says.replace("(", r"\(").replace(")", r"\)")
        ):
            await execute(plan)


async def test_a_list_without_the_model_is_a_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    async with hostile_process() as url:
        data = _config("openai", f"{url}/http10/v1", model="some-other-name")
        with structlog.testing.capture_logs() as events:
            result = await execute(plan_run(parse_config(data), tmp_path / "out"))
    assert result.played == 2
    warnings = [e for e in events if e["event"] == "preflight_warning"]
    assert len(warnings) == 1
    assert "does not list the model 'some-other-name' (it lists: m)" in warnings[0]["detail"]


@pytest.mark.parametrize("protocol", ["gemini", "anthropic"])
async def test_a_bare_404_is_a_route_the_endpoint_has_not_and_only_a_warning(
    tmp_path: Path, protocol: str
) -> None:
    """A gateway that serves completions but no model lookup answers the probe with its web
    framework's 404 (`{"detail": "Not Found"}`): the model is unchecked, the run goes on."""
    async with hostile_process() as url:
        data = _config(protocol, f"{url}/no_route", model="team/m")
        with structlog.testing.capture_logs() as events:
            result = await execute(plan_run(parse_config(data), tmp_path / "out"))
    assert result.played == 2
    assert not result.stopped
    [warning] = [e["detail"] for e in events if e["event"] == "preflight_warning"]
    assert warning == (
        f"policies.model: {url}/no_route has no model listing (HTTP 404: "
        """'{"detail": "Not Found"}'): the model name 'team/m' is unchecked, the first """
        "completion will tell"
    )


@pytest.mark.parametrize(
    ("protocol", "body", "missing"),
    [
        ("anthropic", '{"type":"error","error":{"type":"not_found_error","message":"model: m"}}',
         True),
        ("anthropic", '{"type":"error","error":{"type":"not_found_error","message":"no route"}}',
         False),
        ("anthropic", '{"detail":"Not Found"}', False),
        ("gemini", '{"error":{"code":404,"message":"models/m is not found","status":"NOT_FOUND"}}',
         True),
        ("gemini", '{"detail":"Not Found"}', False),
        ("openai", '{"error":{"message":"The model `m` does not exist","code":"model_not_found"}}',
         True),
        ("openai", "<html>404 Not Found</html>", False),
    ],
)  # fmt: skip
def test_only_the_protocols_own_model_error_says_the_model_is_unknown(
    protocol: str, body: str, missing: bool
) -> None:
    assert names_missing_model(protocol, "m", body) is missing


@pytest.mark.parametrize(
    ("protocol", "path"),
    [("anthropic", "/v1/models/team%2Fmock-1"), ("gemini", "/v1beta/models/team%2Fmock-1")],
)
def test_a_model_group_with_a_slash_is_one_segment_of_the_probe_path(
    protocol: str, path: str
) -> None:
    policy = LlmPolicy(kind="llm", provider=protocol, model="team/mock-1",
                       base_url="http://127.0.0.1:9")  # fmt: skip
    wire = {"anthropic": providers.anthropic, "gemini": providers.gemini}[protocol]
    assert wire.probe_request(provider_spec(policy)).url == f"http://127.0.0.1:9{path}"


async def test_no_preflight_skips_the_probe(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = _config("openai", f"http://127.0.0.1:{port}/v1")
    data["run"]["endpoint_down_s"] = 1.5
    result = await execute(plan_run(parse_config(data), tmp_path / "o"), check_endpoints=False)
    # The games were played, every decision of the model falling back: no-contests. Their
    # replays wait for the endpoint, which stays down, so the run stops, resumable.
    assert result.played >= 2
    assert "has been down for" in result.stopped
    assert result.interrupted
    games = [g for g in stored_games(tmp_path / "o")]
    assert games
    assert all(g.ending == "no-contest" for g in games)


def test_a_failed_preflight_writes_its_findings_and_leaves_no_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from arena.cli import main

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = _config("openai", f"http://127.0.0.1:{port}/v1")
    tables = {"run": config["run"], "deadlines": config["deadlines"]}
    tables |= {f"policies.{name}": policy for name, policy in config["policies"].items()}
    (tmp_path / "c.toml").write_text(
        "".join(
            f"[{table}]\n"
            + "".join(f"{key} = {json.dumps(value)}\n" for key, value in keys.items())
            for table, keys in tables.items()
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "c.toml"), "--out", str(out), "--no-progress"]) != 0
    assert "policies.model: nothing answers" in capsys.readouterr().err
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    (failed,) = [e for e in events if e["event"] == "preflight_failed"]
    assert failed["policy"] == "model"
    assert "nothing answers" in failed["detail"]
    assert not (out / ".lock").exists()  # the folder is free: nothing holds it


def test_a_probe_400_that_speaks_of_keys_or_a_database_says_check_api_key_env() -> None:
    """LiteLLM's proxy without a database answers a key it did not issue with 400."""
    from arena.league.health import read_probe
    from providers.client import ProbeAnswer

    policy = LlmPolicy(kind="llm", provider="openai", model="m", base_url="http://gw:4000/v1",
                       api_key_env="PRE_KEY")  # fmt: skip
    no_db = '{"error":{"message":"No connected db.","type":"no_db_connection","code":"400"}}'
    reading = read_probe(provider_spec(policy), policy, ProbeAnswer(400, None, no_db))
    assert (reading.up, reading.problem) == (True, "")
    assert reading.warning == (
        f"http://gw:4000/v1 answered the probe with HTTP 400: {no_db!r}; its body speaks of "
        "keys, auth or a database: check api_key_env (the gateway's key)"
    )
    other = read_probe(provider_spec(policy), policy, ProbeAnswer(400, None, '{"error": "x"}'))
    assert "api_key_env" not in other.warning
