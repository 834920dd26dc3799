"""`arena games`: the games, each with what it is, its rules version, family and baseline."""

from __future__ import annotations

import argparse

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `arena games`; its handler is `handle`."""
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`arena games` with the parsed `args`; its exit status."""
    import inspect  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    import games  # loaded when this subcommand runs: `import arena.cli` loads no arena module

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
    import inspect  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    return (inspect.getdoc(documented) or "").partition("\n")[0]
