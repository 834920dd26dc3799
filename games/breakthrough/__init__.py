"""Breakthrough 6 x 6, the board gauntlet's second game (rules in `rules.py`)."""

from __future__ import annotations

from games.breakthrough.rules import PLY_CAP, SIDES, Breakthrough, Position, from_rows, standing_of

__all__ = ["PLY_CAP", "SIDES", "Breakthrough", "Position", "from_rows", "standing_of"]
