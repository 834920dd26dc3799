"""Hex, the board gauntlet's third game: rules in `rules`, prompt drawing in `render`."""

from __future__ import annotations

from games.hex.rules import Hex, HexState

__all__ = ["Hex", "HexState"]
