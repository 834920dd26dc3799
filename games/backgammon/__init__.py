"""Backgammon with verifiable dice, the AI CUP rules (rules in `rules.py`, dice in `dice.py`)."""

from __future__ import annotations

from games.backgammon.board import COLOURS, OPENING, pip_count, standing_of
from games.backgammon.dice import Roll, commitment, derived_card_seed, game_seed, roll_for_ply
from games.backgammon.notation import NONE
from games.backgammon.rules import PLY_CAP, Backgammon, BackgammonState, colour_of, seat_of

__all__ = [
    "COLOURS",
    "NONE",
    "OPENING",
    "PLY_CAP",
    "Backgammon",
    "BackgammonState",
    "Roll",
    "colour_of",
    "commitment",
    "derived_card_seed",
    "game_seed",
    "pip_count",
    "roll_for_ply",
    "seat_of",
    "standing_of",
]
