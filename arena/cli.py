"""The `arena` command: run, verify, games, prompt."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

import games
from arena.config import ConfigError, load_config
from arena.logs import close_logging, configure_logging
from arena.run import RunPlan, RunResult, execute, plan_run
from arena.standings import GameSummary, Row, by_game, standings

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Play language models, scripted baselines and programs against each other.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="play every match of a config and print the standings")
    run.add_argument("config", type=Path, help="a TOML run config, e.g. configs/quickstart.toml")
    run.add_argument("--out", type=Path, help="output folder (default runs/<run.name>)")
    run.add_argument("--verbose", action="store_true", help="show every event on the console")
    run.add_argument("--no-progress", action="store_true", help="no live progress bar")
    run.add_argument(
        "--mock-llm",
        action="store_true",
        help="serve the mock LLM on 127.0.0.1:--mock-port for the length of the run",
    )
    run.add_argument("--mock-port", type=int, default=8765)
    run.add_argument(
        "--mock-faults", default="", help="fault rates for --mock-llm, as for `arena mock-llm`"
    )

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

    verify = sub.add_parser("verify", help="re-derive replays and check every recorded field")
    verify.add_argument("paths", type=Path, nargs="+", help="replay files or run folders")

    sub.add_parser("games", help="list the games and their rules versions")

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `arena` command; returns the exit status."""
    args = _parser().parse_args(argv)
    handlers = {
        "run": _run,
        "verify": _verify,
        "games": _games,
        "prompt": _prompt,
        "mock-llm": _mock_llm,
    }
    if args.command is None:
        _parser().print_help()
        return 0
    try:
        return handlers[args.command](args)
    except ConfigError as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from arena.prompts import PromptError

    config = load_config(args.config)
    try:
        plan = plan_run(config, args.out)
    except PromptError as exc:
        raise ConfigError(str(exc)) from exc
    console = Console(stderr=True)
    configure_logging(plan.out / "events.jsonl", console=True, verbose=args.verbose)
    try:
        mock = (args.mock_port, args.mock_faults) if args.mock_llm else None
        show = not args.no_progress and console.is_terminal
        result = _play_with_progress(plan, console, show=show, mock=mock)
    finally:
        close_logging()
    stdout = Console()
    _print_standings(plan, result, stdout if stdout.is_terminal else Console(width=120))
    print(f"replays, events and summary.json are in {plan.out}")
    return 1 if result.failed else 0


def _play_with_progress(
    plan: RunPlan, console: Console, *, show: bool, mock: tuple[int, str] | None = None
) -> RunResult:
    total = plan.episode_count()
    fallbacks = 0
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("fallbacks {task.fields[fallbacks]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=not show) as progress:
        task = progress.add_task(plan.config.run.name, total=total, fallbacks=0)

        def on_episode(summary: GameSummary | None, done: int) -> None:
            nonlocal fallbacks
            if summary is not None:
                fallbacks += sum(sum(f.values()) for f in summary.fallbacks)
            progress.update(task, completed=done, fallbacks=fallbacks)

        async def play() -> RunResult:
            if mock is None:
                return await execute(plan, on_episode=on_episode)
            from arena.mock_llm import build_app, serving

            port, faults = mock
            async with serving(build_app(faults=faults), port=port) as url:
                console.print(f"mock LLM serving on {url} (faults: {faults or 'none'})")
                return await execute(plan, on_episode=on_episode)

        return anyio.run(play)


def _table(title: str, rows: list[Row]) -> Table:
    table = Table(title=title)
    width = max((len(r.policy) for r in rows), default=6)
    table.add_column("policy", no_wrap=True, min_width=width)
    for column in ("games", "W", "D", "L", "NC", "mean", "fallbacks", "latency"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("fallbacks by cause", overflow="fold")
    for r in rows:
        causes = "\n".join(f"{c} {n}" for c, n in sorted(r.fallbacks.items())) or "-"
        table.add_row(
            r.policy,
            str(r.games),
            str(r.wins),
            str(r.draws),
            str(r.losses),
            str(r.no_contest),
            f"{r.mean_score:+.3f}",
            f"{sum(r.fallbacks.values())} ({r.fallback_rate:.1%})",
            f"{r.mean_latency_s * 1000:.0f} ms",
            causes,
        )
    return table


def _print_standings(plan: RunPlan, result: RunResult, console: Console) -> None:
    grouped = by_game(result.games)
    for name, group in grouped.items():
        console.print(
            _table(f"{name} (mean game score)", standings(group, plan.policies, game=name))
        )
    if len(grouped) > 1:
        overall = standings(result.games, plan.policies)
        console.print(_table("overall (+1 win, 0 draw, -1 loss per game)", overall))
    if result.failed:
        console.print(f"[red]{len(result.failed)} episode(s) failed; see events.jsonl[/red]")


def _verify(args: argparse.Namespace) -> int:
    from arena.verify import VerifyError, replay_paths, verify_file

    checked = 0
    try:
        for target in args.paths:
            for path in replay_paths(target):
                verify_file(path)
                checked += 1
    except VerifyError as exc:
        print(f"arena verify: FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"arena verify: {checked} replay(s) re-derived, all fields match")
    return 0


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
    main_mock_llm(args.host, args.port, args.latency_ms, args.faults, args.slow_ms, args.seed)
    return 0


def _games(args: argparse.Namespace) -> int:
    for name in games.names():
        game = games.load(name)
        print(f"{name:14} family={game.family:10} rules_version={game.rules_version}")
    print(f"rotate         resolves by seed to one of {', '.join(games.ROTATION)}")
    return 0


def _prompt(args: argparse.Namespace) -> int:
    from arena.prompt_preview import preview

    text = preview(
        game=args.game,
        seed=args.seed,
        ply=args.ply,
        game_index=args.game_index,
        seat=args.seat,
        config=args.config,
        policy=args.policy,
    )
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
