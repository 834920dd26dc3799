"""The in-process mock seat: LLM-shaped replies with seeded faults, no network.

It answers through the same text path as a model (a JSON object with `move`,
`say` and `notes`), so every branch of the decision protocol runs without an
API key. Per attempt it draws one fault, or none, at the configured rates:

- `slow`: replies clearly late, `SLOW_LATE_S` after the deadline it was given;
- `silent`: never replies (the decision's deadline ends the wait);
- `empty`: an empty reply;
- `unreadable`: prose with no move in it;
- `illegal`: a well-formed move the rules refuse here;
- `error`: fails as a provider would (`provider_error`);
- `schema_ignored`: under `decoding = "schema"`, prose, as a provider that ignores the
  schema may answer (free text: no fault).

Under `decoding = "schema"` the `unreadable`, `illegal` and `empty` faults become legal
choices, as a provider that enforces the schema answers. It learns the legal moves from
the prompt's `LEGAL MOVES:` line (or under a schema, from its enum): where a template
leaves them out, in free text it can only guess a move of the notation. Where moves
cannot be listed it plays the game's `random_move` with its own generator: random
orders in the battle, the game's baseline elsewhere (Stratego's seeded random setup).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import anyio

from arena.config import MOCK_FAULTS
from arena.play.decisions import TextSeat
from arena.play.protocol import Answer, Question, SeatFailure
from arena.record.replay import move_json
from games import Illegal, MoveError

__all__ = ["FAULTS", "SLOW_LATE_S", "MockSeat"]

FAULTS = MOCK_FAULTS

SLOW_LATE_S = 0.3
"""How long after its deadline a `slow` reply comes: well past the arena's cut-off, so
that no run depends on which of the two the event loop sees first."""

_FILES = "abcdefghij"


class MockSeat(TextSeat):
    """A seeded stand-in for a model; sound unless a fault is drawn."""

    def __init__(
        self,
        rng: random.Random,
        faults: dict[str, float],
        latency_s: float = 0.0,
        *,
        decoding: str = "free",
    ) -> None:
        self._rng = rng
        self._faults = faults
        self._latency_s = latency_s
        self._decoding = decoding
        self._turn = 0

    def _draw_fault(self) -> str | None:
        roll = self._rng.random()
        for name in FAULTS:
            rate = self._faults.get(name, 0.0)
            if roll < rate:
                return name
            roll -= rate
        return None

    async def ask(self, question: Question, *, deadline: float) -> Answer:
        """Reply to the question, or misbehave as the drawn fault says."""
        fault = self._draw_fault()
        self._turn += 1
        if self._latency_s:
            await anyio.sleep(self._latency_s)
        if fault == "silent":
            await anyio.sleep_forever()
        if fault == "slow":
            await anyio.sleep(max(0.0, deadline - anyio.current_time()) + SLOW_LATE_S)
        if fault == "error":
            raise SeatFailure(
                "provider_error", "mock provider failed (HTTP 500 from the mock)", status=500
            )
        decoded = None
        if self._decoding == "schema":
            fault = {"unreadable": None, "illegal": None, "empty": None}.get(fault or "", fault)
            fault = "unreadable" if fault == "schema_ignored" else fault
            decoded = "schema-enum" if question.legal else "schema-shape"
        elif fault == "schema_ignored":
            fault = None
        elif self._decoding == "json":
            decoded = "json"
        text = self._compose(question, fault)
        return Answer(text=text, provider="mock", model="mock", decoding=decoded)

    def _compose(self, question: Question, fault: str | None) -> str:
        if fault == "empty":
            return ""
        if fault == "unreadable":
            return "Let me think about the position. The centre looks strong, so I will go there."
        move = self._illegal(question) if fault == "illegal" else self._sound(question)
        reply = {"say": f"turn {self._turn}", "notes": f"plan {self._rng.randrange(1000)}"}
        return json.dumps({question.key: move, **reply})

    def _sound(self, question: Question) -> Any:
        if question.legal and (self._decoding == "schema" or "LEGAL MOVES:" in question.prompt):
            return self._rng.choice(question.legal)  # from the list, or the schema's enum
        if question.legal:  # not listed: the mock knows no more of the rules than a guess
            return self._rng.choice(sorted(set(_candidates())))
        # moves cannot be listed (the battle's orders, Stratego's setup): the game's own random
        return move_json(question.game.random_move(question.state, question.seat, self._rng))

    def _illegal(self, question: Question) -> Any:
        """A move that reads as a move of the game but is refused here."""
        refused = []
        for token in _candidates():
            try:
                question.game.parse(question.state, question.seat, token)
            except Illegal:
                refused.append(token)
            except MoveError:
                continue
        return self._rng.choice(refused) if refused else "no-move"


def _candidates() -> Iterator[str]:
    """Tokens of the board games' notations: files, cells, steps, walls."""
    yield from "abcdefg"
    for f in _FILES:
        for r in range(1, 11):
            yield f"{f}{r}"
    for file in range(6):
        for rank in range(1, 7):
            for df in (-1, 0, 1):
                for dr in (-1, 1):
                    if 0 <= file + df < 6 and 1 <= rank + dr <= 6:
                        yield f"{_FILES[file]}{rank}-{_FILES[file + df]}{rank + dr}"
    for f in _FILES[:8]:
        for r in range(1, 9):
            yield f"{f}{r}h"
            yield f"{f}{r}v"
