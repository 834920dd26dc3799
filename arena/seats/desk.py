"""The desk: every seat a person plays in a run, as the play page reads and answers it.

A `Table` is one human seat in one game: the board as that seat may see it,
the plies so far as its prompt would list them, and the open `Turn` while a
decision waits for the person. The seat (`arena.seats.human`) opens a turn
and waits on it under its deadlines; the play page (`arena.viewer.play`)
draws the tables and offers tries to them. A try is read by the engine (`Game.parse`) at once: a
refused one is answered with the engine's message while the deadline runs
on, an accepted one ends the turn. Every change bumps the desk's `version`,
which the page's long poll waits on. Nothing here blocks: the page and the
games share one event loop.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

import games
from arena.play.protocol import DecisionAttempt, DecisionRequest
from arena.record.replay import move_json
from arena.record.validity import side_of

__all__ = ["Desk", "Status", "Table", "Turn", "TurnClosed"]

Status = Literal["starting", "your-move", "waiting", "over"]
"""Where a table stands: its game not begun, the person to move, the other seat to move, done."""


class TurnClosed(Exception):
    """A try came for a decision that is no longer open (answered, or past its deadline)."""


@dataclass(eq=False)
class Turn:
    """One decision waiting for the person: the engine reads each try at once."""

    id: int
    request: DecisionRequest
    started: float
    first_end: float
    """anyio's clock: the first try must come by then."""
    end: float
    """anyio's clock: the decision's end; refused tries may be followed by others until then."""
    decision_s: float
    view: dict[str, Any]
    help: str = ""
    suggestion: Any = None
    tries: list[DecisionAttempt] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    move: Any = None
    written: Any = None
    """The accepted try as the person wrote it (before the engine's reader)."""
    tried: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    closed: bool = False
    last: float = 0.0
    """When the last try came (anyio's clock), or the turn opened."""

    def offer(self, move: Any) -> str | None:
        """Read a try: None when the engine accepted it (the turn ends), else the engine's
        message. Raises TurnClosed when the decision is no longer open."""
        now = anyio.current_time()
        limit = self.end if self.tries else self.first_end
        if self.closed or self.done.is_set() or now > limit:
            raise TurnClosed("this decision is closed: its time ran out or it was answered")
        req = self.request
        written = move if isinstance(move, str) else json.dumps(move, separators=(",", ":"))
        latency, self.last = now - self.last, now
        try:
            parsed = req.game.parse(req.state, req.seat, move)
        except games.MoveError as exc:
            cause = "illegal" if isinstance(exc, games.Illegal) else "unreadable"
            self.tries.append(
                DecisionAttempt(len(self.tries) + 1, "", latency, written, cause, str(exc),
                        side=side_of(cause, False))
            )  # fmt: skip
            self.refused.append({"move": written, "error": str(exc)})
            self.tried.set()
            return str(exc)
        self.tries.append(DecisionAttempt(len(self.tries) + 1, "", latency, written, None))
        self.move, self.written = parsed, move
        self.tried.set()
        self.done.set()
        return None

    def to_json(self) -> dict[str, Any]:
        """The turn as the play page reads it; `remaining_s` counts from now."""
        req = self.request
        limit = self.end if self.tries else self.first_end
        return {
            "id": self.id,
            "key": req.key,
            "legal": list(req.legal),
            "help": self.help,
            "remaining_s": round(max(0.0, limit - anyio.current_time()), 3),
            "decision_s": self.decision_s,
            "refused": list(self.refused),
            "view": self.view,
            "suggestion": self.suggestion,
        }


@dataclass(eq=False)
class Table:
    """One human seat in one game, as the play page shows it."""

    desk: Desk
    id: str
    game: games.Game[Any]
    game_index: int
    seat: int
    aliases: tuple[str, str]
    status: Status = "starting"
    state: Any = None
    """The position the seat was last told of (None until its game starts)."""
    before: Any = None
    """The position before it, for the page to mark what the last ply changed."""
    history: list[str] = field(default_factory=list)
    turn: Turn | None = None
    result: dict[str, Any] | None = None
    _turns: int = 0

    def observe(self, state: Any, moved: str | None) -> None:
        """The game is at `state`; `moved` is the ply that led there (None at the start)."""
        self.before, self.state = self.state, state
        if moved is not None:
            self.history.append(moved)
        if self.status == "starting":
            self.status = "waiting"
        self.desk.changed()

    def open_turn(self, request: DecisionRequest, first_s: float, decision_s: float) -> Turn:
        """A decision for the person starts now."""
        if self.state is None:  # a seat told nothing yet draws the position it is asked at
            self.observe(request.state, None)
        now = anyio.current_time()
        game, state, seat = request.game, request.state, request.seat
        self._turns += 1
        turn = Turn(
            self._turns, request, now, now + min(first_s, decision_s), now + decision_s, decision_s,
            view=game.view(state, seat), last=now,
        )  # fmt: skip
        if not request.legal and request.move_help is not None:
            turn.help = request.move_help()
        if request.key == "setup":  # an editor starts from a legal setup, the baseline's
            turn.suggestion = move_json(game.baseline(state, seat))
        self.turn, self.status = turn, "your-move"
        self.desk.changed()
        return turn

    def close_turn(self, turn: Turn) -> None:
        """The decision is over, answered or not."""
        turn.closed = True
        if self.turn is turn:
            self.turn = None
            if self.status == "your-move":
                self.status = "waiting"
        self.desk.changed()

    def end(self, outcome: games.Outcome) -> None:
        """The game is over."""
        scores = list(outcome.scores) if outcome.scores is not None else None
        if scores is None:
            text = "no contest"
        else:
            mine = scores[self.seat]
            text = "you won" if mine > 0 else "you lost" if mine < 0 else "a draw"
        self.result = {
            "scores": scores, "ending": outcome.ending, "reason": outcome.reason,
            "detail": outcome.detail, "text": text,
        }  # fmt: skip
        self.status = "over"
        self.desk.changed()

    def to_json(self) -> dict[str, Any]:
        """The table as the play page reads it, but the board (the page draws it): the
        seat's aliases and its own turn, never a policy's or a person's name."""
        return {
            "id": self.id,
            "game": self.game.name,
            "game_index": self.game_index,
            "seat": self.seat,
            "alias": self.aliases[self.seat],
            "opponent": self.aliases[1 - self.seat],
            "status": self.status,
            "history": list(self.history),
            "turn": self.turn.to_json() if self.turn is not None else None,
            "result": self.result,
        }


class Desk:
    """Every human seat of a run, in the order their games began."""

    def __init__(self, run: str) -> None:
        self.run = run
        self.tables: dict[str, Table] = {}
        self.version = 0
        self.closed = False
        """The run is over: the page answers at once, and says so."""
        self._changed = anyio.Event()

    def table(self, game: games.Game[Any], seed: int, game_index: int, seat: int) -> Table:
        """The table of `seat` in game `game_index` of the match on `seed` (a game played
        again after a no-contest gets a fresh one)."""
        digest = hashlib.sha256(f"{game.name}:{seed}:{game_index}:{seat}".encode()).hexdigest()
        base = f"{game.name}-{digest[:6]}"
        key, n = base, 1
        while key in self.tables:
            n += 1
            key = f"{base}-{n}"
        aliases = game.match_format.aliases(seed, game_index)
        table = Table(self, key, game, game_index, seat, aliases)
        self.tables[key] = table
        self.changed()
        return table

    def changed(self) -> None:
        """Something a page shows changed: wake the long polls."""
        self.version += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def wait(self, since: int, timeout_s: float) -> None:
        """Return once the version is past `since`, or after `timeout_s`."""
        with anyio.move_on_after(timeout_s):
            while self.version <= since and not self.closed:
                await self._changed.wait()

    def close(self) -> None:
        """The run is over: every long poll is answered now, and every later one at once."""
        self.closed = True
        self.changed()

    def to_json(self) -> dict[str, Any]:
        """Every table, as the play page's long poll answers (the page adds the boards)."""
        return {
            "version": self.version,
            "run": self.run,
            "closed": self.closed,
            "tables": [table.to_json() for table in self.tables.values()],
        }

    def offer(self, table_id: str, turn_id: int, move: Any) -> str | None:
        """A try from the page for `turn_id` of `table_id`: None when accepted, else the
        engine's message. KeyError for an unknown table; TurnClosed for a closed turn."""
        table = self.tables[table_id]
        turn = table.turn
        if turn is None or turn.id != turn_id:
            raise TurnClosed("this decision is closed: its time ran out or it was answered")
        error = turn.offer(move)
        self.changed()
        return error
