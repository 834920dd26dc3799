"""`arena program check PATH... [--game GAME]`: each player program's static check, then two
games against the baseline, on GAME, or on the games its `GAMES = (...)` names, else on
every game program seats play."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.programs import CheckReport

__all__ = ["add_arguments", "handle"]

_CHECK = """\
Each PATH is checked statically, then plays two games against the baseline on one seed,
each in a fresh child; it is refused if the two differ or it forfeits. With --game it is
checked on that game; without, on the games its module-level GAMES = ("connect-four", ...)
names (read from the source, never run), else on every game program seats play.

One line per file and game: the verdict, the file, the game, its SHA-256 (first 12 hex
digits) and the first problem of a refusal (a file the static check refuses is refused on
every game: one line, game -), then the count; one file on one game (or --verbose) gets
the whole report instead. Exit status 1 if any is refused; 2, before any check, for a
file that does not exist or a --game program seats do not play.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena program`; its handler is `handle`."""
    program_sub = parser.add_subparsers(dest="program_command", metavar="COMMAND", required=True)
    check = program_sub.add_parser(
        "check",
        help="static check, then two games against the baseline, for each file and game",
        description=_CHECK,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="player programs, e.g. players/greedy.py or players/*.py",
    )
    check.add_argument(
        "--game",
        help="the game to check every PATH on, e.g. connect-four (default: the games each "
        "names in its GAMES, else every game programs play)",
    )
    check.add_argument(
        "--verbose",
        action="store_true",
        help="the whole report of every check, not one line each",
    )
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


@dataclass(frozen=True)
class _Planned:
    """A file to check and the games to check it on, or why its GAMES is refused."""

    path: Path
    games: tuple[str, ...]
    refused: str = ""


def handle(args: argparse.Namespace) -> int:
    """`arena program check` with the parsed `args`; its exit status."""
    plan = _plan(args.paths, args.game)
    many = sum(len(planned.games) or 1 for planned in plan) > 1
    detailed = args.verbose or not many
    line = partial(
        _line,
        width=max(len(str(path)) for path in args.paths),
        games=max(len(game) for planned in plan for game in planned.games or ("-",)),
    )
    said: list[bool] = []  # each line's verdict: passed
    for planned in plan:
        if planned.refused:  # no game to check it on
            print(line("REFUSED", planned.path, "-", "", planned.refused))
            said.append(False)
        for game in planned.games:
            report = _check(args, planned.path, game)
            said.append(report.passed)
            # Refused before any game (unreadable, the static check): so on every game.
            every = not report.sha256 and len(planned.games) > 1
            if detailed:
                print(report.summary() + ("\n" if many else ""), flush=True)
            else:
                print(_report_line(line, report, "-" if every else game), flush=True)
            if every:
                break
    if len(said) > 1:
        print(
            f"{len(plan)} file(s), {len(said)} check(s): {said.count(True)} passed, "
            f"{said.count(False)} refused"
        )
    return 0 if all(said) else 1


def _check(args: argparse.Namespace, path: Path, game: str) -> CheckReport:
    """The check of the program at `path` on `game`, as `args` say."""
    import anyio  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    from arena.config import ConfigError
    from arena.programs import SandboxUnavailable, check_program

    check = partial(
        check_program,
        path,
        game,
        seed=args.seed,
        node_budget=args.node_budget,
        sandbox=args.sandbox,
    )
    try:
        return anyio.run(check)
    except SandboxUnavailable as exc:
        raise ConfigError(f"--sandbox {args.sandbox}: {exc}") from exc


def _plan(paths: Sequence[Path], game: str | None) -> list[_Planned]:
    """Each file with the games to check it on; a file that does not exist, or a --game
    programs do not play, is a ConfigError before any check."""
    from arena.config import ConfigError
    from arena.programs import ProgramRefused, declared_games, program_games

    for path in paths:
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "does not exist"
            raise ConfigError(
                f"{path} {what}: pass a player program's file, e.g. players/greedy.py"
            )
    if game is not None:
        if game not in program_games():
            raise ConfigError(
                f"--game {game}: program seats do not play it (they play: "
                f"{', '.join(program_games())})"
            )
        return [_Planned(path, (game,)) for path in paths]
    plan = []
    for path in paths:
        try:
            plan.append(_Planned(path, declared_games(path) or program_games()))
        except ProgramRefused as exc:
            plan.append(_Planned(path, (), exc.reason))
    return plan


def _line(
    verdict: str, path: Path, game: str, sha256: str, problem: str, *, width: int, games: int
) -> str:
    """One check as one line: verdict, file, game, short SHA-256, the first problem."""
    text = f"{verdict:<7}  {path!s:<{width}}  {game:<{games}}  {sha256[:12] or '-':<12}"
    return f"{text}  {problem}" if problem else text.rstrip()


def _report_line(line: partial[str], report: CheckReport, game: str) -> str:
    verdict = "passed" if report.passed else "REFUSED"
    first = report.problems[0] if report.problems else ""
    return line(verdict, Path(report.path), game, report.sha256, first)
