"""The nginx tests' leagues: a small TOML per test, `arena run` as a subprocess, and what the
run folder says afterwards (replays, events, summary).

Each league is one match of connect-four (both seat orders, two games at once)
between a model behind the gateway and a baseline, under deadlines of seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.record.replay import AttemptRecord, FallbackRecord, Replay, load_replay

__all__ = ["DEADLINES", "RUN_S", "Played", "assert_clean", "llm_policy", "play", "write_league"]

ROOT = Path(__file__).resolve().parents[2]

RUN_S = 90.0
"""The most an `arena run` of these leagues may take: they play in seconds, so one that is
still going is stuck (the subprocess is killed)."""

DEADLINES = {"first_reply_s": 3, "retry_s": 2, "decision_s": 5}

MODEL = "mock-1"

_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
_TRUST_VARIABLES = {"SSL_CERT_FILE", "SSL_CERT_DIR"}


def llm_policy(base_url: str, **settings: Any) -> dict[str, Any]:
    """The model's policy: the mock's model at `base_url`, and the test's own settings."""
    return {"kind": "llm", "provider": "openai", "model": MODEL, "base_url": base_url,
            **settings}  # fmt: skip


def write_league(
    folder: Path,
    name: str,
    model: dict[str, Any],
    *,
    opponent: dict[str, Any] | None = None,
    run: dict[str, Any] | None = None,
    deadlines: dict[str, float] | None = None,
) -> Path:
    """Write `folder/<name>.toml`: `model` against `opponent` (the tactician by default)."""
    config = {
        "run": {"name": name, "seed": 7, "games": ["connect-four"], "matches": 1,
                "concurrency": 2, **(run or {})},
        "deadlines": deadlines or DEADLINES,
        "policies": {
            "model": model,
            "baseline": opponent or {"kind": "scripted", "baseline": "tactician"},
        },
    }  # fmt: skip
    path = folder / f"{name}.toml"
    path.write_text(_toml(config))
    return path


def play(
    config: Path, out: Path | None = None, *, timeout_s: float = RUN_S, more: tuple[str, ...] = ()
) -> Played:
    """`arena run CONFIG --out OUT --no-progress` (and `more` options) in a process of its
    own, run from the repository (so a relative path in the config is the config folder's or
    nothing)."""
    out = out or config.parent / "out"
    command = [sys.executable, "-m", "arena.cli", "run", str(config), "--out", str(out),
               "--no-progress", *more]  # fmt: skip
    # No proxy and no trust from this machine's environment: the test says what is trusted.
    drop = _TRUST_VARIABLES | _PROXY_VARIABLES
    env = {k: v for k, v in os.environ.items() if k not in drop and k.lower() not in drop}
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as stuck:  # subprocess.run has killed it
        console = stuck.stderr.decode(errors="replace") if isinstance(stuck.stderr, bytes) else ""
        raise AssertionError(
            f"arena run {config.name} was still going after {timeout_s:g} s:\n{console[-3000:]}"
        ) from None
    return Played(done.returncode, done.stdout, done.stderr, out)


@dataclass(frozen=True)
class Played:
    """A finished `arena run` and its folder."""

    returncode: int
    stdout: str
    stderr: str
    out: Path

    def why(self) -> str:
        """What an assertion message shows: the exit code and the end of the console."""
        return f"exit {self.returncode}\n--- stderr\n{self.stderr[-3000:]}\n--- stdout\n{self.stdout[-1500:]}"

    def replays(self) -> list[Replay]:
        """Every replay of the run, by file name."""
        return [load_replay(p) for p in sorted((self.out / "replays").glob("*.json"))]

    def finished_games(self) -> int:
        """Games with a result."""
        return sum(g.result is not None for r in self.replays() for g in r.games)

    def fallbacks(self) -> list[FallbackRecord]:
        """Every fallback of every game."""
        return [f for r in self.replays() for g in r.games for f in g.fallbacks]

    def model_attempts(self) -> list[AttemptRecord]:
        """Every question put to the `model` policy's seat, in every game."""
        attempts = []
        for replay in self.replays():
            for game in replay.games:
                seat = replay.spectator.policies[str(game.index)].index("model")
                decisions = (d for ply in game.plies for d in ply.decisions if d.seat == seat)
                attempts += [a for d in decisions for a in d.attempts]
        return attempts

    def failed_attempts(self) -> list[AttemptRecord]:
        """Every attempt that gave no move, with its cause."""
        return [a for a in self.model_attempts() if a.cause is not None]

    def events(self, name: str) -> list[dict[str, Any]]:
        """Every `name` event of events.jsonl, oldest first."""
        path = self.out / "events.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        return [e for e in map(json.loads, lines) if e.get("event") == name]


def _toml(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for table, values in data.items():
        if table == "policies":
            for name, policy in values.items():
                lines.append(f"[policies.{name}]")
                lines += [f"{k} = {_value(v)}" for k, v in policy.items()]
            continue
        lines.append(f"[{table}]")
        lines += [f"{k} = {_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + "}"
    return repr(v)


def assert_clean(played: Played) -> None:
    """The league played both games, and the model made every one of its decisions at its
    first attempt: no fallback, no failed attempt."""
    assert played.returncode == 0, played.why()
    assert played.finished_games() == 2, played.why()
    assert played.model_attempts(), "the model was never asked"
    failed = [(a.cause, a.status, a.error[:200]) for a in played.failed_attempts()]
    assert failed == [], failed
    assert played.fallbacks() == []
