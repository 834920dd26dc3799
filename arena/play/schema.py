"""The schema a reply must fit under `decoding = "schema"` (docs/decoding.md).

One JSON object with the reply key (`move`, `orders`, `setup`), `say` and
`notes`, written as OpenAI's strict mode takes it: every property required, no
additional ones, `say` and `notes` a string or null. Where the position lists
its legal moves, and they fit the protocol's cap on an enum, the reply key is
an enum of them exactly as listed (`schema-enum`): a reply can then be neither
unreadable nor illegal. Above the cap, or for a structured reply (the battle's
orders, Stratego's setup), the schema constrains the shape only
(`schema-shape`), and the engine's check decides as ever.

A schema travels in a form of its protocol's (`schema_form`): an
OpenAI-compatible server's `json_schema` or `json_object` (`schema_style`),
Anthropic's forced `tool`, Gemini's `responseSchema`. An attempt records the
kind and the form (`schema-enum/tool`), the standings the decoding and the form
(`schema/tool`): what was sent, not only what was asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games.battle.notation import VERBS

__all__ = [
    "ENUM_CAPS",
    "SCHEMA_ENUM",
    "SCHEMA_FORMS",
    "SCHEMA_SHAPE",
    "EnumCap",
    "reply_schema",
    "schema_form",
]

SCHEMA_ENUM = "schema-enum"
SCHEMA_SHAPE = "schema-shape"


SCHEMA_FORMS = {"anthropic": "tool", "gemini": "responseSchema"}
"""The one form a schema request takes in each protocol that has one; an OpenAI-compatible
server's is the policy's `schema_style`."""


def schema_form(protocol: str, schema_style: str) -> str:
    """The form a schema request of `protocol` is sent in: `json_schema` or `json_object`
    (`schema_style`, OpenAI-compatible servers), `tool` (Anthropic), `responseSchema`
    (Gemini)."""
    return SCHEMA_FORMS.get(protocol, schema_style)


@dataclass(frozen=True, slots=True)
class EnumCap:
    """The largest enum a protocol takes: values, and above `long_from` values, the most
    characters they may add up to."""

    values: int
    chars: int
    long_from: int = 0

    def fits(self, moves: Sequence[str]) -> bool:
        """Whether an enum of `moves` is within the cap."""
        if not moves or len(moves) > self.values:
            return False
        return len(moves) <= self.long_from or sum(len(m) for m in moves) <= self.chars


ENUM_CAPS: dict[str, EnumCap] = {
    # OpenAI's structured outputs, as documented in 2026: up to 1,000 enum values in a
    # schema, and a string enum of more than 250 values at most 15,000 characters.
    "openai": EnumCap(1000, 15_000, long_from=250),
    # Anthropic and Gemini document no enum limit of their own: capped where OpenAI's
    # older limit was (500 values, 15,000 characters), where the positions of every game
    # but backgammon's doubles fit.
    "anthropic": EnumCap(500, 15_000),
    "gemini": EnumCap(500, 15_000),
}
"""Each protocol's enum cap; the mocks take OpenAI's."""

_NULLABLE_TEXT: dict[str, Any] = {"type": ["string", "null"]}

_ORDER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "squad": {"type": "string"},
        "do": {"type": "string", "enum": list(VERBS)},
        "enemy": {"type": ["string", "null"]},
        "to": {"type": ["array", "null"], "items": {"type": "integer"}},
    },
    "required": ["squad", "do", "enemy", "to"],
    "additionalProperties": False,
}
"""One squad's order: `enemy` for an attack, `to` for a move, null otherwise."""


def reply_schema(
    key: str, legal: Sequence[str], *, protocol: str, enum: bool = True
) -> tuple[dict[str, Any], str]:
    """The schema of a reply under `key` in a position whose legal moves are `legal` (empty
    where they are not listed), and which kind it is: `schema-enum` or `schema-shape`
    (without `enum`, or past `protocol`'s cap, the shape only)."""
    cap = ENUM_CAPS.get(protocol, ENUM_CAPS["openai"])
    kind = SCHEMA_SHAPE
    value: dict[str, Any]
    if key == "orders":
        value = {"type": "array", "items": _ORDER}
    elif key == "setup":
        value = {"type": "string"}
    elif enum and cap.fits(legal):
        value = {"type": "string", "enum": list(legal)}
        kind = SCHEMA_ENUM
    else:
        value = {"type": "string"}
    schema = {
        "type": "object",
        "properties": {key: value, "say": _NULLABLE_TEXT, "notes": _NULLABLE_TEXT},
        "required": [key, "say", "notes"],
        "additionalProperties": False,
    }
    return schema, kind
