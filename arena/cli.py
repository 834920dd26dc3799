"""The `arena` command: run, verify, rebuild, report, view, prompt, games, mock-llm, program check.

Each subcommand has one builder (its arguments) and one handler (what it
does); heavy modules are imported by the handler that needs them.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

import games
from arena.config import ConfigError, load_config
from arena.league.lock import hold_run_folder
from arena.league.plan import RunPlan, plan_run
from arena.league.report import standings_tables
from arena.league.run import RunResult, execute
from arena.logs import close_logging, configure_logging

__all__ = ["main"]

_Handler = Callable[[argparse.Namespace], int]


def _run_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser("run", help="play every match of a config and print the standings")
    run.add_argument("config", type=Path, help="a TOML run config, e.g. configs/quickstart.toml")
    run.add_argument("--out", type=Path, help="output folder (default runs/<run.name>)")
    run.add_argument("--verbose", action="store_true", help="show every event on the console")
    run.add_argument("--no-progress", action="store_true", help="no live progress bar")
    run.add_argument(
        "--force-new", action="store_true", help="start the run over, removing its old results"
    )
    run.add_argument(
        "--resume-anyway",
        action="store_true",
        help="resume even though the config changed since the run began",
    )
    run.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="seconds the games in flight get to finish after Ctrl-C (a second Ctrl-C stops at once)",
    )
    run.add_argument(
        "--mock-llm",
        action="store_true",
        help="serve the mock LLM on 127.0.0.1:--mock-port for the length of the run",
    )
    run.add_argument("--mock-port", type=int, default=8765)
    run.add_argument(
        "--no-preflight",
        action="store_true",
        help="do not probe the models' endpoints before the first game",
    )
    run.add_argument(
        "--mock-faults", default="", help="fault rates for --mock-llm, as for `arena mock-llm`"
    )
    run.set_defaults(handler=_run)


def _mock_llm_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mock = sub.add_parser(
        "mock-llm", help="a local server speaking the OpenAI, Anthropic and Gemini protocols"
    )
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=8765)
    mock.add_argument("--latency-ms", type=int, default=0, help="added to every answer")
    mock.add_argument(
        "--faults",
        default="",
        help='seeded fault rates, e.g. "429=0.05,500=0.02,529=0.01,hang=0.01,slow=0.02,'
        'garbage=0.02,truncated=0.02,prose=0.02,illegal=0.05"',
    )
    mock.add_argument("--slow-ms", type=int, default=2000, help="how late a `slow` answer comes")
    mock.add_argument("--seed", type=int, default=0)
    mock.add_argument(
        "--reasoning",
        choices=("off", "apart", "think"),
        default="off",
        help="answers carry reasoning: in the protocol's own field or blocks (apart), or as a "
        "leading <think> block (think)",
    )
    mock.add_argument(
        "--down-after",
        type=float,
        metavar="S",
        help="an outage: after S seconds the port closes (connections refused)",
    )
    mock.add_argument(
        "--down-for", type=float, default=8.0, metavar="S", help="how long it is down"
    )
    mock.add_argument("--flap", action="store_true", help="go down and come back again and again")
    mock.set_defaults(handler=_mock_llm)


def _verify_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = sub.add_parser(
        "verify",
        help="re-derive replays and check everything a run folder claims (store, ledger, digests)",
    )
    verify.add_argument("paths", type=Path, nargs="+", help="replay files or run folders")
    verify.add_argument(
        "--expect",
        metavar="DIGEST",
        help="the run digest a run folder must have (as published when it was played)",
    )
    verify.set_defaults(handler=_verify)


def _games_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser("games", help="list the games and their rules versions").set_defaults(
        handler=_games
    )


def _report_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = sub.add_parser(
        "report", help="standings, head to head, fallback records or games of a run"
    )
    report.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    report.add_argument("--format", choices=("table", "json", "csv"), default="table")
    report.add_argument(
        "--what", choices=("standings", "h2h", "fallbacks", "games"), default="standings"
    )
    report.set_defaults(handler=_report)


def _program_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    program = sub.add_parser("program", help="program seats: check a player program")
    program_sub = program.add_subparsers(dest="program_command", metavar="COMMAND", required=True)
    check = program_sub.add_parser(
        "check", help="static check, then two games against the baseline"
    )
    check.add_argument("path", type=Path, help="a player program, e.g. players/greedy.py")
    check.add_argument("--game", required=True, help="a game programs play, e.g. connect-four")
    check.add_argument("--seed", type=int, default=1)
    check.add_argument("--node-budget", type=int, default=20_000)
    check.set_defaults(handler=_program)


def _rebuild_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rebuild = sub.add_parser(
        "rebuild", help="re-create a run's league.db from its replays (the replays are the truth)"
    )
    rebuild.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    rebuild.set_defaults(handler=_rebuild)


def _view_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    view = sub.add_parser("view", help="write (and optionally serve) the league and replay pages")
    view.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    view.add_argument(
        "--serve", action="store_true", help="serve on 127.0.0.1 and refresh as games finish"
    )
    view.add_argument("--port", type=int, default=8000)
    view.set_defaults(handler=_view)


def _prompt_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    prompt = sub.add_parser("prompt", help="print the exact prompt a seat would get")
    prompt.add_argument("--game", required=True, help="a game name, or rotate")
    prompt.add_argument("--seed", type=int, required=True)
    prompt.add_argument(
        "--ply", type=int, default=1, help="the ply to show (baseline plays up to it)"
    )
    prompt.add_argument("--game-index", type=int, choices=(1, 2), default=1)
    prompt.add_argument(
        "--seat", type=int, choices=(0, 1), help="which seat, in a simultaneous game"
    )
    prompt.add_argument("--config", type=Path, help="a run config, to use a policy's template")
    prompt.add_argument("--policy", help="the policy whose template to use (needs --config)")
    prompt.set_defaults(handler=_prompt)


_SUBCOMMANDS = (
    _run_command, _mock_llm_command, _verify_command, _games_command, _report_command,
    _program_command, _view_command, _prompt_command, _rebuild_command,
)  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Play language models, scripted baselines and programs against each other.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for build in _SUBCOMMANDS:
        build(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `arena` command; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    handler: _Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except ConfigError as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:  # damage a store's first reads did not show
        print(
            f"arena: a league store cannot be read ({exc}); the replays are the truth: "
            "`arena rebuild RUN` re-creates it from them",
            file=sys.stderr,
        )
        return 2


def _run(args: argparse.Namespace) -> int:
    from arena.play.prompts import PromptError

    config = load_config(args.config)
    resume = "new" if args.force_new else "anyway" if args.resume_anyway else "refuse"
    try:
        plan = plan_run(config, args.out, resume=resume)
    except PromptError as exc:
        raise ConfigError(str(exc)) from exc
    console = Console(stderr=True)
    # The folder is held before anything in it is written: a second run stops here.
    with hold_run_folder(plan.out):
        configure_logging(
            plan.out / "events.jsonl", console=True, verbose=args.verbose,
            fresh=resume == "new", redactor=plan.redactor,
        )  # fmt: skip
        try:
            mock = (args.mock_port, args.mock_faults) if args.mock_llm else None
            show = not args.no_progress and console.is_terminal
            result = _play_with_progress(
                plan, console, show=show, mock=mock, grace_s=args.grace, check=not args.no_preflight
            )
        finally:
            close_logging()
    stdout = Console()
    out = stdout if stdout.is_terminal else Console(width=140)
    for table in standings_tables(result.tables):
        out.print(table)
    if result.failed:
        out.print(
            f"[red]{len(result.failed)} episode(s) failed; see {plan.out / 'events.jsonl'}[/red]",
            highlight=False,
        )
        for failure in result.failed[:10]:
            out.print(
                f"  {failure['episode']}: {failure['error'][:200]}", highlight=False, markup=False
            )
    again = f" ({result.replays} of them played again after a no-contest)" if result.replays else ""
    print(
        f"{result.played} episode(s) played now{again}, {result.skipped} finished earlier; "
        f"replays, league.db, events and summary.json are in {plan.out}"
    )
    if result.stopped:
        print(f"stopped: {result.stopped}", file=sys.stderr)
    if result.interrupted:
        print(f"stopped early: run the same command again to resume {plan.out}", file=sys.stderr)
        return 130
    return 1 if result.failed else 0


def _play_with_progress(
    plan: RunPlan,
    console: Console,
    *,
    show: bool,
    mock: tuple[int, str] | None,
    grace_s: float,
    check: bool,
) -> RunResult:
    columns = (
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("in flight {task.fields[in_flight]} | fallbacks {task.fields[fallbacks]}"),
        TimeRemainingColumn(),
    )  # fmt: skip
    with Progress(*columns, console=console, disable=not show) as progress:
        episodes = plan.episode_count()
        task = progress.add_task(plan.config.run.name, total=episodes, in_flight=0, fallbacks=0)

        def on_episode(result: RunResult) -> None:
            progress.update(
                task, completed=result.played + result.skipped + len(result.failed),
                total=episodes + result.replays, in_flight=result.in_flight,
                fallbacks=result.fallbacks,
            )  # fmt: skip

        async def play() -> RunResult:
            if mock is None:
                return await execute(
                    plan, on_episode=on_episode, grace_s=grace_s, handle_signals=True,
                    check_endpoints=check,
                )  # fmt: skip
            from arena.mock_llm import build_app, serving

            port, faults = mock
            async with serving(build_app(faults=faults), port=port) as url:
                console.print(f"mock LLM serving on {url} (faults: {faults or 'none'})")
                return await execute(
                    plan, on_episode=on_episode, grace_s=grace_s, handle_signals=True,
                    check_endpoints=check,
                )  # fmt: skip

        return anyio.run(play)


def _rebuild(args: argparse.Namespace) -> int:
    from arena.league.rebuild import rebuild_store

    stored = rebuild_store(args.run)
    print(
        f"arena rebuild: {args.run / 'league.db'} re-created from {stored} replay(s). The digests "
        "it keeps are recomputed from the replays as they now are: only a run digest published "
        "before (`arena verify --expect`) still tells an edited replay."
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    from arena.league.report import load_league, render

    render(load_league(args.run), args.what, args.format, Console(width=160))
    return 0


def _program(args: argparse.Namespace) -> int:
    from arena.programs import ProgramRefused, check_program

    try:
        report = anyio.run(
            lambda: check_program(
                args.path, args.game, seed=args.seed, node_budget=args.node_budget
            )
        )
    except (ProgramRefused, ValueError) as exc:
        print(f"arena program check: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0 if report.passed else 1


def _view(args: argparse.Namespace) -> int:
    from arena.viewer import main_view

    return main_view(args.run, args.serve, args.port)


def _verify(args: argparse.Namespace) -> int:
    from arena.league.audit import audit_run
    from arena.record.verify import VerifyError, verify_file

    failed = False
    for target in args.paths:
        if (target / "replays").is_dir():
            audit = audit_run(target)
            problems = list(audit.problems)
            if args.expect and args.expect != audit.digest:
                problems.append(f"the run digest {audit.digest} is not the expected {args.expect}")
            for problem in problems:
                print(f"  {problem}", file=sys.stderr)
            print(
                f"arena verify: {target}: {audit.replays} replay(s), {audit.good} good, "
                f"{audit.bad} bad; {len(problems)} problem(s)"
            )
            print(
                f"run digest: {audit.digest}"
                + (" (as expected)" if args.expect and not problems else "")
            )
            failed = failed or bool(problems)
        elif not target.exists():
            print(f"arena verify: {target} does not exist", file=sys.stderr)
            failed = True
        else:
            try:
                verify_file(target)
                print(f"arena verify: {target}: re-derived, all fields match")
            except VerifyError as exc:
                print(f"arena verify: FAILED: {exc}", file=sys.stderr)
                failed = True
    return 1 if failed else 0


def _mock_llm(args: argparse.Namespace) -> int:
    from arena.mock_llm import main_mock_llm, parse_faults

    try:
        parse_faults(args.faults)
    except ValueError as exc:
        print(f"arena mock-llm: --faults: {exc}", file=sys.stderr)
        return 2
    print(
        f"mock LLM on http://{args.host}:{args.port} (OpenAI: /v1/chat/completions, "
        f"Anthropic: /v1/messages, Gemini: /v1beta/models/M:generateContent); Ctrl-C stops it"
    )
    from arena.mock_llm.outage import Outage

    outage = None if args.down_after is None else Outage(args.down_after, args.down_for, args.flap)
    main_mock_llm(
        args.host,
        args.port,
        args.latency_ms,
        args.faults,
        args.slow_ms,
        args.seed,
        outage,
        args.reasoning,
    )
    return 0


def _games(args: argparse.Namespace) -> int:
    for name in games.names():
        game = games.load(name)
        print(f"{name:14} family={game.family:10} rules_version={game.rules_version}")
    print(f"rotate         resolves by seed to one of {', '.join(games.ROTATION)}")
    return 0


def _prompt(args: argparse.Namespace) -> int:
    from arena.play.preview import preview, preview_prompt, stable_note

    options = {
        "game": args.game, "seed": args.seed, "ply": args.ply, "game_index": args.game_index,
        "seat": args.seat, "config": args.config, "policy": args.policy,
    }  # fmt: skip
    sys.stdout.write(preview(**options))
    prompt, chat = preview_prompt(**options)
    if not chat:
        print(f"arena prompt: {stable_note(prompt)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
