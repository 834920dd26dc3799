"""Quoridor, 9 x 9 with 10 walls a side (the board gauntlet's fourth game)."""

from __future__ import annotations

from games.quoridor.rules import Quoridor, QuoridorState

__all__ = ["Quoridor", "QuoridorState"]
