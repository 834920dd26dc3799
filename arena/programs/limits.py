"""What a program seat may use, and the sandbox's limits: one place for every rule.

The static check (`static.py`) reads these sets, and the child runtime receives
them in its `hello` message, so the two can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

import games
from games import program_games  # the registry's (an alias kept for callers)

__all__ = [
    "ALLOWED_MODULES",
    "DEFAULT_NODE_BUDGET",
    "FORBIDDEN_ATTRIBUTES",
    "FORBIDDEN_NAMES",
    "PRELOADED_MODULES",
    "SandboxLimits",
    "timeout_for",
]

DEFAULT_NODE_BUDGET = 20_000
"""Helper calls per move (docs/rules.md#program-seats): a rule, not a setting that changes
with load."""


ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "abc",
        "array",
        "bisect",
        "cmath",
        "collections",
        "copy",
        "dataclasses",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "re",
        "statistics",
        "string",
        "typing",
    }
)
"""The only modules a program may import (and their submodules that are preloaded)."""

PRELOADED_MODULES = (*sorted(ALLOWED_MODULES), "collections.abc")
"""Imported by the child before the lock: after it, no module may load."""

_NAME_REASONS = {
    "time": "programs may not read the clock",
    "datetime": "programs may not read the clock",
    "random": "randomness comes from ctx.rng only",
    "os": "programs have no operating system access",
    "sys": "programs have no interpreter access",
    "subprocess": "programs may not start processes",
    "socket": "programs have no network",
    "ctypes": "programs may not call native code",
    "threading": "programs run in one thread",
    "_thread": "programs run in one thread",
    "multiprocessing": "programs may not start processes",
    "importlib": "programs import only the allowlist",
    "builtins": "programs get their builtins from the arena",
    "open": "programs may not open files",
    "eval": "programs may not run generated code",
    "exec": "programs may not run generated code",
    "compile": "programs may not run generated code",
    "__import__": "programs import only the allowlist, with import statements",
    "globals": "programs may not reach the module's globals",
    "locals": "programs may not reach frames",
    "vars": "programs may not reach namespaces",
    "breakpoint": "programs run unattended",
    "input": "stdin belongs to the arena",
    "exit": "a program ends by answering",
    "quit": "a program ends by answering",
    "help": "programs run unattended",
    "__builtins__": "programs may not reach the builtins",
    "__loader__": "programs may not reach the import system",
    "__spec__": "programs may not reach the import system",
}
FORBIDDEN_NAMES: dict[str, str] = dict(_NAME_REASONS)
"""Names a program may not use at all, with the reason the refusal gives."""

_ESCAPES = (
    "__subclasses__",
    "__globals__",
    "__builtins__",
    "__import__",
    "__bases__",
    "__base__",
    "__mro__",
    "mro",
    "__code__",
    "__closure__",
    "__self__",
    "__loader__",
    "__spec__",
    "__reduce__",
    "__reduce_ex__",
    "__getattribute__",
    "__init_subclass__",
    "__subclasshook__",
    "f_globals",
    "f_locals",
    "f_back",
    "f_builtins",
    "f_code",
    "tb_frame",
    "tb_next",
    "gi_frame",
    "gi_code",
    "cr_frame",
    "cr_code",
    "ag_frame",
    "ag_code",
    "func_globals",
)
FORBIDDEN_ATTRIBUTES: dict[str, str] = {
    **{name: "it leads out of the sandbox's namespace" for name in _ESCAPES},
    **{name: _NAME_REASONS[name] for name in ("time", "datetime", "os", "sys")},
}
"""Attribute names (`x.name`, or a literal in getattr) a program may not use.

`random` is not among them: `ctx.rng.random()` is the sanctioned source, and
the child seeds the module-level generator too, so no path to it is unseeded.
"""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """The child's resource limits; the defaults are the arena's.

    `uid` is the unprivileged user the child becomes when the arena runs as
    root: a runner replaces it with a uid of the child's own, leased from
    `[run] program_uids` (`uids.lease`); None keeps root, and with it the process
    limit does not bind;
    `network` asks for a private network namespace where the kernel allows one.
    """

    memory_mb: int = 512
    cpu_s: int = 3600
    """Total CPU seconds of one child (one game): a safety net, not a per-move clock."""
    nofile: int = 16
    uid: int | None = 65534
    network: bool = True

    def to_json(self) -> dict[str, object]:
        """As the child's hello and the check report carry them."""
        return {
            "memory_mb": self.memory_mb,
            "cpu_s": self.cpu_s,
            "nofile": self.nofile,
            "uid": self.uid,
            "network": self.network,
        }


def timeout_for(game_name: str) -> float:
    """The hard timeout per move of `game_name`, as its match format declares it."""
    timeout = games.load(game_name).match_format.program_timeout_s
    if timeout is None:
        raise ValueError(
            f"program seats do not play {game_name!r} (they play: {', '.join(program_games())})"
        )
    return timeout
