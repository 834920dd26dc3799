"""`arena games`: the games, each with what it is, its rules version, family and baselines."""

from __future__ import annotations

import argparse
from typing import Any

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
        print(f"{name:14} {_summary(inspect.getmodule(game))}")
        print(f"{'':14} rules version {game.rules_version}, family {game.family}")
        for line in _baselines(game):
            print(f"{'':14} {line}")
    print(f"rotate         resolves by the match seed to one of {', '.join(games.ROTATION)}")
    print('A scripted policy plays one: baseline = "<name>" ("default" when left out); the')
    print("rules and the baselines are in docs/rules.md.")
    return 0


def _baselines(game: Any) -> list[str]:
    """What each baseline a scripted policy may name plays in `game`: `default` (the game's
    own, under its name where it has one), every other named one, and `random`."""
    own = game.baseline_name
    lines = [
        f"baseline {own} (default): {game.baselines[own]}"
        if own
        else f"baseline default: {_lowered(_summary(type(game).baseline))}"
    ]
    lines += [f"baseline {n}: {how}" for n, how in game.baselines.items() if n != own]
    lines.append(f"baseline random: {_lowered(_summary(type(game).random_move))}")
    return lines


def _lowered(text: str) -> str:
    """A docstring's summary as the tail of a line: first letter lowered, no final period."""
    text = text.rstrip(".")
    return text[:1].lower() + text[1:]


def _summary(documented: object) -> str:
    """The first paragraph of an object's docstring, on one line (a game module's says what
    the game is)."""
    import inspect  # loaded when this subcommand runs: `import arena.cli` loads no arena module

    paragraph = (inspect.getdoc(documented) or "").partition("\n\n")[0]
    return " ".join(paragraph.split())
