"""Whether a run's programs may play as its config asks, decided before any game.

Three refusals, each one line naming the fix:

- `auto` without a working bwrap, as a user other than root, for a program
  that is not trusted: every child would share the arena's uid, and one
  program could signal, trace or read another. A program is trusted when its
  policy says `trusted = true`, or says nothing and no model wrote it (a file
  with no manifest of `arena author` beside it).
- as root, a `[run] program_uids` block that an account, or a process no
  arena started, already uses (`uids.block_problem`).
- derived dice (`dice = "derived"`) in a run with a program a model wrote,
  unless `[run] accept_predictable_dice = true`: the dice follow from the
  master seed, so a program written for that seed could compute every roll.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Mapping

from arena.config import Config, ConfigError, ProgramPolicy
from arena.programs.bwrap import SandboxUnavailable, choose_sandbox
from arena.programs.static import ProgramInfo
from arena.programs.uids import block_problem

__all__ = ["admit", "is_trusted"]


def is_trusted(spec: ProgramPolicy, authored: bool) -> bool:
    """Whether `auto` may run the program outside bwrap: as its policy's `trusted` says,
    else unless a model wrote it (`authored`)."""
    return spec.trusted if spec.trusted is not None else not authored


def admit(
    config: Config,
    programs: Mapping[str, ProgramInfo],
    authored: Collection[str],
    *,
    probe: bool = True,
) -> dict[str, ProgramInfo]:
    """`programs` (policy -> registration) with each one's trust recorded; raise ConfigError
    for the first refusal (the module's). `authored`: the program policies a model wrote;
    `probe`: decide the sandbox here (a cluster's worker decides its own)."""
    trusted = dict(programs)
    for name, info in programs.items():
        spec = config.policies[name]
        if isinstance(spec, ProgramPolicy):
            trust = is_trusted(spec, name in authored)
            trusted[name] = dataclasses.replace(info, trusted=trust)
    if probe:
        untrusted = sorted(name for name, info in trusted.items() if not info.trusted)
        try:
            choose_sandbox(config.run.sandbox, trusted=not untrusted)  # bwrap's probe, once
        except SandboxUnavailable as exc:
            whose = f" (policies {', '.join(untrusted)})" if untrusted else ""
            raise ConfigError(f"run.sandbox{whose}: {exc}") from exc
        if os.geteuid() == 0 and (problem := block_problem(config.run.program_uids)):
            raise ConfigError(problem)
    _check_dice(config, [name for name in trusted if name in authored])
    return trusted


def _check_dice(config: Config, authored: list[str]) -> None:
    derived = [name for name, table in config.game.items() if table.dice == "derived"]
    if not authored or not derived or config.run.accept_predictable_dice:
        return
    raise ConfigError(
        f"[game.{derived[0]}] dice = 'derived' follows from the master seed, and "
        f"policies.{authored[0]} is a program a model wrote, which could compute every roll: "
        "use dice = 'verifiable', or set [run] accept_predictable_dice = true to accept "
        "predictable dice"
    )
