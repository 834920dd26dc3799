"""Pure, deterministic rules engines for the arena's games.

No I/O, no asyncio, and no imports from `arena` or `providers` (a test parses
the imports). The public surface is this module's `__all__`.
"""

from __future__ import annotations

from games.core import (
    COMPLETE,
    DEADLINE,
    Game,
    Illegal,
    MatchFormat,
    MoveError,
    Outcome,
    ProgramHelper,
    TurnGame,
    Unreadable,
    is_card_seed,
)
from games.registry import (
    ROTATION,
    board_text,
    families,
    load,
    move_help,
    names,
    program_games,
    resolve_entry,
    resolve_rotation,
)

__all__ = [
    "COMPLETE",
    "DEADLINE",
    "ROTATION",
    "Game",
    "Illegal",
    "MatchFormat",
    "MoveError",
    "Outcome",
    "ProgramHelper",
    "TurnGame",
    "Unreadable",
    "board_text",
    "families",
    "is_card_seed",
    "load",
    "move_help",
    "names",
    "program_games",
    "resolve_entry",
    "resolve_rotation",
]
