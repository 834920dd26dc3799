"""Which games exist, how to load one, and the board gauntlet's rotation."""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from games.core import Game

__all__ = [
    "ROTATION",
    "board_text",
    "families",
    "load",
    "move_help",
    "names",
    "program_games",
    "resolve_entry",
    "resolve_rotation",
]

# name -> "module:Class"; modules import lazily so `arena --help` stays fast.
_GAMES: dict[str, str] = {
    "backgammon": "games.backgammon:Backgammon",
    "battle": "games.battle:Battle",
    "breakthrough": "games.breakthrough:Breakthrough",
    "connect-four": "games.connect_four:ConnectFour",
    "hex": "games.hex:Hex",
    "quoridor": "games.quoridor:Quoridor",
    "stratego": "games.stratego:Stratego",
}

ROTATION: tuple[str, ...] = ("connect-four", "breakthrough", "hex", "quoridor")
"""The board gauntlet's rotation order, indices 0..3."""


def names() -> list[str]:
    """Every registered game, sorted."""
    return sorted(_GAMES)


def resolve_rotation(seed: int) -> str:
    """The board game `rotate` stands for under `seed` (seed 0 must be drawn first)."""
    if seed == 0:
        raise ValueError("seed 0 means 'draw one': draw a concrete seed before resolving")
    return ROTATION[((seed % 4) + 4) % 4]


def resolve_entry(entry: str, seed: int) -> str:
    """The game a config's game entry stands for under `seed`: `rotate` resolves by seed."""
    return resolve_rotation(seed) if entry == "rotate" else entry


@cache
def program_games() -> tuple[str, ...]:
    """The games program seats play: those whose match format gives a program timeout."""
    return tuple(n for n in names() if load(n).match_format.program_timeout_s)


@cache
def families() -> tuple[str, ...]:
    """The prompt families of the registered games, sorted (each game declares its own)."""
    return tuple(sorted({load(name).family for name in names()}))


def load(name: str, **params: Any) -> Game[Any]:
    """The rules of game `name` with `params`; unknown names and parameters are errors."""
    target = _GAMES.get(name)
    if target is None:
        raise ValueError(f"unknown game {name!r} (known: {', '.join(names())})")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        game: Game[Any] = cls(**params)
    except TypeError as exc:
        raise ValueError(f"game {name!r} does not take parameters {sorted(params)}: {exc}") from exc
    return game


def _render_module(name: str) -> Any:
    target = _GAMES.get(name)
    if target is None:
        raise ValueError(f"unknown game {name!r} (known: {', '.join(names())})")
    return importlib.import_module(target.partition(":")[0] + ".render")


def board_text(name: str, view: dict[str, Any]) -> str:
    """Draw a view of game `name` as plain text, by the game's own `render` module."""
    text: str = _render_module(name).board_text(view)
    return text


def move_help(name: str, view: dict[str, Any]) -> str:
    """How to write a move of game `name` (its render module's `move_help`), or ''.

    Games whose moves cannot be listed (the battle's orders) explain their
    schema here; a retry prompt carries it in place of the legal-move list.
    """
    helper = getattr(_render_module(name), "move_help", None)
    return str(helper(view)) if helper is not None else ""
