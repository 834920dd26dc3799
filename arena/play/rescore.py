"""`arena rescore RUN`: read a run's recorded replies again with today's readers.

Every reply a text seat (a model, the mock) gave is in its replay. This module
reads them again with the current reply extraction and the current game
readers, exactly as the decision protocol reads a reply
(docs/rules.md#the-reply-and-how-the-move-is-read, #the-one-retry), and says
which decisions would come out differently: a fallback that would now be a
move, a move that would now be another move, a move that would now fall back.

Each game follows its RECORDED moves through the engine (as `arena verify`
re-derives it): the state at every decision is the recorded one, and no
re-read decision changes the game's course. No model is asked and nothing is
written. Scripted and program seats have no replies to re-read and are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

import games
from arena.play.decisions import read_reply
from arena.record.causes import READING_CAUSES
from arena.record.replay import (
    AttemptRecord,
    DecisionRecord,
    GameRecord,
    Replay,
    load_replay,
    move_json,
)

__all__ = [
    "EXCERPT_CHARS",
    "FALLBACK_TO_MOVE",
    "KINDS",
    "MOVE_TO_FALLBACK",
    "MOVE_TO_OTHER",
    "UNCHANGED",
    "Change",
    "GameRescore",
    "Kind",
    "Reading",
    "RescoreError",
    "RunRescore",
    "print_json",
    "print_table",
    "rescore_main",
    "rescore_replay",
    "rescore_run",
]

Kind = Literal["fallback -> move", "move -> other move", "move -> fallback", "unchanged"]
"""What re-reading did to one decision's outcome."""
FALLBACK_TO_MOVE: Kind = "fallback -> move"
MOVE_TO_OTHER: Kind = "move -> other move"
MOVE_TO_FALLBACK: Kind = "move -> fallback"
UNCHANGED: Kind = "unchanged"
KINDS: tuple[Kind, ...] = (FALLBACK_TO_MOVE, MOVE_TO_OTHER, MOVE_TO_FALLBACK, UNCHANGED)

EXCERPT_CHARS = 160
"""The most characters of a reply a change shows (its whitespace folded to single spaces)."""

_READING_CAUSES = (None, *READING_CAUSES)
"""Recorded causes that came from reading the reply; any other (a timeout, a provider
failure) did not, and re-reading cannot change it."""


class RescoreError(Exception):
    """A folder or replay rescore cannot read; the message names the problem and the fix."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What a decision came to: a move and the attempt that gave it, or a fallback and why."""

    move: Any
    """The move as a replay stores it; None for a fallback."""
    source: Literal["reply", "retry", "fallback"]
    cause: str | None = None
    """A fallback's cause: that of its last attempt."""
    error: str = ""
    reply: str | None = None
    """The reply this reading turned on: the move's, or the last one refused."""

    def describe(self) -> str:
        """`d (reply)`, or `fallback (unreadable: ...)`."""
        if self.source != "fallback":
            shown = self.move if isinstance(self.move, str) else json.dumps(self.move)
            return f"{_excerpt(shown, 60)} ({self.source})"
        why = f"{self.cause}: {self.error}" if self.error else str(self.cause)
        return f"fallback ({_excerpt(why, 80)})"


@dataclass(frozen=True, slots=True)
class Change:
    """One re-read decision: what it came to then, what it would come to now, and the kind
    of change (`UNCHANGED` when the two agree)."""

    ply: int
    seat: int
    alias: str
    kind: Kind
    recorded: Reading
    now: Reading
    retry_unasked: bool
    """The first attempt, accepted then, is refused now: the protocol would have asked a
    retry that was never asked, so the decision counts as a fallback."""

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object."""
        return {
            "ply": self.ply,
            "seat": self.seat,
            "alias": self.alias,
            "kind": self.kind,
            "recorded": self.recorded.describe(),
            "now": self.now.describe(),
            "recorded_move": self.recorded.move,
            "now_move": self.now.move,
            "retry_unasked": self.retry_unasked,
            "reply": _excerpt(self.now.reply or ""),
        }


@dataclass(frozen=True, slots=True)
class GameRescore:
    """One game re-read: how many decisions of each kind, and the first that changed."""

    episode: str
    game: str
    index: int
    counts: Mapping[Kind, int]
    first: Change | None
    stopped: str | None = None
    """Why the game could not be followed to its end with this engine, if it could not."""

    def to_json(self) -> dict[str, Any]:
        """The game's rescore as a JSON object."""
        return {
            "episode": self.episode,
            "game": self.game,
            "game_index": self.index,
            "counts": {kind: self.counts.get(kind, 0) for kind in KINDS},
            "first_change": self.first.to_json() if self.first else None,
            "stopped": self.stopped,
        }


@dataclass(frozen=True, slots=True)
class RunRescore:
    """Every game of a run folder re-read."""

    run: Path
    replays: int
    games: tuple[GameRescore, ...]

    def totals(self) -> dict[Kind, int]:
        """Decisions of each kind over the whole run."""
        total: Counter[Kind] = Counter()
        for game in self.games:
            total.update(game.counts)
        return {kind: total[kind] for kind in KINDS}

    def to_json(self) -> dict[str, Any]:
        """The run's rescore as a JSON object."""
        return {
            "run": str(self.run),
            "replays": self.replays,
            "totals": self.totals(),
            "games": [game.to_json() for game in self.games],
        }


# -- reading a decision again ------------------------------------------------------------------


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 3] + "..."


def _read(
    game: games.Game[Any], state: Any, seat: int, key: str, attempt: AttemptRecord, source: str
) -> Reading:
    """One attempt's reply read as the decision protocol reads it today (`read_reply`)."""
    text = attempt.reply
    if text is None or attempt.cause not in _READING_CAUSES:
        return Reading(None, "fallback", attempt.cause or "timeout", attempt.error, text)
    read = read_reply(game, state, seat, text, key, attempt.stop_reason)
    if read.cause is not None:
        return Reading(None, "fallback", read.cause, read.error, text)
    return Reading(move_json(read.move), "reply" if source == "reply" else "retry", reply=text)


def _reread(game: games.Game[Any], state: Any, d: DecisionRecord) -> tuple[Reading, bool]:
    """The decision as the protocol would reach it now, and whether it would have needed
    a retry that was never asked. A retry's prompt came from the first attempt's failure,
    so its reply counts only where the first attempt fails both then and now."""
    if any(a.reply_chars for a in d.attempts):  # a reply kept by its ends: read as recorded
        return _recorded(d), False
    key = game.reply_key(state)
    first = _read(game, state, d.seat, key, d.attempts[0], "reply")
    if first.move is not None:
        return first, False
    if d.attempts[0].cause is None:
        return first, True
    if len(d.attempts) < 2:
        return first, False
    return _read(game, state, d.seat, key, d.attempts[1], "retry"), False


def _recorded(d: DecisionRecord) -> Reading:
    last = d.attempts[-1]
    if d.source == "fallback":
        return Reading(None, "fallback", last.cause or "timeout", last.error, last.reply)
    return Reading(d.move, d.source, reply=last.reply)


def _kind(recorded: Reading, now: Reading) -> Kind:
    if recorded.move is None:
        return FALLBACK_TO_MOVE if now.move is not None else UNCHANGED
    if now.move is None:
        return MOVE_TO_FALLBACK
    same = json.dumps(recorded.move, sort_keys=True) == json.dumps(now.move, sort_keys=True)
    return UNCHANGED if same else MOVE_TO_OTHER


def _decision_change(game: games.Game[Any], state: Any, ply: int, d: DecisionRecord) -> Change:
    now, retry_unasked = _reread(game, state, d)
    recorded = _recorded(d)
    return Change(ply, d.seat, d.alias, _kind(recorded, now), recorded, now, retry_unasked)


# -- following a game ---------------------------------------------------------------------------


def _changes(game: games.Game[Any], chance: int | str, record: GameRecord) -> Iterator[Change]:
    """Every re-read decision of the game, in order, along its recorded moves; raises
    RescoreError where this engine cannot follow them."""
    state = game.initial(chance, game=record.index)
    for ply in record.plies:
        seats, recorded = sorted(game.to_act(state)), sorted(d.seat for d in ply.decisions)
        if recorded != seats:
            raise RescoreError(f"at ply {ply.ply} seats {recorded} moved, but {seats} were to act")
        moves = {}
        for d in ply.decisions:
            if d.attempts:
                yield _decision_change(game, state, ply.ply, d)
            try:
                moves[d.seat] = game.parse(state, d.seat, d.move)
            except games.MoveError as exc:
                raise RescoreError(f"at ply {ply.ply} the recorded move {d.move!r}: {exc}") from exc
        try:
            state = game.apply(state, moves)
        except games.MoveError as exc:
            raise RescoreError(f"at ply {ply.ply} the recorded moves do not play: {exc}") from exc


def _rescore_game(game: games.Game[Any], replay: Replay, record: GameRecord) -> GameRescore:
    counts: Counter[Kind] = Counter()
    first: Change | None = None
    stopped: str | None = None
    try:
        for change in _changes(game, replay.chance, record):
            counts[change.kind] += 1
            if first is None and change.kind != UNCHANGED:
                first = change
    except RescoreError as exc:
        stopped = f"{exc} (`arena verify` tells more)"
    return GameRescore(replay.episode, replay.game, record.index, counts, first, stopped)


def rescore_replay(replay: Replay) -> list[GameRescore]:
    """Every game of `replay` re-read with the current readers, along its recorded moves."""
    try:
        game = games.load(replay.game, **replay.params)
    except ValueError as exc:
        raise RescoreError(f"episode {replay.episode}: {exc}") from exc
    return [_rescore_game(game, replay, record) for record in replay.games]


def _replay_paths(run: Path) -> list[Path]:
    if not run.exists():
        raise RescoreError(f"{run} does not exist; pass a run folder, e.g. runs/quickstart")
    if not (run / "replays").is_dir():
        raise RescoreError(
            f"{run} is not a run folder (it has no replays/ folder); pass the folder "
            "`arena run` wrote, e.g. runs/quickstart"
        )
    return sorted((run / "replays").glob("*.json"))


def rescore_run(run: Path) -> RunRescore:
    """Every game of run folder `run` re-read; reads the replays and nothing else, writes
    nothing. Raises RescoreError for a folder that is not a run folder or a replay that
    cannot be read."""
    rescored: list[GameRescore] = []
    paths = _replay_paths(run)
    for path in paths:
        try:
            replay = load_replay(path)
        except (ValueError, OSError) as exc:
            raise RescoreError(
                f"{path} cannot be read as a replay ({_excerpt(str(exc), 200)}); "
                f"`arena verify {run}` tells what is wrong with it"
            ) from exc
        rescored.extend(rescore_replay(replay))
    return RunRescore(run, len(paths), tuple(rescored))


# -- output ---------------------------------------------------------------------------------------


def _console() -> Console:
    """Standard output as wide as the terminal; to a file or a pipe, 160 columns (or
    `COLUMNS`), as `arena report` prints."""
    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(width=160)


_UNASKED = "* accepted then, refused now: the retry would have been asked (never asked)"
_FIRSTS = "First changed decision per game"
_WIDE = 110
"""From this many columns on, the first changes are one table; below, a block each."""


def _first_changes(result: RunRescore, width: int) -> Iterator[Table | Text]:
    """One table from `_WIDE` columns on; below, a heading and a block of lines a game."""
    wide = width >= _WIDE
    table = Table(title=_FIRSTS, title_justify="left")
    for name in ("episode", "game", "ply", "seat", "recorded", "now", "change", "reply"):
        table.add_column(name, overflow="fold", ratio=1 if name == "reply" else None)
    if not wide:
        yield Text(_FIRSTS, style="italic")
    for game in result.games:
        c = game.first
        if c is None:
            continue
        now = _excerpt(c.now.describe(), 48) + (" *" if c.retry_unasked else "")
        cells = (game.episode, str(game.index), str(c.ply), c.alias, c.recorded.describe(), now)
        reply = _excerpt(c.now.reply or "")
        if wide:
            table.add_row(*cells, c.kind, reply)
            continue
        yield Text(f"{game.episode} game {game.index}: {c.kind}", style="bold")
        block = Table.grid(padding=(0, 2))
        block.add_column(no_wrap=True)
        block.add_column(overflow="fold")
        for label, value in zip(
            ("ply", "seat", "recorded", "now", "reply"), (*cells[2:], reply), strict=True
        ):
            block.add_row(label, value)
        yield block
    if wide:
        yield table


def _totals(result: RunRescore) -> Table:
    table = Table(title="Decisions by change, over the run", title_justify="left")
    table.add_column("change")
    table.add_column("decisions", justify="right")
    for kind, count in result.totals().items():
        table.add_row(kind, str(count))
    return table


def print_table(result: RunRescore, console: Console) -> None:
    """The rescore for reading: the first change of each game, then the totals."""
    totals = result.totals()
    changed = sum(n for kind, n in totals.items() if kind != UNCHANGED)
    console.print(
        f"arena rescore {result.run}: {result.replays} replay(s), {len(result.games)} game(s), "
        f"{sum(totals.values())} text-seat decision(s) re-read with the current readers, "
        f"{changed} would change. The games follow their recorded moves; no model was asked.",
        highlight=False,
        markup=False,
    )
    if changed:
        for table in _first_changes(result, console.width):
            console.print(table)
        if any(game.first and game.first.retry_unasked for game in result.games):
            console.print(_UNASKED, highlight=False, markup=False)
    console.print(_totals(result))
    for game in result.games:
        if game.stopped is not None:
            console.print(
                f"{game.episode} game {game.index}: re-read only up to where it stopped: "
                f"{game.stopped}",
                highlight=False,
                markup=False,
            )


def print_json(result: RunRescore) -> None:
    """The rescore as one JSON object on standard output."""
    sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")


def rescore_main(args: argparse.Namespace) -> int:
    """`arena rescore RUN [--format table|json]`: its exit status."""
    try:
        result = rescore_run(args.run)
    except RescoreError as exc:
        print(f"arena rescore: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print_json(result)
    else:
        print_table(result, _console())
    return 0
