"""The `arena` command: run, verify, rebuild, report, view, prompt, games, mock-llm, program
check, author.

Each subcommand is one module of this package, holding its arguments (`add_arguments`)
and its handler (`handle`); only the module of the subcommand named is imported, and it
imports what its handler needs when it runs, so that `arena --help` and a run's first
decision do not wait for what they never use.

    run        play every match of a config, then the standings (console: what it shows;
               playing: the plan played, with the mock LLM and the play page around it)
    mock_llm   the local mock server
    verify     re-derive replays, check a run folder
    games      list the games
    report     a run's tables
    program    check player programs
    author     models write programs of a game (models as authors)
    view       the league and replay pages
    prompt     the exact prompt a seat would get
    rebuild    a run's league.db from its replays
    rescore    a run's replies re-read with the current readers
    argtypes   the argument types the subcommands share (ports, seeds)
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

__all__ = ["main"]

_Handler = Callable[[argparse.Namespace], int]
_Builder = Callable[[argparse.ArgumentParser], None]

_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("play every match of a config and print the standings", "run"),
    "mock-llm": ("a local server speaking the OpenAI, Anthropic and Gemini protocols", "mock_llm"),
    "verify": (
        "re-derive replays and check everything a run folder claims (store, ledger, digests)",
        "verify",
    ),
    "games": ("list the games: what each is, its baseline and rules version", "games"),
    "report": ("standings, head to head, fallback records or games of a run", "report"),
    "program": ("program seats: check player programs", "program"),
    "author": ("models as authors: each model writes a program of a game, checked", "author"),
    "view": ("write (and optionally serve) the league and replay pages", "view"),
    "prompt": ("print the exact prompt a seat would get", "prompt"),
    "rebuild": (
        "re-create a run's league.db from its replays (the replays are the truth)",
        "rebuild",
    ),
    "rescore": (
        "re-read a run's recorded replies with the current readers and show which "
        "decisions would change (asks no model, writes nothing)",
        "rescore",
    ),
}
"""Each subcommand: its help line, and its module in `arena.cli` (arguments and handler)."""


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `arena` parser. Every subcommand is listed, but only the one `argv` names gets
    its arguments (the top level takes no option with a value, so its first word that is
    not an option is the subcommand): building all of them is most of a run's parsing, and
    importing their modules would be more."""
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Play language models, scripted baselines and programs against each other.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    words = sys.argv[1:] if argv is None else argv
    named = next((word for word in words if not word.startswith("-")), None)
    for name, (help_line, module) in _SUBCOMMANDS.items():
        command = sub.add_parser(name, help=help_line)
        if name == named:
            build: _Builder = importlib.import_module(f"arena.cli.{module}").add_arguments
            build(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `arena` command; returns the exit status. A user's error (a config
    refused, a busy port, a damaged store) is one line on stderr and exit status 2 (3 for a
    stop that the same command resumes once its cause is fixed, as a changed private copy of
    a program due to be revealed)."""
    parser = _parser(argv)
    args = parser.parse_args(argv)
    handler: _Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except BrokenPipeError:  # the reader went away (`arena games | head`): nothing to tell
        _quiet_stdout()
        return 1
    except Exception as exc:
        said = _user_error(exc)
        if said is None:
            raise
        print(f"arena: {said}", file=sys.stderr)
        return _exit_status(exc)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit finds no closed pipe
    (it would print a second BrokenPipeError, with no traceback but a line of noise)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _exit_status(exc: BaseException) -> int:
    """A user's error's exit status: 2, or the `exit_status` its class names (3: a stop that
    the same command resumes once its cause is fixed)."""
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return _exit_status(exc.exceptions[0])
    status = getattr(exc, "exit_status", 2)
    return status if isinstance(status, int) else 2


def _user_error(exc: BaseException) -> str | None:
    """What to tell the user of `exc`, one of the errors their command can make (found in a
    task group alone, as a server's start is); None for a fault, whose traceback shows."""
    import sqlite3  # the errors main() reports: loaded once a subcommand has failed

    from arena.config import ConfigError

    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return _user_error(exc.exceptions[0])
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, sqlite3.DatabaseError):  # damage a store's first reads did not show
        return (
            f"a league store cannot be read ({exc}); the replays are the truth: "
            "`arena rebuild RUN` re-creates it from them"
        )
    if isinstance(exc, OSError):
        from arena.asgi import PortUnavailable  # only a server raises it: loaded if one did

        if isinstance(exc, PortUnavailable):
            return str(exc)
    return None
