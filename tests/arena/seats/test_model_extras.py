"""Models as their users run them, against `arena mock-llm`: provider params, reasoning kept
apart, the chat layout, replicas, `arena prompt` with no key, an unknown cost shown as such."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import structlog

from arena.config import ConfigError, parse_config
from arena.league.plan import plan_run
from arena.league.run import execute
from arena.mock_llm import build_app, serving
from arena.record.replay import Replay, load_replay, prompt_sha256
from arena.record.verify import VerifyError, verify_replay
from tests.arena.fakes import replay_attempts

pytestmark = pytest.mark.anyio

PARAMS = {
    "openai": {"reasoning_effort": "low", "top_p": 0.9},
    "anthropic": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
    "gemini": {"generationConfig": {"thinkingConfig": {"thinkingBudget": 512}}},
}


def _policy(protocol: str, url: str | list[str], **extra: Any) -> dict[str, Any]:
    base = [f"{u}/v1" for u in url] if isinstance(url, list) else f"{url}/v1"
    return {
        "kind": "llm", "provider": protocol, "model": "m",
        "base_url": base if protocol == "openai" else url, **extra,
    }  # fmt: skip


def _config(policies: dict[str, Any], **run: Any) -> dict[str, Any]:
    return {
        "run": {"name": "extras", "seed": 5, "games": ["connect-four"], "matches": 1, **run},
        "deadlines": {"first_reply_s": 5, "retry_s": 3, "decision_s": 8},
        "policies": {"tactician": {"kind": "scripted", "baseline": "tactician"}, **policies},
    }


def _replays(out: Path) -> list[Replay]:
    return [load_replay(p) for p in sorted((out / "replays").glob("*.json"))]


async def play_reasoning_league(out: Path, reasoning: str) -> list[Replay]:
    """A league of the three protocols' models, each with its params and the chat layout,
    against a mock that reasons (`reasoning`: apart or think); its replays."""
    async with serving(build_app(reasoning=reasoning, seed=1)) as url:
        policies = {
            p: _policy(p, url, layout="chat", params=PARAMS[p], prompt_cache=p == "anthropic")
            for p in PARAMS
        }
        result = await execute(plan_run(parse_config(_config(policies)), out))
    assert not result.failed
    assert result.fallbacks == 0  # the decoy move in the reasoning misled no reader
    return _replays(out)


@pytest.mark.parametrize("reasoning", ["apart", "think"])
async def test_params_reasoning_and_the_chat_layout_for_every_protocol(
    tmp_path: Path, reasoning: str
) -> None:
    replays = await play_reasoning_league(tmp_path, reasoning)
    for replay in replays:
        verify_replay(replay)
        for name, asked in replay.models.items():
            assert asked["params"] == PARAMS[name]
            assert asked["layout"] == "chat"
    attempts = replay_attempts(replays)
    assert attempts
    for a in attempts:
        assert a.reasoning is not None
        assert a.reasoning.startswith("Let me weigh the position.")
        assert "<think>" not in (a.reply or "")
        assert a.system_chars is not None
        assert a.prompt is not None
        system = a.prompt[: a.system_chars]
        assert system.startswith("GAME: connect-four")
        assert "RULES" in system  # the stable part: the first line and the rules
        assert "LEGAL MOVES" not in system  # the changing part goes as the user message
        assert a.prompt_sha256 == prompt_sha256(a.prompt, a.system_chars)
    if reasoning == "apart":
        by_provider = {a.provider: a.usage for a in attempts}
        assert by_provider["openai"]["reasoning"] > 0  # reasoning tokens reported
        assert by_provider["gemini"]["reasoning"] > 0


async def test_verify_sees_the_chat_split_moved(tmp_path: Path) -> None:
    async with serving(build_app(seed=1)) as url:
        policies = {"model": _policy("openai", url, layout="chat")}
        await execute(plan_run(parse_config(_config(policies)), tmp_path))
    replay = _replays(tmp_path)[0]
    decision = next(d for p in replay.games[0].plies for d in p.decisions if d.attempts)
    attempt = decision.attempts[0]
    assert attempt.system_chars is not None
    attempt.system_chars -= 1  # one character moved from the system message to the user's
    with pytest.raises(VerifyError, match="prompt differs from its recorded hash"):
        verify_replay(replay)


async def test_requests_spread_over_replicas_and_skip_one_that_is_down(tmp_path: Path) -> None:
    first, second = build_app(seed=1), build_app(seed=1)
    async with serving(first) as a, serving(second) as b:
        policies = {"model": _policy("openai", [a, b], max_connections=4)}
        result = await execute(
            plan_run(parse_config(_config(policies, concurrency=2)), tmp_path / "both")
        )
    assert not result.failed
    assert result.fallbacks == 0
    assert first.requests > 0
    assert second.requests > 0  # both replicas served the policy
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    alive = build_app(seed=1, latency_ms=100)  # a league of some seconds: the probe runs
    async with serving(alive) as up:
        policies = {"model": _policy("openai", [dead, up])}
        # Down far longer than endpoint_down_s: with another replica up, that stops nothing.
        plan = plan_run(parse_config(_config(policies, endpoint_down_s=0.3)), tmp_path / "one")
        with structlog.testing.capture_logs() as events:
            result = await execute(plan)  # the preflight warns of the dead replica, no more
    assert not result.failed
    assert not result.stopped
    assert result.fallbacks == 0  # the refused replica was skipped within the attempt
    assert alive.requests > 0
    warned = [e["detail"] for e in events if e["event"] == "preflight_warning"]
    assert any(dead in w and "its other replicas play meanwhile" in w for w in warned)
    assert any(e["event"] == "endpoint_down" and dead in e["endpoint"] for e in events)


def test_owned_params_and_a_cache_without_the_chat_layout_are_refused() -> None:
    policy = _policy("openai", "http://127.0.0.1:1", params={"temperature": 0.2})
    with pytest.raises(ConfigError, match=r"params.temperature is a field the arena sets"):
        parse_config(_config({"model": policy}))
    policy = _policy("anthropic", "http://127.0.0.1:1", prompt_cache=True)
    with pytest.raises(ConfigError, match='set layout = "chat" with it'):
        parse_config(_config({"model": policy}))
    policy = _policy("gemini", "http://127.0.0.1:1", layout="chat", prompt_cache=True)
    with pytest.raises(ConfigError, match="prompt_cache marks Anthropic's cache_control"):
        parse_config(_config({"model": policy}))


@pytest.mark.slow  # starts `arena` in a subprocess
def test_arena_prompt_needs_no_key_and_shows_the_chat_messages(tmp_path: Path) -> None:
    config = tmp_path / "models.toml"
    config.write_text(
        '[run]\nname = "p"\nseed = 1\ngames = ["hex"]\n'
        '[policies.tactician]\nkind = "scripted"\nbaseline = "tactician"\n'
        '[policies.model]\nkind = "llm"\nprovider = "anthropic"\nmodel = "m"\n'
        'api_key_env = "COG_TEST_KEY_NEVER_SET"\nlayout = "chat"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "prompt", "--game", "hex", "--seed", "3",
         "--config", str(config), "--policy", "model"],
        capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    system, user = done.stdout.split("===== user message =====\n")
    assert system.startswith("===== system message (the stable part) =====\nGAME: hex")
    assert "RULES" in system
    assert "LEGAL MOVES" in user


async def test_an_unpriced_model_shows_no_cost_rather_than_zero(tmp_path: Path) -> None:
    async with serving(build_app(seed=1)) as url:
        policies = {
            "free-or-unknown": _policy("openai", url),
            "priced": _policy("gemini", url, price={"input_per_mtok": 1, "output_per_mtok": 2}),
        }
        await execute(plan_run(parse_config(_config(policies)), tmp_path))
    rows = json.loads((tmp_path / "summary.json").read_text())["standings"]["overall"]
    cost = {r["policy"]: r["cost_usd"] for r in rows}
    assert cost["free-or-unknown"] is None
    assert cost["tactician"] is None
    assert cost["priced"] > 0


async def test_a_key_written_into_the_params_is_redacted_in_the_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-url-marker-0123456789"
    monkeypatch.setenv("URL_KEY", key)
    async with serving(build_app(seed=1)) as url:
        # Gemini's labels: a field a careless config could fill with the key itself
        policy = _policy("gemini", url, api_key_env="URL_KEY", params={"labels": {"k": key}})
        await execute(plan_run(parse_config(_config({"model": policy})), tmp_path))
    for path in (tmp_path / "replays").glob("*.json"):
        text = path.read_text()
        assert key not in text
        assert '"labels":{"k":"[redacted]"}' in text
