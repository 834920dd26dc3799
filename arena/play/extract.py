"""Reading a seat's reply text (docs/rules.md#the-reply-and-how-the-move-is-read).

The arena asks for one JSON object, `{"move": ..., "say": ..., "notes": ...}`
(the battle says `orders`, Stratego's setup `setup`). The move comes from the
reply's LAST move statement, by position in the text; a statement is either

- a complete JSON object, fenced or bare, that has the key (an object nested
  in another complete object belongs to that one and is not a statement), or
- a loose key/value: the key in JSON quotes (`"move"`), a colon and a complete
  JSON value, standing outside every complete JSON object (a reply cut off
  after its move, a bare `"move": "d"` line).

Failing both, the move is the text after the last `move:` label on its line;
failing that, the whole reply goes to the game's tolerant reader. A move
merely mentioned in prose is never picked up: prose reaches the reader whole
and fails there.

A statement's value that is not a string becomes its JSON text, except the
battle's `orders`, which stay decoded; an `orders` string that holds JSON (a
list written out inside a string) is decoded, any other string is passed on as
it is, for the battle's reader to refuse.

`say` and `notes` come from the statement's own object. After a loose
key/value they come from the first loose `"say"` and `"notes"` key/values
that follow it (so a reply cut off inside its notes keeps its `say`); without
one, `say` is "" and `notes` None (the seat keeps its previous notes). The
label and the whole-text readings carry neither.

Absurdly deep nesting makes the JSON decoder raise RecursionError, which the
caller reads as an unreadable reply.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

__all__ = ["NOTES_MAX", "SAY_MAX", "Extracted", "extract"]

SAY_MAX = 280
NOTES_MAX = 2000

_DECODER = json.JSONDecoder()
_JSON_SPACE = "[ \t\n\r]*"
"""JSON's own whitespace (a regex's \\s also takes characters JSON refuses)."""


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
    """`json` (a complete object or a loose key/value), `label` or `text`: where the
    move came from."""


class _Found(NamedTuple):
    """A decoded JSON value and where it stands in the reply: `text[start:end]`."""

    start: int
    end: int
    value: Any


def _json_objects(text: str) -> list[_Found]:
    """The complete JSON objects in `text` not nested in another, in order."""
    objects: list[_Found] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            objects.append(_Found(position, end, value))
        position = text.find("{", end)
    return objects


@cache
def _key_pattern(key: str) -> re.Pattern[str]:
    """`"key":` with JSON's whitespace around the colon."""
    return re.compile(f'"{re.escape(key)}"{_JSON_SPACE}:{_JSON_SPACE}')


def _loose(
    text: str, key: str, objects: list[_Found], *, after: int = 0, last: bool = False
) -> _Found | None:
    """The first (or `last`) loose `"key": <JSON value>` from `after` on: outside every
    one of `objects`, with a value that decodes."""
    matches = list(_key_pattern(key).finditer(text, after))
    starts = [obj.start for obj in objects]
    for match in reversed(matches) if last else matches:
        enclosing = bisect_right(starts, match.start()) - 1
        if enclosing >= 0 and match.start() < objects[enclosing].end:
            continue
        try:
            value, end = _DECODER.raw_decode(text, match.end())
        except json.JSONDecodeError:
            continue
        return _Found(match.start(), end, value)
    return None


def _move(value: Any, key: str) -> Any:
    if key == "orders":
        return _decode_orders(value) if isinstance(value, str) else value
    if isinstance(value, str):
        return value
    return json.dumps(value) if value is not None else ""


def _decode_orders(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _text(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    return (value if isinstance(value, str) else json.dumps(value))[:limit]


def extract(reply: str, key: str = "move") -> Extracted:
    """Read the move under `key`, and `say` and `notes`, from a reply."""
    objects = _json_objects(reply)
    keyed = next((obj for obj in reversed(objects) if key in obj.value), None)
    loose = _loose(reply, key, objects, last=True)
    if loose is not None and (keyed is None or loose.start > keyed.start):
        say = _loose(reply, "say", objects, after=loose.end)
        notes = _loose(reply, "notes", objects, after=loose.end)
        return Extracted(
            move=_move(loose.value, key),
            say=(_text(say.value, SAY_MAX) if say else None) or "",
            notes=_text(notes.value, NOTES_MAX) if notes else None,
            via="json",
        )
    if keyed is not None:
        return Extracted(
            move=_move(keyed.value[key], key),
            say=_text(keyed.value.get("say"), SAY_MAX) or "",
            notes=_text(keyed.value.get("notes"), NOTES_MAX),
            via="json",
        )
    labelled = re.findall(rf"(?im){re.escape(key)}\s*:[ \t]*(.*)$", reply)
    if labelled:
        text = labelled[-1].strip()
        return Extracted(_decode_orders(text) if key == "orders" else text, "", None, "label")
    stripped = reply.strip()
    if not stripped:
        return Extracted(None, "", None, "text")
    return Extracted(_decode_orders(stripped) if key == "orders" else stripped, "", None, "text")
