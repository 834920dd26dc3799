"""The `arena` command: run, verify, rebuild, report, view, prompt, games, mock-llm, program check.

Each subcommand has one builder (its arguments) and one handler (what it
does); every other module is imported by the handler that needs it, so that
`arena --help` and a run's first decision do not wait for what they never use.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.cli import argtypes

__all__ = ["main"]

_Handler = Callable[[argparse.Namespace], int]


def _run_command(run: argparse.ArgumentParser) -> None:
    run.add_argument("config", type=Path, help="a TOML run config, e.g. configs/quickstart.toml")
    run.add_argument("--out", type=Path, help="output folder (default runs/<run.name>)")
    run.add_argument("--verbose", action="store_true", help="show every event on the console")
    run.add_argument("--no-progress", action="store_true", help="no live progress bar")
    # argparse refuses the two together: one keeps the stored results, the other removes them
    resume = run.add_mutually_exclusive_group()
    resume.add_argument(
        "--force-new", action="store_true", help="start the run over, removing its old results"
    )
    resume.add_argument(
        "--resume-anyway",
        action="store_true",
        help="resume even though the config changed since the run began (a change of "
        "run.concurrency or run.endpoint_down_s alone needs no flag)",
    )
    run.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds the games in flight get to finish after Ctrl-C; a second Ctrl-C stops at "
        "once (default %(default)s)",
    )
    run.add_argument(
        "--mock-llm",
        action="store_true",
        help="serve the mock LLM on 127.0.0.1:PORT for the length of the run, and point every "
        "llm policy at it: each base_url's host and port become the mock's, its path is kept "
        "(no API key is needed)",
    )
    run.add_argument(
        "--mock-port",
        type=argtypes.port,
        default=8765,
        metavar="PORT",
        help="the port of --mock-llm's server (default %(default)s)",
    )
    run.add_argument(
        "--no-preflight",
        action="store_true",
        help="do not probe the models' endpoints before the first game",
    )
    run.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="where the episodes are played, instead of the config's run.executor: this "
        "process, or a Ray cluster (docs/cluster.md; needs pip install -e '.[ray]')",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="the Ray cluster to play on, e.g. 10.0.0.5:6379 (implies --executor ray; default "
        "RAY_ADDRESS, else a Ray instance started on this machine for the run)",
    )
    run.add_argument(
        "--play-port",
        type=argtypes.port,
        default=0,
        metavar="PORT",
        help="the port of the play page a run with a human policy serves on 127.0.0.1 "
        "(default: a free one; the URL is printed, with its token)",
    )
    run.add_argument(
        "--mock-faults",
        default="",
        metavar="RATES",
        help='fault rates for --mock-llm, as for `arena mock-llm --faults`, e.g. "429=0.03,'
        'prose=0.05" (default: none)',
    )
    run.set_defaults(handler=_run)


def _mock_llm_command(mock: argparse.ArgumentParser) -> None:
    mock.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default %(default)s)"
    )
    mock.add_argument(
        "--port",
        type=argtypes.port,
        default=8765,
        help="the port to listen on (default %(default)s)",
    )
    mock.add_argument("--latency-ms", type=int, default=0, help="added to every answer")
    mock.add_argument(
        "--faults",
        default="",
        help='seeded fault rates, e.g. "429=0.05,500=0.02,529=0.01,hang=0.01,slow=0.02,'
        'garbage=0.02,truncated=0.02,prose=0.02,illegal=0.05"',
    )
    mock.add_argument("--slow-ms", type=int, default=2000, help="how late a `slow` answer comes")
    mock.add_argument(
        "--seed", type=int, default=0, help="seeds the faults and answers (default %(default)s)"
    )
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


def _verify_command(verify: argparse.ArgumentParser) -> None:
    verify.add_argument("paths", type=Path, nargs="+", help="replay files or run folders")
    verify.add_argument(
        "--expect",
        metavar="DIGEST",
        help="the run digest a run folder must have (as published when it was played)",
    )
    verify.set_defaults(handler=_verify)


def _games_command(listing: argparse.ArgumentParser) -> None:
    listing.set_defaults(handler=_games)


def _report_command(report: argparse.ArgumentParser) -> None:
    from arena.league.formats import FORMATS, WHATS

    report.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    report.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table: for reading; json (a list) or csv: the same rows, one record a row; "
        "the whole summary is RUN/summary.json (default %(default)s)",
    )
    report.add_argument(
        "--what",
        choices=WHATS,
        default="standings",
        help="standings: per game and overall, with ratings; h2h: each pair's W-D-L (NC); "
        "fallbacks: every fallback record; games: every game's result; sprt: the sequential "
        "test of an [run.sprt] run (default %(default)s)",
    )
    report.set_defaults(handler=_report)


def _program_command(program: argparse.ArgumentParser) -> None:
    program_sub = program.add_subparsers(dest="program_command", metavar="COMMAND", required=True)
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
    check.set_defaults(handler=_program)


def _rebuild_command(rebuild: argparse.ArgumentParser) -> None:
    rebuild.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    rebuild.set_defaults(handler=_rebuild)


def _view_command(view: argparse.ArgumentParser) -> None:
    view.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    view.add_argument(
        "--serve", action="store_true", help="serve on 127.0.0.1 and refresh as games finish"
    )
    view.add_argument(
        "--port",
        type=argtypes.port,
        default=8000,
        help="the port --serve listens on (default %(default)s)",
    )
    view.set_defaults(handler=_view)


def _prompt_command(prompt: argparse.ArgumentParser) -> None:
    prompt.add_argument("--game", required=True, help="a game name (`arena games`), or rotate")
    prompt.add_argument(
        "--seed",
        type=argtypes.match_seed,
        required=True,
        help="the match seed, >= 1 (rotate resolves by it); backgammon deals card 1 of a "
        '`dice = "derived"` run with this master seed, unless --card-seed names a card',
    )
    prompt.add_argument(
        "--card-seed",
        type=argtypes.card_seed,
        metavar="HEX",
        help="backgammon: the card's seed, 64 hex digits (e.g. one revealed in ledger.jsonl)",
    )
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


def _rescore_command(rescore: argparse.ArgumentParser) -> None:
    rescore.add_argument("run", type=Path, help="a run folder, e.g. runs/quickstart")
    rescore.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: for reading; json: the totals and each game's counts and first change "
        "(default %(default)s)",
    )
    rescore.set_defaults(handler=_rescore)


_Builder = Callable[[argparse.ArgumentParser], None]

_SUBCOMMANDS: dict[str, tuple[str, _Builder]] = {
    "run": ("play every match of a config and print the standings", _run_command),
    "mock-llm": (
        "a local server speaking the OpenAI, Anthropic and Gemini protocols",
        _mock_llm_command,
    ),
    "verify": (
        "re-derive replays and check everything a run folder claims (store, ledger, digests)",
        _verify_command,
    ),
    "games": ("list the games: what each is, its baseline and rules version", _games_command),
    "report": ("standings, head to head, fallback records or games of a run", _report_command),
    "program": ("program seats: check a player program", _program_command),
    "view": ("write (and optionally serve) the league and replay pages", _view_command),
    "prompt": ("print the exact prompt a seat would get", _prompt_command),
    "rebuild": (
        "re-create a run's league.db from its replays (the replays are the truth)",
        _rebuild_command,
    ),
    "rescore": (
        "re-read a run's recorded replies with the current readers and show which "
        "decisions would change (asks no model, writes nothing)",
        _rescore_command,
    ),
}
"""Each subcommand: its help line, and the builder of its arguments."""


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `arena` parser. Every subcommand is listed, but only the one `argv` names gets
    its arguments (the top level takes no option with a value, so its first word that is
    not an option is the subcommand): building all of them is most of a run's parsing."""
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Play language models, scripted baselines and programs against each other.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    words = sys.argv[1:] if argv is None else argv
    named = next((word for word in words if not word.startswith("-")), None)
    for name, (help_line, build) in _SUBCOMMANDS.items():
        command = sub.add_parser(name, help=help_line)
        if name == named:
            build(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `arena` command; returns the exit status."""
    parser = _parser(argv)
    args = parser.parse_args(argv)
    handler: _Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    import sqlite3

    from arena.config import ConfigError

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
    import arena.logs  # first of all: it imports structlog without rich (see arena.logs)
    from arena.cli.console import Stderr, stdout
    from arena.cli.playing import play_with_progress, served_by_mock
    from arena.config import ConfigError, load_config
    from arena.league.lock import hold_run_folder
    from arena.league.plan import plan_run
    from arena.play.prompts import PromptError

    if args.mock_faults and not args.mock_llm:
        raise ConfigError("--mock-faults sets the faults of --mock-llm's server: add --mock-llm")
    if args.mock_llm:
        from arena.mock_llm import parse_faults

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
    resume = "new" if args.force_new else "anyway" if args.resume_anyway else "refuse"
    try:
        plan = plan_run(config, args.out, resume=resume)
    except PromptError as exc:
        raise ConfigError(str(exc)) from exc
    console = Stderr()
    # The folder is held before anything in it is written: a second run stops here.
    with hold_run_folder(plan.out):
        arena.logs.configure_logging(
            plan.out / "events.jsonl", console=True, verbose=args.verbose,
            fresh=resume == "new", redactor=plan.redactor,
        )  # fmt: skip
        try:
            mock = (args.mock_port, args.mock_faults) if args.mock_llm else None
            show = not args.no_progress and console.rich.is_terminal
            result = play_with_progress(
                plan, console, show=show, mock=mock, grace_s=args.grace,
                check=not args.no_preflight, ray_address=args.ray_address,
                play_port=args.play_port,
            )  # fmt: skip
        finally:
            arena.logs.close_logging()
    from arena.league.report import sprt_lines, standings_tables

    out = stdout()
    for table in standings_tables(result.tables, out.width):
        out.print(table)
    sprt = result.stopping.get("sprt")
    if sprt:
        for line in sprt_lines(sprt):
            out.print(line, highlight=False, markup=False)
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
        f"{result.played} episode(s) played now{again}, {result.skipped} finished earlier.\n"
        f"Replays, league.db, events and summary.json are in {plan.out}\n"
        f"(`arena view {plan.out} --serve` shows them in the browser)"
    )
    if result.stopped_by:
        budget = result.stopped_by.startswith("budget")
        print(
            f"no new match started: {result.stopped_by}"
            + ("; raise it and run the same command again to continue" if budget else ""),
            file=sys.stderr,
        )
    if result.stopped:
        print(f"stopped: {result.stopped}", file=sys.stderr)
    if result.misconfigured:
        print(f"fix the endpoint, then run the same command again to resume {plan.out}",
              file=sys.stderr)  # fmt: skip
        return 3
    if result.interrupted:
        print(f"stopped early: run the same command again to resume {plan.out}", file=sys.stderr)
        return 130
    return 1 if result.failed else 0


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
    from arena.cli.console import stdout
    from arena.league.report import load_league, render

    render(load_league(args.run), args.what, args.format, stdout())
    return 0


def _program(args: argparse.Namespace) -> int:
    import anyio

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


def _rescore(args: argparse.Namespace) -> int:
    from arena.play.rescore import rescore_main

    return rescore_main(args)


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
            print(
                f"results digest: {audit.results} (timings masked: a run of the same config "
                "with the same replies has the same, locally or on a cluster)"
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
    import inspect

    import games

    for name in games.names():
        game = games.load(name)
        print(f"{name:14} {_first_line(inspect.getmodule(game))}")
        how = _first_line(type(game).baseline).rstrip(".")
        baseline = game.baseline_name or f"default: {how[:1].lower()}{how[1:]}"
        print(
            f"{'':14} rules version {game.rules_version}, family {game.family}; baseline {baseline}"
        )
    print(f"rotate         resolves by the match seed to one of {', '.join(games.ROTATION)}")
    print('Every game also takes baseline = "random"; see docs/rules.md for the rules.')
    return 0


def _first_line(documented: object) -> str:
    """The first line of an object's docstring (a game module's says what the game is)."""
    import inspect

    return (inspect.getdoc(documented) or "").partition("\n")[0]


def _prompt(args: argparse.Namespace) -> int:
    import games
    from arena.config import ConfigError
    from arena.play.preview import preview_prompt, shown, stable_note

    known = [*games.names(), "rotate"]
    if args.game not in known:
        raise ConfigError(f"--game: unknown game {args.game!r} (known: {', '.join(known)})")
    prompt, chat = preview_prompt(
        game=args.game, seed=args.seed, ply=args.ply, game_index=args.game_index,
        seat=args.seat, config=args.config, policy=args.policy, card_seed=args.card_seed,
    )  # fmt: skip
    sys.stdout.write(shown(prompt, chat))
    if not chat:
        print(f"arena prompt: {stable_note(prompt)}", file=sys.stderr)
    return 0
