"""`arena report RUN`: a run's standings, head to head, fallback records, games or
sequential test, as a table, JSON or CSV."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli.console import stdout
from arena.league.formats import FORMATS, WHATS

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena report`; its handler is `handle`."""
    parser.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table: for reading; json (a list) or csv: the same rows, one record a row; "
        "the whole summary is RUN/summary.json (default %(default)s)",
    )
    parser.add_argument(
        "--what",
        choices=WHATS,
        default="standings",
        help="standings: per game and overall, with ratings; h2h: each pair's W-D-L (NC); "
        "fallbacks: every fallback record; games: every game's result; sprt: the sequential "
        "test of an [run.sprt] run (default %(default)s)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena report` with the parsed `args`; its exit status."""
    from arena.league.report import load_league, render

    render(load_league(args.run), args.what, args.format, stdout())
    return 0
