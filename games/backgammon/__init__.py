"""Backgammon with verifiable dice, the AI CUP rules (rules in `rules.py`, dice in `dice.py`).

`Backgammon` is the engine behind the common `games` API; `dice` derives
every roll from the card seed; `verify` re-derives a finished card from its
records; `render.board_text` draws a view for prompts.
"""

from __future__ import annotations

from games.backgammon.dice import (
    Roll,
    commitment,
    derived_card_seed,
    game_seed,
    opener,
    roll_for_ply,
)
from games.backgammon.notation import NONE
from games.backgammon.rules import PLY_CAP, Backgammon, colour_of, seat_of, standing_of
from games.backgammon.state import COLOURS, OPENING, BackgammonState, pip_count
from games.backgammon.verify import (
    CardPly,
    VerifyFailure,
    card_ply,
    verify_card,
)

__all__ = [
    "COLOURS",
    "NONE",
    "OPENING",
    "PLY_CAP",
    "Backgammon",
    "BackgammonState",
    "CardPly",
    "Roll",
    "VerifyFailure",
    "card_ply",
    "colour_of",
    "commitment",
    "derived_card_seed",
    "game_seed",
    "opener",
    "pip_count",
    "roll_for_ply",
    "seat_of",
    "standing_of",
    "verify_card",
]
