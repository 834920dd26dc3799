"""A stand-in for the arena's play server: the play page's HTTP contract over the real engines.

`StandInDesk` holds one table per (game, seat) in which "the person" sits;
the other seat plays the game's baseline at once. It answers what the page
asks, as the arena's server does: `GET /play/TOKEN/` (play.html with its
`$title` and `${root}`), `GET /play/TOKEN/static/<file>`, the long poll
`GET /play/TOKEN/api/tables?since=V` and `POST /play/TOKEN/api/move`; any
path without the token is answered 403. Moves go through the engine's
`parse` and `apply`, frames through the viewer's drawers, so the page is
checked against the engines without a run. It records every JSON it sends.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from string import Template
from typing import Any
from urllib.parse import parse_qs, urlparse

import games
from arena.viewer.boards import drawer_for

TOKEN = "t0k3n-standin"
POLL_S = 1.0
DECISION_S = 120.0


@dataclass
class Table:
    """One seat of the person's in one game, with the engine's state."""

    id: str
    game: Any
    seat: int
    seed: int | str
    index: int = 1
    decision_s: float = DECISION_S
    state: Any = None
    before: Any = None
    history: list[str] = field(default_factory=list)
    movers: list[list[int]] = field(default_factory=list)
    turn_id: int = 0
    opened: float = 0.0
    refused: list[dict[str, str]] = field(default_factory=list)
    answered: bool = False

    def __post_init__(self) -> None:
        self.state = self.game.initial(self.seed, game=self.index)
        self.opened = time.monotonic()

    @property
    def aliases(self) -> tuple[str, str]:
        mine, theirs = f"cog-you{self.seat}", "cog-opp"
        return (mine, theirs) if self.seat == 0 else (theirs, mine)

    def my_move(self) -> bool:
        return self.seat in self.game.to_act(self.state)

    def play_opponent(self) -> None:
        """The other seat plays its baseline while it alone is to act."""
        while True:
            acting = self.game.to_act(self.state)
            if not acting or self.seat in acting:
                return
            other = acting[0]
            self.advance({other: self.game.baseline(self.state, other)})

    def advance(self, moves: dict[int, Any]) -> None:
        drawer = drawer_for(self.game.name)
        before = self.state
        self.state = self.game.apply(before, moves)
        self.before = before
        self.movers.append(sorted(moves))
        if len(moves) > 1:
            self.history.append(f"turn {len(self.history) + 1}")
        else:
            self.history.append(drawer.move_text(next(iter(moves.values()))))
        self.turn_id += 1
        self.opened = time.monotonic()
        self.refused = []
        self.answered = False

    def to_json(self) -> dict[str, Any]:
        g, s = self.game, self.state
        drawer = drawer_for(g.name)
        frame = drawer.frame(g, self.before, s)
        if g.name == "stratego":  # the seat's own view only
            own = frame["seen"][self.seat]
            frame.update(board=own, seen=[own, own])
        outcome = g.outcome(s)
        status = "over" if outcome else "your-move" if self.my_move() else "waiting"
        turn = None
        if status == "your-move" and not self.answered:
            view = g.view(s, self.seat)
            key = g.reply_key(s)
            legal = list(g.legal_moves(s, self.seat))
            turn = {
                "id": self.turn_id,
                "key": key,
                "legal": legal,
                "help": games.move_help(g.name, view) if not legal else "",
                "remaining_s": max(0.0, self.decision_s - (time.monotonic() - self.opened)),
                "clock_started": True,
                "decision_s": self.decision_s,
                "refused": list(self.refused),
                "view": view,
                "suggestion": g.baseline(s, self.seat) if key == "setup" else None,
            }
        result = None
        if outcome:
            scores = list(outcome.scores)
            mine = scores[self.seat]
            text = (
                "you won"
                if mine > scores[1 - self.seat]
                else "draw"
                if mine == scores[1 - self.seat]
                else "you lost"
            )
            winner = None if scores[0] == scores[1] else self.aliases[scores.index(max(scores))]
            result = {
                "scores": scores,
                "ending": outcome.ending,
                "reason": outcome.reason,
                "text": text,
                "winner": winner,
            }
        return {
            "id": self.id,
            "game": g.name,
            "game_index": self.index,
            "seat": self.seat,
            "alias": self.aliases[self.seat],
            "opponent": self.aliases[1 - self.seat],
            "status": status,
            "static": drawer.static(g, g.initial(self.seed, game=self.index)),
            "frame": frame,
            "history": list(self.history),
            "plies": [
                {
                    "move": move,
                    "seats": seats,
                    "by": " & ".join("you" if s == self.seat else self.aliases[s] for s in seats),
                }
                for move, seats in zip(self.history, self.movers, strict=True)
            ],
            "turn": turn,
            "result": result,
        }


class StandInDesk:
    """The person's tables behind the play page's HTTP contract, on 127.0.0.1."""

    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}
        self.version = 1
        self.changed = threading.Condition()
        self.closed = False
        """The run is over: the page should stop asking."""
        self.sent: list[Any] = []
        """Every JSON body the server answered with, for checks of what reached the page."""
        self.moves: list[dict[str, Any]] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="play-standin")

    def add(self, table: Table) -> Table:
        with self.changed:
            table.play_opponent()
            self.tables[table.id] = table
            self._bump()
        return table

    def close(self) -> None:
        """The run is over: every long poll answers, and says so."""
        with self.changed:
            self.closed = True
            self._bump()

    def _bump(self) -> None:
        self.version += 1
        self.changed.notify_all()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/play/{TOKEN}/"

    def __enter__(self) -> StandInDesk:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self._thread.join()
        self.httpd.server_close()

    def desk(self, since: int) -> dict[str, Any]:
        with self.changed:
            self.changed.wait_for(lambda: self.version > since or self.closed, timeout=POLL_S)
            return {
                "version": self.version,
                "run": "standin",
                "closed": self.closed,
                "tables": [t.to_json() for t in self.tables.values()],
            }

    def move(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.changed:
            self.moves.append(body)
            table = self.tables.get(str(body.get("table")))
            if table is None:
                return 404, {"ok": False, "error": f"no table {body.get('table')!r}"}
            if body.get("turn") != table.turn_id or table.answered or not table.my_move():
                return 409, {"ok": False, "error": "this decision is closed"}
            g, s = table.game, table.state
            try:
                move = g.parse(s, table.seat, body.get("move"))
            except games.MoveError as exc:
                table.refused.append({"move": str(body.get("move")), "error": str(exc)})
                self._bump()
                return 422, {"ok": False, "error": str(exc)}
            moves = {table.seat: move}
            for other in g.to_act(s):
                if other != table.seat:
                    moves[other] = g.baseline(s, other)
            table.advance(moves)
            table.play_opponent()
            self._bump()
            return 200, {"ok": True}


def _page(root: str) -> str:
    text = resources.files("arena.viewer").joinpath("static", "play.html").read_text("utf-8")
    return Template(text).substitute(title="play · standin", root=root)


def _handler(desk: StandInDesk) -> type[BaseHTTPRequestHandler]:
    prefix = f"/play/{TOKEN}/"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)  # unless the page went away mid long poll

        def _json(self, status: int, data: Any) -> None:
            desk.sent.append(data)
            self._send(status, json.dumps(data).encode(), "application/json")

        def do_GET(self) -> None:
            url = urlparse(self.path)
            if not url.path.startswith(prefix):
                self._send(403, b"forbidden", "text/plain")
                return
            rest = url.path[len(prefix) :]
            if rest == "":
                self._send(200, _page(prefix).encode(), "text/html; charset=utf-8")
            elif rest.startswith("static/"):
                name = rest[len("static/") :]
                kind = "text/css" if name.endswith(".css") else "text/javascript"
                try:
                    data = resources.files("arena.viewer").joinpath("static", name).read_bytes()
                except (FileNotFoundError, IsADirectoryError):
                    self._send(404, b"no such file", "text/plain")
                    return
                self._send(200, data, kind)
            elif rest == "api/tables":
                since = int(parse_qs(url.query).get("since", ["-1"])[0])
                self._json(200, desk.desk(since))
            else:
                self._send(404, b"not found", "text/plain")

        def do_POST(self) -> None:
            if self.path != prefix + "api/move":
                self._send(403 if not self.path.startswith(prefix) else 404, b"no", "text/plain")
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, answer = desk.move(body)
            self._json(status, answer)

    return Handler
