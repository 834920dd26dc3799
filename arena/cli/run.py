"""`arena run CONFIG`: every match of a config played (resumed where a run stopped), then
the standings; the flags that point it at the mock LLM, a Ray cluster or a play page."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli import argtypes
from arena.cli.console import Stderr, stdout
from arena.cli.playing import play_with_progress, served_by_mock

if TYPE_CHECKING:
    from rich.console import Console

    from arena.config import Config
    from arena.league.plan import RunPlan
    from arena.league.summary import RunResult

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena run`; its handler is `handle`."""
    parser.add_argument("config", type=Path, help="a TOML run config, e.g. configs/quickstart.toml")
    parser.add_argument("--out", type=Path, help="output folder (default runs/<run.name>)")
    parser.add_argument("--verbose", action="store_true", help="show every event on the console")
    parser.add_argument("--no-progress", action="store_true", help="no live progress bar")
    # argparse refuses the two together: one keeps the stored results, the other removes them
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--force-new", action="store_true", help="start the run over, removing its old results"
    )
    resume.add_argument(
        "--resume-anyway",
        action="store_true",
        help="resume even though the config changed since the run began (a setting that "
        "changes no one's play, such as run.concurrency, run.executor, run.endpoint_down_s or "
        "a policy's base_url, needs no flag; other policies or prompt templates are refused "
        "all the same, and a pool refuses the flag)",
    )
    parser.add_argument(
        "--discard-pool",
        action="store_true",
        help="with --force-new on a standing pool: remove every entrant's games and ratings "
        "for good (a pool refuses --force-new alone)",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds the games in flight get to finish after Ctrl-C; a second Ctrl-C stops at "
        "once (default %(default)s)",
    )
    parser.add_argument(
        "--mock-llm",
        action="store_true",
        help="serve the mock LLM on 127.0.0.1:PORT for the length of the run, and point every "
        "llm policy at it: each base_url's host and port become the mock's, its path is kept "
        "(no API key is needed)",
    )
    parser.add_argument(
        "--mock-port",
        type=argtypes.port,
        default=8765,
        metavar="PORT",
        help="the port of --mock-llm's server (default %(default)s)",
    )
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="do not probe the models' endpoints before the first game",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="where the episodes are played, instead of the config's run.executor: this "
        "process, or a Ray cluster (docs/cluster.md; needs pip install -e '.[ray]')",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="the Ray cluster to play on, e.g. 10.0.0.5:6379 (implies --executor ray; default "
        "RAY_ADDRESS, else a Ray instance started on this machine for the run)",
    )
    parser.add_argument(
        "--play-port",
        type=argtypes.port,
        default=0,
        metavar="PORT",
        help="the port of the play page a run with a human policy serves on 127.0.0.1 "
        "(default: a free one; the URL is printed, with its token)",
    )
    parser.add_argument(
        "--mock-faults",
        default="",
        metavar="RATES",
        help='fault rates for --mock-llm, as for `arena mock-llm --faults`, e.g. "429=0.03,'
        'prose=0.05" (default: none)',
    )
    parser.add_argument(
        "--metrics-port",
        type=argtypes.port,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics at http://127.0.0.1:PORT/metrics while the run plays "
        "(default: the config's run.metrics_port; 0: none; docs/ops.md)",
    )
    parser.add_argument(
        "--log-format",
        choices=("console", "json", "auto"),
        default="console",
        help="console: lines for people (default); json: each log line as its JSON object "
        "(the events file's line) and nothing else on stderr; auto: json where stderr is "
        "not a terminal",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena run` with the parsed `args`; its exit status."""
    import arena.logs  # first of all: it imports structlog without rich (see arena.logs)
    from arena.config import (
        ConfigError,  # loaded when this subcommand runs: `import arena.cli` loads no arena module
    )
    from arena.league.lock import hold_run_folder
    from arena.league.plan import plan_run
    from arena.play.prompts import PromptError

    config = _config(args)
    resume = "new" if args.force_new else "anyway" if args.resume_anyway else "refuse"
    if args.discard_pool and not args.force_new:
        raise ConfigError("--discard-pool goes with --force-new: it says to start a pool over")
    try:
        plan = plan_run(config, args.out, resume=resume, discard_pool=args.discard_pool)
    except PromptError as exc:
        raise ConfigError(str(exc)) from exc
    console = Stderr()
    json_lines = args.log_format == "json" or (
        args.log_format == "auto" and not sys.stderr.isatty()
    )
    # The folder is held before anything in it is written: a second run stops here.
    with hold_run_folder(plan.out):
        arena.logs.configure_logging(
            plan.out / "events.jsonl",
            console=True,
            verbose=args.verbose,
            fresh=resume == "new",
            redactor=plan.redactor,
            json_console=json_lines,
        )
        try:
            mock = (args.mock_port, args.mock_faults) if args.mock_llm else None
            show = not args.no_progress and not json_lines and console.rich.is_terminal
            with _watching(args, config, plan.out) as said:
                result = play_with_progress(
                    plan,
                    console,
                    show=show,
                    mock=mock,
                    grace_s=args.grace,
                    check=not args.no_preflight,
                    ray_address=args.ray_address,
                    play_port=args.play_port,
                    said=tuple(said),
                    json_lines=json_lines,
                )
            return _print_outcome(plan, result, json_lines)
        finally:
            arena.logs.close_logging()


def _watching(
    args: argparse.Namespace, config: Config, out: Path
) -> AbstractContextManager[list[str]]:
    """Metrics and traces as the flags and the config ask (`arena.observe`), or nothing."""
    port = config.run.metrics_port if args.metrics_port is None else args.metrics_port
    otlp = config.run.otlp_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    if not port and not otlp:
        return nullcontext([])
    from arena.observe import watching  # the observers: only a run that is watched

    return watching(config, out, metrics_port=port, otlp_endpoint=otlp)


def _config(args: argparse.Namespace) -> Config:
    """The run's config as the flags change it: served by the mock LLM, on an executor."""
    from arena.config import (  # loaded when this subcommand runs: `import arena.cli` loads no arena module
        ConfigError,
        load_config,
    )

    if args.mock_faults and not args.mock_llm:
        raise ConfigError("--mock-faults sets the faults of --mock-llm's server: add --mock-llm")
    if args.mock_llm:
        from arena.mock_llm import parse_faults  # the mock's modules: only with --mock-faults

        try:
            parse_faults(args.mock_faults)
        except ValueError as exc:
            raise ConfigError(f"--mock-faults: {exc}") from exc
    # What --mock-llm serves needs no key: every model policy is pointed at it.
    config = load_config(args.config, keys=not args.mock_llm)
    if args.mock_llm:
        config = served_by_mock(config, f"http://127.0.0.1:{args.mock_port}")
    executor = "ray" if args.ray_address and not args.executor else args.executor
    if executor == "local" and args.ray_address:
        raise ConfigError("--ray-address names a Ray cluster: it needs --executor ray, not local")
    if executor is not None:
        config = config.model_copy(
            update={"run": config.run.model_copy(update={"executor": executor})}
        )
    return config


def _print_pool(out: Console, result: RunResult) -> None:
    """A pool's session: its entrants, this session's placement and retirements."""
    from arena.results.report import entrants_table  # the tables: after the run

    out.print(entrants_table(result.tables["entrants"], out.width))
    pool = result.stopping.get("pool", {})
    if pool.get("placement_matches"):
        out.print(
            f"placement: {pool['placement_matches']} match(es) of new entrants played first",
            highlight=False,
            markup=False,
        )
    by_roster = set(pool.get("retired_by_roster", []))  # the config's are the user's own
    for e in result.tables["entrants"]:
        if e["name"] in by_roster:
            out.print(f"retired {e['name']}: {e['retired']}", highlight=False, markup=False)


def _cut_short(plan: RunPlan, result: RunResult) -> str | None:
    """How short a stopped session left the run (`league.summary.RunStatus`), or None."""
    if not result.interrupted:
        return None
    from arena.league.summary import run_status  # a stopped run only

    return run_status(plan.out).sentence()


def _print_outcome(plan: RunPlan, result: RunResult, json_lines: bool = False) -> int:
    """The standings and what became of the run, on the console (what goes to stderr, with
    `json_lines`, as a `run_ended` event); the run's exit status."""
    from arena.results.ab import ab_sentence  # the tables' numpy: after the run
    from arena.results.report import sprt_lines, standings_tables

    out = stdout()
    for table in standings_tables(result.tables, out.width):
        out.print(table)
    sprt = result.stopping.get("sprt")
    cut = _cut_short(plan, result)
    for ab in result.tables.get("ab", []):
        out.print(ab_sentence(ab, sprt, partial=cut), highlight=False, markup=False)
    if "entrants" in result.tables:
        _print_pool(out, result)
    if sprt:
        for line in sprt_lines(sprt):
            out.print(line, highlight=False, markup=False)
    if result.failed:
        out.print(
            f"[red]{len(result.failed)} episode(s) failed; see {plan.out / 'events.jsonl'}[/red]",
            highlight=False,
        )
        for failure in result.failed[:10]:
            out.print(f"  {failure.episode}: {failure.error[:200]}", highlight=False, markup=False)
    again = f" ({result.replays} of them played again after a no-contest)" if result.replays else ""
    print(
        f"{result.played} episode(s) played now{again}, {result.skipped} finished earlier.\n"
        f"Replays, league.db, events and summary.json are in {plan.out}\n"
        f"(`arena view {plan.out} --serve` shows them in the browser)"
    )
    notes: list[str] = []
    if result.stopped_by:
        budget = result.stopped_by.startswith("budget")
        notes.append(
            f"no new match started: {result.stopped_by}"
            + ("; raise it and run the same command again to continue" if budget else "")
        )
    if result.stopped:
        notes.append(f"stopped: {result.stopped}")
    status = 1 if result.failed else 0
    if result.misconfigured:
        notes.append(f"fix the endpoint, then run the same command again to resume {plan.out}")
        status = 3
    elif result.interrupted:
        notes.append(f"stopped early: run the same command again to resume {plan.out}")
        status = 130
    elif _unmeasured(plan, result, notes):
        status = 1
    if json_lines and notes:
        import structlog

        structlog.get_logger("arena.cli.run").info("run_ended", status=status, notes=notes)
    for note in notes if not json_lines else ():
        print(note, file=sys.stderr)
    return status


def _unmeasured(plan: RunPlan, result: RunResult, notes: list[str]) -> bool:
    """Whether some pair of policies played only no-contests (said in `notes`): the run
    measured nothing between them, so it does not end as a success."""
    from arena.record.validity import unmeasured_pairs

    pairs = unmeasured_pairs(result.tables.get("h2h", {}))
    for first, second, nc in pairs:
        notes.append(
            f"every game between {first} and {second} was a no-contest ({nc}): nothing was "
            f"measured between them; the reasons are in {plan.out / 'events.jsonl'} "
            "(episode_replayed, no_contest_kept) and in the replays' results"
        )
    return bool(pairs)
