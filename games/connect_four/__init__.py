"""Connect-four, the board gauntlet's first game: rules in `rules`, prompt drawing in `render`."""

from __future__ import annotations

from games.connect_four.rules import ConnectFour, ConnectFourState

__all__ = ["ConnectFour", "ConnectFourState"]
