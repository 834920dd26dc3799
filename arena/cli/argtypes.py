"""Argument types the subcommands share: argparse `type=` readers, whose refusals argparse
prints as `arena COMMAND: error: argument --FLAG: ...` with exit status 2; and `run_folder`,
the check a handler makes of a run folder (its refusal is `main`'s one line, no usage)."""

from __future__ import annotations

import argparse
from pathlib import Path

from games import is_card_seed

__all__ = ["card_seed", "match_seed", "port", "run_folder"]

_RUN_MARKS = ("replays", "config.resolved.json")
"""What a folder `arena run` wrote holds (the config at once, replays/ with the first game)."""


def port(text: str) -> int:
    """An argparse type: a TCP port number."""
    number = int(text) if text.isdigit() else 0
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)")
    return number


def match_seed(text: str) -> int:
    """An argparse type: an integer match seed; a card's hex seed is pointed at --card-seed."""
    if is_card_seed(text):
        raise argparse.ArgumentTypeError(
            f"{text[:8]}... is a backgammon card's seed: pass it as --card-seed HEX, "
            "and an integer match seed as --seed"
        )
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer seed") from None


def card_seed(text: str) -> str:
    """An argparse type: a backgammon card's seed, 64 hex digits."""
    if not is_card_seed(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a card seed (64 hex digits)")
    return text


def run_folder(path: Path) -> Path:
    """`path`, if it is a folder `arena run` wrote; a `ConfigError` naming the fix if not."""
    from arena.config import ConfigError  # the handlers' error: loaded when one checks

    if not path.exists():
        raise ConfigError(f"{path} does not exist; pass a run folder, e.g. runs/quickstart")
    if not any((path / mark).exists() for mark in _RUN_MARKS):
        raise ConfigError(
            f"{path} is not a run folder (it has no replays/ nor config.resolved.json); pass "
            "the folder `arena run` wrote, e.g. runs/quickstart"
        )
    return path
