"""Test doubles: a scripted text seat and a tiny simultaneous game; reading a run's games
and its replays' attempts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import anyio

import games
from arena.league.store import LeagueStore
from arena.play.decisions import TextSeat
from arena.play.prompts import Prompt
from arena.play.protocol import Answer, Question, SeatFailure
from arena.record.replay import AttemptRecord, Replay
from arena.results.standings import GameSummary


@dataclass(frozen=True)
class FixedPrompt:
    """A request's prompt source that renders `text`, then a line, then the retry's feedback
    (a `prompts.PromptSource` with no game behind it)."""

    text: str

    def render(self, feedback: str | None) -> Prompt:
        """`text`, a newline and the feedback (none on the first attempt)."""
        return Prompt(f"{self.text}\n{feedback or ''}")


@dataclass
class ScriptSeat(TextSeat):
    """Answers each attempt as told: ("reply", text), ("sleep", s, text), ("fail", cause[,
    detail]), ("hang",), or ("late", s, text): s seconds past the deadline it was given, shielded
    from the caller's cut-off."""

    script: list[tuple[Any, ...]]
    stop_reason: str | None = None
    questions: list[Question] = field(default_factory=list)
    started: list[float] = field(default_factory=list)
    answered: list[float] = field(default_factory=list)
    """When each attempt that replied handed its answer back (anyio's clock)."""

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        self.questions.append(question)
        self.started.append(anyio.current_time())
        step = self.script[min(len(self.questions), len(self.script)) - 1]
        if step[0] == "hang":
            await anyio.sleep_forever()
        if step[0] == "fail":
            raise SeatFailure(step[1], step[2] if len(step) > 2 else f"scripted {step[1]}")
        if step[0] == "late":
            with anyio.CancelScope(shield=True):
                await anyio.sleep(deadline - anyio.current_time() + step[1])
            return Answer(text=step[2], stop_reason=self.stop_reason)
        if step[0] == "sleep":
            await anyio.sleep(step[1])
            return self._answer(step[2])
        return self._answer(step[1])

    def _answer(self, text: str) -> Answer:
        self.answered.append(anyio.current_time())
        return Answer(text=text, stop_reason=self.stop_reason)


class DuelState(NamedTuple):
    ply: int
    picks: tuple[str, ...]


class Duel(games.Game[DuelState]):
    """Both seats pick a letter at once; equal letters draw, else seat 0 wins on 'a'."""

    name = "duel"
    family = "board"
    rules_version = 1

    def initial(self, seed: int | str, game: int = 1) -> DuelState:
        return DuelState(0, ())

    def to_act(self, s: DuelState) -> tuple[int, ...]:
        return () if s.picks else (0, 1)

    def legal_moves(self, s: DuelState, seat: int) -> tuple[str, ...]:
        return ("a", "b") if not s.picks else ()

    def parse(self, s: DuelState, seat: int, move: object) -> str:
        if not isinstance(move, str) or move.strip().lower() not in ("a", "b"):
            raise games.Unreadable(f"read {move!r}: a duel move is a or b")
        return move.strip().lower()

    def apply(self, s: DuelState, moves: Mapping[int, Any]) -> DuelState:
        return DuelState(1, (moves[0], moves[1]))

    def standing(self, s: DuelState, seat: int) -> int:
        return 0

    def outcome(self, s: DuelState) -> games.Outcome | None:
        if not s.picks:
            return None
        if s.picks[0] == s.picks[1]:
            return games.Outcome.draw("same")
        return games.Outcome.win(0 if s.picks[0] == "a" else 1, "different")

    def adjudicate(self, s: DuelState) -> games.Outcome:
        return games.Outcome.draw("wall-clock", games.DEADLINE)

    def baseline(self, s: DuelState, seat: int) -> str:
        return "a"

    def view(self, s: DuelState, seat: int) -> dict[str, Any]:
        return {"game": "duel", "ply": s.ply, "you": seat}


def stored_games(out: Path) -> list[GameSummary]:
    """Every game the league store of run folder `out` holds, in schedule order."""
    store = LeagueStore.open_readonly(out)
    try:
        return list(store.game_summaries())
    finally:
        store.close()


def replay_attempts(replays: list[Replay]) -> list[AttemptRecord]:
    """Every attempt of every decision of `replays` (a scripted seat is asked nothing)."""
    return [a for r in replays for g in r.games for p in g.plies for d in p.decisions
            for a in d.attempts]  # fmt: skip
