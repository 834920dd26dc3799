"""An entrant's fingerprint covers what decides its play, and nothing at its default."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from arena.config import PolicyConfig
from arena.play.fingerprint import fingerprint, played_as
from arena.play.prompts import PROMPT_PROTOCOL

POLICY: TypeAdapter[Any] = TypeAdapter(PolicyConfig)
TEMPLATES = {"board": "ab" * 32}
MODEL = {"kind": "llm", "provider": "openai", "model": "m-1", "base_url": "http://a.example/v1"}


def _played(spec: dict[str, Any], **options: Any) -> dict[str, Any]:
    return played_as(POLICY.validate_python(spec), templates=TEMPLATES, **options)


def test_a_model_is_its_protocol_model_templates_and_the_arenas_own_text() -> None:
    assert _played(MODEL) == {
        "kind": "llm", "protocol": "openai", "model": "m-1", "templates": TEMPLATES,
        "prompt_protocol": PROMPT_PROTOCOL,
    }  # fmt: skip
    asked = _played({**MODEL, "max_tokens": 256, "temperature": 0.0, "params": {"top_p": 0.5}})
    assert (asked["max_tokens"], asked["temperature"], asked["params"]) == (
        256,
        0.0,
        {"top_p": 0.5},
    )


@pytest.mark.parametrize(
    "where",
    [
        {"base_url": "http://b.example/v1"}, {"api_key_env": "KEY"}, {"max_connections": 2},
        {"headers": {"x-team": "a"}}, {"idle_expiry_s": 1.0}, {"author": "lab"},
        {"price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
    ],
)  # fmt: skip
def test_how_a_model_is_reached_is_not_in_its_fingerprint(where: dict[str, Any]) -> None:
    assert fingerprint(_played({**MODEL, **where})) == fingerprint(_played(MODEL))


def test_a_setting_at_its_default_is_left_out_so_old_fingerprints_stay() -> None:
    # `max_tokens = 1024` is the default: written or not, the same entrant.
    assert _played({**MODEL, "max_tokens": 1024}) == _played(MODEL)
    assert _played({"kind": "scripted"}) == {"kind": "scripted"}
    assert _played({"kind": "scripted", "baseline": "random"}) == {
        "kind": "scripted", "baseline": "random",
    }  # fmt: skip


def test_other_seats_are_what_they_play_by() -> None:
    mock = _played({"kind": "mock", "faults": {"illegal": 0.1}, "latency_ms": 20})
    assert mock == {
        "kind": "mock", "faults": {"illegal": 0.1}, "latency_ms": 20.0, "templates": TEMPLATES,
        "prompt_protocol": PROMPT_PROTOCOL,
    }  # fmt: skip
    program = _played({"kind": "program", "path": "p.py"}, program_sha256="cd" * 32)
    assert program == {"kind": "program", "sha256": "cd" * 32}
    tighter = _played({"kind": "program", "path": "p.py", "timeout_s": 5}, program_sha256="cd" * 32,
                      node_budget=500)  # fmt: skip
    assert tighter == {"kind": "program", "sha256": "cd" * 32, "node_budget": 500, "timeout_s": 5.0}
    assert _played({"kind": "human", "name": "Ada"}) == {"kind": "human", "name": "Ada"}


def test_the_fingerprint_is_the_sha256_of_canonical_json() -> None:
    played = {"kind": "scripted", "baseline": "random"}
    canonical = b'{"baseline":"random","kind":"scripted"}'
    assert fingerprint(played) == hashlib.sha256(canonical).hexdigest()


SHIPPED = {
    "configs/pool/step3.toml": {
        "mock-faulty": "92b9303176a41c7693e5a8ef79b94330720232c4e62580588f25440801fb442f",
        "mock-half": "b991277b2a2a2eaf1129dc7395e0e35199cbbc9a79669241d193f07e5b173290",
        "mock-slow": "fb9c8719e21ee3c1cd3eeba7cdade68a8418228ae505dfb3001da48b0cfd8336",
        "random": "224df6ad18dfe87c0b321d5a9564ed2dd11c03f6ece4a3c8dab30d85a2f8b73a",
        "tactician": "68cc4055558b454850ca2153af3f2e89e633cdf698ee4f72731f4cbfb2fd5274",
    },
    "configs/mock-llm.toml": {
        "mock-anthropic": "d87e4c7c88c2abb512a4a104f0750511e21e722a27e00912d29662d07b8be0d8",
        "mock-gemini": "d5c2525766eb14ed55d67c30f184044dc2303773697fd4453617124f33a3aed4",
        "mock-openai": "37664e991ba696725f2bc8e07e265ab2b826982b466e2eb1cbcb1089f485e187",
        "tactician": "68cc4055558b454850ca2153af3f2e89e633cdf698ee4f72731f4cbfb2fd5274",
    },
}
"""Shipped configs' fingerprints as the pools already played keep them: a change here makes
every such pool refuse its entrants (see `arena.play.fingerprint` on defaults left out)."""


@pytest.mark.parametrize("path", sorted(SHIPPED))
def test_shipped_configs_keep_their_fingerprints(path: str, tmp_path: Path) -> None:
    from arena.config import load_config
    from arena.league.plan import plan_run

    root = Path(__file__).resolve().parents[3]
    plan = plan_run(load_config(root / path, keys=False), tmp_path / "run")
    assert plan.fingerprints == SHIPPED[path]
