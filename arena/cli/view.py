"""`arena view RUN`: the league and replay pages written (and, with --serve, served)."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli import argtypes

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena view`; its handler is `handle`."""
    parser.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    parser.add_argument(
        "--serve", action="store_true", help="serve on 127.0.0.1 and refresh as games finish"
    )
    parser.add_argument(
        "--port",
        type=argtypes.port,
        default=8000,
        help="the port --serve listens on (default %(default)s)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena view` with the parsed `args`; its exit status."""
    from arena.viewer import (
        main_view,  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    )

    run = argtypes.run_folder(args.run)
    if args.serve and (run / "replays").is_dir():
        import sys

        from arena.observe.live import serve_live  # the live page: a served site only

        try:
            serve_live(run, args.port)
        except OSError as exc:  # the port is taken: the message names --port
            print(f"arena view: {exc}", file=sys.stderr)
            return 2
        return 0
    return main_view(run, args.serve, args.port)
