"""`arena rebuild RUN`: a run's league.db re-created from its replays (the replays are the
truth)."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli import argtypes

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena rebuild`; its handler is `handle`."""
    parser.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena rebuild` with the parsed `args`; its exit status."""
    from arena.config import ConfigError  # loaded when this subcommand runs
    from arena.league.lock import RunFolderBusy
    from arena.league.rebuild import KEPT_PREFIX, rebuild_run

    before = set(args.run.glob(f"{KEPT_PREFIX}*"))
    try:
        stored = rebuild_run(argtypes.run_folder(args.run))
    except RunFolderBusy as exc:  # its fix is a run's (another --out): a rebuild's is to wait
        raise ConfigError(
            f"run folder {args.run} is in use by process {exc.holder}: rebuild it once that "
            "run has ended (or stop it)"
        ) from exc
    kept = sorted(set(args.run.glob(f"{KEPT_PREFIX}*")) - before)[:1]  # its -wal sorts after
    print(
        f"arena rebuild: {args.run / 'league.db'} re-created from {stored} replay(s) and the "
        "ledger, and summary.json written from it"
        + (f"; the store it replaced is kept as {kept[0]}" if kept else "")
        + ". The digests "
        "it keeps are recomputed from the replays as they now are: only a run digest published "
        "before (`arena verify --expect`) still tells an edited replay."
    )
    return 0
