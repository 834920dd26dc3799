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

A turn's clock starts when it opens, but for a person's first decision of a
game: that one is `held` until the page shows its table (`Desk.shown`), so a
decision asked before anyone looked at it does not run down unseen (the seat
bounds the hold).

A game whose every seat to act is a person with an open decision can go no
further without them. The run plays each episode in its own scope
(`arena.seats.cut`), which the seat maker hands each table it makes for that
episode; once the run
stops (`Desk.stop`) the desk cuts the episodes of those games at once, and
each later one as a person's decision opens in it, rather than hold the
stop's grace period for them: a cut episode is discarded as at the end of
the grace, and a resume plays it again. (A simultaneous game whose other
seat is not a person gets the grace: the desk cannot tell whether that seat
has answered.)
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import structlog

import games
from arena.play.protocol import DecisionAttempt, DecisionRequest
from arena.record.causes import Cause, side_of
from arena.record.replay import move_json
from arena.seats.cut import CuttableEpisode

__all__ = ["Desk", "Status", "Table", "Turn", "TurnClosed"]

log = structlog.get_logger("arena.seats.desk")

Status = Literal["starting", "your-move", "waiting", "over"]
"""Where a table stands: its game not begun, the person to move, the other seat to move, done."""


class TurnClosed(Exception):
    """A try came for a decision that is no longer open (answered, or past its deadline)."""


@dataclass(eq=False)
class Turn:
    """One decision waiting for the person: the engine reads each try at once."""

    id: int
    request: DecisionRequest
    opened: float
    """anyio's clock: when the decision was asked."""
    first_s: float
    """The first try's time from the clock's start."""
    decision_s: float
    view: dict[str, Any]
    started: float | None = None
    """anyio's clock: when the clock started (None while the turn is held for the page)."""
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
    """When the last try came (anyio's clock), or the clock started."""
    running: anyio.Event = field(default_factory=anyio.Event)
    """Set when the clock starts."""

    @property
    def first_end(self) -> float:
        """When the first try must come by (anyio's clock; never, while the turn is held)."""
        return math.inf if self.started is None else self.started + self.first_s

    @property
    def end(self) -> float:
        """The decision's end (anyio's clock): refused tries may be followed by others until
        then (never, while the turn is held)."""
        return math.inf if self.started is None else self.started + self.decision_s

    @property
    def limit(self) -> float:
        """The deadline in force (anyio's clock): the first try's until one came, then the
        decision's end."""
        return self.end if self.tries else self.first_end

    @property
    def waiting(self) -> bool:
        """Open, and waiting on the person's move."""
        return not (self.closed or self.done.is_set())

    def start(self) -> bool:
        """Start the clock now, if it has not started: whether it did."""
        if self.started is not None:
            return False
        self.started = self.last = anyio.current_time()
        self.running.set()
        return True

    def elapsed(self) -> float:
        """Seconds since the clock started (0 while the turn is held): the think time."""
        return 0.0 if self.started is None else anyio.current_time() - self.started

    def offer(self, move: Any) -> str | None:
        """Read a try: None when the engine accepted it (the turn ends), else the engine's
        message. Raises TurnClosed when the decision is no longer open."""
        self.start()  # a try for a held turn: its id was shown, so its clock runs
        now = anyio.current_time()
        if not self.waiting or now > self.limit:
            raise TurnClosed("this decision is closed: its time ran out or it was answered")
        req = self.request
        written = move if isinstance(move, str) else json.dumps(move, separators=(",", ":"))
        latency, self.last = now - self.last, now
        try:
            parsed = req.game.parse(req.state, req.seat, move)
        except games.MoveError as exc:
            cause: Cause = "illegal" if isinstance(exc, games.Illegal) else "unreadable"
            self.tries.append(
                DecisionAttempt(
                    len(self.tries) + 1,
                    "",
                    latency,
                    written,
                    cause,
                    str(exc),
                    side=side_of(cause, False),
                )
            )
            self.refused.append({"move": written, "error": str(exc)})
            self.tried.set()
            return str(exc)
        self.tries.append(DecisionAttempt(len(self.tries) + 1, "", latency, written, None))
        self.move, self.written = parsed, move
        self.tried.set()
        self.done.set()
        return None

    def to_json(self) -> dict[str, Any]:
        """The turn as the play page reads it: `remaining_s` is the time left from now, to
        the first try's deadline until one came, then to the decision's end; while the turn
        is held (`clock_started` false) it is the whole first budget."""
        req = self.request
        if self.started is None:
            remaining = self.first_s
        else:
            remaining = max(0.0, self.limit - anyio.current_time())
        return {
            "id": self.id,
            "key": req.key,
            "legal": list(req.legal),
            "help": self.help,
            "remaining_s": round(remaining, 3),
            "clock_started": self.started is not None,
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
    movers: list[tuple[int, ...]] = field(default_factory=list)
    """The seats that played each ply of `history`."""
    episode: CuttableEpisode | None = None
    """The episode it was made for: its id, and the scope a stop may cancel (None: nothing
    cuts it but its game's end)."""
    turn: Turn | None = None
    result: dict[str, Any] | None = None
    _turns: int = 0

    def observe(self, state: Any, moved: str | None) -> None:
        """The game is at `state`; `moved` is the ply that led there (None at the start)."""
        if moved is not None:
            # told of every ply in turn: the seats to act at the last position played it
            self.movers.append(self.game.to_act(self.state) if self.state is not None else ())
            self.history.append(moved)
        self.before, self.state = self.state, state
        if self.status == "starting":
            self.status = "waiting"
        self.desk.changed()

    def open_turn(
        self, request: DecisionRequest, first_s: float, decision_s: float, *, held: bool = False
    ) -> Turn:
        """A decision for the person is asked now; its clock starts now, or with `held`
        when the page shows its table (`Desk.shown`) or the seat stops holding it."""
        if self.state is None:  # a seat told nothing yet draws the position it is asked at
            self.observe(request.state, None)
        now = anyio.current_time()
        game, state, seat = request.game, request.state, request.seat
        self._turns += 1
        turn = Turn(
            self._turns,
            request,
            now,
            min(first_s, decision_s),
            decision_s,
            view=game.view(state, seat),
            last=now,
        )
        if not held:
            turn.start()
        if not request.legal and request.move_help is not None:
            turn.help = request.move_help()
        if request.key == "setup":  # an editor starts from a legal setup, the baseline's
            turn.suggestion = move_json(game.baseline(state, seat))
        self.turn, self.status = turn, "your-move"
        self.desk.changed()
        if self.desk.stopped:  # the run stops: a game left to the person is cut now
            self.desk.cut_waiting()
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
        """The game is over: who won (the winner's alias), how and the scores."""
        scores = list(outcome.scores) if outcome.scores is not None else None
        winner = None
        if scores is None:
            text = "no contest"
        else:
            mine = scores[self.seat]
            text = "you won" if mine > 0 else "you lost" if mine < 0 else "a draw"
            if scores[0] != scores[1]:
                winner = self.aliases[0 if scores[0] > scores[1] else 1]
        self.result = {
            "scores": scores,
            "ending": outcome.ending,
            "reason": outcome.reason,
            "detail": outcome.detail,
            "text": text,
            "winner": winner,
        }
        self.status = "over"
        self.desk.changed()

    def cut(self) -> None:
        """The run stopped while the game waited on the person: it is played again when the
        run resumes."""
        self.result = {
            "scores": None,
            "ending": "cut",
            "reason": "stopped",
            "detail": None,
            "winner": None,
            "text": "stopped: the run was interrupted; this game starts again when it resumes",
        }
        self.status = "over"
        self.desk.changed()

    def plies(self) -> list[dict[str, Any]]:
        """Each ply: the move as the prompt lists it, and who played it (`you` for the
        person's seat, else the alias)."""
        return [
            {
                "move": move,
                "seats": list(seats),
                "by": " & ".join("you" if s == self.seat else self.aliases[s] for s in seats),
            }
            for move, seats in zip(self.history, self.movers, strict=True)
        ]

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
            "plies": self.plies(),
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
        self.stopped = False
        """The run stops: games that wait on people only are cut."""

    def table(
        self,
        game: games.Game[Any],
        seed: int,
        game_index: int,
        seat: int,
        *,
        episode: CuttableEpisode | None = None,
    ) -> Table:
        """The table of `seat` in game `game_index` of the match on `seed` (a game played
        again after a no-contest gets a fresh one), in `episode`, whose scope a stop cuts
        while the game waits on nobody but people."""
        digest = hashlib.sha256(f"{game.name}:{seed}:{game_index}:{seat}".encode()).hexdigest()
        base = f"{game.name}-{digest[:6]}"
        key, n = base, 1
        while key in self.tables:
            n += 1
            key = f"{base}-{n}"
        aliases = game.match_format.aliases(seed, game_index)
        table = Table(self, key, game, game_index, seat, aliases, episode=episode)
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

    def shown(self, showing: Collection[str] | None = None) -> None:
        """The page is about to be served the desk: the held decisions of the tables it
        shows start their clocks, those of `showing` (its table ids) or, without it, every
        one (a page that draws every table)."""
        started = [
            t.turn.start()
            for t in self.tables.values()
            if t.turn is not None and (showing is None or t.id in showing)
        ]
        if any(started):
            self.changed()

    def waiting_on_people(self) -> list[Table]:
        """The tables of the games in flight whose every seat to act is a person's with an
        open decision: nothing but a person's move can take them further."""
        asked: dict[tuple[str, int], list[Table]] = {}
        for table in self.tables.values():
            if table.episode is not None and table.turn is not None and table.turn.waiting:
                asked.setdefault((table.episode.id, table.game_index), []).append(table)
        return [
            table
            for tables in asked.values()
            if set(tables[0].game.to_act(tables[0].state)) <= {t.seat for t in tables}
            for table in tables
        ]

    def stop(self) -> None:
        """The run stops: cut each episode in flight once one of its games waits on nobody
        but people, now or as a person's decision opens in it."""
        self.stopped = True
        self.cut_waiting()

    def cut_waiting(self) -> None:
        """Cut the episodes in flight with a game that waits on nobody but people."""
        for table in self.waiting_on_people():
            episode = table.episode
            if episode is not None and not episode.scope.cancel_called:
                log.warning(
                    "game_cut",
                    episode=episode.id,
                    game=table.game.name,
                    game_index=table.game_index,
                    table=table.id,
                    note="only a person's move could finish it; a resume plays its episode again",
                )
                episode.scope.cancel()
            table.cut()

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
