"""Program seats: one Python file per player, run in a sandboxed child process.

A program exposes `create(ctx)`, whose result has `choose_move(view) -> str`
(Stratego programs also `choose_setup(view) -> str`); `docs/program-seats.md`
is the newcomer's page. The story, one module each:

    limits    what a program may import and use; the sandbox's limits
    static    registration: the static check and the SHA-256 (`register`)
    child     the runtime inside the child: confinement, the guard, the loop
    pipes     the child's stdin and stdout, served by one thread per move: framing, wake-up
    bwrap     the sandbox's mode (`[run] sandbox`): bubblewrap's probe and command
    sandbox   the child process: start, one exchange per move, a kill that always reaps
    engine    the engine behind `ctx.legal_moves`, `ctx.apply`, ...: nodes
    runner    `ProgramRunner.choose`: one move, its nodes, forfeits
    check     `check_program`: the static check and two identical games; the games a
              program names in its `GAMES` (`declared_games`)
    uids      as root, each live child's own uid (`[run] program_uids`), reclaimed at its end
    admission whether a run's programs may play as its config asks (`admit`): trust, uids, dice

Errors::

    ProgramRefused     registration or the check refuses the program
    ProgramForfeit     the program loses the game: cause illegal, crash,
                       exception, timeout or over_budget
    SandboxUnavailable `sandbox = "bwrap"` where bwrap does not work, or `auto` falling
                       back to `process` for a program not trusted (not as root)
    UidsExhausted      every uid of `[run] program_uids` is some live child's
"""

from __future__ import annotations

from arena.programs.admission import admit, is_trusted
from arena.programs.bwrap import (
    SANDBOX_MODES,
    SandboxMode,
    SandboxUnavailable,
    bwrap_problem,
    choose_sandbox,
)
from arena.programs.check import (
    CheckGame,
    CheckPly,
    CheckReport,
    check_program,
    declared_games,
)
from arena.programs.limits import (
    ALLOWED_MODULES,
    DEFAULT_NODE_BUDGET,
    SandboxLimits,
    timeout_for,
)
from arena.programs.runner import (
    OVER_BUDGET_FORFEIT,
    ProgramForfeit,
    ProgramMove,
    ProgramRunner,
)
from arena.programs.static import ProgramInfo, ProgramRefused, check_source, register
from arena.programs.uids import DEFAULT_PROGRAM_UIDS, UidsExhausted, block_problem
from arena.record.causes import FORFEIT_CAUSES
from games import program_games as program_games  # the registry's, kept here for callers

__all__ = [
    "ALLOWED_MODULES",
    "DEFAULT_NODE_BUDGET",
    "DEFAULT_PROGRAM_UIDS",
    "FORFEIT_CAUSES",
    "OVER_BUDGET_FORFEIT",
    "SANDBOX_MODES",
    "CheckGame",
    "CheckPly",
    "CheckReport",
    "ProgramForfeit",
    "ProgramInfo",
    "ProgramMove",
    "ProgramRefused",
    "ProgramRunner",
    "SandboxLimits",
    "SandboxMode",
    "SandboxUnavailable",
    "UidsExhausted",
    "admit",
    "block_problem",
    "bwrap_problem",
    "check_program",
    "check_source",
    "choose_sandbox",
    "declared_games",
    "is_trusted",
    "register",
    "timeout_for",
]
