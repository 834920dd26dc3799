"""`arena report RUN`: a run's standings, head to head, fallback records, games or
sequential test, as a table, JSON or CSV."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli import argtypes
from arena.cli.console import stdout
from arena.results.formats import FORMATS, WHATS

if TYPE_CHECKING:  # the config, the store and the report are imported when a report is asked for
    from arena.config import Config
    from arena.league.store import LeagueStore

__all__ = ["add_arguments", "handle"]


_LEGEND = """the standings' columns:
  BT [95%]       Bradley-Terry rating and its 95% interval (* rests on the prior); rows by it
  Elo K=24 seq.  the sequential Elo, applied in schedule order
  mean           mean game score (overall: +1 win, 0 draw, -1 loss per game)
  W-D-L, NC      wins, draws, losses; every play that ended a no-contest
  replayed       plays a later play replaced (a no-contest played again, a cut card)
  own play       the share of its decisions the seat made itself
  fallbacks      the seat's own failures / the infrastructure's, and by cause
  p50/p95 ms     decision latency percentiles
  tokens, cost $ tokens in and out; cost from the policy's price (- unknown)
  decoding       free, json or schema/<form> (json_schema, json_object, tool, responseSchema)
docs/rules.md#standings has every column"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena report`; its handler is `handle`."""
    parser.epilog = _LEGEND
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
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
        "test of an [run.sprt] run; entrants: each policy with its fingerprint and status (a "
        "pool's leaderboard); authors: each model beside the program it wrote (default "
        "%(default)s)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena report` with the parsed `args`; its exit status."""
    from arena.league.lineup import (
        read_resolved,  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    )
    from arena.results.report import League, render

    config, seed, _ = read_resolved(argtypes.run_folder(args.run))
    with _stored(args.run) as store:
        cut = _cut_short(args.run)
        league = League(args.run, config, seed, store, partial(_sprt, config, store))
        league.partial = cut
        render(league, args.what, args.format, stdout())
    return 0


def _cut_short(run: Path) -> str | None:
    """Before any table: a store that is not the one of these replays is refused, and a run
    cut short is said (on stderr, so that JSON and CSV stay whole); how short, or None."""
    import sys

    from arena.config import ConfigError
    from arena.league.summary import foreign_store, run_status

    foreign = foreign_store(run)
    if foreign is not None:
        raise ConfigError(f"{foreign}; its standings would not be these games'")
    said = run_status(run).sentence()
    if said is not None:
        print(f"arena report: {run}: a partial run: {said}", file=sys.stderr)
    return said


@contextmanager
def _stored(run: Path) -> Iterator[LeagueStore]:
    """The league store of run folder `run`, read-only, for as long as the report is written."""
    from arena.config import (
        ConfigError,  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    )
    from arena.league.store import LeagueStore

    try:
        store = LeagueStore.open_readonly(run)
    except FileNotFoundError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        yield store
    finally:
        store.close()


def _sprt(config: Config, store: LeagueStore) -> dict[str, Any] | None:
    """The run's SPRT, re-derived from the stored games by the league's stop rules."""
    from arena.league.stopping import StopRules  # the SPRT's numpy: only a report that shows it

    rules = StopRules(config, store.game_summaries(), store.spoiled_episodes())
    sprt: dict[str, Any] | None = rules.to_json()["sprt"]
    return sprt
