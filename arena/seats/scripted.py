"""A scripted baseline in a seat: the game's own (`default`), or one named (`random`, ...)."""

from __future__ import annotations

import random
from typing import Any

import anyio

import games
from arena.play.protocol import Decision, DecisionRequest, Seat

__all__ = ["ScriptedSeat"]


class ScriptedSeat(Seat):
    """Chooses at once from the game itself; it is never late and never wrong.

    `default` plays the game's baseline, a named one (`tactician`, `pincer`,
    `flank`) the game's `named_baseline` (the config check makes sure the name
    fits the game), and `random` the game's `random_move`, drawn with the seat's
    own seeded generator.
    """

    def __init__(self, baseline: str, rng: random.Random) -> None:
        self.baseline = baseline
        self._rng = rng

    def choose(self, game: games.Game[Any], state: Any, seat: int) -> Any:
        """The move this baseline plays in `state`."""
        if self.baseline == "random":
            return game.random_move(state, seat, self._rng)
        if self.baseline == "default":
            return game.baseline(state, seat)
        return game.named_baseline(state, seat, self.baseline)

    async def decide(self, request: DecisionRequest) -> Decision:
        """The baseline's move, as the seat's own reply."""
        started = anyio.current_time()
        move = self.choose(request.game, request.state, request.seat)
        return Decision(request.seat, move, "reply", anyio.current_time() - started)
