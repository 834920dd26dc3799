"""Stratego: rules in `rules.py`, anti-chase laws in `chase.py`, text in `render.py`."""

from __future__ import annotations

from games.stratego.rules import Stratego
from games.stratego.state import StrategoState

__all__ = ["Stratego", "StrategoState"]
