"""Reading a seat's reply text (docs/rules.md#the-decision-protocol).

The arena asks for one JSON object, `{"move": ..., "say": ..., "notes": ...}`
(the battle says `orders`, Stratego's setup `setup`). The move is taken from
the LAST JSON object in the reply that has the key, fenced or bare; failing
that, from the text after the last `move:` label on its line; failing that,
the whole reply goes to the game's tolerant reader. A move merely mentioned in
prose is never picked up: prose reaches the reader whole and fails there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["NOTES_MAX", "SAY_MAX", "Extracted", "extract"]

SAY_MAX = 280
NOTES_MAX = 2000

_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Extracted:
    """What the arena read from one reply."""

    move: Any
    """A string for every game but the battle, whose `orders` is the decoded list;
    None when nothing usable was found (an empty reply)."""
    say: str
    notes: str | None
    """None when the reply carried no notes: the seat keeps its previous ones."""
    via: str
    """`json`, `label` or `text`: where the move came from."""


def _json_objects(text: str) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            objects.append(value)
        position = text.find("{", end)
    return objects


def _text_field(obj: dict[str, Any], key: str, limit: int) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    return (value if isinstance(value, str) else json.dumps(value))[:limit]


def extract(reply: str, key: str = "move") -> Extracted:
    """Read the move under `key`, and `say` and `notes`, from a reply."""
    for obj in reversed(_json_objects(reply)):
        if key in obj:
            move = obj[key]
            if key != "orders" and not isinstance(move, str):
                move = json.dumps(move) if move is not None else ""
            return Extracted(
                move=move,
                say=_text_field(obj, "say", SAY_MAX) or "",
                notes=_text_field(obj, "notes", NOTES_MAX),
                via="json",
            )
    labelled = re.findall(rf"(?im){re.escape(key)}\s*:[ \t]*(.*)$", reply)
    if labelled:
        return Extracted(_decode_if_orders(labelled[-1].strip(), key), "", None, "label")
    stripped = reply.strip()
    return Extracted(_decode_if_orders(stripped, key) if stripped else None, "", None, "text")


def _decode_if_orders(text: str, key: str) -> Any:
    if key != "orders":
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
