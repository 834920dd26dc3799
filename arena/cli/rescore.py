"""`arena rescore RUN`: a run's recorded replies re-read with the current readers, and the
decisions that would change (asks no model, writes nothing)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena rescore`; its handler is `handle`."""
    parser.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: for reading; json: the totals and each game's counts and first change "
        "(default %(default)s)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena rescore` with the parsed `args`; its exit status."""
    from arena.play.rescore import (
        rescore_main,  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    )

    return rescore_main(args)
