"""The gateway tests' leagues: a TOML per league, `arena run` as a subprocess (the nginx
tests' `play`), and what each attempt asked against what the backend behind the gateway
received.

A league is connect-four, one match a pair, among the model policies the test names
(every decoding a protocol offers, say), each a model group of the proxy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.record.replay import AttemptRecord
from tests.gateways.conftest import Received
from tests.nginx.league import ROOT, Played, play

__all__ = [
    "KEY_ENV",
    "Asked",
    "asked",
    "legal_moves",
    "policy",
    "prompt_of",
    "received_for",
    "run",
    "sent_form",
    "verify",
    "write",
]

KEY_ENV = "COG_GATEWAY_KEY"
"""The variable the policies name for their key (a test sets it)."""

RUN_S = 240.0
"""The most one `arena run` or `arena verify` may take (they take seconds)."""

DEADLINES = {"first_reply_s": 20, "retry_s": 10, "decision_s": 30}
"""Long enough for a loaded machine: a clean league never waits them out."""


def policy(protocol: str, base: str, model: str = "mock-1", **settings: Any) -> dict[str, Any]:
    """A model policy of `protocol` through the proxy at `base` (its root URL)."""
    url = f"{base}/v1" if protocol == "openai" else base
    return {"kind": "llm", "provider": protocol, "model": model, "base_url": url,
            "api_key_env": KEY_ENV, **settings}  # fmt: skip


def write(
    folder: Path,
    name: str,
    policies: dict[str, dict[str, Any]],
    *,
    run: dict[str, Any] | None = None,
    deadlines: dict[str, float] | None = None,
) -> Path:
    """Write `folder/<name>.toml`: connect-four, one match a pair, among `policies`."""
    lines = [f"[run]\nname = {json.dumps(name)}\nseed = 11\ngames = [\"connect-four\"]",
             "matches = 1\nconcurrency = 4"]  # fmt: skip
    lines += [f"{k} = {_toml(v)}" for k, v in (run or {}).items()]
    lines += ["[deadlines]", *(f"{k} = {v}" for k, v in (deadlines or DEADLINES).items())]
    for policy_name, settings in policies.items():
        lines.append(f"[policies.{json.dumps(policy_name)}]")
        lines += [f"{k} = {_toml(v)}" for k, v in settings.items()]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    return repr(value)


def run(config: Path) -> Played:
    """`arena run` of `config` (the nginx tests' `play`) into a folder named for it, the key
    taken from `KEY_ENV`."""
    return play(config, config.with_suffix(""), timeout_s=RUN_S)


def verify(played: Played) -> subprocess.CompletedProcess[str]:
    """`arena verify` of the run's folder."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "verify", str(played.out)],
        cwd=ROOT, capture_output=True, text=True, timeout=RUN_S, check=False,
    )  # fmt: skip


@dataclass(frozen=True)
class Asked:
    """One attempt of a model policy, and where."""

    policy: str
    episode: str
    attempt: AttemptRecord


def asked(played: Played) -> Iterator[Asked]:
    """Every attempt of every model policy in the run's replays."""
    for replay in played.replays():
        for game in replay.games:
            seats = replay.spectator.policies[str(game.index)]
            for ply in game.plies:
                for decision in ply.decisions:
                    for attempt in decision.attempts:
                        yield Asked(seats[decision.seat], replay.episode, attempt)


def prompt_of(body: dict[str, Any]) -> str:
    """The text of a chat-completions request's user messages (what the gateway made of the
    arena's one user message, whichever protocol it came in)."""
    texts = []
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [p.get("text", "") for p in content or [] if isinstance(p, dict)]
    return "".join(texts)


def sent_form(body: dict[str, Any]) -> tuple[str, list[str] | None]:
    """How a request the backend received asks for its reply: `free`, `json_object`,
    `json_object+schema`, `json_schema` or `tool`, and the enum of its move (None: none)."""
    form = body.get("response_format") or {}
    if body.get("tools"):
        tool = body["tools"][0].get("function", body["tools"][0])
        return "tool", _enum(tool.get("parameters") or tool.get("input_schema"))
    if form.get("type") == "json_schema":
        return "json_schema", _enum(form.get("json_schema", {}).get("schema"))
    if form.get("type") == "json_object":
        return ("json_object+schema" if "schema" in form else "json_object"), _enum(
            form.get("schema")
        )
    return "free", None


def _enum(schema: Any) -> list[str] | None:
    if not isinstance(schema, dict):
        return None
    move = (schema.get("properties") or {}).get("move") or {}
    enum = move.get("enum")
    return list(enum) if isinstance(enum, list) else None


_LEGAL = re.compile(r"^LEGAL MOVES: (.*)$", re.MULTILINE)


def legal_moves(prompt: str) -> list[str]:
    """The legal moves a prompt lists (its machine-readable line)."""
    found = _LEGAL.search(prompt)
    return [m.strip() for m in found.group(1).split(",")] if found else []


def received_for(backend: list[Received]) -> dict[str, list[Received]]:
    """The backend's completion requests by the prompt they carry."""
    found: dict[str, list[Received]] = {}
    for request in backend:
        found.setdefault(prompt_of(request.body), []).append(request)
    return found
