"""A person in a seat: each decision waits for a move from the run's play page.

The seat opens a turn on its table of the desk (`arena.seats.desk`) and
waits for the person under its deadlines: the policy's own (`first_reply_s`,
`decision_s`, 120 s by default) in games whose deadlines a run may set (the
board games and Stratego), the game's own where its clock is part of its
rules (the battle's turn, backgammon's play), as for every seat there. Every
try is read by the engine as the person sends it: a refused one is answered
on the page with the engine's message and recorded as an attempt, and the
person may try again until `decision_s`. With no accepted move by then the
game's baseline plays and the fallback record says `timeout`, as for a model.

The person's first decision of a game is held: its clock starts when the
play page shows its game, or `first_open_s` after it was asked if the page
did not by then, so a run started before its page was opened does not spend
the person's time. Later decisions start at once. Latency is the
person's think time, from the clock's start. Inside a game the person is
only the seat's alias.
"""

from __future__ import annotations

from typing import Any, ClassVar

import anyio

import games
from arena.config import Deadlines
from arena.play.decisions import NO_REPLY
from arena.play.protocol import Decision, DecisionAttempt, DecisionRequest, Seat, Source
from arena.record.causes import side_of
from arena.seats.desk import Table

__all__ = ["HumanSeat"]


class HumanSeat(Seat):
    """One person's seat in one game, at its table of the run's desk."""

    prompted: ClassVar[bool] = True
    """Shown the legal moves, and, as a model is, not asked once the battle's clock has
    no room for a full decision."""

    def __init__(self, table: Table, deadlines: Deadlines, first_open_s: float) -> None:
        self.table = table
        self.deadlines = deadlines
        self.first_open_s = first_open_s
        self.asked = False
        """Whether the seat was asked for a decision in this game."""

    async def decide(self, request: DecisionRequest) -> Decision:
        """The person's accepted move, or the baseline's with cause `timeout`."""
        own = request.game.match_format.run_deadlines
        deadlines = self.deadlines if own else request.deadlines
        table = self.table
        held, self.asked = not self.asked, True
        turn = table.open_turn(request, deadlines.first_reply_s, deadlines.decision_s, held=held)
        try:
            if held:  # until the page shows it, or `first_open_s`
                with anyio.move_on_after(self.first_open_s):
                    await turn.running.wait()
                turn.start()
            with anyio.move_on_after(turn.first_end - anyio.current_time()):
                await turn.tried.wait()
            if turn.tries:
                with anyio.move_on_after(turn.end - anyio.current_time()):
                    await turn.done.wait()
        finally:
            table.close_turn(turn)
        latency = turn.elapsed()
        tries = tuple(turn.tries)
        if turn.move is not None:
            source: Source = "reply" if len(tries) == 1 else "retry"
            return Decision(request.seat, turn.move, source, latency, tries, extracted=turn.written)
        late = DecisionAttempt(
            len(tries) + 1,
            "",
            anyio.current_time() - turn.last,
            None,
            "timeout",
            NO_REPLY,
            side=side_of("timeout", False),
        )
        move = request.game.baseline(request.state, request.seat)
        return Decision(request.seat, move, "fallback", latency, (*tries, late), cause="timeout")

    def observe(self, state: Any, moved: str | None) -> None:
        """The page redraws the game at `state`."""
        self.table.observe(state, moved)

    def ended(self, outcome: games.Outcome) -> None:
        """The page shows the result."""
        self.table.end(outcome)
