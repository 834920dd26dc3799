"""`arena program check PATH --game GAME`: a player program's static check, then two games
against the baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena program`; its handler is `handle`."""
    program_sub = parser.add_subparsers(dest="program_command", metavar="COMMAND", required=True)
    check = program_sub.add_parser(
        "check", help="static check, then two games against the baseline"
    )
    check.add_argument("path", type=Path, help="a player program, e.g. players/greedy.py")
    check.add_argument("--game", required=True, help="a game programs play, e.g. connect-four")
    check.add_argument(
        "--seed", type=int, default=1, help="the match seed of the two games (default %(default)s)"
    )
    check.add_argument(
        "--node-budget",
        type=int,
        default=20_000,
        help="engine calls per move (default %(default)s)",
    )
    check.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "process"),
        default="auto",
        help="confine the program's child under bubblewrap (bwrap), as a plain process, or "
        "bwrap where it works here (auto, the default); docs/program-seats.md",
    )
    check.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena program check` with the parsed `args`; its exit status."""
    import anyio  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    from arena.programs import ProgramRefused, SandboxUnavailable, check_program

    try:
        report = anyio.run(
            lambda: check_program(
                args.path,
                args.game,
                seed=args.seed,
                node_budget=args.node_budget,
                sandbox=args.sandbox,
            )
        )
    except (ProgramRefused, SandboxUnavailable, ValueError) as exc:
        print(f"arena program check: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0 if report.passed else 1
