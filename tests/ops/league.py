"""What the ops tests share: a small league against the mock LLM, and what its replays
say (the figures the metrics must agree with)."""

from __future__ import annotations

import socket
from collections import Counter
from pathlib import Path
from typing import Any

from arena.record.replay import load_replay


def free_port() -> int:
    """A port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def league_config(url: str, name: str, **run: Any) -> dict[str, Any]:
    """Two model policies (two protocols, one priced) and the tactician, against `url`."""
    return {
        "run": {"name": name, "seed": 5, "games": ["connect-four"], "matches": 2,
                "concurrency": 4, **run},
        "deadlines": {"first_reply_s": 2.0, "retry_s": 1.5, "decision_s": 4.0},
        "policies": {
            "tactician": {"kind": "scripted", "baseline": "tactician"},
            "openai": {"kind": "llm", "provider": "openai", "model": "m1",
                       "base_url": f"{url}/v1"},
            "claude": {"kind": "llm", "provider": "anthropic", "model": "m2", "base_url": url,
                       "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}},
        },
    }  # fmt: skip


class Tally:
    """The decisions, fallbacks, tokens and cost the replays of a run folder record."""

    def __init__(self, out: Path) -> None:
        self.decisions: Counter[tuple[str, str]] = Counter()
        self.fallbacks: Counter[tuple[str, str, str]] = Counter()
        self.tokens: Counter[tuple[str, str]] = Counter()
        self.cost: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        for path in sorted((out / "replays").glob("*.json")):
            replay = load_replay(path)
            for game in replay.games:
                policies = replay.spectator.policies[str(game.index)]
                for ply in game.plies:
                    for d in ply.decisions:
                        self._decision(policies[d.seat], d)
                for f in game.fallbacks:
                    self.fallbacks[policies[f.seat], f.cause, str(f.side or "none")] += 1

    def _decision(self, policy: str, d: Any) -> None:
        if d.source == "fallback":
            self.decisions[policy, "fallback"] += 1
        elif d.attempts:  # a seat asked a prompt (a scripted one is not)
            self.decisions[policy, "first" if d.source == "reply" else "retry"] += 1
        for a in d.attempts:
            self.requests[policy] += 1
            usage = a.usage or {}
            entered = sum(
                usage.get(k) or 0 for k in ("input_uncached", "cache_read", "cache_write")
            )
            self.tokens[policy, "input"] += entered
            self.tokens[policy, "output"] += usage.get("output") or 0
            if a.cost_usd:
                self.cost[policy] += a.cost_usd


def toml_text(raw: dict[str, Any]) -> str:
    """`raw` (tables of scalars, lists and inline tables, as `league_config` makes) as TOML."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return repr(v)

    lines: list[str] = []
    for table, body in raw.items():
        nested = {k: v for k, v in body.items() if isinstance(v, dict) and table == "policies"}
        if not nested:
            lines.append(f"[{table}]")
            lines += [f"{k} = {value(v)}" for k, v in body.items()]
        for name, policy in nested.items():
            lines.append(f'[{table}."{name}"]')
            lines += [f"{k} = {value(v)}" for k, v in policy.items()]
    return "\n".join(lines) + "\n"
