"""What the mock LLM answers: the arena's prompt lines read back, moves, orders, setups, faults."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arena.authors.mock import program_game, program_reply
from games.battle.commanders import random_orders

__all__ = [
    "FAULTS",
    "ILLEGAL_MOVE",
    "STRATEGO_PIECES",
    "PromptLines",
    "check_faults",
    "invent",
    "parse_faults",
    "reasoning_text",
    "reply_text",
    "schema_reply",
]

FAULTS = (
    "429",
    "500",
    "529",
    "hang",
    "slow",
    "garbage",
    "truncated",
    "prose",
    "illegal",
    "schema_ignored",
)
"""Every fault the server can inject, in the order rates are drawn. Under a schema
request (decoding = "schema") `prose` and `illegal` become choices from the schema's enum,
as a provider that enforces it answers; `schema_ignored` is one that does not."""

STRATEGO_PIECES = (
    "F" + "B" * 6 + "S" + "2" * 8 + "3" * 5 + "4" * 4 + "5" * 4 + "6" * 4 + "7" * 3 + "88" + "9X"
)
"""One Stratego army as piece codes: the multiset every setup must use."""


ILLEGAL_MOVE = "z9"
"""The move an `illegal` fault plays when the prompt's list does not hold it."""
_SAYINGS = ("Onward.", "A quiet move.", "Let us see.", "Pressure builds.", "Patience.")
_PROSE = "I have weighed the position with care and will keep my options open for now."
_BATTLE_MAP = 45
_LINE = re.compile(
    r"^[ \t]*(REPLY KEY|LEGAL MOVES|MAP SIZE|YOUR SQUADS|ENEMY SQUADS):[ \t]*(.*?)[ \t]*$",
    re.MULTILINE,
)
"""A machine-readable prompt line: its label and its value."""


def parse_faults(spec: str) -> dict[str, float]:
    """Fault rates from `"429=0.05,hang=0.01,..."` ('' for none); bad names or rates raise."""
    rates: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, value = item.partition("=")
        try:
            rates[name.strip()] = float(value) if sep else float("nan")
        except ValueError:
            raise ValueError(f"fault rate {item!r} is not a number (write e.g. 429=0.05)") from None
    return check_faults(rates)


def check_faults(faults: Mapping[str, float]) -> dict[str, float]:
    """`faults` in draw order, after checking names, rates in [0, 1] and their sum <= 1."""
    for name, rate in faults.items():
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r} (known: {', '.join(FAULTS)})")
        if not 0 <= rate <= 1:
            raise ValueError(f"fault rate {name}={rate} must be between 0 and 1 (e.g. {name}=0.05)")
    if sum(faults.values()) > 1 + 1e-9:
        raise ValueError(f"fault rates add up to {sum(faults.values()):g}; they must not exceed 1")
    return {name: faults[name] for name in FAULTS if faults.get(name)}


# -- what to answer ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptLines:
    """The machine-readable lines of an arena prompt (the last occurrence of each)."""

    reply_key: str = "move"
    legal: tuple[str, ...] = ()
    own_squads: tuple[str, ...] = ()
    enemy_squads: tuple[str, ...] = ()
    map_size: int = _BATTLE_MAP

    @classmethod
    def read(cls, text: str) -> PromptLines:
        """The lines found in prompt `text`; defaults for the missing ones."""
        found = {m.group(1): m.group(2) for m in _LINE.finditer(text)}  # the last one wins
        last = found.get

        key, size = (last("REPLY KEY") or "move").split(), last("MAP SIZE")
        return cls(
            reply_key=key[0] if key else "move",
            legal=tuple(m.strip() for m in (last("LEGAL MOVES") or "").split(",") if m.strip()),
            own_squads=tuple(re.findall(r"[A-Za-z]\d+", last("YOUR SQUADS") or "")),
            enemy_squads=tuple(re.findall(r"[A-Za-z]\d+", last("ENEMY SQUADS") or "")),
            map_size=int(size) if size and size.isdigit() and int(size) > 0 else _BATTLE_MAP,
        )


def invent(lines: PromptLines, rng: random.Random, *, illegal: bool = False) -> object:
    """A value for the reply key: legal (or, with `illegal`, well-formed but refused)."""
    if lines.reply_key == "setup":
        setup = list(STRATEGO_PIECES if not illegal else "FF" + STRATEGO_PIECES[2:])
        rng.shuffle(setup)
        return "".join(setup)
    if lines.reply_key == "orders":
        return _orders(lines, rng, illegal=illegal)
    if illegal:
        return _refused_like(lines.legal, rng)
    if lines.legal:
        return rng.choice(lines.legal)
    return f"{rng.choice('abcdefgh')}{rng.randint(1, 8)}"


def _refused_like(legal: tuple[str, ...], rng: random.Random) -> str:
    """A move shaped like the listed ones but not among them, so a game reads it and refuses it.

    Each listed move is varied one character at a time, using only characters
    seen at that position in listed moves of the same length (`b2-c3` may become
    `b2-e3`). Where no variation is unlisted (every file of an empty
    connect-four board is legal) it falls back to a token no game reads.
    """
    listed = set(legal)
    seen: dict[tuple[int, int], set[str]] = {}
    for move in legal:
        for i, char in enumerate(move):
            if char.isalnum():
                seen.setdefault((len(move), i), set()).add(char)
    candidates = sorted(
        {
            move[:i] + other + move[i + 1 :]
            for move in legal
            for i, char in enumerate(move)
            for other in seen.get((len(move), i), ())
            if other != char and move[:i] + other + move[i + 1 :] not in listed
        }
    )
    if candidates:
        return rng.choice(candidates)
    return ILLEGAL_MOVE if ILLEGAL_MOVE not in listed else ILLEGAL_MOVE * 2


def _orders(lines: PromptLines, rng: random.Random, *, illegal: bool) -> list[dict[str, Any]]:
    """The battle's random orders over the squads the prompt lists, as the game draws them."""
    if illegal:
        return [{"squad": squad, "do": "teleport"} for squad in lines.own_squads or ("A1",)]
    drawn = random_orders(lines.own_squads, lines.enemy_squads, lines.map_size, rng)
    return [order.to_json() for order in drawn]


def reasoning_text(prompt: str, rng: random.Random) -> str:
    """What the mock "thinks" before it replies: a move statement of its own, drawn apart
    from the reply's, so a reader that searched the reasoning could be caught."""
    lines = PromptLines.read(prompt)
    decoy = json.dumps({lines.reply_key: invent(lines, rng)})
    return f"Let me weigh the position. One idea is {decoy}, but I will look further first."


def reply_text(prompt: str, rng: random.Random, fault: str | None) -> str:
    """The reply text for `prompt` under `fault` (None, truncated, prose or illegal); a
    program brief is answered with a program (`arena.authors.mock`)."""
    if program_game(prompt) is not None:
        program_fault = {"prose": "no_code", "truncated": "syntax"}.get(fault or "")
        if fault == "illegal":
            program_fault = rng.choice(("forbidden", "nondeterministic"))
        return program_reply(rng, program_fault)
    if fault == "prose":
        return _PROSE
    lines = PromptLines.read(prompt)
    value = invent(lines, rng, illegal=fault == "illegal")
    text = json.dumps({lines.reply_key: value, "say": rng.choice(_SAYINGS), "notes": "mock"})
    if fault == "truncated":  # cut inside the move's value: the move itself is lost
        return text[: len(json.dumps({lines.reply_key: ""})) - 2 + len(json.dumps(value)) // 2]
    return text


def schema_reply(
    prompt: str, rng: random.Random, fault: str | None, key: str, enum: list[str] | None
) -> dict[str, Any] | str:
    """The reply to a schema request: the object the schema asks for, its reply key drawn
    from the `enum` where there is one (so `prose` and `illegal` faults are choices from it
    too); `schema_ignored` answers prose, as a provider that ignores the schema may; a
    `truncated` reply is cut as ever (text)."""
    if fault == "schema_ignored":
        return _PROSE
    lines = PromptLines.read(prompt)
    lines = PromptLines(key, lines.legal, lines.own_squads, lines.enemy_squads, lines.map_size)
    value = rng.choice(enum) if enum else invent(lines, rng)
    reply = {key: value, "say": rng.choice(_SAYINGS), "notes": None}
    if fault == "truncated":
        text = json.dumps(reply)
        return text[: len(json.dumps({key: ""})) - 2 + len(json.dumps(value)) // 2]
    return reply
